"""The Sessions screen's controller over real session files: listing, opening, reviews, summary, export."""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.rhythm_figures import Pause, Rhythm
from app.core.session import (
    ExaminerConfirmed,
    ExaminerCorrected,
    KeyframeFailed,
    KeyframeSkipped,
    RhythmSample,
    SessionEvent,
    SkipReason,
)
from app.core.session_summary import summarise
from app.session.report import practice_report
from app.session.review import Verdict, record_review
from app.session.store import SessionLog, export_csv, export_rhythm_csv, load_session
from app.ui.sessions.controller import SessionsController, SessionsState
from app.ui.words.sessions import EN, ZH, sessions_notice_text
from tests.unit.test_session import practice

VALUES = ("yes", "no", "unknown")


def recorded(i: int, observation: str, status: str = "valid"):
    return replace(practice(i, observation, status), profile_id="hand_position", allowed_values=VALUES)


def demo_events() -> list[SessionEvent]:
    """Four answers (yes, no, unknown, yes), one skipped and one failed keyframe."""
    return [
        recorded(1, "yes"),
        KeyframeSkipped(event_id="s1", t=4.5, wall_time=1004.5, keyframe_id="k-s1", reason=SkipReason.UNCHANGED),
        recorded(2, "no"),
        recorded(3, "unknown", "rejected"),
        KeyframeFailed(
            event_id="f1", t=10.5, wall_time=1010.5, keyframe_id="k-f1", error="worker_died", message="the worker died"
        ),
        recorded(4, "yes"),
    ]


# One rhythm sample a second over 0-12 s: a rate at 1-4 s (95 at 4 s: slow), none at 5-7 s (a pause),
# 125 at 8 s (fast), in the band at 9-10 s, none at 11 s, 116 at 12 s. Each second counts with the rate at
# its end: 6 s in the band, 1 slow, 1 fast of 8 s with a rate (75 %).
RATES: tuple[float | None, ...] = (None, 110, 112, 108, 95, None, None, None, 125, 115, 118, None, 116)
PAUSES = (Pause(4.5, 3.5, False), Pause(10.4, 2.1, False))


def rhythm_samples() -> list[RhythmSample]:
    last = len(RATES) - 1
    return [
        RhythmSample.of(
            Rhythm(
                t_s=float(t),
                rate_per_min=rate,
                periodicity=0.9 if rate is not None else 0.2,
                count=0 if t == 0 else 20 * t // last,
                median_rate_per_min=None if t == 0 else 112.0,
                pauses=PAUSES if t == last else (),
                compression_fraction=None if t == 0 else 0.7,
            ),
            event_id=f"rh{t}",
            wall_time=1000.0 + t,
        )
        for t, rate in enumerate(RATES)
    ]


def rhythm_events() -> list[SessionEvent]:
    """The demo's keyframes (3-12 s) with the compression rhythm of the same 12 s, in time order."""
    return sorted([*demo_events(), *rhythm_samples()], key=lambda e: e.t)


def write_session(folder: Path, session_id: str, events: list[SessionEvent], mtime: float | None = None) -> Path:
    path = folder / f"{session_id}.jsonl"
    with SessionLog(path) as log:
        for event in events:
            log.append(event)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


class Recorder:
    def __init__(self) -> None:
        self.states: list[SessionsState] = []

    def __call__(self, state: SessionsState) -> None:
        self.states.append(state)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    return sessions


