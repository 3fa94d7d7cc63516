"""How long a keyframe may go without progress before its worker is declared hung.

A hang inside native code (vision encoder, prefill) cannot be interrupted from
Python; the only cure is to kill the worker. The limit follows the model's own
measured speed: the longest silence seen between progress marks of recent
keyframes (phase changes and tokens), times a generous factor, and never below a
floor that covers a noisy machine. Before any keyframe has been measured, the
load time stands in: a model that loads slowly also runs slowly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_HISTORY = 16


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
