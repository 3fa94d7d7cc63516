"""Waiting on a condition, never on time: the one helper the tests use (CI runs at high load)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

# The bound on a whole command a test runs (a CLI run, a benchmark, a script in a fresh interpreter):
# a guard against a hang, not a speed target. A run that takes seconds on a quiet machine took
# over 120 s at a load of 10 on this 2-core machine, so the bound is far above that.
HANG_S = 600
# The bound on a pipeline settling (a killed or hung worker replaced: the new one starts, loads and checks
# its model, then answers the keyframe that waited): a guard, not a speed. Beside four busy loops (a
# load of ~12) a restart and one paced answer took over 60 s.
SETTLE_S = 180

T = TypeVar("T")


def wait_until(predicate: Callable[[], object], timeout: float = 10.0, interval: float = 0.02) -> bool:
    """True as soon as `predicate()` is truthy; False once `timeout` seconds have gone by."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())  # one last look: a slow machine may have got there at the deadline


def wait_for(read: Callable[[], T], done: Callable[[T], bool], timeout: float, what: str, interval: float = 0.05) -> T:
    """The value `read()` gives once `done(value)` holds; AssertionError naming `what` and the last value."""
    last: list[T] = []

    def reached() -> bool:
        last[:] = [read()]
        return done(last[0])

    if wait_until(reached, timeout, interval):
        return last[0]
    raise AssertionError(f"{what} not reached; last: {last[0] if last else None!r}")
