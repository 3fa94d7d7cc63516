"""The rate tones: when a cue is due (pure, on a clock the test turns), the tones themselves, and the thin
player part that plays what was decided."""

from __future__ import annotations

import io
import wave
from collections.abc import Callable
from typing import Any

import flet_audio as fa
import numpy as np

from app.core.rate_cue import CUE_GAP_S, RateCue
from app.ui.practice.metronome import TONES, RateTones, cue_tone


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_rate_tones_are_off_by_default_and_silent_whatever_the_rate() -> None:
    cue = RateCue(Clock())
    assert not cue.on
    assert [cue.decide(band) for band in ("slow", "fast", "in_band", None)] == [None] * 4


def test_too_slow_asks_for_a_high_tone_too_fast_a_low_one_and_the_band_or_no_rate_for_nothing() -> None:
    clock = Clock()
    cue = RateCue(clock)
    cue.on = True
    assert cue.decide("slow") == "faster"
    clock.now += CUE_GAP_S
    assert cue.decide("fast") == "slower"
    for band in ("in_band", None):
        clock.now += CUE_GAP_S
        assert cue.decide(band) is None


def test_at_most_one_tone_every_two_seconds_however_often_the_rate_is_shown() -> None:
    clock = Clock()
    cue = RateCue(clock)
    cue.on = True
    heard = []
    for _ in range(40):  # 10 s of a too slow rate, shown 4 times a second
        tone = cue.decide("slow")
        if tone is not None:
            heard.append((clock.now, tone))
        clock.now += 0.25
    assert [tone for _, tone in heard] == ["faster"] * 5
    assert all(b - a >= CUE_GAP_S for (a, _), (b, _) in zip(heard, heard[1:], strict=False))
    # A change of band does not jump the queue: the gap holds whatever the tone.
    last = heard[-1][0]
    clock.now = last + CUE_GAP_S - 0.1
    assert cue.decide("fast") is None
    clock.now = last + CUE_GAP_S
    assert cue.decide("fast") == "slower"


def test_turned_off_it_stops_at_once() -> None:
    clock = Clock()
    cue = RateCue(clock)
    cue.on = True
    assert cue.decide("slow") == "faster"
    cue.on = False
    clock.now += 10
    assert cue.decide("slow") is None


def _pitch(wav_bytes: bytes) -> tuple[float, float]:
    """(dominant frequency in Hz, seconds) of a WAV."""
    with wave.open(io.BytesIO(wav_bytes)) as wav:
        assert (wav.getnchannels(), wav.getsampwidth()) == (1, 2)
        fs = wav.getframerate()
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), "<i2").astype(float)
    spectrum = np.abs(np.fft.rfft(pcm))
    return float(np.argmax(spectrum) * fs / len(pcm)), len(pcm) / fs


def test_faster_is_a_short_high_tone_and_slower_a_short_low_one_both_made_here() -> None:
    high, high_s = _pitch(cue_tone("faster"))
    low, low_s = _pitch(cue_tone("slower"))
    assert high > 1000 and low < 500 and high / low > 2.5
    assert 0.1 <= high_s <= 0.4 and 0.1 <= low_s <= 0.4  # a cue, not a noise over the compressions
    for tone in TONES:  # faded in and out: no click at either end
        with wave.open(io.BytesIO(cue_tone(tone))) as wav:
            pcm = np.frombuffer(wav.readframes(wav.getnframes()), "<i2").astype(float)
        assert abs(pcm[0]) < 0.01 * np.abs(pcm).max() and abs(pcm[-1]) < 0.01 * np.abs(pcm).max()


class FakePage:
    def __init__(self) -> None:
        self.services: list[Any] = []
        self.updates = 0
        self.tasks: list[Callable[..., Any]] = []

    def update(self) -> None:
        self.updates += 1

    def run_task(self, handler: Callable[..., Any], *args: Any) -> None:
        self.tasks.append(handler)


def test_the_page_carries_no_player_until_the_tones_are_turned_on_then_plays_what_is_due() -> None:
    page, clock = FakePage(), Clock()
    tones = RateTones(page, clock)  # type: ignore[arg-type]
    tones.follow("slow")
    assert not tones.on and page.services == [] and page.tasks == []
    tones.set(True)
    assert len(page.services) == 2 and all(isinstance(s, fa.Audio) for s in page.services)
    assert tones.services == page.services
    high, low = page.services
    tones.follow("slow")
    tones.follow("slow")  # within the gap: nothing more
    clock.now += CUE_GAP_S
    tones.follow("fast")
    clock.now += CUE_GAP_S
    tones.follow("in_band")
    assert page.tasks == [high.play, low.play]
    tones.set(False)
    clock.now += CUE_GAP_S
    tones.follow("slow")
    assert len(page.tasks) == 2 and len(page.services) == 2  # off: silent, the players kept for later
