"""One keyframe at a time, waiting for each answer: the worker for batch commands.

`analyze` (and benchmarks) want a plain call per image, but the model must still
run in a child process: a damaged model that segfaults in native code then
costs one image's error (or a clean "cannot load" exit), never the command.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass

from app.frames.intake import DecodedImage
from app.worker.hosts import WorkerHost, make_host
from app.worker.messages import (
    Analyze,
    Event,
    Finished,
    JobError,
    JobFailed,
    ListenerFailed,
    LoadFailed,
    Ready,
    Token,
    WorkerRestarted,
    WorkerSpec,
)


class WorkerUnavailable(RuntimeError):
    """The model could not be loaded (or the worker gave up); the message is for users."""


@dataclass(frozen=True)
class Outcome:
    finished: Finished | None
    failed: JobFailed | None


class BlockingWorker:
    def __init__(
        self,
        spec: WorkerSpec,
        host_kind: str | None = None,
        on_notice: Callable[[str], None] | None = None,
    ) -> None:
        self._events: queue.Queue[Event] = queue.Queue()
        self._notice = on_notice or (lambda _message: None)
        self._host: WorkerHost = make_host(spec, self._events.put, host_kind)
        self._count = 0
        self._lock = threading.Lock()
        self.ready: Ready | None = None

    def start(self, timeout: float | None = None) -> Ready:
        """Starts the worker and waits for its model; raises WorkerUnavailable if it cannot load."""
        self._host.start()
        while True:
            try:
                event = self._events.get(timeout=timeout)
            except queue.Empty:
                raise WorkerUnavailable("the model did not load in time") from None
            if isinstance(event, Ready):
                self.ready = event
                return event
            if isinstance(event, LoadFailed):
                raise WorkerUnavailable(event.message)
            self._note(event)

    def analyze(self, image: DecodedImage, source: str, on_token: Callable[[str], None] | None = None) -> Outcome:
        """Blocks until this image is answered or has failed. Raises WorkerUnavailable when the worker gave up."""
        with self._lock:
            self._count += 1
            job_id = f"job-{self._count}"
        self._host.submit(Analyze(job_id, image, source))
        while True:
            event = self._events.get()
            if isinstance(event, Token) and event.job_id == job_id and on_token is not None:
                on_token(event.text)
            elif isinstance(event, Finished) and event.job_id == job_id:
                return Outcome(event, None)
            elif isinstance(event, JobFailed) and event.job_id == job_id:
                if event.error is JobError.WORKER_UNAVAILABLE:
                    raise WorkerUnavailable(event.message)
                return Outcome(None, event)
            elif isinstance(event, LoadFailed):
                raise WorkerUnavailable(event.message)
            else:
                self._note(event)

    def _note(self, event: Event) -> None:
        if isinstance(event, WorkerRestarted):
            self._notice(f"the inference worker was restarted ({event.reason})")
        elif isinstance(event, ListenerFailed):
            self._notice(f"internal error while handling {event.event}: {event.message}")

    @property
    def pid(self) -> int | None:
        """The process the model runs in: the child, or this one for the thread host."""
        return self._host.pid

    def stop(self) -> None:
        self._host.stop()

    def __enter__(self) -> BlockingWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
