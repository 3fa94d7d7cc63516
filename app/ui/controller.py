"""Screen state and the background work behind the still-image screen. No Flet imports.

The controller owns a worker host (a child process on desktop, a thread where
child processes are not allowed), so MNN never holds the UI process's GIL. A
newer image cancels the one in flight and replaces one still waiting: the
screen always follows the user's last pick.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from app.core.results import AnalysisResult
from app.frames.intake import ImageRejected, decode_image_bytes
from app.worker.hosts import make_host
from app.worker.messages import (
    Analyze,
    Event,
    Finished,
    JobFailed,
    LoadFailed,
    Ready,
    Started,
    Token,
    WorkerRestarted,
    WorkerSpec,
)


@dataclass(frozen=True)
class ScreenState:
    model_status: str = "loading"  # loading | ready | error
    model_label: str = ""
    model_detail: str = ""
    question: str = ""
    image_name: str | None = None
    image_bytes: bytes | None = None
    streamed: str = ""
    busy: bool = False
    result: AnalysisResult | None = None
    error: str | None = None
    network_blocked: int = 0  # outbound attempts the privacy guard stopped


class AnalysisController:
    def __init__(
        self, spec: WorkerSpec, on_change: Callable[[ScreenState], None], host_kind: str | None = None
    ) -> None:
        self._on_change = on_change
        self._state = ScreenState()
        self._lock = threading.Lock()
        self._pending: Analyze | None = None
        self._current: str | None = None
        self._count = 0
        self._host = make_host(spec, self._on_event, host_kind)

    @property
    def state(self) -> ScreenState:
        return self._state

    def start(self) -> None:
        self._host.start()

    def stop(self) -> None:
        self._host.stop()

    def submit(self, name: str, data: bytes) -> None:
        """Decode now (so a bad file is reported at once), analyse in the worker."""
        try:
            image = decode_image_bytes(data, name=name)
        except ImageRejected as exc:
            self._update(image_name=name, image_bytes=None, streamed="", result=None, error=str(exc))
            return
        with self._lock:
            self._count += 1
            job = Analyze(f"img-{self._count}", image, name)
            self._pending = job
            current = self._current
        self._update(image_name=name, image_bytes=data, streamed="", result=None, error=None, busy=True)
        if current is not None:
            self._host.cancel(current)  # its JobFailed(cancelled) dispatches the pending job
        else:
            self._dispatch()

    def network_blocked(self, count: int) -> None:
        self._update(network_blocked=count)

    def _dispatch(self) -> None:
        with self._lock:
            if self._current is not None or self._pending is None or self._state.model_status != "ready":
                return
            job, self._pending = self._pending, None
            self._current = job.job_id
        self._host.submit(job)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, Ready):
            self._update(
                model_status="ready",
                model_label=event.model_id,
                model_detail=f"revision {event.model_revision} · {event.backend} · loaded in {event.load_ms:.0f} ms",
                question=event.question,
            )
            self._dispatch()
        elif isinstance(event, LoadFailed):
            self._update(model_status="error", model_detail=event.message, busy=False)
        elif isinstance(event, WorkerRestarted):
            self._update(model_status="loading", model_detail=f"restarting the model worker ({event.reason})")
        elif isinstance(event, Started):
            pass
        elif isinstance(event, Token):
            if event.job_id == self._current:
                self._update(streamed=self._state.streamed + event.text)
        elif isinstance(event, (Finished, JobFailed)):
            with self._lock:
                self._current = None
                superseded = self._pending is not None
            if not superseded:
                if isinstance(event, Finished):
                    self._update(busy=False, result=event.result, streamed=event.result.answer.raw)
                else:
                    self._update(busy=False, error=f"analysis failed: {event.message}")
            self._dispatch()

    def _update(self, **changes: object) -> None:
        with self._lock:
            self._state = replace(self._state, **changes)
            state = self._state
        self._on_change(state)
