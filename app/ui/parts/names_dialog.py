"""Who practised and who examined: one dialog, from Practice (the session running and the next ones) and
from Sessions (a recorded session). It only forwards what was typed; the caller keeps or refuses it."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import flet as ft

from app.core.person_names import MAX_NAME
from app.ui.parts.widgets import tagged
from app.ui.words import text

# (trainee, examiner) as typed -> None when kept, else the reason code it was refused for (its words are
# `<reason>` in the screen's table: name_too_long, name_control, or a failure to write).
SaveNames = Callable[[str, str], str | None]


def names_line(words: Mapping[str, str], trainee: str, examiner: str) -> str:
    none = text(words, "names_none")
    return text(words, "names_line", trainee=trainee or none, examiner=examiner or none)


def names_dialog(
    words: Mapping[str, str], trainee: str, examiner: str, save: SaveNames, close: Callable[[], object]
) -> ft.AlertDialog:
    """Two optional fields and Save; a refused name is said under the fields and nothing is kept."""
    trainee_field = ft.TextField(label=text(words, "trainee_label"), value=trainee, max_length=MAX_NAME, width=300)
    examiner_field = ft.TextField(label=text(words, "examiner_label"), value=examiner, max_length=MAX_NAME, width=300)
    refused = ft.Text("", color=ft.Colors.RED_800, size=13)
    refused_box = tagged(refused, "names-refused")
    refused_box.visible = False

    def on_save(_: object) -> None:
        reason = save(trainee_field.value or "", examiner_field.value or "")
        if reason is None:
            close()
            return
        refused.value = text(words, reason, n=MAX_NAME)
        refused_box.visible = True
        refused_box.update()

    return ft.AlertDialog(
        title=ft.Text(text(words, "names_title"), size=16),
        content=ft.Column(
            [
                tagged(trainee_field, "trainee-name"),
                tagged(examiner_field, "examiner-name"),
                ft.Text(text(words, "names_hint"), size=12, color=ft.Colors.GREY_700, width=300),
                refused_box,
            ],
            tight=True,
            spacing=8,
        ),
        actions=[
            tagged(ft.TextButton(text(words, "names_cancel"), on_click=lambda _: close()), "names-cancel"),
            tagged(ft.FilledButton(text(words, "names_save"), on_click=on_save), "names-save"),
        ],
    )
