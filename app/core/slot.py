"""Backpressure without a queue: one keyframe in flight, at most one newest waiting.

When inference is slower than the sampling interval, a waiting keyframe is
replaced by a newer one (reported as superseded, never silently dropped).

Whether the model keeps up is judged on the model's own time (dispatch to done,
on a monotonic clock), never on gaps between keyframe timestamps: skipped
"unchanged" keyframes and a video read faster than real time stretch those gaps
without the model being slow.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

K = TypeVar("K")

# A short history: the figure follows a model that speeds up or slows down.
_HISTORY = 8


@dataclass
class SlotStats:
    dispatched: int = 0
    superseded: int = 0
    done: int = 0  # items that left the slot, answered or failed: `done()` is told no outcome
    busy_seconds: list[float] = field(default_factory=list)  # recent dispatch-to-done times


class InFlightSlot(Generic[K]):
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.in_flight: K | None = None
        self.waiting: K | None = None
        self.stats = SlotStats()
        self._clock = clock
        self._dispatched_at = 0.0

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
        if self.in_flight is not None:
            busy = self.stats.busy_seconds
            busy.append(self._clock() - self._dispatched_at)
            del busy[:-_HISTORY]
        self.in_flight = None
        self.stats.done += 1
        if self.waiting is None:
            return None
        item, self.waiting = self.waiting, None
        self._dispatch(item)
        return item

    def drop_waiting(self) -> K | None:
        """Takes the waiting item out (e.g. the user replaced it); returns it."""
        item, self.waiting = self.waiting, None
        return item

    def _dispatch(self, item: K) -> None:
        self.in_flight = item
        self.stats.dispatched += 1
        self._dispatched_at = self._clock()

    def model_seconds(self) -> float | None:
        """Median time the model needed per item lately; None before the first one."""
        busy = self.stats.busy_seconds
        return statistics.median(busy) if busy else None

    def stretched(self, configured_interval: float) -> bool:
        """The model needs longer per item than the interval allows."""
        needed = self.model_seconds()
        return needed is not None and needed > configured_interval

    def effective_interval(self, configured_interval: float) -> float:
        """Seconds between analysed keyframes: the interval, or the model's time when longer."""
        needed = self.model_seconds()
        return configured_interval if needed is None else max(configured_interval, needed)
