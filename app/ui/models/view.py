"""The Models screen: one card per model (state, progress, the buttons its state allows),
then where models are stored, the free space there, the mirror URL and the proxy choice.

The view renders a `ModelsState` and forwards clicks to the controller; it keeps no
state beyond its controls. Each card's controls are made once and updated in place,
so a progress update several times a second never replaces a button under a click.
Identifiers for tests: `model-card-<id>`, `model-kind-<id>`, `model-facts-<id>`, `model-state-<id>`,
`model-progress-<id>` (its label is the percent), `model-progress-text-<id>`, `model-failed-<id>`,
`model-<action>-<id>`, `model-confirm-<id>`, `model-confirm-text-<id>`, `model-confirm-yes-<id>`,
`model-confirm-no-<id>`, and `mirror-url`, `mirror-save`, `mirror-clear`,
`use-system-proxy`, `storage-folder`, `storage-free`, `models-notice`, `models-notice-text`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import flet as ft

from app.core.durations import duration_words, model_time_words
from app.core.sizes import size_words
from app.models.progress import Phase
from app.ui.models.controller import ModelsController
from app.ui.models.state import ActivityKind, CardState, Confirm, ModelCard, ModelKind, ModelsState
from app.ui.parts.widgets import NoticeBar, tagged
from app.ui.settings.controller import backend_name
from app.ui.words import text
from app.ui.words.models import EN

ACTIONS: tuple[str, ...] = (
    "download",
    "resume",
    "retry",
    "repair",
    "pause",
    "cancel",
    "verify",
    "stop",
    "use",
    "delete",
)


def percent(fraction: float | None) -> str:
    return "?" if fraction is None else f"{100 * fraction:.0f}"


def buttons_for(card: ModelCard) -> tuple[str, ...]:
    """The actions a card offers in its state, in the order they are shown."""
    use = () if card.active or not card.usable else ("use",)
    if card.kind is ModelKind.FOLDER:
        return use
    if card.kind is ModelKind.DEMO:
        return () if card.state is CardState.VERIFYING else (*use, "verify")
    state = card.state
    if state is CardState.NOT_INSTALLED:
        return ("download",)
    if state is CardState.PARTIAL:
        return ("resume", "cancel")
    if state is CardState.DOWNLOADING:
        return ("pause", "cancel")
    if state is CardState.VERIFYING:
        return ("stop",)
    if state in (CardState.INSTALLED, CardState.VERIFIED):
        return (*use, "verify", "delete")
    # FAILED: a file failed its hash (repair fetches only it) or the download failed (try again)
    return ("repair" if card.failed_files else "retry", "verify", "delete")


_STATE_COLOURS = {
    CardState.VERIFIED: ft.Colors.GREEN_800,
    CardState.INSTALLED: ft.Colors.TEAL_800,
    CardState.FAILED: ft.Colors.RED_800,
    CardState.DOWNLOADING: ft.Colors.BLUE_800,
    CardState.VERIFYING: ft.Colors.BLUE_800,
    CardState.PARTIAL: ft.Colors.AMBER_900,
    CardState.NOT_INSTALLED: ft.Colors.GREY_800,
}
_STATE_ICONS = {
    CardState.VERIFIED: ft.Icons.VERIFIED_OUTLINED,
    CardState.INSTALLED: ft.Icons.CHECK_CIRCLE_OUTLINE,
    CardState.FAILED: ft.Icons.ERROR_OUTLINE,
    CardState.DOWNLOADING: ft.Icons.DOWNLOADING,
    CardState.VERIFYING: ft.Icons.FACT_CHECK_OUTLINED,
    CardState.PARTIAL: ft.Icons.PAUSE_CIRCLE_OUTLINE,
    CardState.NOT_INSTALLED: ft.Icons.CLOUD_DOWNLOAD_OUTLINED,
}
_BUTTON_ICONS = {
    "download": ft.Icons.DOWNLOAD,
    "resume": ft.Icons.PLAY_ARROW,
    "retry": ft.Icons.REFRESH,
    "repair": ft.Icons.BUILD_OUTLINED,
    "pause": ft.Icons.PAUSE,
    "cancel": ft.Icons.CLOSE,
    "verify": ft.Icons.FACT_CHECK_OUTLINED,
    "stop": ft.Icons.STOP,
    "use": ft.Icons.CHECK,
    "delete": ft.Icons.DELETE_OUTLINE,
}
_PRIMARY = ("download", "resume", "retry", "repair", "use")


class _CardView:
    """The controls of one model's card, made once and updated by `render`."""

    def __init__(self, model_id: str, controller: ModelsController, strings: Mapping[str, str], language: str) -> None:
        self.model_id = model_id
        self._language = language
        s = strings
        self._s = s
        self.name = ft.Text("", size=16, weight=ft.FontWeight.BOLD)
        self.demo_badge = ft.Container(
            ft.Text(text(s, "badge_demo"), size=11, color=ft.Colors.BROWN_900),
            bgcolor=ft.Colors.AMBER_100,
            padding=ft.Padding.symmetric(horizontal=8, vertical=2),
            border_radius=10,
        )
        self.active_badge = ft.Container(
            ft.Text(text(s, "badge_active"), size=11, color=ft.Colors.WHITE),
            bgcolor=ft.Colors.TEAL_700,
            padding=ft.Padding.symmetric(horizontal=8, vertical=2),
            border_radius=10,
        )
        self.kind = ft.Text("", size=12, color=ft.Colors.GREY_800)
        self.facts = ft.Text("", size=12, color=ft.Colors.GREY_800)
        self.purpose = ft.Text("", size=13)
        self.cost = ft.Text("", size=12, color=ft.Colors.GREY_800)
        self.state_icon = ft.Icon(ft.Icons.INFO_OUTLINE, size=18)
        self.state_text = ft.Text("", weight=ft.FontWeight.W_500)
        self.bar = ft.ProgressBar(value=0, bar_height=8, border_radius=4)
        self.bar_box = tagged(self.bar, f"model-progress-{model_id}", "0 %")
        self.detail = ft.Text("", size=12, color=ft.Colors.GREY_800)
        self.detail_box = tagged(self.detail, f"model-progress-text-{model_id}")
        self.failed = ft.Text("", size=12, color=ft.Colors.RED_900)
        self.failed_box = tagged(self.failed, f"model-failed-{model_id}")
        self.confirm_text = ft.Text("", weight=ft.FontWeight.W_500)
        self.confirm_yes = ft.FilledButton(
            "", on_click=lambda _: controller.confirm(model_id), style=ft.ButtonStyle(bgcolor=ft.Colors.RED_700)
        )
        self.confirm_no = ft.OutlinedButton(
            text(s, "confirm_no"), on_click=lambda _: controller.dismiss_confirm(model_id)
        )
        self.confirm_yes_box = tagged(self.confirm_yes, f"model-confirm-yes-{model_id}")
        self.confirm_box = tagged(
            ft.Container(
                ft.Column(
                    [
                        tagged(self.confirm_text, f"model-confirm-text-{model_id}"),
                        ft.Row(
                            [self.confirm_yes_box, tagged(self.confirm_no, f"model-confirm-no-{model_id}")],
                            wrap=True,
                            spacing=8,
                        ),
                    ],
                    spacing=8,
                ),
                bgcolor=ft.Colors.RED_50,
                padding=10,
                border_radius=8,
            ),
            f"model-confirm-{model_id}",
        )
        handlers: dict[str, Callable[[str], object]] = {
            "download": controller.download,
            "resume": controller.resume,
            "retry": controller.download,
            "repair": controller.download,
            "pause": controller.pause,
            "cancel": controller.request_cancel,
            "verify": controller.verify,
            "stop": controller.stop,
            "use": controller.choose,
            "delete": controller.request_delete,
        }
        self.buttons: dict[str, ft.Semantics] = {}
        self.button_controls: dict[str, ft.Control] = {}
        for action in ACTIONS:
            label = text(s, f"btn_{action}")
            kind = ft.FilledButton if action in _PRIMARY else ft.OutlinedButton
            button = kind(
                label,
                icon=_BUTTON_ICONS[action],
                on_click=lambda _, a=action: handlers[a](model_id),
            )
            self.button_controls[action] = button
            self.buttons[action] = tagged(button, f"model-{action}-{model_id}", label)
        self.button_row = ft.Row([self.buttons[a] for a in ACTIONS], wrap=True, spacing=8, run_spacing=8)
        self.state_box = tagged(
            ft.Row([self.state_icon, self.state_text], spacing=6, wrap=True), f"model-state-{model_id}"
        )
        body = ft.Column(
            [
                ft.Row([self.name, self.demo_badge, self.active_badge], wrap=True, spacing=8),
                tagged(self.kind, f"model-kind-{model_id}"),
                tagged(self.purpose, f"model-purpose-{model_id}"),
                tagged(self.facts, f"model-facts-{model_id}"),
                tagged(self.cost, f"model-cost-{model_id}"),
                self.state_box,
                self.bar_box,
                self.detail_box,
                self.failed_box,
                self.confirm_box,
                self.button_row,
            ],
            spacing=8,
        )
        self.container = ft.Container(
            body,
            padding=16,
            border_radius=12,
            border=ft.Border.all(1, ft.Colors.BLUE_GREY_100),
            bgcolor=ft.Colors.WHITE,
        )
        self.root = tagged(self.container, f"model-card-{model_id}")
        self.column = ft.Container(self.root, col={"xs": 12, "md": 12, "lg": 6})

    def render(self, card: ModelCard) -> None:
        s = self._s
        self.name.value = card.name_in(self._language)
        self.demo_badge.visible = card.kind is ModelKind.DEMO
        self.active_badge.visible = card.active
        self.container.border = ft.Border.all(
            2 if card.active else 1, ft.Colors.TEAL_400 if card.active else ft.Colors.BLUE_GREY_100
        )
        self.kind.value = text(s, f"kind_{card.kind.value}")
        self.kind.color = ft.Colors.BROWN_900 if card.kind is ModelKind.DEMO else ft.Colors.GREY_800
        self.facts.value = " · ".join(self._facts(card))
        self.purpose.value = card.purpose_in(self._language) or text(s, "purpose_none")
        self.cost.value = "\n".join(self._costs(card))
        self.state_icon.icon = _STATE_ICONS[card.state]
        self.state_icon.color = _STATE_COLOURS[card.state]
        self.state_text.value = self._state_words(card)
        self.state_text.color = _STATE_COLOURS[card.state]
        running = card.activity is not None
        show_bar = running or card.fraction is not None
        self.bar_box.visible = show_bar
        self.bar.value = card.fraction if (card.fraction is not None or not running) else None
        self.bar.color = ft.Colors.AMBER_700 if card.state is CardState.PARTIAL else None
        self.bar_box.label = f"{percent(card.fraction)} %"
        self.detail.value = self._detail(card)
        self.detail_box.visible = bool(self.detail.value)
        failed = []
        if card.failed_files:
            failed.append(text(s, "state_failed_files", files=", ".join(card.failed_files)))
        if card.error and card.state is CardState.FAILED:
            failed.append(text(s, "failed_detail", detail=card.error))
        self.failed.value = "\n".join(failed)
        self.failed_box.visible = bool(failed)
        self.confirm_box.visible = bool(card.confirm)
        if card.confirm is Confirm.DELETE:
            self.confirm_text.value = text(
                s, "confirm_delete", name=self.name.value, size=size_words(card.size_on_disk)
            )
            self.confirm_yes.content = text(s, "confirm_yes_delete")
        elif card.confirm is Confirm.CANCEL:
            self.confirm_text.value = text(s, "confirm_cancel", name=self.name.value)
            self.confirm_yes.content = text(s, "confirm_yes_cancel")
        self.confirm_yes_box.label = self.confirm_yes.content if isinstance(self.confirm_yes.content, str) else None
        shown = buttons_for(card)
        stopping = bool(card.activity and card.activity.stopping)
        for action, box in self.buttons.items():
            box.visible = action in shown and not card.confirm
            self.button_controls[action].disabled = stopping

    def _facts(self, card: ModelCard) -> list[str]:
        s = self._s
        facts = [text(s, "licence", licence=card.licence) if card.licence else text(s, "licence_none")]
        facts.append(text(s, "size_on_disk", size=size_words(card.size_on_disk)))
        if card.kind is ModelKind.PINNED:
            if card.size_to_download is None:
                facts.append(text(s, "size_to_download_unknown"))
            elif card.size_to_download == 0:
                facts.append(text(s, "size_nothing_to_download"))
            else:
                size = size_words(card.size_to_download)
                if card.size_is_estimate:
                    size = text(s, "size_about", size=size)
                facts.append(text(s, "size_to_download", size=size))
        if card.kind is ModelKind.FOLDER:
            facts.append(text(s, "folder", folder=str(card.folder)))
        return facts

    def _costs(self, card: ModelCard) -> list[str]:
        """Its speed and memory: as measured on a named machine (the manifest's), and on this device while
        it is the model in use."""
        s, lines = self._s, []
        ref = card.reference
        if ref is not None:
            time, memory = model_time_words(ref.keyframe_s, s), size_words(ref.peak_memory_bytes)
            lines.append(text(s, "cost_reference", device=ref.device_in(self._language), time=time, memory=memory))
        elif card.here is None:
            lines.append(text(s, "cost_reference_none"))
        here = card.here
        if here is not None:
            median, backend = here.median_s, backend_name(here.backend)
            if median is not None:
                time = model_time_words(median, s)
                said = text(s, "cost_here_speed", backend=backend, time=time, n=len(here.keyframe_s))
            else:
                check = "?" if here.check_s is None else model_time_words(here.check_s, s)
                said = text(s, "cost_here_check", backend=backend, time=check)
            if here.peak_memory_bytes is None:
                memory = text(s, "cost_here_memory_shared")
            else:
                memory = text(s, "cost_here_memory", memory=size_words(here.peak_memory_bytes))
            lines.append(text(s, "cost_here_line", speed=said, memory=memory))
        return lines

    def _state_words(self, card: ModelCard) -> str:
        s = self._s
        state = card.state
        if state is CardState.PARTIAL:
            key = "state_partial" if card.fraction is not None else "state_partial_unknown"
            return text(s, key, percent=percent(card.fraction))
        if state is CardState.DOWNLOADING:
            if card.activity is not None and card.activity.phase is Phase.WAITING:
                return text(s, "state_retrying", percent=percent(card.fraction or 0.0))
            key = "state_downloading" if card.fraction is not None else "state_downloading_unknown"
            return text(s, key, percent=percent(card.fraction))
        if state is CardState.VERIFYING:
            return text(s, "state_verifying", percent=percent(card.fraction or 0.0))
        return text(s, f"state_{state.value}")

    def _detail(self, card: ModelCard) -> str:
        s = self._s
        a = card.activity
        if a is None:
            return ""
        if a.stopping:
            return text(s, f"stopping_{a.stopping}")
        if a.kind is ActivityKind.VERIFY:
            return text(s, "progress_hashing", file=a.file) if a.file else ""
        if a.phase is Phase.CHECKING:
            return text(s, "progress_checking")
        if a.phase is Phase.WAITING:
            return text(s, "progress_waiting", detail=a.message)
        parts: list[str] = []
        if a.message:  # a try failed: this one is the next, until bytes flow
            parts.append(text(s, "progress_retrying", detail=a.message))
        elif not a.rate_bps:
            parts.append(text(s, "progress_connecting"))
        if a.total:
            key = "progress_bytes_about" if a.total_is_estimate else "progress_bytes"
            parts.append(text(s, key, done=size_words(a.done), total=size_words(a.total)))
        if a.rate_bps:
            parts.append(text(s, "progress_rate", rate=size_words(a.rate_bps)))
        if a.eta_s is not None:
            parts.append(text(s, "progress_eta", time=duration_words(a.eta_s, s)))
        if a.file and a.file_count:
            parts.append(text(s, "progress_file", index=a.file_index, count=a.file_count, file=a.file))
        return " · ".join(parts)


