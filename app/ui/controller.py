"""Screen state and the background work behind the still-image screen. No Flet imports.

The controller owns a worker host (a child process on desktop, a thread where
child processes are not allowed), so MNN never holds the UI process's GIL. The
one-in-flight policy is `core.slot`'s, as in the live pipeline: a newer image
cancels the one in flight and replaces one still waiting, so the screen always
follows the user's last pick.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from app.core.results import AnalysisResult
from app.core.slot import InFlightSlot
from app.frames.intake import ImageRejected, decode_image_bytes
from app.worker.hosts import make_host
from app.worker.messages import (
    Analyze,
    Event,
    Finished,
    JobFailed,
    ListenerFailed,
    LoadFailed,
    Ready,
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
        self._lock = threading.RLock()  # a host that gave up answers a submit re-entrantly
        self._slot: InFlightSlot[Analyze] = InFlightSlot()
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
        self._update(image_name=name, image_bytes=data, streamed="", result=None, error=None, busy=True)
        with self._lock:
            self._count += 1
            dispatch, _ = self._slot.submit(Analyze(f"img-{self._count}", image, name))
            current = self._slot.in_flight
            if dispatch is not None:
                self._host.submit(dispatch)  # queued by the worker until its model is loaded
            elif current is not None:
                self._host.cancel(current.job_id)  # its JobFailed(cancelled) dispatches the new one

    def network_blocked(self, count: int) -> None:
        self._update(network_blocked=count)

    def _is_current(self, job_id: str) -> bool:
        current = self._slot.in_flight
        return current is not None and current.job_id == job_id

    def _on_event(self, event: Event) -> None:
        if isinstance(event, Ready):
            self._update(
                model_status="ready",
                model_label=event.model_id,
                model_detail=f"revision {event.model_revision} · {event.backend} · loaded in {event.load_ms:.0f} ms",
                question=event.question,
            )
        elif isinstance(event, LoadFailed):
            self._update(model_status="error", model_detail=event.message, busy=False)
        elif isinstance(event, WorkerRestarted):
            self._update(model_status="loading", model_detail=f"restarting the model worker ({event.reason})")
        elif isinstance(event, ListenerFailed):
            self._update(error=f"the screen could not show an update ({event.message})")
        elif isinstance(event, Token):
            if self._is_current(event.job_id):
                self._update(streamed=self._state.streamed + event.text)
        elif isinstance(event, (Finished, JobFailed)):
            with self._lock:
                if not self._is_current(event.job_id):
                    return
                following = self._slot.done()
                if following is not None:
                    self._host.submit(following)
            if following is None:  # a newer pick replaces this answer: show nothing of it
                if isinstance(event, Finished):
                    self._update(busy=False, result=event.result, streamed=event.result.answer.raw)
                else:
                    self._update(busy=False, error=f"analysis failed: {event.message}")

    def _update(self, **changes: object) -> None:
        with self._lock:
            self._state = replace(self._state, **changes)
            state = self._state
        self._on_change(state)
