"""`python -m app sessions …` and `watch` as a user runs them, on real files in an isolated data folder."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.session import ExaminerConfirmed
from app.session.store import SessionLog
from tests.conditions import HANG_S
from tests.unit.test_session import practice

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data folder of this test's own (the shared one holds other tests' sessions)."""
    monkeypatch.setenv("FLET_APP_STORAGE_DATA", str(tmp_path / "data"))
    return tmp_path / "data" / "sessions"


def app(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True, timeout=HANG_S, env=os.environ
    )


def write_session(folder: Path, name: str, *events) -> Path:
    path = folder / f"{name}.jsonl"
    with SessionLog(path) as log:
        for event in events:
            log.append(event)
    return path


def test_list_skips_what_is_not_a_session_file(sessions: Path) -> None:
    write_session(sessions, "good", practice(1, "yes"), practice(2, "no"))
    (sessions / "folder.jsonl").mkdir()
    (sessions / "dangling.jsonl").symlink_to(sessions / "gone.jsonl")
    (sessions / "loop.jsonl").symlink_to(sessions / "loop.jsonl")
    (sessions / "damaged.jsonl").write_bytes(b"\x00\x01 not json\n[[[\n")
    os.mkfifo(sessions / "fifo.jsonl")  # a FIFO would block the listing for ever if it were opened
    proc = app("sessions", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert set(listed) == {"good", "damaged"}
    assert (listed["good"]["keyframes"], listed["good"]["damaged_lines"]) == (2, 0)
    assert (listed["damaged"]["keyframes"], listed["damaged"]["damaged_lines"]) == (0, 2)
    for name in ("folder", "dangling", "loop", "fifo"):
        assert f"skipped {sessions / name}.jsonl" in proc.stderr
    assert "damaged.jsonl: no readable event (2 damaged lines)" in proc.stderr


def test_list_shows_a_name_not_utf8_escaped(sessions: Path) -> None:
    write_session(sessions, os.fsdecode(b"caf\xe9"), practice(1, "yes"))
    proc = app("sessions", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    (row,) = map(json.loads, proc.stdout.splitlines())
    assert row["id"] == "caf\\xe9" and row["path"].endswith("caf\\xe9.jsonl")


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs Linux /proc")
def test_list_skips_an_unreadable_session(sessions: Path) -> None:
    write_session(sessions, "good", practice(1, "yes"))
    # A regular file that fails with EIO when read, even for root (who ignores file modes).
    locked = sessions / "locked.jsonl"
    locked.symlink_to("/proc/self/mem")
    proc = app("sessions", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [json.loads(line)["id"] for line in proc.stdout.splitlines()] == ["good"]
    assert f"skipped {locked}" in proc.stderr


def test_review_accepts_only_the_profiles_answers(sessions: Path) -> None:
    recorded = replace(practice(1, "no"), profile_id="hand_position", allowed_values=("yes", "no", "unknown"))
    path = write_session(sessions, "s", recorded, practice(2, "no"))  # e2: an old event, nothing recorded
    before = path.read_bytes()
    for target in ("e1", "e2"):
        proc = app("sessions", "review", "s", target, "--correct", "absolutely")
        assert proc.returncode == 1
        assert "'absolutely' is not an answer to 'hand_position_correct'" in proc.stderr
        assert "yes, no, unknown" in proc.stderr
    assert path.read_bytes() == before, "a refused review writes nothing"
    proc = app("sessions", "review", "s", "e2", "--correct", "yes")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["observation"] == "yes"


def test_review_keeps_notes_and_a_second_verdict_needs_revise(sessions: Path) -> None:
    write_session(sessions, "s", practice(1, "no"))
    proc = app("sessions", "review", "s", "e1", "--confirm", "--note", "clearly off-centre", "--examiner", "ann")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["note"] == "clearly off-centre"

    refused = app("sessions", "review", "s", "e1", "--correct", "yes")
    assert refused.returncode == 1
    assert "already reviewed (confirmed no by ann)" in refused.stderr and "--revise" in refused.stderr

    revised = app("sessions", "review", "s", "e1", "--correct", "yes", "--revise", "--note", "second look")
    assert revised.returncode == 0, revised.stderr
    assert json.loads(revised.stdout)["revises"] == json.loads(proc.stdout)["event_id"]

    rows = list(csv.DictReader(io.StringIO(app("sessions", "export", "s", "--format", "csv").stdout)))
    assert [(r["review"], r["final_observation"], r["review_note"], r["review_history"]) for r in rows] == [
        ("corrected", "yes", "second look", "confirmed no -> corrected yes")
    ]
    jsonl = [json.loads(line) for line in app("sessions", "export", "s", "--format", "jsonl").stdout.splitlines()]
    assert [(e["kind"], e.get("note")) for e in jsonl] == [
        ("practice", None),
        ("confirmed", "clearly off-centre"),
        ("corrected", "second look"),
    ]
    summary = app("sessions", "export", "s", "--format", "summary").stdout
    assert "revised e1 at 3.0 s: model no; confirmed no -> corrected yes" in summary


def test_review_of_a_log_that_names_no_known_profile_asks_for_one(sessions: Path, tmp_path: Path) -> None:
    write_session(
        sessions,
        "s",
        replace(practice(1, "no"), signal="depth_ok"),
        ExaminerConfirmed(event_id="c", target_id="x", wall_time=1.0),
    )
    proc = app("sessions", "review", "s", "e1", "--correct", "deep")
    assert proc.returncode == 1 and "pass the session's profile with --profile" in proc.stderr
    profile = tmp_path / "depth.json"
    profile.write_text(json.dumps({"id": "depth", "signal": "depth_ok", "values": ["deep", "shallow"], "prompt": "?"}))
    proc = app("sessions", "review", "s", "e1", "--correct", "deep", "--profile", str(profile))
    assert proc.returncode == 0, proc.stderr


def test_a_watch_that_fails_before_any_event_leaves_no_session(sessions: Path, tmp_path: Path) -> None:
    proc = app("watch", str(tmp_path / "missing.avi"), "--interval", "2")
    assert proc.returncode == 1 and "No such file" in proc.stderr
    # The log is open while the model loads; a model that cannot load records nothing.
    from tests.integration.video import write_hands_video

    video = tmp_path / "hands.avi"
    write_hands_video(video, seconds_per_phase=2)
    no_model = tmp_path / "no-model"
    no_model.mkdir()
    proc = app("watch", str(video), "--interval", "2", "--model", str(no_model))
    assert proc.returncode == 2 and "config.json" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not sessions.exists() or list(sessions.iterdir()) == []


def test_list_is_a_table_newest_start_first_and_delete_removes_log_and_thumbnails(sessions: Path) -> None:
    old = write_session(sessions, "old", replace(practice(1, "yes"), source="camera"))
    new = write_session(
        sessions,
        "new",
        replace(practice(2, "no"), wall_time=5000.0, source="a.jpg", still=True),
        replace(practice(3, "no"), wall_time=5012.0, source="b.jpg", still=True),
    )
    os.utime(old, (9e9, 9e9))  # changed last, started first: the order is by start
    SessionLog(new).save_thumbnail("e2", b"\xff\xd8jpeg")
    proc = app("sessions", "list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["SESSION", "STARTED", "DURATION", "SOURCE", "TRAINEE", "ANSWERS", "PENDING"]
    assert [line.split()[0] for line in lines[1:]] == ["new", "old"]
    assert "12 s" in lines[1] and "2 images" in lines[1] and "camera" in lines[2]
    # Delete: only a session of the folder, and with it its thumbnails.
    outside = sessions.parent / "keep.jsonl"
    outside.write_text("{}\n")
    assert app("sessions", "delete", str(outside)).returncode == 1 and outside.exists()
    proc = app("sessions", "delete", "new")
    assert proc.returncode == 0, proc.stderr
    assert not new.exists() and not (sessions / "new.thumbs").exists()
    assert [json.loads(line)["id"] for line in app("sessions", "list", "--json").stdout.splitlines()] == ["old"]


def test_a_session_is_named_from_the_command_line_and_its_verdicts_carry_the_examiner(sessions: Path) -> None:
    write_session(sessions, "s", practice(1, "yes"))
    refused = app("sessions", "name", "s", "--trainee", "Ana\nLima")
    assert refused.returncode == 1 and "not a name (a line break or hidden character)" in refused.stderr
    proc = app("sessions", "name", "s", "--trainee", " Ana  Lima ", "--examiner", "Dr Bea")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) | {"event_id": "", "wall_time": 0} == {
        "event_id": "",
        "wall_time": 0,
        "trainee": "Ana Lima",
        "examiner": "Dr Bea",
        "kind": "named",
    }
    listed = json.loads(app("sessions", "list", "--json").stdout)
    assert (listed["trainee"], listed["examiner"]) == ("Ana Lima", "Dr Bea")
    assert "Ana Lima" in app("sessions", "list").stdout.splitlines()[1]
    assert "Trainee: Ana Lima; examiner: Dr Bea" in app("sessions", "export", "s").stdout
    review = app("sessions", "review", "s", "e1", "--confirm")
    assert review.returncode == 0 and json.loads(review.stdout)["examiner"] == "Dr Bea"


def test_report_in_chinese(sessions: Path, tmp_path: Path) -> None:
    write_session(sessions, "zh", practice(1, "yes"), practice(2, "no"))
    proc = app("sessions", "report", "zh", "--language", "zh")
    assert proc.returncode == 0, proc.stderr
    assert '<html lang="zh-Hans">' in proc.stdout and "练习反馈，不是医学评估。" in proc.stdout
    assert "按压深度与回弹：摄像头无法测量。" in proc.stdout and "Practice feedback" not in proc.stdout
    out = tmp_path / "report.html"
    written = app("sessions", "report", "zh", "--language", "zh", "--out", str(out))
    assert written.returncode == 0, written.stderr
    assert out.read_text(encoding="utf-8") == proc.stdout  # UTF-8 whatever the locale
    assert "Practice feedback, not a medical assessment." in app("sessions", "report", "zh").stdout  # default
    refused = app("sessions", "report", "zh", "--language", "fr")
    assert refused.returncode != 0 and "invalid choice" in refused.stderr
