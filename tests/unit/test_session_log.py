"""The session log on disk: created lazily, made durable, and readable whatever a line holds."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from app.core.session import ExaminerConfirmed, PracticeEvent, event_to_dict
from app.session.store import SessionLog, export_csv, export_jsonl, load_session, session_files, summary_text
from tests.unit.test_session import practice


def test_a_log_that_records_nothing_leaves_no_file(tmp_path: Path) -> None:
    # `watch` opens its log before the model and the video; if either fails, no empty session remains.
    path = tmp_path / "sessions" / "s.jsonl"
    with SessionLog(path):
        pass
    assert not path.exists()
    with SessionLog(path) as log:
        log.append(practice(1, "yes"))
    assert [e.event_id for e in load_session(path).events] == ["e1"]


def test_appending_after_close_is_an_error(tmp_path: Path) -> None:
    log = SessionLog(tmp_path / "s.jsonl")
    log.close()
    with pytest.raises(ValueError):
        log.append(practice(1, "yes"))
    assert not (tmp_path / "s.jsonl").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="folders are fsynced on POSIX only")
def test_a_new_log_fsyncs_the_folders_it_creates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A spy that still calls the real fsync: which inodes were made durable?
    synced: list[tuple[int, int, bool]] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        st = os.fstat(fd)
        synced.append((st.st_dev, st.st_ino, stat.S_ISDIR(st.st_mode)))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    path = tmp_path / "data" / "sessions" / "s.jsonl"

    def key(p: Path) -> tuple[int, int, bool]:
        st = p.stat()
        return (st.st_dev, st.st_ino, stat.S_ISDIR(st.st_mode))

    with SessionLog(path) as log:
        log.append(practice(1, "yes"))
    # The file's own entry (in sessions/), sessions/ (in data/) and data/ (in tmp_path).
    assert key(path.parent) in synced
    assert key(tmp_path / "data") in synced
    assert key(tmp_path) in synced
    assert key(path) in synced  # and the line itself

    synced.clear()
    with SessionLog(path) as log:  # reopening an existing log creates nothing: only the line is synced
        log.append(practice(2, "no"))
    assert synced == [key(path)]


DAMAGED_LINES = [
    b"[1, 2]",
    b'"a string"',
    b"42",
    b'{"kind": ["practice"]}',
    b'{"kind": "nonsense"}',
    b"[" * 100000 + b"]" * 100000,  # nested deeper than the JSON parser's recursion limit
    b"\xff\xfe not utf-8",
    b'{"kind": "skipped", "event_id": "s", "t": 1, "wall_time": 1, "keyframe_id": "k", "reason": "bored"}',
    b'{"kind": "confirmed", "event_id": "c", "target_id": "e1", "wall_time": "noon"}',
]


def _practice_line(**changes: object) -> bytes:
    data = event_to_dict(practice(9, "yes"))
    data.update(changes)
    return json.dumps(data).encode()


def test_lines_of_the_wrong_shape_are_damaged_not_fatal(tmp_path: Path) -> None:
    # JSON that parses but holds the wrong types used to load, then crash the reducer or an export.
    lines = DAMAGED_LINES + [
        _practice_line(t="late"),
        _practice_line(observation=None),
        _practice_line(timings=dict(event_to_dict(practice(9, "yes"))["timings"], total_ms="slow")),
        _practice_line(timings=[1, 2]),
        _practice_line(allowed_values="yes"),
    ]
    path = tmp_path / "s.jsonl"
    with SessionLog(path) as log:
        log.append(practice(1, "yes"))
    with open(path, "ab") as fh:
        fh.write(b"\n".join(lines) + b"\n")
    with SessionLog(path) as log:
        log.append(ExaminerConfirmed(event_id="c1", target_id="e1", wall_time=5.0))
    loaded = load_session(path)
    assert [e.event_id for e in loaded.events] == ["e1", "c1"]
    assert loaded.damaged_lines == tuple(range(2, 2 + len(lines)))
    assert loaded.state.timeline[0].review == "confirmed"
    assert len(list(csv.DictReader(io.StringIO(export_csv(loaded))))) == 1
    assert len(export_jsonl(loaded).splitlines()) == 2
    assert "Damaged log lines skipped: 2, 3" in summary_text(loaded)


HUGE = 10**400  # parses as JSON; f"{HUGE:.3f}" in the CSV export raised OverflowError


@pytest.mark.parametrize(
    "changes",
    [
        {"t": HUGE},
        {"wall_time": -HUGE},
        {"timings": {"total_ms": HUGE}},
        {"timings": {"generated_tokens": HUGE}},
        {"t": 1e400},  # inf
        {"wall_time": float("nan")},
    ],
    ids=["t", "wall_time", "total_ms", "generated_tokens", "inf", "nan"],
)
def test_numbers_out_of_any_sane_range_are_damaged_lines(tmp_path: Path, changes: dict) -> None:
    if "timings" in changes:
        changes = {"timings": dict(event_to_dict(practice(9, "yes"))["timings"], **changes["timings"])}
    path = tmp_path / "s.jsonl"
    with SessionLog(path) as log:
        log.append(practice(1, "yes"))
    with open(path, "ab") as fh:
        fh.write(_practice_line(**changes) + b"\n")
    loaded = load_session(path)
    assert [e.event_id for e in loaded.events] == ["e1"] and loaded.damaged_lines == (2,)
    assert len(list(csv.DictReader(io.StringIO(export_csv(loaded))))) == 1
    assert "Damaged log lines skipped: 2" in summary_text(loaded)


def test_old_lines_without_the_new_fields_still_load(tmp_path: Path) -> None:
    # Written before profile_id / allowed_values / note / revises existed.
    old = _practice_line()
    data = json.loads(old)
    del data["profile_id"], data["allowed_values"]
    confirm = {"kind": "confirmed", "event_id": "c", "target_id": "e9", "wall_time": 2.0, "examiner": "ann"}
    future = dict(data, event_id="e10", added_by_a_newer_version=True)
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in (data, confirm, future)) + "\n")
    loaded = load_session(path)
    assert loaded.damaged_lines == ()
    event = loaded.events[0]
    assert isinstance(event, PracticeEvent) and event.allowed_values == () and event.profile_id == ""
    assert loaded.events[1] == ExaminerConfirmed(event_id="c", target_id="e9", wall_time=2.0, examiner="ann")
    assert loaded.state.timeline[0].review == "confirmed"


def test_session_files_are_listed_newest_first_and_what_is_not_one_is_said(tmp_path: Path) -> None:
    """One listing for the CLI and the Sessions screen (they differed on ties and on what they said)."""

    for name, mtime in (("b", 100), ("a", 100), ("c", 200)):
        (tmp_path / f"{name}.jsonl").write_text("")
        os.utime(tmp_path / f"{name}.jsonl", (mtime, mtime))
    (tmp_path / "folder.jsonl").mkdir()
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "nowhere")
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "c.jsonl")
    skipped: list = []
    listed = [p.name for _, p in session_files(tmp_path, skipped)]
    assert listed == ["link.jsonl", "c.jsonl", "b.jsonl", "a.jsonl"]  # a tie goes by name, in the same order
    assert {(s.path.name, s.why) for s in skipped} == {
        ("folder.jsonl", "not a regular file"),
        ("gone.jsonl", "a broken link"),
    }


def test_an_answer_a_score_cut_withheld_keeps_the_pick_in_the_log_and_the_exports(tmp_path: Path) -> None:
    from dataclasses import replace

    cut = replace(practice(1, "unknown", "rejected"), parse_reason="low_score", model_score=0.41, withheld="yes")
    plain = replace(practice(2, "no"), model_score=0.97)
    path = tmp_path / "s.jsonl"
    with SessionLog(path) as log:
        log.append(cut)
        log.append(plain)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["withheld"] == "yes" and "withheld" not in lines[1]  # other lines stay as they were
    loaded = load_session(path)
    assert loaded.events == (cut, plain)
    rows = list(csv.DictReader(io.StringIO(export_csv(loaded))))
    assert [(r["observation"], r["parse_reason"], r["withheld"], r["model_score"]) for r in rows] == [
        ("unknown", "low_score", "yes", "0.41"),
        ("no", "ok", "", "0.97"),
    ]
    assert [json.loads(line).get("withheld") for line in export_jsonl(loaded).splitlines()][:2] == ["yes", None]
