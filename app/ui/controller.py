"""Screen state and the background work behind the first UI. No Flet imports.

The controller owns one worker thread: it loads the model once, then analyses
the newest submitted image. A newer image replaces one still waiting and
cancels the one in flight, so the screen always follows the user's last pick.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from app.analyzer import Analyzer
from app.core.results import AnalysisResult
from app.frames.intake import DecodedImage, ImageRejected, decode_image_bytes


@dataclass(frozen=True)
class ScreenState:
    model_status: str = "loading"          # loading | ready | error
    model_label: str = ""
    model_detail: str = ""
    question: str = ""
    image_name: str | None = None
    image_bytes: bytes | None = None
    streamed: str = ""
    busy: bool = False
    result: AnalysisResult | None = None
    error: str | None = None
    network_blocked: int = 0               # outbound attempts the privacy guard stopped


@dataclass(frozen=True)
class _Job:
    name: str
    image: DecodedImage
    cancel: threading.Event


class AnalysisController:
    def __init__(self, analyzer_factory: Callable[[], Analyzer], on_change: Callable[[ScreenState], None]) -> None:
        self._factory = analyzer_factory
        self._on_change = on_change
        self._state = ScreenState()
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._pending: _Job | None = None
        self._current: _Job | None = None
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="keyframe-analysis", daemon=True)

    @property
    def state(self) -> ScreenState:
        return self._state

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        with self._wake:
            self._stopping = True
            if self._current is not None:
                self._current.cancel.set()
            self._wake.notify_all()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def submit(self, name: str, data: bytes) -> None:
        """Decode now (so a bad file is reported at once), analyse in the background."""
        try:
            image = decode_image_bytes(data, name=name)
        except ImageRejected as exc:
            self._update(image_name=name, image_bytes=None, streamed="", result=None, error=str(exc))
            return
        job = _Job(name, image, threading.Event())
        with self._wake:
            self._pending = job
            if self._current is not None:
                self._current.cancel.set()
            self._wake.notify_all()
        self._update(image_name=name, image_bytes=data, streamed="", result=None, error=None, busy=True)

    def network_blocked(self, count: int) -> None:
        self._update(network_blocked=count)

    def _update(self, **changes: object) -> None:
        with self._lock:
            self._state = replace(self._state, **changes)
            state = self._state
        self._on_change(state)

    def _run(self) -> None:
        try:
            analyzer = self._factory()
            analyzer.load()
        except Exception as exc:  # shown to the user; the app stays usable for reading
            self._update(model_status="error", model_detail=str(exc), busy=False)
            return
        self._update(
            model_status="ready",
            model_label=analyzer.model.id,
            model_detail=f"revision {analyzer.model.revision} · loaded in {analyzer.engine.load_ms:.0f} ms",
            question=analyzer.profile.prompt,
        )
        try:
            while True:
                with self._wake:
                    while self._pending is None and not self._stopping:
                        self._wake.wait()
                    if self._stopping:
                        return
                    job, self._pending = self._pending, None
                    self._current = job
                self._analyse(analyzer, job)
                with self._lock:
                    self._current = None
        finally:
            analyzer.close()

    def _analyse(self, analyzer: Analyzer, job: _Job) -> None:
        streamed: list[str] = []

        def on_token(piece: str) -> None:
            streamed.append(piece)
            self._update(streamed="".join(streamed))

        try:
            result = analyzer.analyze(job.image, job.name, on_token=on_token, cancel=job.cancel)
        except Exception as exc:
            self._update(busy=False, error=f"{job.name}: analysis failed: {exc}")
            return
        if job.cancel.is_set():
            return  # a newer image took over; its own run updates the screen
        self._update(busy=False, result=result, streamed=result.answer.raw)
