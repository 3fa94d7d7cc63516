"""Small helpers every screen uses the same way."""

from __future__ import annotations

import time

import flet as ft


def tagged(control: ft.Control, identifier: str, label: str | None = None) -> ft.Semantics:
    """A stable handle for browser tests and screen readers.

    To hide a tagged control, hide the wrapper: a Semantics node's content must stay visible.
    """
    return ft.Semantics(content=control, identifier=identifier, label=label)


def clock(wall_time: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(wall_time))
