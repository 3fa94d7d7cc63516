"""When to sound a cue about the compression rate: pure (no Flet, no sound), the clock injected.

A trainee compressing, eyes on the manikin, hears what the rate needs: a high tone when the rate shown
is too slow ("faster"), a low tone when it is too fast ("slower"), nothing in the target band, and at
most one tone every `CUE_GAP_S` seconds, so the tones never crowd the compressions (or a metronome).
Off until the trainee turns it on. It follows the band of the rate as shown (`rate_band`, judged on the
rounded figure), so what is heard always agrees with the word on the screen.
"""

from __future__ import annotations

import time
from collections.abc import Callable

CUE_GAP_S = 2.0  # at most one tone in this many seconds
# The tone for each band out of the target: what the trainee should do.
TONE_FOR_BAND = {"slow": "faster", "fast": "slower"}


class RateCue:
    """`decide(band)` on every rate shown: the tone to play now ("faster" = high, "slower" = low) or None."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, gap_s: float = CUE_GAP_S) -> None:
        self._clock = clock
        self._gap_s = gap_s
        self._last: float | None = None  # when the last tone was given
        self.on = False

    def decide(self, band: str | None) -> str | None:
        """`band`: the shown rate's band (`slow` | `in_band` | `fast`), None when no rate is shown."""
        tone = TONE_FOR_BAND.get(band) if self.on and band is not None else None
        if tone is None:
            return None
        now = self._clock()
        if self._last is not None and now - self._last < self._gap_s:
            return None
        self._last = now
        return tone