def test_lists_sessions_newest_first_with_counts_and_review_progress(folder: Path) -> None:
    write_session(folder, "old", [recorded(1, "no")], mtime=1_000)
    new = write_session(folder, "new", demo_events(), mtime=2_000)
    with SessionLog(new) as log:
        log.append(ExaminerConfirmed(event_id="r1", target_id="e1", wall_time=1100.0))
    (folder / "damaged.jsonl").write_text('{"kind": "practice"}\nnot json\n')
    os.utime(folder / "damaged.jsonl", (500, 500))
    (folder / "folder.jsonl").mkdir()  # not a regular file: not a session
    (folder / "notes.txt").write_text("x")
    (folder / "gone.jsonl").symlink_to(folder / "nowhere.jsonl")  # a broken link

    changes = Recorder()
    controller = SessionsController(folder, changes)
    assert not controller.state.listed
    controller.refresh()

    state = changes.states[-1]
    assert state.listed and [r.session_id for r in state.rows] == ["new", "old", "damaged"]
    newest = state.rows[0]
    assert newest.model_id == "m" and newest.started == 1001.0
    assert newest.summary is not None
    assert (newest.summary.count("yes"), newest.summary.count("no"), newest.summary.count("unknown")) == (2, 1, 1)
    assert (newest.summary.reviewed, newest.summary.analysed) == (1, 4)
    damaged = state.rows[2]
    assert damaged.summary is not None and damaged.summary.damaged_lines == 2 and damaged.model_id == ""


def test_a_missing_folder_is_an_empty_list(tmp_path: Path) -> None:
    controller = SessionsController(tmp_path / "none", Recorder())
    controller.refresh()
    assert controller.state.listed and controller.state.rows == () and controller.state.notice is None


def test_an_unreadable_file_is_a_row_that_says_why(folder: Path) -> None:
    # Reading /proc/self/mem at offset 0 fails with EIO for every user, root included (chmod 0 would not stop root).
    (folder / "locked.jsonl").symlink_to("/proc/self/mem")
    controller = SessionsController(folder, Recorder())
    controller.refresh()
    (row,) = controller.state.rows
    assert not row.readable and row.error
    controller.open("locked")
    assert controller.state.opened is None and controller.state.notice.key == "notice_open_failed"


