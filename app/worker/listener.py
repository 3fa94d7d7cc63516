"""What both worker hosts keep: their status, the job in flight, and a listener that cannot take them down.

A listener that raises (a full disk while the session log fsyncs, a UI error)
would otherwise end the reader thread, and every later keyframe would wait
forever. The error is logged, counted and reported once as ListenerFailed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from app.worker.in_flight import InFlight
from app.worker.messages import Event, JobError, JobFailed, ListenerFailed, WorkerStatus

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


_S = WorkerStatus
# The moves a host's status may make; `_become` refuses any other. A failed host stays failed
# (stopping it changes nothing a caller is told), while a stopped one whose child still reports
# that its model cannot load takes that reason: it says more than "stopped".
_MOVES: dict[WorkerStatus, frozenset[WorkerStatus]] = {
    _S.STARTING: frozenset({_S.READY, _S.RESTARTING, _S.FAILED, _S.STOPPED}),
    _S.READY: frozenset({_S.RESTARTING, _S.FAILED, _S.STOPPED}),
    _S.RESTARTING: frozenset({_S.READY, _S.RESTARTING, _S.FAILED, _S.STOPPED}),
    _S.STOPPED: frozenset({_S.FAILED}),
    _S.FAILED: frozenset(),
}


class HostLedger:
    """What both worker hosts keep: their status (changed by `_become` only, under `_lock`),
    the job in flight and a listener that cannot take them down."""

    def __init__(self, on_event: Callable[[Event], None]) -> None:
        self._emit = SafeListener(on_event)
        self._in_flight = InFlight()
        self._lock = threading.Lock()
        self._status = WorkerStatus.STARTING
        self._failure = ""  # why the host gave up, once FAILED

    @property
    def status(self) -> WorkerStatus:
        return self._status

    def _become(self, status: WorkerStatus, failure: str = "") -> None:
        """The one place the status changes (`failure`: why, for FAILED); a move `_MOVES` refuses changes nothing."""
        assert self._lock.locked(), "a host's status changes under its lock"
        if status in _MOVES[self._status]:
            self._status = status
            if status is WorkerStatus.FAILED:
                self._failure = failure

    @property
    def _unavailable(self) -> str | None:
        """Why no job can run any more (failed or stopped); None while one can."""
        if self._status is WorkerStatus.FAILED:
            return self._failure
        return "the inference worker is stopped" if self._status is WorkerStatus.STOPPED else None

    def _refuse(self, job_id: str, why: str) -> None:
        """Outside the lock: a job no worker will take fails at once."""
        self._emit(JobFailed(job_id, JobError.WORKER_UNAVAILABLE, why))

    @property
    def in_flight(self) -> str | None:
        return self._in_flight.job

    @property
    def listener_errors(self) -> int:
        return self._emit.errors
