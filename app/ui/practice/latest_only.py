"""One thread that acts on the newest of a burst of requests (e.g. a worker restart per settings click)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

logger = logging.getLogger("keyframe.ui")

T = TypeVar("T")


class LatestOnly(Generic[T]):
    """Runs `work(value)` on a thread of its own with the newest value submitted, once none newer
    came for `quiet_s`: three quick clicks are one piece of work, and the caller never waits for it.
    A failure of `work` is logged; `work` reports its own outcome."""

    def __init__(self, work: Callable[[T], None], quiet_s: float, name: str) -> None:
        self._work = work
        self._quiet_s = quiet_s
        self._name = name
        self._cond = threading.Condition()
        self._pending: list[T] = []  # at most one: the newest
        self._submitted_at = 0.0
        self._busy = False
        self._stopped = False
        self._thread: threading.Thread | None = None

    def submit(self, value: T) -> None:
        with self._cond:
            if self._stopped:
                return
            self._pending[:] = [value]
            self._submitted_at = time.monotonic()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """True once nothing is pending or running."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def stop(self, timeout: float = 10.0) -> bool:
        """Drops what is pending, lets running work end; True when the thread has ended."""
        with self._cond:
            self._stopped = True
            self._pending.clear()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._stopped or bool(self._pending))
                while not self._stopped and (left := self._submitted_at + self._quiet_s - time.monotonic()) > 0:
                    self._cond.wait(left)  # a newer request restarts the quiet period
                if self._stopped:
                    self._cond.notify_all()
                    return
                value = self._pending.pop()
                self._busy = True
            try:
                self._work(value)
            except Exception:
                logger.exception("%s failed", self._name)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
