"""Flet entry point: the app shell (header, navigation, privacy sheet) and the page's async work.

One PracticeController serves every tab of the running app (one worker, one
model, one session on screen); each page subscribes to it while it is open.
Pages only render state and forward events; the camera pump and the file
pickers are the page's async tasks because they talk to the browser.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import threading
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import flet as ft
import flet_camera as fc

from app.core.settings import Settings
from app.core.sizes import size_words
from app.frames.intake import MAX_FILE_BYTES
from app.models.catalog import DEFAULT_MODEL_ID
from app.models.storage import sessions_dir
from app.models.store import ModelStore
from app.privacy.guard import GuardCounts, GuardWatcher, ensure_installed
from app.ui import strings, strings_models, strings_sessions, strings_settings, strings_testers
from app.ui.i18n import LOCALES, fonts_for, language_or_default
from app.ui.models_controller import ModelsController, ModelsState
from app.ui.models_view import ModelsView
from app.ui.page_loop import on_page_loop
from app.ui.practice_controller import PracticeController, PracticeState
from app.ui.practice_view import PracticeActions, PracticeView
from app.ui.sessions_controller import SessionsController, SessionsState
from app.ui.sessions_view import SessionsView, file_picker_saver
from app.ui.settings_controller import SettingsController, SettingsState, connect_practice, worker_spec
from app.ui.settings_view import SettingsView
from app.ui.testers_controller import TestersController, TestersState
from app.ui.testers_view import TestersView
from app.ui.web_shell import upload_dir
from app.ui.widgets import tagged
from app.worker.hosts import pauses_in_background
from app.worker.messages import WorkerSpec

T = TypeVar("T")
log = logging.getLogger("keyframe.ui")

# The screens, in navigation order.
PRACTICE, SESSIONS, TESTERS, MODELS, SETTINGS = range(5)
WIDE = 720  # px: a navigation rail from here on, a bottom bar below
CAMERA_PERIOD_S = 0.4  # one picture from the camera this often: enough for 2–5 s keyframes
# Checked on the size the picker reports, before a byte is sent: the upload is the boundary that owns it.
MAX_VIDEO_BYTES = 512 * 1024 * 1024
UPLOAD_TIMEOUT_S = 600  # a 500 MB video over loopback takes seconds; a stuck upload must end


class SharedPractice:
    """The app's one practice controller and its settings, made on the first page and kept for its life."""

    def __init__(self, spec: WorkerSpec) -> None:
        self._spec = spec
        self._lock = threading.Lock()
        self._controller: PracticeController | None = None
        self._models: ModelsController | None = None
        # settings.json, read once per app; a damaged one is kept as settings.json.bad and said on screen.
        self.settings = SettingsController()

    def get(self) -> PracticeController:
        with self._lock:
            if self._controller is None:
                spec = worker_spec(self.settings.settings, self._spec)  # the first worker follows the settings
                self._controller = PracticeController(spec, sessions_dir())
                connect_practice(self.settings, self._controller, self._spec)
                self._controller.start()
            return self._controller

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
            return self._models

    def _in_use(self, settings: Settings) -> str | None:
        """The model the worker runs, a folder written as the Models screen lists it."""
        ref = worker_spec(settings, self._spec).model
        if ref and ref != DEFAULT_MODEL_ID and Path(ref).is_dir():
            return str(Path(ref))
        return ref


def build_main(model_ref: str | None = None, profile_path: Path | None = None) -> Callable[[ft.Page], Awaitable[None]]:
    """Returns the `main(page)` for ft.run, bound to a model (id or folder) and a profile."""
    shared = SharedPractice(WorkerSpec(model=model_ref, profile=profile_path))

    async def main(page: ft.Page) -> None:
        page.title = strings.EN["title"]
        page.padding = 0
        page.theme_mode = ft.ThemeMode.LIGHT
        page.bgcolor = ft.Colors.WHITE  # opaque: the loading screen's copy behind the canvas must not show through
        controller = shared.get()
        picker = ft.FilePicker()
        camera = fc.Camera(preview_enabled=True)
        Shell(page, controller, picker, camera, shared.settings, shared.models()).mount()

    return main


