"""A file chooser that never opens is a sentence on the screen that asked, not a traceback in the log."""

from __future__ import annotations

from types import SimpleNamespace

import flet as ft

from app.ui import strings
from app.ui.app_main import Shell
from tests.unit.test_sessions_view import run_async


class _DeadPicker:
    async def pick_files(self, **_: object) -> None:
        raise RuntimeError("TimeoutException after 0:00:10: Timeout waiting for invoke method listener")


def test_a_picker_that_does_not_answer_is_reported_and_nothing_starts() -> None:
    said: list[str] = []
    started: list[object] = []
    shell = SimpleNamespace(picker=_DeadPicker(), t=strings.EN)
    run_async(Shell._pick_and_start(shell, ft.FilePickerFileType.IMAGE, False, 10, started.append, said.append))  # type: ignore[arg-type]
    assert started == []
    assert len(said) == 1 and said[0].startswith("The file chooser did not open (TimeoutException")
    assert said[0].endswith("Reload the page and try again.")
