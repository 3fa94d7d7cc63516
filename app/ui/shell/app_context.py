"""The app's long-lived state: one practice controller, one Models controller and the settings.

Every tab of the running app shares them (one worker, one model, one session on screen); each
page's Shell subscribes while it is open. They are made on the first page and closed once, when
the app ends (`close`): downloads stop and keep their .part files, a running session ends and is
written, and the worker stops, instead of being cut off by the interpreter's exit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

import flet as ft

from app.core.settings import Settings
from app.frames.motion_stream import MotionStreams
from app.models.catalog import DEFAULT_MODEL_ID
from app.models.store import ModelStore
from app.storage.locations import sessions_dir
from app.ui.models.controller import ModelsController
from app.ui.practice.controller import PracticeController
from app.ui.settings.controller import SettingsController, connect_practice, worker_spec
from app.ui.shell.page_loop import connection_closed
from app.ui.shell.printouts import Printouts
from app.worker.messages import WorkerSpec

log = logging.getLogger("keyframe.ui")

DOWNLOADS_STOP_S = 10.0  # at exit, for downloads to write what they have and stop


class AppContext:
    """What outlives a page. `main` is what ft.run (or the web shell) calls for each new page."""

    def __init__(self, spec: WorkerSpec, make_shell: Callable[[ft.Page, AppContext], None]) -> None:
        self._spec = spec
        self._make_shell = make_shell
        self._lock = threading.Lock()
        self._practice: PracticeController | None = None
        self._models: ModelsController | None = None
        self._closed = False
        # settings.json, read once per app; a damaged one is kept as settings.json.bad and said on screen.
        self.settings = SettingsController()
        self.settings.set_started_profile(spec.profile)  # --profile: what the settings' default asks
        # The live camera's motion frames, from each page's script to the session its camera feeds.
        self.motion = MotionStreams()
        # Practice reports the Sessions screen opens in a tab to print (web only: the server serves them).
        self.printouts = Printouts()

    async def main(self, page: ft.Page) -> None:
        try:
            self._make_shell(page, self)
        except Exception:
            if not connection_closed(page):
                raise
            # A page that closes right after registering is a normal event: nothing to build it for.
            log.info("a page went away while it was being built")

    def practice(self) -> PracticeController:
        with self._lock:
            if self._practice is None:
                spec = worker_spec(self.settings.settings, self._spec)  # the first worker follows the settings
                self._practice = PracticeController(spec, sessions_dir())
                connect_practice(self.settings, self._practice, self._spec)
                if self._models is not None:
                    self._practice.subscribe(self._models.follow_practice)
                self._practice.start()
            return self._practice

    def models(self) -> ModelsController:
        """The one Models controller of this app: a download goes on when the tab that started it closes.
        It follows the model the worker runs (the settings' choice, else the command line's)."""
        with self._lock:
            if self._models is None:
                active = self._in_use(self.settings.settings)
                settings = self.settings

                def choose(ref: str) -> None:  # "use this model": the settings restart the worker on it
                    # The demo by its id, not None: None means "the command line's --model", which may
                    # be the very folder that cannot be used.
                    settings.update(model=ref)

                folder = Path(active) if active and Path(active).is_dir() else None
                self._models = models = ModelsController(
                    ModelStore.from_env(skip_broken=True),  # a bad manifest is said on the screen
                    on_choose=choose,
                    active=active,
                    folders=[folder] if folder is not None else [],  # a folder in use
                )
                settings.subscribe(lambda state: models.set_active(self._in_use(state.settings)))
                if self._practice is not None:  # the model in use, measured as it loads and answers
                    self._practice.subscribe(models.follow_practice)
            return self._models

    def close(self) -> None:
        """At the app's end: downloads stop (resumable), the session ends, the worker stops. Once."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            models, practice = self._models, self._practice
        if models is not None and not models.shutdown(DOWNLOADS_STOP_S):
            log.warning("a download was still stopping when the app ended")
        if practice is not None:
            practice.shutdown()

    def _in_use(self, settings: Settings) -> str | None:
        """The model the worker runs, a folder written as the Models screen lists it."""
        ref = worker_spec(settings, self._spec).model
        if ref and ref != DEFAULT_MODEL_ID and Path(ref).is_dir():
            return str(Path(ref))
        return ref