def test_a_refresh_reads_only_new_or_changed_files(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.ui.sessions.controller as module

    read: list[str] = []

    def counting(path: Path):
        read.append(path.stem)
        return load_session(path)

    monkeypatch.setattr(module, "load_session", counting)
    for name, mtime in (("a", 1000.0), ("b", 2000.0), ("c", 3000.0)):
        write_session(folder, name, demo_events(), mtime)
    (folder / "bad.jsonl").symlink_to("/proc/self/mem")  # unreadable: tried again each time
    controller = SessionsController(folder, Recorder())
    controller.refresh()
    assert sorted(read) == ["a", "b", "bad", "c"]
    read.clear()
    controller.refresh()
    # Newest start first (these three began at once: newest change first); no start known: last.
    assert read == ["bad"] and [r.session_id for r in controller.state.rows] == ["c", "b", "a", "bad"]

    read.clear()
    with SessionLog(folder / "a.jsonl") as log:  # an examiner's review appends: the file changed
        log.append(recorded(9, "no"))
    (folder / "b.jsonl").unlink()
    controller.refresh()
    assert sorted(read) == ["a", "bad"]
    rows = {r.session_id: r for r in controller.state.rows}
    assert set(rows) == {"a", "c", "bad"}
    assert rows["a"].summary.analysed == rows["c"].summary.analysed + 1  # type: ignore[union-attr]


def test_opening_a_session_gives_summary_allowed_answers_and_skips(folder: Path) -> None:
    write_session(folder, "s", demo_events() + [practice(5, "no")])  # e5: an old log line, no recorded answers
    controller = SessionsController(folder, Recorder())
    controller.refresh()
    controller.open("s")
    opened = controller.state.opened
    assert opened is not None
    assert opened.summary.analysed == 5 and opened.summary.pending == 5 and opened.summary.agreement is None
    assert (opened.summary.skipped, opened.summary.unchanged, opened.summary.failed) == (1, 1, 1)
    assert opened.allowed["e1"] == VALUES and opened.allowed["e5"] == VALUES  # e5 from the bundled profile
    assert [s.event_id for s in opened.skipped_events] == ["s1"]
    controller.close()
    assert controller.state.opened is None


def test_confirm_and_correct_append_to_the_file_and_update_the_summary(folder: Path) -> None:
    path = write_session(folder, "s", demo_events())
    changes = Recorder()
    controller = SessionsController(folder, changes, examiner="ann")
    controller.refresh()
    controller.open("s")

    assert controller.review([Verdict("e1", note="  hands centred ")])
    assert controller.review([Verdict("e2", "yes", "")])
    assert controller.state.notice.key == "notice_review_corrected"
    assert dict(controller.state.notice.values) == {"t": "6.0", "answer": "yes"}

    events = load_session(path).events
    confirmed, corrected = events[-2], events[-1]
    assert isinstance(confirmed, ExaminerConfirmed) and confirmed.target_id == "e1"
    assert (confirmed.note, confirmed.examiner) == ("hands centred", "ann")
    assert isinstance(corrected, ExaminerCorrected) and (corrected.target_id, corrected.observation) == ("e2", "yes")

    opened = controller.state.opened
    assert opened is not None
    assert (opened.summary.reviewed, opened.summary.confirmed, opened.summary.corrected) == (2, 1, 1)
    assert opened.summary.agreement == 0.5
    assert [e.event.event_id for e in opened.state.pending] == ["e3", "e4"]
    row = next(r for r in controller.state.rows if r.session_id == "s")
    assert row.summary is not None and row.summary.reviewed == 2  # the list follows without a refresh
    assert changes.states[-1] is controller.state


def test_refused_reviews_leave_the_file_alone_and_say_why(folder: Path) -> None:
    path = write_session(folder, "s", demo_events())
    controller = SessionsController(folder, Recorder())
    controller.refresh()
    controller.open("s")
    size = path.stat().st_size

    assert not controller.review([Verdict("e1", "maybe")])
    notice = controller.state.notice
    assert notice.error and notice.key == "review_refused_not_an_answer" and dict(notice.values)["answer"] == "maybe"
    assert not controller.review([Verdict("e1", "yes")])  # the model's own answer
    assert not controller.review([Verdict("nope")])
    assert path.stat().st_size == size

    assert controller.review([Verdict("e1")])
    assert not controller.review([Verdict("e1")])  # a second verdict needs revise
    assert controller.state.notice.key == "review_refused_already_confirmed"
    assert controller.review([Verdict("e1", "no", "hands off-centre")], revise=True)
    entry = controller.state.opened.state.timeline[0]
    assert [r.describe() for r in entry.history] == ["confirmed yes", "corrected no"]
    revision = load_session(path).events[-1]
    assert isinstance(revision, ExaminerCorrected) and revision.revises == entry.history[0].event_id


def test_a_review_that_cannot_be_written_is_reported(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_session(folder, "s", demo_events())
    controller = SessionsController(folder, Recorder())
    controller.refresh()
    controller.open("s")

    def full(self: SessionLog, event: SessionEvent) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(SessionLog, "append", full)
    assert not controller.review([Verdict("e1")])
    assert controller.state.notice.key == "notice_review_failed" and controller.state.notice.error
    assert controller.state.opened.summary.reviewed == 0


def test_refresh_reloads_the_opened_session_and_a_vanished_one_closes(folder: Path) -> None:
    path = write_session(folder, "s", [recorded(1, "yes")])
    controller = SessionsController(folder, Recorder())
    controller.refresh()
    controller.open("s")
    with SessionLog(path) as log:  # a live session goes on writing
        log.append(recorded(2, "no"))
    controller.refresh()
    assert controller.state.opened.summary.analysed == 2
    path.unlink()
    controller.open("s")
    assert controller.state.opened is None and controller.state.notice.key == "notice_missing"


def test_exports_are_the_session_files_exports(folder: Path) -> None:
    path = write_session(folder, "s", demo_events())
    controller = SessionsController(folder, Recorder())
    assert controller.export("csv") is None  # nothing open
    controller.refresh()
    controller.open("s")
    controller.review([Verdict("e2", "yes", "centred")])

    as_csv = controller.export("csv")
    assert as_csv is not None and as_csv.file_name == "keyframe-session-s.csv" and as_csv.mime == "text/csv"
    assert as_csv.data.decode("utf-8") == export_csv(load_session(path))
    rows = list(csv.DictReader(io.StringIO(as_csv.data.decode("utf-8"))))
    assert rows[1]["review"] == "corrected" and rows[1]["final_observation"] == "yes"

    as_jsonl = controller.export("jsonl")
    assert as_jsonl is not None and as_jsonl.file_name.endswith(".jsonl")
    lines = [json.loads(line) for line in as_jsonl.data.decode("utf-8").splitlines()]
    assert len(lines) == 7 and lines[-1]["kind"] == "corrected"
    with pytest.raises(ValueError):
        controller.export("pdf")

    controller.export_finished(as_csv.file_name, "/home/ann/s.csv")
    assert controller.state.notice.key == "export_saved" and not controller.state.notice.error
    controller.export_finished(as_csv.file_name, None)
    assert controller.state.notice.key == "export_cancelled"
    controller.export_failed(as_csv.file_name, "disk full")
    assert controller.state.notice.error
    controller.dismiss_notice()
    assert controller.state.notice is None


def test_a_rhythm_session_opens_with_its_figures_and_exports_its_samples_and_report(folder: Path) -> None:
    path = write_session(folder, "cam", rhythm_events())
    controller = SessionsController(folder, Recorder())
    controller.refresh()
    controller.open("cam")
    opened = controller.state.opened
    assert opened is not None and opened.rhythm is not None
    rhythm = opened.rhythm
    assert (rhythm.count, rhythm.median_rate_per_min, rhythm.compression_fraction) == (20, 112.0, 0.7)
    assert (rhythm.seconds_in_band, rhythm.seconds_slow, rhythm.seconds_fast, rhythm.seconds_with_rate) == (6, 1, 1, 8)
    assert rhythm.pauses == PAUSES and rhythm.longest_pause_s == 3.5
    assert opened.summary.analysed == 4  # the keyframes are still what they were

    as_rhythm = controller.export("rhythm")
    assert as_rhythm is not None and as_rhythm.file_name == "keyframe-session-cam-rhythm.csv"
    assert as_rhythm.mime == "text/csv"
    assert as_rhythm.data.decode("utf-8") == export_rhythm_csv(load_session(path))
    rows = list(csv.DictReader(io.StringIO(as_rhythm.data.decode("utf-8"))))
    assert [row["event_id"] for row in rows] == [f"rh{t}" for t in range(len(RATES))]
    assert [row["rate_per_min"] for row in rows][:3] == ["", "110.0", "112.0"]  # no rate: an empty cell

    report = controller.export("report")
    assert report is not None and report.file_name == "keyframe-session-cam-report.html"
    assert report.mime == "text/html"
    html = report.data.decode("utf-8")
    assert html == practice_report(load_session(path), "cam")
    assert html.startswith("<!doctype html>") and "Practice feedback, not a medical assessment" in html
    assert "not measured by the camera" in html and "Compression rhythm" in html


def test_a_chinese_screen_exports_the_report_in_chinese_under_the_same_name(folder: Path) -> None:
    path = write_session(folder, "cam", rhythm_events())
    reports = {}
    for language in ("zh", "en"):
        controller = SessionsController(folder, Recorder(), language=language)
        controller.refresh()
        controller.open("cam")
        reports[language] = controller.export("report")
    chinese, english = reports["zh"], reports["en"]
    assert chinese is not None and english is not None
    assert chinese.file_name == english.file_name == "keyframe-session-cam-report.html"
    html = chinese.data.decode("utf-8")
    assert html == practice_report(load_session(path), "cam", "zh")
    assert (
        '<html lang="zh-Hans">' in html
        and "练习反馈，不是医学评估。" in html
        and "按压深度与回弹：摄像头无法测量。" in html
    )
    assert "Practice feedback" not in html and "Practice feedback" in english.data.decode("utf-8")


def test_a_session_without_rhythm_has_no_rhythm_export_but_a_report(folder: Path) -> None:
    write_session(folder, "stills", [replace(recorded(i, "yes"), still=True, source=f"{i}.jpg") for i in (1, 2)])
    controller = SessionsController(folder, Recorder())
    controller.refresh()
    controller.open("stills")
    opened = controller.state.opened
    assert opened is not None and opened.rhythm is None
    assert controller.export("rhythm") is None
    report = controller.export("report")
    assert report is not None and "Practice feedback, not a medical assessment" in report.data.decode("utf-8")


def test_a_session_named_in_bytes_not_utf8_is_shown_escaped_and_exported_under_an_ascii_name(folder: Path) -> None:
    stem = os.fsdecode(b"caf\xe9")
    write_session(folder, stem, demo_events())
    controller = SessionsController(folder, Recorder())
    controller.refresh()
    (row,) = controller.state.rows
    assert (row.session_id, row.label) == (stem, "caf\\xe9")
    controller.open(stem)
    as_csv = controller.export("csv")
    assert as_csv is not None and as_csv.file_name == "keyframe-session-caf_.csv"


def test_a_review_lands_in_a_log_still_open_for_recording(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    with SessionLog(path) as live:
        live.append(recorded(1, "no"))
        event = record_review(path, "e1", correct="yes", note="off", examiner="bo")
        live.append(recorded(2, "yes"))
    assert isinstance(event, ExaminerCorrected) and event.note == "off"
    summary = summarise(load_session(path).state)
    assert (summary.analysed, summary.reviewed, summary.corrected, summary.agreement) == (2, 1, 1, 0.0)


def test_a_verdict_another_examiner_recorded_since_the_screen_opened_is_not_doubled(folder: Path) -> None:
    path = write_session(folder, "s", demo_events())
    controller = SessionsController(folder, Recorder())
    controller.refresh()
    controller.open("s")
    record_review(path, "e1", examiner="the CLI")  # after the screen read the file

    assert not controller.review([Verdict("e1")])
    notice = controller.state.notice
    assert notice.key == "review_refused_already_confirmed"
    # Said in the screen's language, with who got there first, not in the command line's words.
    assert sessions_notice_text(EN, notice) == (
        "Not recorded: this answer was already confirmed as YES by the CLI. The screen now shows that review."
    )
    assert sessions_notice_text(ZH, notice) == "未记录：这个回答已被the CLI确认为是。屏幕现在显示的是那次复核。"
    assert [e.target_id for e in load_session(path).events if isinstance(e, ExaminerConfirmed)] == ["e1"]
    assert controller.state.opened.state.timeline[0].review == "confirmed", "the screen shows that verdict now"


def test_rows_say_start_duration_and_source_newest_start_first_and_a_session_can_be_deleted(folder: Path) -> None:
    camera = [replace(recorded(1, "no"), source="camera"), replace(recorded(2, "yes"), source="camera")]
    write_session(folder, "camera", camera, mtime=9_000)  # reviewed later: changed last, started first
    stills = [replace(recorded(i, "no"), wall_time=5000.0 + i, source=f"{i}.jpg", still=True) for i in (1, 2, 3)]
    path = write_session(folder, "stills", stills, mtime=1_000)
    SessionLog(path).save_thumbnail("e1", b"\xff\xd8")
    live = {"camera"}
    changes = Recorder()
    controller = SessionsController(folder, changes, is_live=lambda sid: sid in live)
    controller.refresh()
    rows = changes.states[-1].rows
    assert [(r.session_id, r.duration_s, r.source) for r in rows] == [
        ("stills", 2.0, "3 images"),
        ("camera", 1.0, "camera"),
    ]
    controller.delete("camera")  # being recorded: refused, said
    assert (folder / "camera.jsonl").exists()
    assert changes.states[-1].notice is not None and changes.states[-1].notice.key == "notice_delete_live"
    controller.open("stills")
    controller.delete("stills")
    state = changes.states[-1]
    assert not path.exists() and not (folder / "stills.thumbs").exists()
    assert state.opened is None and [r.session_id for r in state.rows] == ["camera"]
    assert state.notice is not None and state.notice.key == "notice_deleted"
