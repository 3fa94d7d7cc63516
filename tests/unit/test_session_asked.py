"""A session says what it asked from its first line, and every view reads that, never today's settings.

A session that asked "Is the hand position correct?" used to be listed, once the checklist was
chosen in Settings, as "Hands on the lower half of the sternum — YES": the views named each answer by
the table's words for its signal, not by the question asked."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.asked import session_asked
from app.core.profile.checklist import Checklist
from app.core.profile.task import ProfileLabels, TaskProfile
from app.core.session import ExaminerConfirmed, ExaminerCorrected, SessionAsked, event_from_dict, event_to_dict, reduce
from app.session.report import practice_report
from app.session.store import export_csv, load_session, summary_text
from app.storage.paths import PROFILES
from app.storage.profile_file import load_checklist, load_profile
from app.ui.sessions.view import SessionsView
from app.ui.words.sessions import ZH
from tests.unit.test_session import checklist_keyframe, practice
from tests.unit.test_sessions_controller import write_session
from tests.unit.test_sessions_view import build, open_session, shown, texts

HASH = "ab" * 32


def asked_of(profile: TaskProfile, checklist: Checklist | None = None) -> SessionAsked:
    """The record the pipeline writes for this profile (or checklist), asked with constrained decoding."""
    return session_asked(
        profile,
        checklist,
        constrained=True,
        event_id="asked",
        wall_time=999.0,
        profile_sha256=HASH,
        model_id="keyframe-demo-cpr",
        model_revision="g1",
    )


def asked_hand_position(**changes: object) -> SessionAsked:
    return replace(asked_of(load_profile(PROFILES / "hand_position.json")), **changes)


def test_the_record_holds_every_question_its_words_answers_and_cuts() -> None:
    checklist = load_checklist(PROFILES / "cpr_checklist.json")
    asked = asked_of(checklist.signals[0], checklist)
    assert asked.profile_id == checklist.id and asked.gate == checklist.gate
    assert [s.signal for s in asked.signals] == [s.signal for s in checklist.signals]
    for spec, signal in zip(checklist.signals, asked.signals, strict=True):
        assert signal.values == spec.values and signal.prompt == spec.ask(True)[0]
        assert signal.min_score == spec.min_score
        for language, labels in spec.labels:
            if labels.question:
                assert signal.question(language) == labels.question
    single = asked_hand_position()
    assert single.questions("en") == {"hand_position_correct": "Is the hand position correct?"}  # its English words
    assert single.questions("zh") == {"hand_position_correct": "手的位置正确吗？"}  # its own Chinese words
    assert single.title("zh") == "心肺复苏：手在胸部的位置" and single.title("en") == "CPR: hand position on the chest"


def test_the_record_survives_the_log_and_the_first_one_counts() -> None:
    asked = asked_hand_position()
    line = json.loads(json.dumps(event_to_dict(asked)))
    assert event_from_dict(line) == asked
    later = asked_hand_position(event_id="later", profile_id="another")
    assert reduce([asked, practice(1, "yes"), later]).asked == asked


@pytest.mark.parametrize(
    "damage",
    [
        {"titles": [["en"]]},
        {"titles": "CPR"},
        {"signals": [{"signal": "s", "values": ["yes"], "questions": [["en", 3]]}]},
        {"signals": [{"signal": "s", "values": "yes"}]},
        {"signals": [{"signal": "s", "values": ["yes"], "min_score": -1}]},
        {"signals": {"signal": "s"}},
    ],
)
def test_a_damaged_record_is_a_damaged_line(damage: dict[str, object]) -> None:
    line = event_to_dict(asked_hand_position()) | damage
    with pytest.raises((ValueError, TypeError)):
        event_from_dict(json.loads(json.dumps(line)))


def test_sessions_names_each_answer_by_the_question_the_session_asked(tmp_path: Path) -> None:
    events = [asked_hand_position(), practice(1, "yes"), practice(2, "no")]
    write_session(tmp_path, "asked", events)
    _, view = build(tmp_path)
    open_session(view, "asked")
    answers = [row.answer.value for row in view.review_list.rows.values()]
    assert answers == ["Is the hand position correct? — YES", "Is the hand position correct? — NO"]
    summary = texts(shown(view.root, "sessions-summary")).splitlines()
    assert summary[1] == (
        f"Asked: CPR: hand position on the chest (profile hand_position, file {HASH[:12]}) · model keyframe-demo-cpr g1"
    )
    # In Chinese, the profile's own Chinese question.
    zh = SessionsView(view._controller, strings=ZH)
    assert [row.answer.value.split(" — ")[0] for row in zh.review_list.rows.values()] == ["手的位置正确吗？"] * 2


def test_a_checklist_sessions_own_words_name_its_questions_everywhere(tmp_path: Path) -> None:
    checklist = load_checklist(PROFILES / "cpr_checklist.json")
    renamed = replace(
        checklist,
        signals=tuple(
            replace(spec, labels=(("en", replace(dict(spec.labels).get("en") or ProfileLabels(), question=f"Q {i}")),))
            for i, spec in enumerate(checklist.signals)
        ),
    )
    asked = asked_of(renamed.signals[0], renamed)
    answers = dict.fromkeys((s.signal for s in checklist.signals), "yes")
    write_session(tmp_path, "cl", [asked, *checklist_keyframe(1, answers)])
    _, view = build(tmp_path)
    open_session(view, "cl")
    (row,) = view.review_list.rows.values()
    assert [line.answer.value for line in row.lines.values()] == [f"Q {i} — YES" for i in range(len(answers))]
    summary = texts(shown(view.root, "sessions-summary"))
    assert all(f"Q {i}:" in summary for i in range(len(answers))), summary
    assert all(any(f"Q {i}" in p.tooltip for p in view.timeline.points) for i in range(len(answers)))
    loaded = load_session(tmp_path / "cl.jsonl")
    report = practice_report(loaded, "cl")
    assert all(f"<td>Q {i}</td>" in report for i in range(len(answers)))
    assert f"profile {checklist.id}, file SHA-256 {HASH}" in report
    rows = list(csv.DictReader(io.StringIO(export_csv(loaded))))
    assert [r["question"] for r in rows] == [f"Q {i}" for i in range(len(answers))]
    assert summary_text(loaded).startswith(f"Asked: {checklist.title} (profile {checklist.id}, file SHA-256 {HASH})")


def test_a_session_from_before_the_record_still_opens_and_says_so(tmp_path: Path) -> None:
    write_session(tmp_path, "old", [practice(1, "yes")])
    _, view = build(tmp_path)
    open_session(view, "old")
    (row,) = view.review_list.rows.values()
    assert row.answer.value == "Hands on the lower half of the sternum — YES"  # named as the table names it
    assert texts(shown(view.root, "sessions-summary")).splitlines()[1].startswith("What was asked: not recorded")
    loaded = load_session(tmp_path / "old.jsonl")
    assert "What was asked: not recorded" in practice_report(loaded, "old")
    assert summary_text(loaded).startswith("What was asked: not recorded")


def test_the_report_counts_verdicts_beside_the_models_answers_and_keeps_every_note(tmp_path: Path) -> None:
    """After a correction to NO the report still said "2 Yes, 0 No", and it left out the notes."""
    events = [
        asked_hand_position(),
        practice(1, "yes"),
        practice(2, "yes"),
        ExaminerCorrected(
            event_id="c", target_id="e1", wall_time=2000.0, observation="no", note="hands <b>high</b>", examiner="ann"
        ),
        ExaminerConfirmed(event_id="k", target_id="e2", wall_time=2001.0, note="fine"),
    ]
    write_session(tmp_path, "rep", events)
    report = practice_report(load_session(tmp_path / "rep.jsonl"), "rep")
    row = report[report.index("<td>Is the hand position correct?</td>") :].split("</tr>")[0]
    cells = [c.split("</td>")[0] for c in row.split('<td class="n">')[1:]]
    assert cells[:2] == ['1 <span class="small">(model 2)</span>', '1 <span class="small">(model 0)</span>'], cells
    assert "<h3>The examiner's notes</h3>" in report
    assert "3.0 s · Is the hand position correct? · corrected to NO: “hands &lt;b&gt;high&lt;/b&gt;” (ann)" in report
    assert "6.0 s · Is the hand position correct? · confirmed YES: “fine” (—)" in report
    assert report.index("hands &lt;b&gt;high") < report.index("“fine”")  # in the order given
