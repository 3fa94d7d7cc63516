"""The first Keyframe screen: pick an image, watch tokens stream, read the strict result."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import flet as ft

from app.core.parser import UNKNOWN
from app.ui.controller import ScreenState
from app.ui.strings import EN

T = EN
_OBS_COLOURS = {"yes": ft.Colors.GREEN_700, "no": ft.Colors.RED_700, UNKNOWN: ft.Colors.GREY_700}


def _tagged(control: ft.Control, identifier: str) -> ft.Control:
    # A stable handle for browser tests and screen readers.
    return ft.Semantics(content=control, identifier=identifier)


class MainView:
    def __init__(
        self, examples: list[Path], on_pick_file: Callable[[], None], on_example: Callable[[Path], None]
    ) -> None:
        self.privacy_count = ft.Text(T["privacy_count"].format(n=0), color=ft.Colors.WHITE, size=11)
        self.privacy = ft.Container(
            content=ft.Row(
                [
                    ft.Icon(ft.Icons.LOCK_OUTLINE, color=ft.Colors.WHITE, size=18),
                    ft.Column(
                        [
                            ft.Text(T["privacy"], color=ft.Colors.WHITE, size=13, weight=ft.FontWeight.W_500),
                            self.privacy_count,
                        ],
                        spacing=0,
                        expand=True,
                    ),
                ],
                spacing=10,
            ),
            bgcolor=ft.Colors.TEAL_800,
            padding=ft.Padding.symmetric(horizontal=16, vertical=10),
        )
        self.model_status = ft.Text(T["model_loading"], weight=ft.FontWeight.BOLD)
        self.model_detail = ft.Text("", size=12, color=ft.Colors.GREY_700)
        self.question = ft.Text("", italic=True)
        self.image = ft.Image(src=b"", width=280, height=280, fit=ft.BoxFit.CONTAIN, visible=False)
        self.image_hint = ft.Text(T["no_image"], color=ft.Colors.GREY_700)
        self.image_name = ft.Text("", size=12, color=ft.Colors.GREY_700)
        self.stream = ft.Text("", font_family="monospace", size=13)
        self.progress = ft.ProgressRing(width=16, height=16, stroke_width=2, visible=False)
        self.observation = ft.Text("—", size=28, weight=ft.FontWeight.BOLD)
        self.parse = ft.Text("", size=13)
        self.pending = ft.Text(T["pending"], size=12, color=ft.Colors.AMBER_900, visible=False)
        self.timings = ft.Text("", size=12, color=ft.Colors.GREY_700)
        self.error = ft.Text("", color=ft.Colors.RED_700)  # empty when fine: a Semantics child must stay visible
        self.pick_button = ft.Button(T["choose_image"], icon=ft.Icons.IMAGE_OUTLINED, on_click=lambda _: on_pick_file())

        thumbs = [
            _tagged(
                ft.Container(
                    content=ft.Image(src=p.read_bytes(), width=72, height=72, fit=ft.BoxFit.COVER),
                    on_click=lambda _, p=p: on_example(p),
                    tooltip=p.stem,
                    border_radius=6,
                    clip_behavior=ft.ClipBehavior.ANTI_ALIAS,
                ),
                f"example-{p.stem}",
            )
            for p in examples
        ]
        # Controls on the left; the answer, then the image it is about, on the right, so
        # that on a phone (one column) the result is reached before the picture.
        left = ft.Column(
            [
                ft.Row([self.pick_button]),
                ft.Text(T["examples"], weight=ft.FontWeight.BOLD),
                ft.Row(thumbs, wrap=True, spacing=8, run_spacing=8),
                ft.Divider(),
                _tagged(ft.Column([self.model_status, self.model_detail], spacing=2), "model-status"),
                ft.Text(T["question"], weight=ft.FontWeight.BOLD),
                self.question,
            ],
            spacing=10,
        )
        right = ft.Column(
            [
                ft.Row([ft.Text(T["live_output"], weight=ft.FontWeight.BOLD), self.progress]),
                ft.Container(
                    content=_tagged(self.stream, "token-stream"),
                    bgcolor=ft.Colors.GREY_100,
                    padding=10,
                    border_radius=6,
                    width=float("inf"),
                ),
                ft.Text(T["result"], weight=ft.FontWeight.BOLD),
                _tagged(self.observation, "observation"),
                _tagged(self.parse, "parse-status"),
                self.pending,
                self.timings,
                _tagged(self.error, "error"),
                _tagged(ft.Column([self.image, self.image_hint, self.image_name]), "image-panel"),
                ft.Text(T["not_medical"], size=11, color=ft.Colors.GREY_600),
            ],
            spacing=8,
        )
        body = ft.ResponsiveRow(
            [ft.Container(left, col={"xs": 12, "md": 5}), ft.Container(right, col={"xs": 12, "md": 7})],
            spacing=24,
            run_spacing=16,
        )
        self.root = ft.Column(
            [
                _tagged(self.privacy, "privacy-notice"),
                ft.Container(
                    content=ft.Column([body], scroll=ft.ScrollMode.AUTO, expand=True),
                    padding=16,
                    expand=True,
                ),
            ],
            spacing=0,
            expand=True,
        )

    def render(self, state: ScreenState) -> None:
        self.privacy_count.value = T["privacy_count"].format(n=state.network_blocked)
        status = {"loading": T["model_loading"], "ready": T["model_ready"], "error": T["model_error"]}[
            state.model_status
        ]
        self.model_status.value = f"{status}: {state.model_label}" if state.model_label else status
        self.model_status.color = ft.Colors.RED_700 if state.model_status == "error" else None
        self.model_detail.value = state.model_detail
        self.question.value = state.question
        self.pick_button.disabled = state.model_status != "ready"
        self.image.visible = state.image_bytes is not None
        if state.image_bytes is not None:
            self.image.src = state.image_bytes
        self.image_hint.visible = state.image_bytes is None and state.error is None
        self.image_name.value = state.image_name or ""
        self.stream.value = state.streamed
        self.progress.visible = state.busy
        self.error.value = state.error or ""
        result = state.result
        if result is None:
            self.observation.value = T["analysing"] if state.busy else "—"
            self.observation.color = ft.Colors.GREY_700
            self.parse.value = ""
            self.pending.visible = False
            self.timings.value = ""
            return
        self.observation.value = result.observation.upper()
        self.observation.color = _OBS_COLOURS.get(result.observation, ft.Colors.BLUE_GREY_700)
        verdict = T["valid"] if result.answer.valid else T["rejected"]
        self.parse.value = f"{verdict} · reason: {result.answer.reason.value} · finish: {result.finish.value}"
        self.pending.visible = True
        t = result.timings
        self.timings.value = (
            f"total {t.total_ms:.0f} ms · vision {t.vision_ms:.0f} · prefill {t.prefill_ms:.0f} · "
            f"first token {t.first_token_ms:.0f} · decode {t.decode_ms:.0f} ms · "
            f"{t.generated_tokens} generated token{'' if t.generated_tokens == 1 else 's'}"
        )
