"""Backpressure without a queue: one keyframe in flight, at most one newest waiting.

When inference is slower than the sampling interval, a waiting keyframe is
replaced by a newer one (reported as superseded, never silently dropped), and
the effective interval between analyses stretches; `stretched` says so. The
interval is measured on the keyframes' own timestamps (frame time), so a video
read faster than real time is judged like a live camera.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

K = TypeVar("K")


@dataclass
class SlotStats:
    dispatched: int = 0
    superseded: int = 0
    completed: int = 0
    dispatch_times: list[float] = field(default_factory=list)


class InFlightSlot(Generic[K]):
    def __init__(self, time_of: Callable[[K], float]) -> None:
        self.in_flight: K | None = None
        self.waiting: K | None = None
        self.stats = SlotStats()
        self._time_of = time_of

    def submit(self, item: K) -> tuple[K | None, K | None]:
        """Returns (item to dispatch now or None, item superseded or None)."""
        if self.in_flight is None:
            self._dispatch(item)
            return item, None
        superseded, self.waiting = self.waiting, item
        if superseded is not None:
            self.stats.superseded += 1
        return None, superseded

    def done(self) -> K | None:
        """The in-flight item finished; returns the next one to dispatch, if any."""
        self.in_flight = None
        self.stats.completed += 1
        if self.waiting is None:
            return None
        item, self.waiting = self.waiting, None
        self._dispatch(item)
        return item

    def _dispatch(self, item: K) -> None:
        self.in_flight = item
        self.stats.dispatched += 1
        self.stats.dispatch_times.append(self._time_of(item))
        del self.stats.dispatch_times[:-8]  # a short history is enough for the effective interval

    def effective_interval(self) -> float | None:
        times = self.stats.dispatch_times
        if len(times) < 2:
            return None
        return (times[-1] - times[0]) / (len(times) - 1)

    def stretched(self, configured_interval: float, tolerance: float = 1.2) -> bool:
        effective = self.effective_interval()
        return effective is not None and effective > configured_interval * tolerance