class Shell:
    """One page's app: header, navigation and screens, all in one language. Changing the language
    builds a new Shell on the same page (controllers keep the state; views only render it)."""

    def __init__(
        self,
        page: ft.Page,
        controller: PracticeController,
        picker: ft.FilePicker,
        camera: fc.Camera,
        settings: SettingsController,
        models: ModelsController,
        testers: TestersController | None = None,
        hidden_session: str | None = None,
    ) -> None:
        """`testers`: the previous page's testers' run, kept across a change of language.
        `hidden_session`: the ended session this page does not show (see PracticeView.hide_session);
        by default the one that ended before this page opened, so a new tab starts from a clean card."""
        self.language = language_or_default(settings.settings.language)
        t = self.t = strings.TABLES[self.language]
        words = strings_sessions.TABLES[self.language]
        self.page = page
        self.controller = controller
        self.picker = picker
        self.camera = camera
        self.practice = PracticeView(
            PracticeActions(
                start=lambda kind, interval: page.run_task(self._start, kind, interval),
                stop=controller.stop_session,
                interval=self._set_interval,
                confirm=lambda event_id, note, revise: self._review(event_id, None, note, revise),
                correct=lambda event_id, value, note, revise: self._review(event_id, value, note, revise),
                open_models=lambda: self.go(MODELS),
                thumbnail=controller.thumbnail,
            ),
            camera,
            t,
            words,
            self.language,
        )
        self.tab = uuid.uuid4().hex  # this page, as the owner of a camera session
        self.practice.tab = self.tab
        state = controller.state
        self.practice.hide_session(
            hidden_session if hidden_session is not None else (None if state.running else state.session_id)
        )
        self._live = False  # between mount and unmount: a render queued before unmount is dropped
        # Every listener renders on the page's loop, whichever thread the controller emits on.
        self._practice_listener = self._on_loop(self._on_practice)
        self._settings_listener = self._on_loop(self._on_settings)
        self._models_listener = self._on_loop(self._on_models)
        self._testers_listener = self._on_loop(self._on_testers)
        self.sessions_controller = SessionsController(
            sessions_dir(),
            self._on_loop(self._on_sessions),
            is_live=lambda sid: controller.state.running and controller.state.session_id == sid,
        )
        self.sessions = SessionsView(self.sessions_controller, file_picker_saver(picker), words, page.run_thread)
        testers_words = strings_testers.TABLES[self.language]
        self.testers_controller = testers or TestersController(controller)
        self.testers = TestersView(
            self.testers_controller,
            pick=lambda file_type, many, limit, done: page.run_task(
                self._pick_and_start, file_type, many, limit, done, self._testers_error
            ),
            save_file=file_picker_saver(picker),
            strings=testers_words,
        )
        models_words = strings_models.TABLES[self.language]
        self.models_controller = models
        self.models = ModelsView(models, models_words, self.language)
        settings_words = strings_settings.TABLES[self.language]
        self.settings_controller = settings
        self.settings = SettingsView(settings, settings_words)
        self.demo = ft.Container(
            ft.Row(
                [
                    ft.Icon(ft.Icons.SCIENCE_OUTLINED, size=16, color=ft.Colors.BROWN_900),
                    ft.Text(t["demo_chip"], size=12, expand=True),
                ],
                spacing=6,
            ),
            bgcolor=ft.Colors.AMBER_100,
            padding=ft.Padding.symmetric(horizontal=12, vertical=6),
        )
        self.demo_box = tagged(self.demo, "demo-model-note")  # the wrapper hides: Semantics content stays visible
        self.demo_box.visible = False  # until the worker says which model it loaded
        self.privacy_text = ft.Text(t["privacy_chip"].format(n=0), size=12, color=ft.Colors.WHITE)
        self.privacy = ft.Container(
            ft.Row([ft.Icon(ft.Icons.LOCK_OUTLINE, size=16, color=ft.Colors.WHITE), self.privacy_text], spacing=6),
            bgcolor=ft.Colors.TEAL_800,
            padding=ft.Padding.symmetric(horizontal=12, vertical=6),
            border_radius=16,
            on_click=lambda _: self._privacy_sheet(),
            tooltip=t["privacy_sheet_title"],
        )
        self.header_title = ft.Text(t["title"], size=20, weight=ft.FontWeight.BOLD)
        self.purpose = ft.Text(t["purpose"], size=12, color=ft.Colors.GREY_700)
        header = ft.Container(
            ft.Row(
                [
                    ft.Column([self.header_title, self.purpose], spacing=0, expand=True),
                    tagged(self.privacy, "privacy-notice"),
                ],
                vertical_alignment=ft.CrossAxisAlignment.CENTER,
            ),
            padding=ft.Padding.symmetric(horizontal=16, vertical=10),
            bgcolor=ft.Colors.TEAL_50,
        )
        destinations = [  # in the order of PRACTICE, SESSIONS, TESTERS, MODELS, SETTINGS
            (ft.Icons.PLAY_CIRCLE_OUTLINE, t["nav_practice"]),
            (ft.Icons.HISTORY, t["nav_sessions"]),
            (ft.Icons.FACT_CHECK_OUTLINED, testers_words["nav_testers"]),
            (ft.Icons.DOWNLOAD_FOR_OFFLINE_OUTLINED, models_words["models_title"]),
            (ft.Icons.SETTINGS_OUTLINED, settings_words["settings_title"]),
        ]
        self.rail = ft.NavigationRail(
            selected_index=0,
            destinations=[ft.NavigationRailDestination(icon=i, label=label) for i, label in destinations],
            label_type=ft.NavigationRailLabelType.ALL,
            on_change=lambda e: self.go(e.control.selected_index),
        )
        self.bar = ft.NavigationBar(
            selected_index=0,
            destinations=[ft.NavigationBarDestination(icon=i, label=label) for i, label in destinations],
            on_change=lambda e: self.go(e.control.selected_index),
        )
        # Practice stays on the page under every other screen: its camera control must stay mounted,
        # or leaving Practice ends a camera session (a control taken off the page has no client side,
        # and Flet refuses the next picture). Another screen covers it, opaque, and its semantics
        # (what a screen reader and the tests read) are left out while covered.
        self.practice_layer = ft.Semantics(content=self.practice.root, exclude_semantics=False)
        self.cover_layer = ft.Container(bgcolor=ft.Colors.WHITE, left=0, top=0, right=0, bottom=0, visible=False)
        self.body = ft.Stack(
            [ft.Container(self.practice_layer, left=0, top=0, right=0, bottom=0), self.cover_layer], expand=True
        )
        self.root = ft.Column(
            [
                header,
                self.demo_box,
                ft.Row([self.rail, ft.VerticalDivider(width=1), self.body], expand=True, spacing=0),
            ],
            spacing=0,
            expand=True,
        )
        self._guard_watcher: GuardWatcher | None = None
        self._uploads: dict[str, asyncio.Future[None]] = {}  # file name -> done, for the upload in progress
        picker.on_upload = self._on_upload
        self._pumping_camera = False
        self._state = PracticeState()  # the newest state, for the privacy sheet

    # --- lifecycle ---------------------------------------------------------------------------

    def mount(self) -> None:
        page = self.page
        page.fonts, family = fonts_for(self.language)
        page.theme = ft.Theme(color_scheme_seed=ft.Colors.TEAL, font_family=family)
        locales = {code: ft.Locale(*parts) for code, parts in LOCALES.items()}
        page.locale_configuration = ft.LocaleConfiguration(list(locales.values()), locales[self.language])
        page.services.append(self.picker)
        page.on_resize = lambda _: self._layout()
        # A dropped connection (a phone's browser locked, a network change) resumes the same page
        # when the browser comes back within Flet's session timeout: the page listens again then.
        page.on_disconnect = lambda _: self._detach()
        page.on_connect = lambda _: self._reattach()
        page.on_close = lambda _: self.unmount()
        page.on_app_lifecycle_state_change = self._on_lifecycle
        page.add(self.root)
        self._layout()
        self.testers_controller.attach()
        self._attach()

    def unmount(self, handing_over: bool = False) -> None:
        """`handing_over`: a new Shell on this page takes the testers' run (it keeps following the worker)."""
        self._detach()
        if not handing_over:
            self.testers_controller.detach()

    def _attach(self) -> None:
        """Listen to the controllers; each gives its state at once, so the page shows what is now."""
        self._live = True
        # The watcher's thread brings the guard's counts (at once, then on each change) outside the audit hook.
        self._guard_watcher = GuardWatcher(ensure_installed(), self._on_guard).start()
        self.controller.subscribe(self._practice_listener)
        self.settings_controller.subscribe(self._settings_listener)
        self.models_controller.subscribe(self._models_listener)
        self.testers_controller.listen(self._testers_listener)

    def _detach(self) -> None:
        """Stop listening (a testers' run goes on: it follows the worker, not the page)."""
        self._live = False
        self.models_controller.unsubscribe(self._models_listener)
        self.settings_controller.unsubscribe(self._settings_listener)
        self.controller.unsubscribe(self._practice_listener)
        if self._pumping_camera:  # this tab's camera fed the session: without it the session is over
            self._pumping_camera = False
            self.controller.camera_tab_gone(self.tab, self.t["camera_tab_gone"])
        if self._guard_watcher is not None:
            self._guard_watcher.stop()
            self._guard_watcher = None

    def _reattach(self) -> None:
        """The browser is back on this page after a dropped connection. Flet 1.0.5 resumes the
        session, but the browser's copy of the page no longer takes updates, and its file picker
        is gone (seen: taps answered on the server, never shown). A new page with new controls and
        a new picker is sent instead; the controllers keep the state, so nothing is lost."""
        self._rebuild(fresh=True).go(self.rail.selected_index or PRACTICE)

    def _rebuild(self, fresh: bool = False) -> Shell:
        """This page built again by a new Shell (in the settings' language); `fresh`: with a new
        file picker and camera, for a browser that lost its copies of them."""
        self.unmount(handing_over=True)
        self.page.controls.clear()
        self.page.services.clear()
        picker = ft.FilePicker() if fresh else self.picker
        camera = fc.Camera(preview_enabled=True) if fresh else self.camera
        shell = Shell(
            self.page,
            self.controller,
            picker,
            camera,
            self.settings_controller,
            self.models_controller,
            self.testers_controller,
            hidden_session=self.practice.hidden_session or "",
        )
        shell.mount()
        return shell

    def _layout(self) -> None:
        wide = (self.page.width or WIDE) >= WIDE
        self.rail.visible = wide
        self.practice.arrange(wide, self.page.width)
        self.sessions.arrange(wide)
        self.page.navigation_bar = None if wide else self.bar
        self.page.update()

    def go(self, index: int) -> None:
        self.rail.selected_index = self.bar.selected_index = index
        if index == SESSIONS:
            self.sessions.reload()
        if index == MODELS:
            self.page.run_thread(self.models_controller.refresh)  # every model's status, off the UI thread
        screens = {
            SESSIONS: self.sessions.root,
            TESTERS: self.testers.root,
            SETTINGS: self.settings.root,
            MODELS: self.models.root,
        }
        screen = screens.get(index)
        self.cover_layer.content = screen
        self.cover_layer.visible = screen is not None
        self.practice_layer.exclude_semantics = screen is not None
        self.page.update()

    # --- state from the controllers ----------------------------------------------------------

    def _on_loop(self, render: Callable[[T], None]) -> Callable[[T], None]:
        def live_only(state: T) -> None:
            if self._live:
                render(state)

        return on_page_loop(self.page, live_only)

    def _on_practice(self, state: PracticeState) -> None:
        self._state = state
        self.practice.render(state)
        self.demo_box.visible = state.demo_model
        self.privacy_text.value = self.t["privacy_chip"].format(n=state.blocked)
        labels = dict(state.labels).get(self.language)
        title = (labels.title if labels else "") or state.title
        if title:
            self.purpose.value = title
        self.page.update()

    def _on_settings(self, state: SettingsState) -> None:
        if state.settings.language != self.language:  # this page again, all in the new language
            self._rebuild().go(SETTINGS)
            return
        self.settings.render(state)
        self.page.update()

    def _on_models(self, state: ModelsState) -> None:
        self.models.render(state)
        self.page.update()

    def _on_testers(self, state: TestersState) -> None:
        self.testers.render(state)
        self.page.update()

    def _testers_error(self, message: str) -> None:
        self.testers_controller.report_error("notice_files_refused", detail=message)  # a whole sentence already

    def _on_sessions(self, state: SessionsState) -> None:
        self.sessions.render(state)
        self.page.update()

    def _on_guard(self, counts: GuardCounts) -> None:
        self.controller.network_blocked(counts.blocked)

    # --- events --------------------------------------------------------------------------------

    def _set_interval(self, seconds: int) -> None:
        self.controller.set_interval(seconds)

    def _review(self, event_id: str, value: str | None, note: str, revise: bool) -> None:
        error = self.controller.review(event_id, value, note, revise=revise)
        if error:
            self._toast(error)

    def _toast(self, message: str) -> None:
        self.page.show_dialog(ft.SnackBar(ft.Text(message)))

    def _privacy_sheet(self) -> None:
        state = self._state
        worker = self.t["privacy_worker_pending"]
        if state.isolation:
            how = self.t.get(f"isolation_{state.isolation_kind}", state.isolation_how)  # the OS's own words in logs
            worker = self.t[f"privacy_worker_{state.isolation}"].format(how=how)
        paragraphs = [self.t["privacy_sheet"], worker, self.t["privacy_app"], self.t["privacy_check"]]
        sheet = ft.AlertDialog(
            title=ft.Text(self.t["privacy_sheet_title"]),
            content=tagged(
                ft.Column([ft.Text(p) for p in paragraphs], tight=True, spacing=10, width=520),
                "privacy-sheet",
            ),
            actions=[ft.TextButton(self.t["close"], on_click=lambda _: self.page.pop_dialog())],
        )
        self.page.show_dialog(sheet)

    async def _start(self, kind: str, interval: int) -> None:
        self.controller.set_interval(interval)
        if kind == "camera" and self._owns_camera():
            self.controller.start_opencv_camera()
        elif kind == "camera":
            await self._camera_session()
        elif kind == "video":
            await self._pick_and_start(ft.FilePickerFileType.VIDEO, False, MAX_VIDEO_BYTES, self._start_video)
        else:
            await self._pick_and_start(
                ft.FilePickerFileType.IMAGE, kind == "folder", MAX_FILE_BYTES, self._start_stills
            )

    async def _pick_and_start(
        self,
        file_type: ft.FilePickerFileType,
        many: bool,
        limit: int,
        start: Callable[[list[tuple[str, Path]]], None],
        report: Callable[[str], None] | None = None,
    ) -> None:
        """Files the user picks, checked against `limit` before upload; problems go to `report`
        (the screen that asked), the practice screen's error line by default."""
        report = report or self.controller.report_error
        # No data with the pick: sizes are checked before a single byte is sent or decoded.
        try:
            files = await self.picker.pick_files(file_type=file_type, allow_multiple=many)
        except (RuntimeError, TimeoutError) as exc:  # the browser never answered (Flet raises RuntimeError)
            log.warning("the file chooser did not answer: %s", exc)  # the detail is for the log, not the screen
            report(self.t["picker_failed"])
            return
        if not files:
            return
        fitting = [f for f in files if f.size <= limit]
        if len(fitting) < len(files):
            big = next(f for f in files if f.size > limit)
            report(self.t["file_too_large"].format(name=big.name, size=size_words(big.size), limit=size_words(limit)))
        if not fitting:
            return
        try:
            paths = await self._fetch(fitting)
        except (OSError, RuntimeError) as exc:
            report(self.t["upload_failed"].format(reason=exc))
            return
        start(paths)

    async def _fetch(self, files: list[ft.FilePickerFile]) -> list[tuple[str, Path]]:
        """Local paths of the picked files: as they are on desktop, uploaded to 127.0.0.1 from a browser."""
        if all(f.path for f in files):
            return [(f.name, Path(f.path)) for f in files if f.path]
        for old in upload_dir().glob("*"):  # earlier uploads, but never the video a session is playing
            if old != self.controller.playing_upload:
                shutil.rmtree(old, ignore_errors=True)
        folder = uuid.uuid4().hex
        loop = asyncio.get_running_loop()
        done = {f.name: loop.create_future() for f in files}
        self._uploads = done
        await self.picker.upload(
            [
                ft.FilePickerUploadFile(
                    id=f.id, name=f.name, upload_url=self.page.get_upload_url(f"{folder}/{f.name}", 600)
                )
                for f in files
            ]
        )
        await asyncio.wait_for(asyncio.gather(*done.values()), timeout=UPLOAD_TIMEOUT_S)
        return [(f.name, upload_dir() / folder / f.name) for f in files]

    def _on_upload(self, e: ft.FilePickerUploadEvent) -> None:
        waiter = self._uploads.get(e.file_name)
        if waiter is None or waiter.done():
            return
        if e.error:
            waiter.set_exception(RuntimeError(f"{e.file_name}: {e.error}"))
        elif e.progress is not None and e.progress >= 1.0:
            waiter.set_result(None)

    def _start_video(self, files: list[tuple[str, Path]]) -> None:
        name, path = files[0]
        uploaded = path.parent.parent == upload_dir()  # a copy made for this session: gone when it ends
        self.controller.start_video(name, path, discard=path.parent if uploaded else None)

    def _start_stills(self, files: list[tuple[str, Path]]) -> None:
        """The files are read on Flet's thread pool: a folder of photos must not freeze every tab."""
        label = files[0][0] if len(files) == 1 else f"{len(files)} images"

        def read_and_start() -> None:
            try:
                images = [(name, path.read_bytes()) for name, path in files]
            except OSError as exc:
                self.controller.report_error(self.t["upload_failed"].format(reason=exc.strerror or exc))
                return
            self.controller.start_stills(images, label)

        self.page.run_thread(read_and_start)

    def _on_lifecycle(self, e: ft.AppLifecycleStateChangeEvent) -> None:
        backgrounded = e.state in (ft.AppLifecycleState.HIDE, ft.AppLifecycleState.PAUSE)
        platform = self.page.platform.value if self.page.platform else ""
        if backgrounded and pauses_in_background(platform, self.page.web):
            self.controller.pause_for_background(self.t["paused_in_background"])

    def _owns_camera(self) -> bool:
        """A packaged desktop app opens the camera itself (flet-camera serves browsers and phones)."""
        desktop = (ft.PagePlatform.MACOS, ft.PagePlatform.WINDOWS, ft.PagePlatform.LINUX)
        return not self.page.web and self.page.platform in desktop

    async def _camera_session(self) -> None:
        self.controller.prepare_camera()
        try:
            cameras = await self.camera.get_available_cameras()
            if not cameras:
                self.controller.camera_failed(self.t["camera_denied"])
                return
            await self.camera.initialize(cameras[0], fc.ResolutionPreset.MEDIUM, enable_audio=False)
        except Exception as exc:  # the browser refused (permission) or has no device
            log.warning("the camera could not be opened: %s", exc)  # e.g. CameraException(cameraNotFound, …)
            self.controller.camera_failed(self.t["camera_denied"])
            return
        self.controller.start_camera(tab=self.tab)
        self._pumping_camera = True
        try:
            while self._pumping_camera and self.controller.state.camera_tab == self.tab:
                try:
                    picture = await self.camera.take_picture()
                except Exception as exc:
                    if self._pumping_camera:  # not a page that just went away (its session ended with a notice)
                        log.warning("the camera stopped sending pictures: %s", exc)
                        self.controller.camera_failed(self.t["camera_lost"])
                    return
                self.controller.offer_picture(picture)
                await asyncio.sleep(CAMERA_PERIOD_S)
        finally:
            self._pumping_camera = False
