"""The Settings screen: backend, threads, image size cap, decoding, default interval, language, reset.

The view renders a `SettingsState` and forwards every change to the
SettingsController, which validates, saves and applies it; the view keeps no
settings of its own. Every control carries a stable identifier (`tagged`) for
screen readers and the browser tests. Its text comes from a strings table
(`app.ui.words.settings`), so a language change is a new view with another table.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import flet as ft

from app.core.profile.task import ProfileError, written_for
from app.core.settings import MAX_INTERVAL_S, MIN_INTERVAL_S, MIN_THREADS, backends_for, threads_cap
from app.core.vision_size import MAX_USER_SIDE, MIN_USER_SIDE
from app.storage.profile_store import MAX_USER_PROFILES
from app.ui.parts.widgets import tagged
from app.ui.settings.controller import EditedProfile, SettingsController, SettingsState, WorkerReport, backend_name
from app.ui.settings.profile_editor import ProfileEditor
from app.ui.words import LANGUAGES, NAMES_FONT, text
from app.ui.words.settings import EN
from app.worker.messages import WorkerStatus

AUTO = "auto"
IMAGE_SIDES = (224, 320, 448, 640, 896)  # on the 32 px grid of Qwen3-VL; 224 is on Qwen2-VL's 28 px grid too
QUESTION_KEY = "settings-question"  # the Question field's scroll key: Practice's "Change" lands on it


def backend_line(strings: Mapping[str, str], worker: WorkerReport) -> tuple[str, bool]:
    """The worker's backend self-check in words, and whether it is a problem to show in red."""
    asked = backend_name(worker.asked)
    if worker.status == WorkerStatus.FAILED:
        return text(strings, "backend_failed", asked=asked, message=worker.message), True
    if not worker.used or worker.status in (WorkerStatus.STARTING, WorkerStatus.RESTARTING):
        return text(strings, "backend_checking", asked=asked), False
    used = backend_name(worker.used)
    if worker.fell_back:
        return text(strings, "backend_fell_back", used=used, asked=asked, note=worker.note), True
    if worker.used != "cpu" and worker.note:
        return text(strings, "backend_in_use_note", used=used, note=worker.note), False
    return text(strings, "backend_in_use", used=used), False


