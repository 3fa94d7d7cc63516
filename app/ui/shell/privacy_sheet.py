"""The sheet the privacy notice opens: what stays on the device, and how the worker is kept offline."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import flet as ft

from app.ui.parts.widgets import tagged
from app.ui.practice.controller import PracticeState


def privacy_sheet(words: Mapping[str, str], state: PracticeState, close: Callable[[], object]) -> ft.AlertDialog:
    worker = words["privacy_worker_pending"]
    if state.isolation:
        kind = state.isolation_kind  # translated where the screens have words for it; else the OS's own (in logs)
        how = words.get(f"isolation_{kind}", state.isolation_how) if kind else state.isolation_how
        worker = words[f"privacy_worker_{state.isolation}"].format(how=how)
    paragraphs = [words["privacy_sheet"], worker, words["privacy_app"], words["privacy_check"]]
    return ft.AlertDialog(
        title=ft.Text(words["privacy_sheet_title"]),
        content=tagged(ft.Column([ft.Text(p) for p in paragraphs], tight=True, spacing=10, width=520), "privacy-sheet"),
        actions=[ft.TextButton(words["close"], on_click=lambda _: close())],
    )
