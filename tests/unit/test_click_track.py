"""The metronome's sound: clicks exactly 60/rate s apart, as a WAV any player reads."""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest

from app.ui.practice.metronome import RATES, click_track


@pytest.mark.parametrize("rate", [*RATES, 60, 160])
def test_the_clicks_come_at_the_rate_and_the_loop_ends_on_a_beat(rate: int) -> None:
    with wave.open(io.BytesIO(click_track(rate))) as wav:
        assert (wav.getnchannels(), wav.getsampwidth()) == (1, 2)
        fs = wav.getframerate()
        pcm = np.frombuffer(wav.readframes(wav.getnframes()), "<i2").astype(float)
    loud = np.abs(pcm) > 0.2 * np.abs(pcm).max()
    onsets = np.flatnonzero(loud[1:] & ~loud[:-1]) + 1
    onsets = onsets[np.diff(np.concatenate(([-fs], onsets))) > fs * 0.1]  # one per click, not per wiggle
    period = len(pcm) / len(onsets)  # the loop holds whole beats: its seam is a beat boundary
    assert len(onsets) >= 4 and onsets[0] < 0.01 * fs
    assert np.allclose(np.diff(onsets), period, atol=2)
    assert 60 * fs / period == pytest.approx(rate, abs=0.01)


def test_a_rate_out_of_range_is_refused() -> None:
    for rate in (0, -5, 1000):
        with pytest.raises(ValueError):
            click_track(rate)
