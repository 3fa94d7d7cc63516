"""The shell's file intake: a chooser that never opens, or a picked file gone before it is read, is a
sentence on the screen that asked, not a traceback in the log; reading happens off the page's loop."""

from __future__ import annotations

from types import SimpleNamespace

import flet as ft

from app.ui import strings
from app.ui.app_main import Shell
from tests.unit.asyncrun import run_async


class _DeadPicker:
    async def pick_files(self, **_: object) -> None:
        raise RuntimeError("TimeoutException after 0:00:10: Timeout waiting for invoke method listener")


def test_a_picker_that_does_not_answer_is_reported_and_nothing_starts() -> None:
    said: list[str] = []
    started: list[object] = []
    shell = SimpleNamespace(picker=_DeadPicker(), t=strings.EN)
    run_async(Shell._pick_and_start(shell, ft.FilePickerFileType.IMAGE, False, 10, started.append, said.append))  # type: ignore[arg-type]
    assert started == []
    # A sentence; the exception's own words go to the log, not the screen.
    assert said == ["The file chooser did not open. Reload the page and try again."]


class _Practice:
    def __init__(self) -> None:
        self.errors: list[str] = []
        self.started: list[tuple[list[tuple[str, bytes]], str]] = []

    def report_error(self, message: str) -> None:
        self.errors.append(message)

    def start_stills(self, images: list[tuple[str, bytes]], label: str) -> None:
        self.started.append((images, label))


def test_picked_images_are_read_off_the_loop_and_a_vanished_one_is_a_sentence(tmp_path) -> None:  # noqa: ANN001
    off_loop: list[object] = []
    practice = _Practice()
    page = SimpleNamespace(run_thread=lambda work: (off_loop.append(work), work()))
    shell = SimpleNamespace(page=page, controller=practice, t=strings.EN)
    (tmp_path / "a.jpg").write_bytes(b"A")
    (tmp_path / "b.jpg").write_bytes(b"B")
    Shell._start_stills(shell, [("a.jpg", tmp_path / "a.jpg"), ("b.jpg", tmp_path / "b.jpg")])  # type: ignore[arg-type]
    assert len(off_loop) == 1 and practice.started == [([("a.jpg", b"A"), ("b.jpg", b"B")], "2 images")]

    Shell._start_stills(shell, [("gone.jpg", tmp_path / "gone.jpg")])  # type: ignore[arg-type]
    assert practice.errors == ["The file could not be read into the app (No such file or directory)."]
    assert len(practice.started) == 1
