"""Input enumeration never raises; every problem is an item or a note."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

from PIL import Image

from app.frames.intake import ImageRejected, read_image_file
from tests.unit.unprivileged import as_unprivileged


def _jpeg() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), "red").save(buf, "JPEG")
    return buf.getvalue()


def _outcome(item) -> str:  # type: ignore[no-untyped-def]
    """What a batch does with one item: an error reason or "ok"."""
    if item.error is not None:
        return item.error.reason
    try:
        read_image_file(item.path)
    except ImageRejected as exc:
        return exc.reason
    return "ok"


def test_non_utf8_names_give_json_safe_display_names(tmp_path: Path) -> None:
    from app.frames.listing import list_inputs

    raw = os.fsencode(tmp_path) + b"/caf\xe9\n.jpg"
    with open(raw, "wb") as f:
        f.write(_jpeg())
    report = list_inputs([os.fsdecode(raw)])
    (item,) = report.items
    assert item.display.endswith("caf\\xe9\\x0a.jpg")
    json.dumps({"file": item.display}, ensure_ascii=False).encode("utf-8")  # a lone surrogate used to crash here
    assert _outcome(item) == "ok"
    folder = list_inputs([str(tmp_path)])
    assert [i.display for i in folder.items] == [item.display]


def test_long_names_and_paths_are_per_item_errors(tmp_path: Path) -> None:
    from app.frames.listing import list_inputs

    report = list_inputs([str(tmp_path / ("x" * 300 + ".jpg")), "/" + "d/" * 2500 + "a.jpg"])
    assert [_outcome(i) for i in report.items] == ["name_too_long", "name_too_long"]


def test_empty_argument_and_empty_folder_are_reported(tmp_path: Path) -> None:
    from app.frames.listing import list_inputs

    report = list_inputs(["", str(tmp_path)])
    assert [i.error.reason for i in report.items if i.error] == ["empty_name", "no_images"]
    assert report.errors == report.items


def test_folder_files_are_chosen_by_suffix_or_content_and_the_rest_reported(tmp_path: Path) -> None:
    from app.frames.listing import list_inputs

    (tmp_path / "a.jpg").write_bytes(_jpeg())
    (tmp_path / "b-really-a-jpeg.heic").write_bytes(_jpeg())
    (tmp_path / "c-no-suffix").write_bytes(_jpeg())
    (tmp_path / "d-broken.png").write_bytes(b"not a png")
    (tmp_path / "e-notes.txt").write_text("hello")
    (tmp_path / "f-sub").mkdir()
    (tmp_path / "g-loop.jpg").symlink_to("g-loop.jpg")
    (tmp_path / "h-dangling.jpg").symlink_to("nowhere.jpg")
    os.mkfifo(tmp_path / "i-pipe.jpg")
    os.mkfifo(tmp_path / "j-pipe")
    report = list_inputs([str(tmp_path)])
    outcomes = {Path(i.display).name: _outcome(i) for i in report.items}
    assert outcomes == {
        "a.jpg": "ok",
        "b-really-a-jpeg.heic": "ok",
        "c-no-suffix": "ok",
        "d-broken.png": "not_an_image",
        "g-loop.jpg": "symlink_loop",
        "h-dangling.jpg": "missing",
        "i-pipe.jpg": "not_a_file",
    }
    skipped = {Path(s.display).name: s.why for s in report.skipped}
    assert set(skipped) == {"e-notes.txt", "f-sub", "j-pipe"}
    (note,) = report.notes()
    assert "3 file(s)" in note and "e-notes.txt" in note


def test_a_folder_of_only_other_files_says_so(tmp_path: Path) -> None:
    from app.frames.listing import list_inputs

    (tmp_path / "readme.txt").write_text("x")
    report = list_inputs([str(tmp_path)])
    assert [i.error.reason for i in report.items if i.error] == ["no_images"] and len(report.skipped) == 1


def test_explicit_special_files_never_block(tmp_path: Path) -> None:
    from app.frames.listing import list_inputs

    fifo = tmp_path / "pipe.jpg"
    os.mkfifo(fifo)
    (tmp_path / "loop").symlink_to("loop")
    report = list_inputs([str(fifo), str(tmp_path / "loop"), "/dev/zero", "nul\x00.jpg", str(tmp_path / "missing.jpg")])
    assert [_outcome(i) for i in report.items] == [
        "not_a_file",
        "symlink_loop",
        "not_a_file",
        "invalid_name",
        "missing",
    ]


def test_unreadable_folder_is_an_item(tmp_path: Path) -> None:
    import tempfile

    from app.frames.listing import list_inputs

    with tempfile.TemporaryDirectory() as top:  # under /tmp: reachable by an unprivileged user
        os.chmod(top, 0o755)
        locked = Path(top) / "locked"
        locked.mkdir()
        (locked / "a.jpg").write_bytes(_jpeg())
        locked.chmod(0)
        try:
            reasons = as_unprivileged(lambda: [i.error.reason for i in list_inputs([str(locked)]).items if i.error])
        finally:
            locked.chmod(0o755)
    assert reasons == ["unreadable_folder"]
