"""Flet entry point: one page's app shell (header, navigation, screens) over the app's shared state.

`build_app` makes the AppContext (app.ui.shell.app_context): one PracticeController, Models controller
and settings for every tab of the running app; each page's Shell subscribes while it is open.
Pages only render state and forward events; the camera pump (app.ui.practice.camera_pump) and the file
picks (app.ui.practice.file_intake) are the page's async tasks because they talk to the browser.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import flet as ft
import flet_camera as fc

from app.core.notice import Notice
from app.frames.limits import MAX_FILE_BYTES, MAX_VIDEO_BYTES
from app.frames.motion_stream import MotionStreams
from app.privacy.guard import GuardCounts, GuardWatcher, ensure_installed
from app.session.review import Verdict
from app.storage.locations import sessions_dir, upload_dir
from app.storage.profile_store import save_cut
from app.ui.models.controller import ModelsController
from app.ui.models.state import ModelsState
from app.ui.models.view import ModelsView
from app.ui.parts.widgets import tagged
from app.ui.practice.camera_pump import CameraPump
from app.ui.practice.controller import PracticeController, PracticeState, SourceKind
from app.ui.practice.file_intake import FileIntake, Picked
from app.ui.practice.metronome import Metronome, RateTones
from app.ui.practice.view import PracticeActions, PracticeView
from app.ui.sessions.controller import SessionsController, SessionsState
from app.ui.sessions.view import SessionsView, file_picker_saver
from app.ui.settings.controller import SettingsController, SettingsState
from app.ui.settings.view import SettingsView
from app.ui.shell.app_context import AppContext
from app.ui.shell.page_loop import Ticker, connection_closed, on_page_loop
from app.ui.shell.printouts import Printouts
from app.ui.shell.privacy_sheet import privacy_sheet
from app.ui.testers.controller import TestersController, TestersState
from app.ui.testers.view import TestersView
from app.ui.words import LOCALES, fonts_for, language_or_default, notice_text
from app.ui.words import main as strings
from app.ui.words import models as strings_models
from app.ui.words import sessions as strings_sessions
from app.ui.words import settings as strings_settings
from app.ui.words import testers as strings_testers
from app.ui.words.sessions import sessions_notice_text
from app.worker.hosts import pauses_in_background
from app.worker.messages import WorkerSpec

T = TypeVar("T")
log = logging.getLogger("keyframe.ui")

# The screens, in navigation order.
PRACTICE, SESSIONS, TESTERS, MODELS, SETTINGS = range(5)
WIDE = 720  # px: a navigation rail from here on, a bottom bar below


def build_app(model_ref: str | None = None, profile_path: Path | None = None) -> AppContext:
    """The app bound to a model (id or folder) and a profile; its `main(page)` is for ft.run."""
    return AppContext(WorkerSpec(model=model_ref, profile=profile_path, checklists=True), _open_page)


def _open_page(page: ft.Page, app: AppContext) -> None:
    page.title = strings.EN["title"]
    page.padding = 0
    page.theme_mode = ft.ThemeMode.LIGHT
    page.bgcolor = ft.Colors.WHITE  # opaque: the loading screen's copy behind the canvas must not show through
    controller = app.practice()
    Shell(
        page,
        controller,
        ft.FilePicker(),
        fc.Camera(preview_enabled=True),
        app.settings,
        app.models(),
        motion=app.motion,
        printouts=app.printouts,
    ).mount()


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
        metronome: Metronome | None = None,
        motion: MotionStreams | None = None,
        rate_tones: RateTones | None = None,
        printouts: Printouts | None = None,
    ) -> None:
        """`testers`: the previous page's testers' run, kept across a change of language.
        `motion`: where the page's script sends the live camera's movement (`app.frames.motion_stream`).
        `hidden_session`: the ended session this page does not show (see PracticeView.hide_session);
        by default the one that ended before this page opened, so a new tab starts from a clean card."""
        self.language = language_or_default(settings.settings.language)
        t = self.t = strings.TABLES[self.language]
        words = strings_sessions.TABLES[self.language]
        self.page = page
        self.controller = controller
        self.picker = picker
        self.camera = camera
        self.motion = motion or MotionStreams()
        self.printouts = printouts
        self.url_launcher = ft.UrlLauncher()
        # This page's own (a sound plays where the trainee is), handed on when the page is rebuilt: the
        # browser keeps playing it across a reconnect, and the switch must say so.
        self.metronome = metronome or Metronome(page)
        self.rate_tones = rate_tones or RateTones(page)  # the same: this page's, handed on when rebuilt
        self.practice = PracticeView(
            PracticeActions(
                start=lambda kind, interval: page.run_task(self._start, kind, interval),
                stop=controller.stop_session,
                interval=self._set_interval,
                review=self._review,
                open_models=lambda: self.go(MODELS),
                open_settings=self._change_questions,
                thumbnail=controller.thumbnail,
                metronome=lambda on, rate: page.run_task(self.metronome.set, on, rate),
                play_held_sound=lambda: page.run_task(self._play_held_sound),
                rate_tones=self.rate_tones.set,
                names=controller.set_names,
                try_examples=controller.try_examples,
                open_session=self._open_session,
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
            language=self.language,  # the practice report is exported in the screen's language
        )
        # Printing goes through a tab the app's own server serves: the web app's (a desktop window or a
        # phone app has no such server, and saves the report's file instead).
        print_report = self._print_report if page.web and printouts is not None else None
        self.sessions = SessionsView(
            self.sessions_controller, file_picker_saver(picker), words, page.run_thread, print_report
        )
        testers_words = strings_testers.TABLES[self.language]
        self.testers_controller = testers or TestersController(controller, use_cut=self._use_cut)
        self.testers = TestersView(
            self.testers_controller,
            pick=lambda file_type, many, limit, done: page.run_task(
                self._pick_and_start, file_type, many, limit, done, self._testers_error
            ),
            save_file=file_picker_saver(picker),
            strings=testers_words,
            language=self.language,
        )
        models_words = strings_models.TABLES[self.language]
        self.models_controller = models
        self.models = ModelsView(models, models_words, self.language)
        settings_words = strings_settings.TABLES[self.language]
        self.settings_controller = settings
        self.settings = SettingsView(settings, settings_words, use_profile=self._use_profile)
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
        self.files = FileIntake(page, picker, upload_dir(), keep=lambda: controller.playing_upload)
        self.camera_pump = CameraPump(
            camera, controller, self.tab, self.motion, page.session.id, page_closed=lambda: connection_closed(page)
        )
        self._state = PracticeState()  # the newest state, for the privacy sheet
        # The page's one periodic work: once a second while a session runs, the card's answer shows its
        # age again (no new state comes while a scene stays unchanged). Stopped when the page goes away.
        self.ticker = Ticker(page.run_task, self._tick, wanted=lambda: self._live and self._state.running)

    # --- lifecycle ---------------------------------------------------------------------------

    def mount(self) -> None:
        page = self.page
        page.fonts, family = fonts_for(self.language)
        page.theme = ft.Theme(color_scheme_seed=ft.Colors.TEAL, font_family=family)
        locales = {code: ft.Locale(*parts) for code, parts in LOCALES.items()}
        page.locale_configuration = ft.LocaleConfiguration(list(locales.values()), locales[self.language])
        page.services.append(self.picker)
        page.services.append(self.url_launcher)
        if self.metronome.service is not None:
            page.services.append(self.metronome.service)
        self.metronome.hold.listen(self._show_metronome)
        self.rate_tones.hold.listen(self._show_metronome)
        self.practice.show_metronome(self.metronome.on, self.metronome.rate, self._sound_held)
        page.services.extend(self.rate_tones.services)
        self.practice.show_rate_tones(self.rate_tones.on)
        page.on_resize = lambda _: self._layout()
        # A dropped connection (a phone's browser locked, a network change) resumes the same page
        # when the browser comes back within Flet's session timeout: the page listens again then.
        page.on_disconnect = lambda _: self._disconnected()
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
        self.ticker.stop()
        self.camera_pump.page_gone()
        if self._guard_watcher is not None:
            self._guard_watcher.stop()
            self._guard_watcher = None

    def _disconnected(self) -> None:
        """The browser's connection dropped. The page's content is emptied on the server now, while no
        browser holds it: Flet 1.0.5 answers a reconnecting browser with the whole page as it is then,
        and a browser given a whole full page at once draws for 60–100 s (a core busy, no tap answered);
        given an empty one, it gets the content from `_reattach` as a new page's, in about a second."""
        self._detach()
        self.page.controls.clear()
        self.page.services.clear()
        self.page.navigation_bar = None

    def _reattach(self) -> None:
        """The browser is back on this page after a dropped connection. Flet 1.0.5 resumes the
        session, but the browser's copy of the page no longer takes updates, and its file picker
        is gone (seen: taps answered on the server, never shown). A new page with new controls and
        a new picker is sent instead; the controllers keep the state, so nothing is lost."""
        self.metronome.rebuilt()
        self.rate_tones.rebuilt()
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
            metronome=self.metronome,
            motion=self.motion,
            rate_tones=self.rate_tones,
            printouts=self.printouts,
        )
        shell.practice.choose(self.practice.chosen)
        shell.mount()
        return shell

    def _layout(self) -> None:
        wide = (self.page.width or WIDE) >= WIDE
        self.rail.visible = wide
        self.practice.arrange(wide, self.page.width)
        self.sessions.arrange(wide)
        self.page.navigation_bar = None if wide else self.bar
        self.page.update()

    def _open_session(self, session_id: str) -> None:
        """An ended session's answers, from Practice's news of its end: Sessions, with it opened."""
        self.go(SESSIONS)
        self.page.run_thread(self.sessions_controller.open, session_id)

    def _change_questions(self) -> None:
        """Practice's "Change" beside "Asking:": Settings, at the Question field rather than its top."""
        self.go(SETTINGS)
        self.page.run_task(self.settings.show_question)

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
        self.rate_tones.follow(self.practice.cue_band)  # the tone, if due, agrees with the word shown
        if state.running:
            self.ticker.start()
        self.demo_box.visible = state.demo_model
        self.privacy_text.value = self.t["privacy_chip"].format(n=state.blocked)
        labels = dict(state.labels).get(self.language)
        title = (labels.title if labels else "") or state.title
        if title:
            self.purpose.value = title
        self.page.update()

    def _tick(self) -> None:
        self.practice.tick()
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

    def _testers_error(self, notice: Notice) -> None:
        self.testers_controller.report_error("notice_files_refused", detail=notice_text(self.t, notice))

    def _on_sessions(self, state: SessionsState) -> None:
        self.sessions.render(state)
        self.page.update()

    @property
    def _sound_held(self) -> bool:
        return self.metronome.hold.held or self.rate_tones.hold.held

    def _show_metronome(self) -> None:
        self.practice.show_metronome(self.metronome.on, self.metronome.rate, self._sound_held)
        self.page.update()

    async def _play_held_sound(self) -> None:
        self.rate_tones.play_held()
        await self.metronome.play_held()

    def _on_guard(self, counts: GuardCounts) -> None:
        self.controller.network_blocked(counts.blocked)

    # --- events --------------------------------------------------------------------------------

    def _set_interval(self, seconds: int) -> None:
        self.controller.set_interval(seconds)

    def _print_report(self) -> None:
        """The opened session's report in a new tab of the app's own server, which opens the browser's
        print dialog there (its printer, or Save as PDF)."""
        nonce = secrets.token_urlsafe(16)
        html = self.sessions_controller.printable_report(nonce)
        if html is not None and self.printouts is not None:
            url = f"/print/{self.printouts.add(html)}"
            self.page.run_task(self.url_launcher.launch_url, url, web_only_window_name="_blank")

    def _review(self, verdicts: Sequence[Verdict], revise: bool) -> None:
        self._refused(self.controller.review(verdicts, revise=revise))

    def _refused(self, refused: Notice | None) -> None:
        if refused is not None:
            self._toast(sessions_notice_text(strings_sessions.TABLES[self.language], refused))

    def _use_cut(self, profile: Path, min_score: float, signal: str | None = None) -> Path:
        """A score cut kept on the Testers screen (on `signal` of a checklist): saved among the person's
        profiles, then asked from."""
        saved = save_cut(profile, min_score, self.settings_controller.profiles_dir, signal=signal)
        self.settings_controller.refresh_profiles()
        self._use_profile(saved)
        return saved

    def _use_profile(self, saved: Path) -> None:
        """A profile file just saved (a kept cut, an edit) is what the worker asks from next."""
        settings = self.settings_controller
        if settings.settings.profile == str(saved):
            self.controller.reload_worker()  # the same file, changed: the worker reads it again
        else:
            settings.update(profile=str(saved))

    def _toast(self, message: str) -> None:
        self.page.show_dialog(ft.SnackBar(ft.Text(message)))

    def _privacy_sheet(self) -> None:
        self.page.show_dialog(privacy_sheet(self.t, self._state, close=lambda: self.page.pop_dialog()))

    async def _start(self, kind: SourceKind, interval: int) -> None:
        self.controller.set_interval(interval)
        if kind is SourceKind.CAMERA and self._owns_camera():
            self.controller.start_opencv_camera()
        elif kind is SourceKind.CAMERA:
            await self.camera_pump.run()
        elif kind is SourceKind.VIDEO:
            await self._pick_and_start(ft.FilePickerFileType.VIDEO, False, MAX_VIDEO_BYTES, self._start_video)
        else:
            await self._pick_and_start(
                ft.FilePickerFileType.IMAGE, kind is SourceKind.FOLDER, MAX_FILE_BYTES, self._start_stills
            )

    async def _pick_and_start(
        self,
        file_type: ft.FilePickerFileType,
        many: bool,
        limit: int,
        start: Callable[[Picked], None],
        report: Callable[[Notice], None] | None = None,
    ) -> None:
        """Problems go to `report` (the screen that asked), the practice screen's error line by default."""
        await self.files.pick(file_type, many, limit, start, report or self.controller.report_error)

    def _start_video(self, files: list[tuple[str, Path]]) -> None:
        name, path = files[0]
        # A copy uploaded for this session is deleted when it ends.
        self.controller.start_video(name, path, discard=path.parent if self.files.is_upload(path) else None)

    def _start_stills(self, files: Picked) -> None:
        label = files[0][0] if len(files) == 1 else f"{len(files)} images"
        self.files.read(files, lambda images: self.controller.start_stills(images, label), self.controller.report_error)

    def _on_lifecycle(self, e: ft.AppLifecycleStateChangeEvent) -> None:
        # This handler changes no control (the controllers' listeners render), so Flet's update of the
        # whole page after it is skipped: a closing tab sends this event while its page is torn down,
        # and that update then raised into the terminal (seen once in CI, at a tab's close).
        ft.context.disable_auto_update()  # type: ignore[no-untyped-call]  # flet leaves it unannotated
        backgrounded = e.state in (ft.AppLifecycleState.HIDE, ft.AppLifecycleState.PAUSE)
        platform = self.page.platform.value if self.page.platform else ""
        if backgrounded and pauses_in_background(platform, self.page.web):
            self.controller.pause_for_background()

    def _owns_camera(self) -> bool:
        """A packaged desktop app opens the camera itself (flet-camera serves browsers and phones)."""
        desktop = (ft.PagePlatform.MACOS, ft.PagePlatform.WINDOWS, ft.PagePlatform.LINUX)
        return not self.page.web and self.page.platform in desktop
