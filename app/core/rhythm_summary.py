"""A session's compression rhythm in figures, from its rhythm samples (pure: no UI, no model).

The estimator's own session figures (count, median rate, pauses, CCF) are in every sample, so the
last one holds them. Time in the target band is the samples' doing: each stretch between two samples
counts with the rate measured at its end (the window that covered it), and only stretches that had a
rate count at all, so a trainee resting is neither in the band nor out of it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.rhythm_figures import TARGET_RATE_PER_MIN, Pause, long_pauses, rate_band
from app.core.session import RhythmSample


@dataclass(frozen=True)
class RhythmSummary:
    seconds: float  # frame time the rhythm followed, first to last sample
    count: int
    median_rate_per_min: float | None
    seconds_with_rate: float
    seconds_in_band: float
    seconds_slow: float
    seconds_fast: float
    pauses: tuple[Pause, ...]
    compression_fraction: float | None
    target: tuple[int, int] = TARGET_RATE_PER_MIN
    frame_rate: float | None = None  # frames a second the rhythm was measured from, at its end
    frame_times_guessed: bool = False  # the source's frame times were a guess (RhythmSample)

    @property
    def in_band_share(self) -> float | None:
        """Of the time a rate was measured, the share in the target band (None: no rate at all)."""
        return self.seconds_in_band / self.seconds_with_rate if self.seconds_with_rate > 0 else None

    @property
    def longest_pause_s(self) -> float | None:
        return max((p.length_s for p in self.pauses), default=None)

    @property
    def long_pause_count(self) -> int:
        """Interruptions over the guideline's 10 s (`LONG_PAUSE_S`); a pause that lasted until the end
        of the session is its end, not an interruption (`long_pauses`)."""
        return len(long_pauses(self.pauses, ended=True))


def summarise_rhythm(samples: Sequence[RhythmSample]) -> RhythmSummary | None:
    """None for a session without rhythm (stills, or a log written before rhythm was recorded)."""
    if not samples:
        return None
    ordered = sorted(samples, key=lambda s: s.t)
    spent = {"in_band": 0.0, "slow": 0.0, "fast": 0.0}
    for before, after in itertools.pairwise(ordered):
        if after.rate_per_min is not None:
            spent[rate_band(after.rate_per_min)] += max(0.0, after.t - before.t)
    last = ordered[-1]
    return RhythmSummary(
        seconds=last.t - ordered[0].t,
        count=last.count,
        median_rate_per_min=last.median_rate_per_min,
        seconds_with_rate=sum(spent.values()),
        seconds_in_band=spent["in_band"],
        seconds_slow=spent["slow"],
        seconds_fast=spent["fast"],
        pauses=last.pauses,
        compression_fraction=last.compression_fraction,
        frame_rate=last.frame_rate,
        frame_times_guessed=any(sample.frame_times_guessed for sample in ordered),
    )
