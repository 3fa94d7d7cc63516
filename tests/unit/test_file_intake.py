"""A page's file picks (app.ui.practice.file_intake): a chooser that never opens, a file over the limit, an upload
that fails or a picked file gone before it is read is a sentence on the screen that asked, not a
traceback in the log; what fits arrives as local paths (the desktop's own, or this app's upload
folder from a browser); reading happens off the page's loop."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

import flet as ft

from app.core.notice import Notice
from app.core.sizes import size_words
from app.ui.practice.file_intake import FileIntake, Picked
from app.ui.words import main as strings
from app.ui.words import notice_text
from tests.unit.asyncrun import run_async


class _Picker:
    """Answers a pick with `files`; an upload "arrives" as the browser would report it, or fails."""

    def __init__(
        self, files: list[ft.FilePickerFile] | None = None, fail: str | None = None, dead: bool = False
    ) -> None:
        self.files = files or []
        self.fail = fail
        self.dead = dead
        self.uploaded: list[ft.FilePickerUploadFile] = []
        self.on_upload = None

    async def pick_files(self, **_: object) -> list[ft.FilePickerFile]:
        if self.dead:
            raise RuntimeError("TimeoutException after 0:00:10: Timeout waiting for invoke method listener")
        return self.files

    async def upload(self, files: list[ft.FilePickerUploadFile]) -> None:
        self.uploaded = files
        for f in files:
            folder, name = f.upload_url.split("?")[0].rsplit("/", 2)[-2:]
            if self.fail is None:
                target = self.uploads / folder / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(b"x")
            asyncio.get_running_loop().call_soon(
                self.on_upload, SimpleNamespace(file_name=f.name, error=self.fail, progress=None if self.fail else 1.0)
            )


class _Page:
    def __init__(self) -> None:
        self.off_loop: list[object] = []

    def get_upload_url(self, path: str, expires: int) -> str:
        return f"http://127.0.0.1:8550/upload/{path}?expires={expires}"

    def run_thread(self, work) -> None:
        self.off_loop.append(work)
        work()


def _intake(tmp_path: Path, picker: _Picker, keep: Path | None = None) -> tuple[FileIntake, _Page]:
    uploads = tmp_path / "uploads"
    uploads.mkdir(exist_ok=True)
    picker.uploads = uploads  # type: ignore[attr-defined]
    page = _Page()
    return FileIntake(page, picker, uploads, keep=lambda: keep), page  # type: ignore[arg-type]


def _pick(intake: FileIntake, limit: int = 10) -> tuple[list[Picked], list[str]]:
    """What started, and what the screen said (in English)."""
    started: list[Picked] = []
    said: list[Notice] = []
    run_async(intake.pick(ft.FilePickerFileType.IMAGE, True, limit, started.append, said.append))
    return started, [notice_text(strings.EN, n) for n in said]


def test_a_picker_that_does_not_answer_is_reported_and_nothing_starts(tmp_path: Path) -> None:
    started, said = _pick(_intake(tmp_path, _Picker(dead=True))[0])
    assert started == []
    # A sentence; the exception's own words go to the log, not the screen.
    assert said == ["The file chooser did not open. Reload the page and try again."]


def test_a_file_over_the_limit_is_named_and_never_sent_while_the_others_go_on(tmp_path: Path) -> None:
    picker = _Picker(
        [ft.FilePickerFile(id=1, name="big.jpg", size=11), ft.FilePickerFile(id=2, name="ok.jpg", size=10)]
    )
    intake, _ = _intake(tmp_path, picker)
    started, said = _pick(intake)
    assert [f.name for f in picker.uploaded] == ["ok.jpg"]
    assert said == [f"big.jpg is {size_words(11)}, over the limit of {size_words(10)}."]
    [[(name, path)]] = started
    assert name == "ok.jpg" and path.read_bytes() == b"x" and intake.is_upload(path)


def test_desktop_paths_are_used_as_they_are_and_are_not_uploads(tmp_path: Path) -> None:
    own = tmp_path / "mine.jpg"
    picker = _Picker([ft.FilePickerFile(id=1, name="mine.jpg", size=1, path=str(own))])
    intake, _ = _intake(tmp_path, picker)
    started, said = _pick(intake)
    assert started == [[("mine.jpg", own)]] and said == [] and picker.uploaded == []
    assert not intake.is_upload(own)


def test_a_failed_upload_is_a_sentence_and_nothing_starts(tmp_path: Path) -> None:
    picker = _Picker([ft.FilePickerFile(id=1, name="a.jpg", size=1)], fail="connection reset")
    started, said = _pick(_intake(tmp_path, picker)[0])
    assert started == []
    assert said == ["The file could not be read into the app (a.jpg: connection reset)."]


def test_a_new_pick_clears_earlier_uploads_but_not_the_video_being_played(tmp_path: Path) -> None:
    playing = tmp_path / "uploads" / "playing"
    earlier = tmp_path / "uploads" / "earlier"
    for folder in (playing, earlier):
        folder.mkdir(parents=True)
        (folder / "f").write_bytes(b"old")
    intake, _ = _intake(tmp_path, _Picker([ft.FilePickerFile(id=1, name="a.jpg", size=1)]), keep=playing)
    started, _ = _pick(intake)
    assert len(started) == 1 and playing.exists() and not earlier.exists()


def test_picked_images_are_read_off_the_loop_and_a_vanished_one_is_a_sentence(tmp_path: Path) -> None:
    intake, page = _intake(tmp_path, _Picker())
    (tmp_path / "a.jpg").write_bytes(b"A")
    (tmp_path / "b.jpg").write_bytes(b"B")
    started: list[list[tuple[str, bytes]]] = []
    errors: list[Notice] = []
    intake.read([("a.jpg", tmp_path / "a.jpg"), ("b.jpg", tmp_path / "b.jpg")], started.append, errors.append)
    assert len(page.off_loop) == 1 and started == [[("a.jpg", b"A"), ("b.jpg", b"B")]]

    intake.read([("gone.jpg", tmp_path / "gone.jpg")], started.append, errors.append)
    assert [notice_text(strings.EN, n) for n in errors] == [
        "The file could not be read into the app (No such file or directory)."
    ]
    assert len(started) == 1
