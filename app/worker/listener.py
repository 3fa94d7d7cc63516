"""A host's listener must never take the host down with it.

A listener that raises (a full disk while the session log fsyncs, a UI error)
would otherwise end the reader thread, and every later keyframe would wait
forever. The error is logged, counted and reported once as ListenerFailed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from app.worker.in_flight import InFlight
from app.worker.messages import Event, ListenerFailed

log = logging.getLogger("keyframe.worker")


class SafeListener:
    def __init__(self, on_event: Callable[[Event], None]) -> None:
        self._on_event = on_event
        self.errors = 0

    def __call__(self, event: Event) -> None:
        try:
            self._on_event(event)
        except Exception as exc:
            self.errors += 1
            log.exception("the worker host's listener failed on %s", type(event).__name__)
            if isinstance(event, ListenerFailed):
                return
            try:
                self._on_event(ListenerFailed(type(event).__name__, f"{type(exc).__name__}: {exc}"))
            except Exception:
                log.exception("the listener also failed on ListenerFailed")


class HostLedger:
    """What both worker hosts keep about their caller: the job in flight and a listener that cannot take them down."""

    def __init__(self, on_event: Callable[[Event], None]) -> None:
        self._emit = SafeListener(on_event)
        self._in_flight = InFlight()

    @property
    def in_flight(self) -> str | None:
        return self._in_flight.job

    @property
    def listener_errors(self) -> int:
        return self._emit.errors
