"""How a duration reads (a download's time left), in the words of a screen's table or in English."""

from __future__ import annotations

from collections.abc import Mapping

# The templates by key, as each language's table of the Models screen has them (app/ui/words/models.py).
ENGLISH: Mapping[str, str] = {"duration_s": "{s} s", "duration_m": "{m} min {s} s", "duration_h": "{h} h {m} min"}


def model_time_words(seconds: float, words: Mapping[str, str]) -> str:
    """A measured model time as it reads: seconds from 1 s, else milliseconds (a tiny model answers in
    3 ms, which "0.00 s" hid), with `words`' templates "seconds" ({s}) and "milliseconds" ({ms})."""
    if seconds >= 1.0:
        return words["seconds"].format(s=f"{seconds:.2f}")
    ms = seconds * 1000
    return words["milliseconds"].format(ms=f"{ms:.0f}" if ms >= 10 else f"{ms:.1f}" if ms >= 0.1 else "< 0.1")


def duration_words(seconds: float, words: Mapping[str, str] = ENGLISH) -> str:
    """Whole seconds under a minute, minutes and seconds under an hour, else hours and minutes: 1 min 05 s."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return words["duration_s"].format(s=seconds)
    if seconds < 3600:
        return words["duration_m"].format(m=seconds // 60, s=f"{seconds % 60:02d}")
    return words["duration_h"].format(h=seconds // 3600, m=f"{seconds % 3600 // 60:02d}")