class ModelsView:
    def __init__(self, controller: ModelsController, strings: Mapping[str, str] = EN, language: str = "en") -> None:
        self._controller = controller
        self._s = s = strings
        self._language = language
        self._cards: dict[str, _CardView] = {}
        self._shown_mirror: str | None = None

        self.title = ft.Text(text(s, "models_title"), size=22, weight=ft.FontWeight.BOLD)
        self.intro = ft.Text(text(s, "models_intro"), size=13, color=ft.Colors.GREY_800)
        self.notice = NoticeBar("models-notice", text(s, "dismiss"), controller.dismiss_notice)
        self.cards = ft.ResponsiveRow(spacing=12, run_spacing=12)

        # Storage
        self.storage_folder = ft.Text("", size=12)
        self.storage_free = ft.Text("", size=12)
        storage = ft.Column(
            [
                ft.Text(text(s, "storage_title"), weight=ft.FontWeight.BOLD, size=16),
                tagged(self.storage_folder, "storage-folder"),
                tagged(self.storage_free, "storage-free"),
            ],
            spacing=4,
        )

        # Download source
        self.mirror_field = ft.TextField(
            label=text(s, "mirror_label"),
            hint_text=text(s, "mirror_hint"),
            dense=True,
            border=ft.OutlineInputBorder(),
            on_submit=lambda _: self._save_mirror(),
        )
        self.mirror_save = ft.FilledButton(
            text(s, "mirror_save"),
            icon=ft.Icons.SAVE_OUTLINED,
            on_click=lambda _: self._save_mirror(),
        )
        self.mirror_clear = ft.OutlinedButton(
            text(s, "mirror_clear"), icon=ft.Icons.CLEAR, on_click=lambda _: self._clear_mirror()
        )
        self.mirror_now = ft.Text("", size=12)
        self.mirror_broken = ft.Text("", size=12, color=ft.Colors.RED_900)
        self.mirror_broken_box = tagged(
            ft.Container(self.mirror_broken, bgcolor=ft.Colors.RED_50, padding=8, border_radius=8), "mirror-broken"
        )
        self.proxy = ft.Switch(
            label=text(s, "proxy_label"),
            value=False,
            on_change=lambda _: self._set_proxy(),
        )
        source = ft.Column(
            [
                ft.Text(text(s, "mirror_title"), weight=ft.FontWeight.BOLD, size=16),
                ft.Text(text(s, "mirror_help"), size=12, color=ft.Colors.GREY_800),
                tagged(self.mirror_field, "mirror-url", text(s, "mirror_label")),
                ft.Row(
                    [
                        tagged(self.mirror_save, "mirror-save", text(s, "mirror_save")),
                        tagged(self.mirror_clear, "mirror-clear", text(s, "mirror_clear")),
                    ],
                    wrap=True,
                    spacing=8,
                ),
                tagged(self.mirror_now, "mirror-current"),
                self.mirror_broken_box,
                tagged(self.proxy, "use-system-proxy", text(s, "proxy_label")),
                ft.Text(text(s, "proxy_help"), size=12, color=ft.Colors.GREY_800),
            ],
            spacing=8,
        )
        settings = ft.ResponsiveRow(
            [
                ft.Container(source, col={"xs": 12, "lg": 7}),
                ft.Container(storage, col={"xs": 12, "lg": 5}),
            ],
            spacing=24,
            run_spacing=16,
        )
        body = ft.Column(
            [self.cards, ft.Divider(), settings],
            scroll=ft.ScrollMode.AUTO,
            expand=True,
            spacing=16,
        )
        self.root = ft.Container(
            content=ft.Column([self.title, self.intro, self.notice.root, body], expand=True, spacing=8),
            padding=16,
            expand=True,
        )
        self.render(controller.state)

    def _save_mirror(self) -> None:
        self._controller.set_mirror(self.mirror_field.value or "")

    def _set_proxy(self) -> None:
        if not self._controller.set_use_system_proxy(bool(self.proxy.value)):
            self.proxy.value = self._controller.state.use_system_proxy  # not saved: show what holds

    def _clear_mirror(self) -> None:
        self.mirror_field.value = ""
        self._controller.set_mirror("")

    def render(self, state: ModelsState) -> None:
        """Show `state`; the caller then calls `page.update()`."""
        s = self._s
        self._render_notice(state)
        order: list[ft.Control] = []
        for card in state.cards:
            view = self._cards.get(card.model_id)
            if view is None:
                view = self._cards[card.model_id] = _CardView(card.model_id, self._controller, s, self._language)
            view.render(card)
            order.append(view.column)
        if [id(c) for c in self.cards.controls] != [id(c) for c in order]:
            self.cards.controls = order
        self.storage_folder.value = text(s, "storage_folder", folder=str(state.storage_folder))
        self.storage_free.value = (
            text(s, "storage_free", size=size_words(state.free_bytes))
            if state.free_bytes is not None
            else text(s, "storage_free_unknown")
        )
        if state.mirror_url != self._shown_mirror:  # never overwrite what the user is typing on a progress update
            self._shown_mirror = state.mirror_url
            self.mirror_field.value = state.mirror_url
        self.mirror_now.value = (
            text(s, "mirror_current", url=state.mirror_url) if state.mirror_url else text(s, "mirror_public")
        )
        self.mirror_broken_box.visible = bool(state.mirror_error)
        self.mirror_broken.value = text(s, "mirror_broken", detail=state.mirror_error) if state.mirror_error else ""
        self.proxy.value = state.use_system_proxy

    def _render_notice(self, state: ModelsState) -> None:
        notice = state.notice
        if notice is None:
            self.notice.show(None)
            return
        values = dict(notice.values)
        card = state.card(values.pop("model", ""))
        if card is not None:  # the model's name in the screen's language
            values["name"] = card.name_in(self._language)
        self.notice.show(text(self._s, notice.key, **values), notice.error)
