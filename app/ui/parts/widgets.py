"""Small helpers every screen uses the same way."""

from __future__ import annotations

import time
from collections.abc import Callable

import flet as ft


def tagged(control: ft.Control, identifier: str, label: str | None = None) -> ft.Semantics:
    """A stable handle for browser tests and screen readers.

    To hide a tagged control, hide the wrapper: a Semantics node's content must stay visible.
    """
    return ft.Semantics(content=control, identifier=identifier, label=label)


def panel(content: ft.Control, visible: bool = True) -> ft.Container:
    """A block of figures on a screen (the rate, a summary, a trainee's progress): one look everywhere."""
    return ft.Container(content, padding=12, border_radius=8, bgcolor=ft.Colors.BLUE_GREY_50, visible=visible)


def clock(wall_time: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(wall_time))


class NoticeBar:
    """A dismissable line at the top of a screen: news or an error, told apart by icon, colour and words.

    The text is tagged on its own (`<identifier>-text`): Flutter gives a tagged container holding a
    row no text of its own.
    """

    def __init__(self, identifier: str, dismiss_tooltip: str, on_dismiss: Callable[[], None]) -> None:
        self.text = ft.Text("")
        text_box = tagged(self.text, f"{identifier}-text")
        text_box.expand = True  # the wrapper takes the row's room, so a long notice wraps
        self.icon = ft.Icon(ft.Icons.INFO_OUTLINE, size=20)
        close = ft.IconButton(ft.Icons.CLOSE, tooltip=dismiss_tooltip, on_click=lambda _: on_dismiss())
        self.root = tagged(
            ft.Container(
                ft.Row([self.icon, text_box, close], vertical_alignment=ft.CrossAxisAlignment.CENTER),
                padding=ft.Padding.symmetric(horizontal=12, vertical=4),
                border_radius=8,
                bgcolor=ft.Colors.BLUE_GREY_50,
            ),
            identifier,
        )
        self.root.visible = False

    def show(self, message: str | None, error: bool = False) -> None:
        """`message` on the bar, or the bar hidden when it is None."""
        self.root.visible = message is not None
        self.text.value = message or ""
        self.icon.icon = ft.Icons.ERROR_OUTLINE if error else ft.Icons.INFO_OUTLINE
        self.icon.color = ft.Colors.RED_800 if error else ft.Colors.BLUE_GREY_700
        self.text.color = ft.Colors.RED_900 if error else None
