"""How long a keyframe may go without progress before its worker is declared hung.

A hang inside native code (vision encoder, prefill) cannot be interrupted from
Python; the only cure is to kill the worker. The limit follows the model's own
measured speed: the longest silence seen between progress marks of recent
keyframes (phase changes and tokens), times a generous factor, and never below a
floor that covers a noisy machine. Before any keyframe has been measured, the
load time stands in: a model that loads slowly also runs slowly.

A load is one native call with no progress to watch, so its bound is set in advance from what it
reads: a floor, plus the model's bytes at a speed far below any real disk's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_HISTORY = 16
# A tenth of the 0.19 GB/s MNN loads the real model at here (app.models.catalog.LOAD_BYTES_PER_S, with
# the hash before it at 1.5 GB/s): a slow SD card or a busy disk still loads well inside the bound.
SLOW_LOAD_BYTES_PER_S = 19e6


def load_limit_s(model_bytes: int, loads: int, floor_s: float) -> float:
    """How long a worker may take to load its model before it is taken to hang: 138 s for the
    1.5 GB real model (which loads in ~9 s), the floor for a small one."""
    return floor_s + loads * max(0, model_bytes) / SLOW_LOAD_BYTES_PER_S


@dataclass
class StallLimit:
    floor_s: float = 30.0
    factor: float = 10.0
    load_factor: float = 3.0
    _load_s: float = 0.0
    _gaps: list[float] = field(default_factory=list)  # longest silence of each recent keyframe

    def loaded(self, load_s: float) -> None:
        self._load_s = max(0.0, load_s)

    def observe(self, longest_gap_s: float) -> None:
        """A keyframe finished; `longest_gap_s` was its longest time without progress."""
        self._gaps.append(max(0.0, longest_gap_s))
        del self._gaps[:-_HISTORY]

    def limit_s(self) -> float:
        if self._gaps:
            return max(self.floor_s, self.factor * max(self._gaps))
        return max(self.floor_s, self.load_factor * self._load_s)


@dataclass
class ProgressClock:
    """Silence since the last sign of life of the job in flight (monotonic seconds)."""

    started_at: float | None = None
    last_at: float = 0.0
    longest_gap: float = 0.0

    def begin(self, now: float) -> None:
        self.started_at = self.last_at = now
        self.longest_gap = 0.0

    def tick(self, now: float) -> None:
        if self.started_at is None:
            return
        self.longest_gap = max(self.longest_gap, now - self.last_at)
        self.last_at = now

    def end(self) -> float:
        """Stops the clock; returns the job's longest silence."""
        self.started_at = None
        return self.longest_gap

    def silent_for(self, now: float) -> float:
        return 0.0 if self.started_at is None else now - self.last_at