class SettingsView:
    def __init__(
        self,
        controller: SettingsController,
        strings: Mapping[str, str] = EN,
        platform: str = sys.platform,
        cores: int | None = None,
        use_profile: Callable[[Path], None] = lambda _: None,
    ) -> None:
        """`platform` and `cores`: the machine the model runs on (this one), for what is worth offering.
        `use_profile`: asks the worker from a profile file the editor just saved."""
        self._controller = controller
        self._use_profile = use_profile
        self._s = s = strings
        self._platform = platform
        self._cores = cores if cores is not None else os.cpu_count()
        self._max_threads = threads_cap(self._cores)

        self.title = ft.Text(text(s, "settings_title"), size=22, weight=ft.FontWeight.BOLD)

        # The settings file could not be used: said until dismissed.
        self.problem_text = ft.Text("", color=ft.Colors.RED_900)
        self.problem_box = ft.Container(
            ft.Row(
                [
                    ft.Icon(ft.Icons.ERROR_OUTLINE, color=ft.Colors.RED_800),
                    # The text itself is tagged: a row with a button gives its semantics node no text.
                    ft.Container(tagged(self.problem_text, "settings-problem"), expand=True),
                    tagged(
                        ft.IconButton(
                            ft.Icons.CLOSE, tooltip=text(s, "dismiss"), on_click=lambda _: controller.dismiss_problem()
                        ),
                        "settings-problem-dismiss",
                        text(s, "dismiss"),
                    ),
                ],
                vertical_alignment=ft.CrossAxisAlignment.START,
            ),
            bgcolor=ft.Colors.RED_50,
            border_radius=8,
            padding=ft.Padding.symmetric(horizontal=12, vertical=8),
        )
        # A refused value, a failed save or apply.
        self.error_text = ft.Text("", color=ft.Colors.RED_900)
        self.error_box = tagged(self.error_text, "settings-error")

        # Model and speed
        self.model_text = ft.Text("")
        self.backend = ft.SegmentedButton(
            selected=["cpu"],
            segments=self._backend_segments(controller.settings.backend),
            show_selected_icon=False,
            on_change=lambda e: controller.update(backend=e.control.selected[0]),
        )
        self.backend_status = ft.Text("", weight=ft.FontWeight.W_500)
        self.backend_icon = ft.Icon(ft.Icons.MEMORY, size=18)
        self.threads_value = ft.Text("", size=18, weight=ft.FontWeight.BOLD, width=40, text_align=ft.TextAlign.CENTER)
        self.fewer = ft.IconButton(
            ft.Icons.REMOVE, tooltip=text(s, "threads_fewer"), on_click=lambda _: self._step_threads(-1)
        )
        self.more = ft.IconButton(
            ft.Icons.ADD, tooltip=text(s, "threads_more"), on_click=lambda _: self._step_threads(1)
        )
        self.image = ft.Dropdown(
            value=AUTO,
            options=self._image_options(None),
            on_select=lambda e: self._choose_image(e.control.value),
            width=220,
            dense=True,
        )
        self.profile = ft.Dropdown(
            value=AUTO,
            options=self._profile_options(controller.state),
            on_select=lambda e: self._choose_profile(e.control.value),
            dense=True,  # no fixed width: it takes the column's, a phone's too
        )
        self.profile_help = ft.Text("", size=12, color=ft.Colors.GREY_700)
        # Questions written for another model than the one loaded (an instruct prompt on the demo model).
        self.profile_fit = ft.Text("", size=12, color=ft.Colors.ORANGE_900)
        self._profile_fit_box = tagged(self.profile_fit, "settings-profile-fit")
        # Edit the chosen profile (a shipped one as a copy), or start a new checklist.
        self.edit_profile = ft.OutlinedButton(
            text(s, "editor_edit"), icon=ft.Icons.EDIT_OUTLINED, on_click=lambda _: self._open_editor(new=False)
        )
        self.new_profile = ft.TextButton(
            text(s, "editor_new"), icon=ft.Icons.PLAYLIST_ADD, on_click=lambda _: self._open_editor(new=True)
        )
        self.editor = ProfileEditor(s, self._save_edited)
        self.constrained = ft.Switch(
            label=text(s, "constrained_label"),
            value=True,
            on_change=lambda e: controller.update(constrained=bool(e.control.value)),
        )

        # Practice
        self.interval = ft.SegmentedButton(
            selected=["3"],
            segments=[
                ft.Segment(value=str(n), label=ft.Text(text(s, "seconds", n=n)))
                for n in range(MIN_INTERVAL_S, MAX_INTERVAL_S + 1)
            ],
            show_selected_icon=False,
            on_change=lambda e: controller.update(interval_s=int(e.control.selected[0])),
        )
        self.language = ft.SegmentedButton(
            selected=["en"],
            # Each language's own name, in a face that has its characters whatever the screen's language.
            segments=[
                ft.Segment(value=k, label=ft.Text(name, font_family=NAMES_FONT)) for k, name in LANGUAGES.items()
            ],
            show_selected_icon=False,
            on_change=lambda e: controller.update(language=e.control.selected[0]),
        )
        self.reset_button = ft.OutlinedButton(text(s, "reset"), icon=ft.Icons.RESTART_ALT, on_click=self._ask_reset)
        self.where = ft.Text("", size=12, color=ft.Colors.GREY_700, selectable=True)

        model_section = self._section(
            text(s, "section_model"),
            [
                self._field(text(s, "model_label"), tagged(self.model_text, "settings-model"), text(s, "model_help")),
                self._field(
                    text(s, "backend_label"),
                    ft.Column(
                        [
                            tagged(self.backend, "settings-backend", text(s, "backend_label")),
                            tagged(
                                ft.Row([self.backend_icon, ft.Container(self.backend_status, expand=True)], spacing=6),
                                "settings-backend-status",
                            ),
                        ],
                        spacing=8,
                    ),
                    text(s, "backend_help"),
                ),
                self._field(
                    text(s, "threads_label"),
                    ft.Row(
                        [
                            tagged(self.fewer, "settings-threads-fewer", text(s, "threads_fewer")),
                            tagged(self.threads_value, "settings-threads"),
                            tagged(self.more, "settings-threads-more", text(s, "threads_more")),
                        ],
                        spacing=4,
                    ),
                    text(s, "threads_help", low=MIN_THREADS, high=self._max_threads, cores=self._cores or "?"),
                ),
                self._field(
                    text(s, "image_label"),
                    tagged(self.image, "settings-image-size", text(s, "image_label")),
                    text(s, "image_help"),
                ),
                self._field(
                    text(s, "profile_label"),
                    key=QUESTION_KEY,
                    control=ft.Column(
                        [
                            tagged(self.profile, "settings-profile", text(s, "profile_label")),
                            self._profile_fit_box,
                            self.profile_help,
                            ft.Row(
                                [
                                    tagged(self.edit_profile, "settings-profile-edit"),
                                    tagged(self.new_profile, "settings-profile-new"),
                                ],
                                wrap=True,
                            ),
                            self.editor.root,
                        ],
                        spacing=4,
                    ),
                ),
                self._field(None, tagged(self.constrained, "settings-constrained"), text(s, "constrained_help")),
                ft.Text(text(s, "restart_note"), size=12, italic=True, color=ft.Colors.GREY_700),
            ],
        )
        practice_section = self._section(
            text(s, "section_practice"),
            [
                self._field(
                    text(s, "interval_label"),
                    tagged(self.interval, "settings-interval", text(s, "interval_label")),
                    text(s, "interval_help"),
                ),
                self._field(
                    text(s, "language_label"), tagged(self.language, "settings-language", text(s, "language_label"))
                ),
            ],
        )
        column = ft.Column(
            [
                self.title,
                self.problem_box,
                self.error_box,
                model_section,
                practice_section,
                ft.Row([tagged(self.reset_button, "settings-reset", text(s, "reset"))]),
                self.where,
            ],
            spacing=16,
            horizontal_alignment=ft.CrossAxisAlignment.STRETCH,  # both sections as wide as the column
        )
        self._scroller = ft.Column(
            # One readable column: the whole width on a phone, the middle of a wide window.
            [
                ft.ResponsiveRow(
                    [ft.Container(column, padding=16, col={"xs": 12, "md": 10, "lg": 8, "xl": 7})],
                    alignment=ft.MainAxisAlignment.CENTER,
                )
            ],
            scroll=ft.ScrollMode.AUTO,
            expand=True,
            horizontal_alignment=ft.CrossAxisAlignment.CENTER,
        )
        self.root = ft.Container(content=self._scroller, expand=True)
        self.render(controller.state)

    # --- layout helpers ---------------------------------------------------------------

    @staticmethod
    def _section(title: str, rows: list[ft.Control]) -> ft.Control:
        return ft.Container(
            ft.Column([ft.Text(title, size=16, weight=ft.FontWeight.BOLD), *rows], spacing=14),
            padding=16,
            border_radius=12,
            bgcolor=ft.Colors.BLUE_GREY_50,
        )

    @staticmethod
    def _field(
        label: str | None, control: ft.Control, help_text: str | None = None, key: str | None = None
    ) -> ft.Control:
        parts: list[ft.Control] = []
        if label:
            parts.append(ft.Text(label, weight=ft.FontWeight.W_500))
        parts.append(control)
        if help_text:
            parts.append(ft.Text(help_text, size=12, color=ft.Colors.GREY_700))
        return ft.Column(parts, spacing=6, key=ft.ScrollKey(key) if key else None)  # type: ignore[call-arg] # Flet builds it lazily

    async def show_question(self) -> None:
        """Scroll to the Question field (Practice's "Change" comes here for it, not to the top)."""
        await self._scroller.scroll_to(scroll_key=QUESTION_KEY, duration=300)

    def _image_options(self, current: int | None) -> list[ft.DropdownOption]:
        sides = sorted({*IMAGE_SIDES, *([current] if current is not None else [])})
        return [ft.DropdownOption(key=AUTO, text=text(self._s, "image_auto"))] + [
            ft.DropdownOption(key=str(n), text=text(self._s, "image_px", n=n))
            for n in sides
            if MIN_USER_SIDE <= n <= MAX_USER_SIDE
        ]

    # --- rendering ----------------------------------------------------------------------

    def _profile_options(self, state: SettingsState) -> list[ft.DropdownOption]:
        """What no choice here asks (the model's own question, or the profile the app was started with),
        then every profile file; one the app cannot ask is shown, disabled."""
        started = state.started_profile
        auto = text(self._s, "profile_started", name=Path(started).name) if started else text(self._s, "profile_auto")
        options = [ft.DropdownOption(key=AUTO, text=auto)]
        for c in state.profiles:
            name, title = Path(c.path).name, c.title_in(state.settings.language)
            if c.error:
                words = text(self._s, "profile_damaged", name=name)
            elif c.signals > 1:
                words = text(self._s, "profile_checklist", title=title, name=name, n=c.signals)
            else:
                words = text(self._s, "profile_option", title=title, name=name)
            options.append(ft.DropdownOption(key=c.path, text=words, disabled=not c.usable))
        chosen = state.settings.profile
        if chosen is not None and chosen not in {c.path for c in state.profiles}:  # moved or deleted since
            options.append(ft.DropdownOption(key=chosen, text=text(self._s, "profile_damaged", name=chosen)))
        return options

    def _profile_fit(self, state: SettingsState) -> str:
        """A warning when the profile asked names its models and the loaded one is not among them."""
        asked = state.settings.profile or state.worker.profile_path
        choice = next((c for c in state.profiles if c.path == asked), None)
        model = state.worker.model_id
        if choice is None or not model or written_for(choice.models, model):
            return ""
        return text(self._s, "profile_other_model", models=", ".join(choice.models), model=model)

    def _choose_profile(self, value: str | None) -> None:
        self._controller.update(profile=None if value in (None, AUTO) else value)

    def _open_editor(self, new: bool) -> None:
        """The editor on the chosen profile (or the worker's), or on a new checklist; a file that cannot
        be read is said in the editor's place."""
        try:
            edited = (
                self._controller.new_draft() if new else self._controller.draft_for(self._controller.settings.profile)
            )
        except ProfileError as exc:
            self.error_text.value = text(self._s, "editor_refused", detail=str(exc))
            self.error_box.visible = True
            return
        self.editor.open(edited, str(self._controller.profiles_dir))

    def _save_edited(self, edited: EditedProfile) -> ProfileError | None:
        try:
            saved = self._controller.save_draft(edited)
        except ProfileError as exc:
            return exc
        self._use_profile(saved)
        return None

    def _backend_segments(self, current: str) -> list[ft.Segment]:
        return [ft.Segment(value=b, label=ft.Text(backend_name(b))) for b in backends_for(self._platform, current)]

    def render(self, state: SettingsState) -> None:
        """Show `state`; the caller then calls `page.update()`."""
        s, settings = self._s, state.settings
        self.backend.segments = self._backend_segments(settings.backend)
        self.backend.selected = [settings.backend]
        self.threads_value.value = str(settings.threads)
        self.fewer.disabled = settings.threads <= MIN_THREADS
        self.more.disabled = settings.threads >= self._max_threads
        self.image.options = self._image_options(settings.image_max_side)
        self.image.value = AUTO if settings.image_max_side is None else str(settings.image_max_side)
        self.profile.options = self._profile_options(state)
        self.profile.value = AUTO if settings.profile is None else settings.profile
        self.profile_help.value = text(s, "profile_help", folder=state.profiles_dir)
        if state.profiles_unlisted:
            unlisted = text(
                s, "profiles_unlisted", n=state.profiles_unlisted, folder=state.profiles_dir, shown=MAX_USER_PROFILES
            )
            self.profile_help.value += " " + unlisted
        self.profile_fit.value = self._profile_fit(state)
        self._profile_fit_box.visible = bool(self.profile_fit.value)
        self.constrained.value = settings.constrained
        self.interval.selected = [str(settings.interval_s)]
        self.language.selected = [settings.language]
        self.model_text.value = settings.model or text(s, "model_demo")

        line, bad = backend_line(s, state.worker)
        self.backend_status.value = line
        self.backend_status.color = ft.Colors.RED_900 if bad else None
        self.backend_icon.icon = ft.Icons.WARNING_AMBER if bad else ft.Icons.MEMORY
        self.backend_icon.color = ft.Colors.RED_800 if bad else ft.Colors.TEAL_800

        self.problem_box.visible = bool(state.file_problem)
        if state.file_problem:
            key = "file_problem" if state.file_kept_as else "file_problem_not_kept"
            self.problem_text.value = text(s, key, reason=state.file_problem, kept=state.file_kept_as)

        errors = []
        if state.error:
            key = "apply_failed" if state.error_field == "apply" else "refused"
            errors.append(text(s, key, detail=state.error))
        if state.save_error:
            errors.append(text(s, "save_failed", detail=state.save_error))
        self.error_text.value = "\n".join(errors)
        self.error_box.visible = bool(errors)
        self.where.value = text(s, "saved_where", path=state.path)

    # --- events ---------------------------------------------------------------------------

    def _step_threads(self, step: int) -> None:
        threads = self._controller.settings.threads + step
        if MIN_THREADS <= threads <= self._max_threads:
            self._controller.update(threads=threads)

    def _choose_image(self, value: str | None) -> None:
        self._controller.update(image_max_side=None if value in (None, AUTO) else int(value))

    def _ask_reset(self, e: ft.Event[ft.OutlinedButton]) -> None:
        page = e.control.page
        s = self._s

        def answer(reset: bool) -> None:
            page.pop_dialog()
            if reset:
                self._controller.reset()

        dialog = ft.AlertDialog(
            title=ft.Text(text(s, "reset_confirm_title")),
            content=tagged(ft.Text(text(s, "reset_confirm_body"), width=420), "settings-reset-confirm"),
            actions=[
                tagged(ft.TextButton(text(s, "cancel"), on_click=lambda _: answer(False)), "settings-reset-cancel"),
                tagged(
                    ft.FilledButton(text(s, "reset_confirm_yes"), on_click=lambda _: answer(True)),
                    "settings-reset-yes",
                ),
            ],
        )
        page.show_dialog(dialog)
