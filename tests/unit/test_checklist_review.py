"""A checklist on the practice card and in the examiner's list: a line per question, gate first, the
gate's "not checked", "confirm all" in one tap with one note, a correction per question only to that
question's answers; a confirm-all is recorded whole or not at all."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import flet as ft
import pytest

from app.core.generation import Timings
from app.core.session import ExaminerConfirmed, ExaminerCorrected, reduce
from app.session.review import ReviewError, Verdict, make_reviews, record_reviews
from app.session.store import SessionLog, load_session
from app.storage.paths import PROFILES
from app.storage.profile_file import load_checklist
from app.ui.parts.checklist_lines import checklist_lines, reviewed_count
from app.ui.parts.review_list import KeyframeReviewRow, ReviewList, ReviewRow
from app.ui.practice.controller import PracticeState
from app.ui.practice.view import PracticeActions, PracticeView
from app.ui.words import main as strings
from app.ui.words import sessions as strings_sessions
from tests.unit.test_session import checklist_keyframe, practice

CHECKLIST = load_checklist(PROFILES / "cpr_checklist.json")
OPEN = {"hands_visible": "yes", "hand_position_correct": "no", "hands_stacked": "yes"}
SHUT = {"hands_visible": "no", "hand_position_correct": "unknown", "hands_stacked": "unknown"}


def events() -> list:
    return [*checklist_keyframe(1, OPEN), *checklist_keyframe(2, SHUT, "hands_visible")]


def test_card_lines_put_the_gate_first_and_say_what_it_left_unchecked() -> None:
    state = reduce(events())
    shut = checklist_lines(CHECKLIST, state.timeline, "k2", "", "en", strings_sessions.EN)
    assert [line.signal for line in shut] == ["hands_visible", "hand_position_correct", "hands_stacked"]
    assert shut[0].gate and not shut[0].not_checked and shut[0].value == "no"
    assert all(line.not_checked and line.value == "unknown" for line in shut[1:])
    assert shut[1].words == strings_sessions.EN["signal_hand_position_correct"]
    assert shut[1].question == "Is the hand position correct?"
    zh = checklist_lines(CHECKLIST, state.timeline, "k2", "hands_stacked", "zh", strings_sessions.ZH)
    assert zh[1].question == "手的位置正确吗？" and zh[2].answering and not zh[1].answering
    nothing = checklist_lines(CHECKLIST, state.timeline, None, "", "en", strings_sessions.EN)
    assert all(line.value is None and line.review is None for line in nothing)


def test_a_correction_is_the_lines_verdict_and_counts_as_reviewed() -> None:
    corrected = ExaminerCorrected(event_id="c", target_id="e1-hands_stacked", wall_time=9.0, observation="no")
    lines = checklist_lines(CHECKLIST, reduce([*events(), corrected]).timeline, "k1", "", "en", strings_sessions.EN)
    stacked = next(line for line in lines if line.signal == "hands_stacked")
    assert (stacked.value, stacked.model_value, stacked.review) == ("no", "yes", "corrected")
    assert reviewed_count(lines) == (1, 3)


def test_the_practice_card_shows_every_line_and_the_not_checked_reason() -> None:
    view = PracticeView(PracticeActions(*(lambda *a: None for _ in range(4))), ft.Container())
    # As the worker records them: a question its gate left unasked took no time.
    unasked = Timings(0, 0, 0, 0, 0, 0, 0, 0, 0)
    timeline = reduce([replace(e, timings=unasked) if e.parse_status == "not_asked" else e for e in events()])
    latest = timeline.timeline[-1].event
    view.render(
        PracticeState(worker_status="ready", session_id="s", session=timeline, latest=latest, checklist=CHECKLIST)
    )
    rows = view._checklist_rows
    assert view.question.value == CHECKLIST.title and view.checklist_box.visible and not view.answer_row.visible
    assert rows["hands_visible"].answer.value == "NO"
    for signal in ("hand_position_correct", "hands_stacked"):
        assert rows[signal].answer.value == strings.EN["check_not_checked"]
        assert rows[signal].note.value == "not checked: Hands in the picture — NO"
    assert view.review_state.value == strings.EN["waiting_examiner"]
    # Details are the record of what the model was asked: the gate's, never an unasked question's empty one.
    details = (view.details.value or "").splitlines()
    gate = timeline.timeline[-3].event
    assert gate.signal == "hands_visible" and latest.parse_status == "not_asked"
    assert details[0] == f"hands_visible: {gate.raw} ({gate.parse_reason})"
    assert details[1:3] == [
        f"{s}: not asked (the gate stayed shut)" for s in ("hand_position_correct", "hands_stacked")
    ]
    timings = next(line for line in details if line.startswith("Timings"))
    assert timings == "Timings: " + strings.EN["detail_timing_values"].format(
        total=gate.timings.total_ms,
        vision=gate.timings.vision_ms,
        prefill=gate.timings.prefill_ms,
        first=gate.timings.first_token_ms,
        decode=gate.timings.decode_ms,
    )


class Calls:
    def __init__(self) -> None:
        self.seen: list[tuple] = []

    def __call__(self, *args: object) -> None:
        self.seen.append(args)


def test_confirm_all_records_each_lines_verdict_with_the_note_written_for_it() -> None:
    """Correct "Hands stacked" to NO, write the note that explains it, Confirm all: the correction carries
    that note, the other waiting answers are confirmed with their own (empty) notes. It used to record
    the correction on the pick with no note and put the note on the two confirmations."""
    review = Calls()
    reviews = ReviewList()
    entries = reduce([*events(), ExaminerConfirmed(event_id="r", target_id="e1-hands_visible", wall_time=9.0)]).timeline
    reviews.render(entries, {e.event.event_id: ("yes", "no", "unknown") for e in entries}, review)
    first = reviews.rows["e1-hands_visible"]
    assert isinstance(first, KeyframeReviewRow) and len(reviews.rows) == 2  # a row per keyframe, not per answer
    assert first.status.value == "2 of 3 answers waiting for the examiner"
    line = first.lines["e1-hands_stacked"]
    assert [o.key for o in line.correct.options] == ["no", "unknown"]  # its own answers, not the model's
    assert not first.lines["e1-hands_visible"].edit.visible  # reviewed already: no second verdict
    line.correct.value = "no"
    line.correct.on_select(type("Pick", (), {"control": line.correct})())
    assert review.seen == [] and first.confirm_all.content == "Save verdicts"  # nothing recorded on the pick
    line.note.value = "one hand beside the other"
    first._on_confirm_all()
    assert review.seen == [
        (
            [
                Verdict("e1-hand_position_correct", None, ""),
                Verdict("e1-hands_stacked", "no", "one hand beside the other"),
            ],
            False,
        )
    ]


def test_a_one_signal_session_keeps_one_row_per_answer() -> None:
    reviews = ReviewList()
    entries = reduce([practice(1, "yes"), practice(2, "no")]).timeline
    reviews.render(entries, ("yes", "no", "unknown"), Calls())
    assert all(isinstance(row, ReviewRow) for row in reviews.rows.values()) and len(reviews.rows) == 2


def test_confirm_all_is_recorded_whole_or_not_at_all(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionLog(path) as log:
        for event in events():
            log.append(event)
        log.append(ExaminerConfirmed(event_id="r", target_id="e2-hands_stacked", wall_time=9.0))
    ids = ["e2-hands_visible", "e2-hand_position_correct", "e2-hands_stacked"]
    with pytest.raises(ReviewError):
        record_reviews(path, [Verdict(i, None, "all fine") for i in ids])
    assert sum(e.kind == "confirmed" for e in load_session(path).events) == 1  # none of the three was added
    made = record_reviews(path, [Verdict(ids[0], None, " fine "), Verdict(ids[1], "no", "off the sternum")])
    assert [(e.target_id, e.kind, e.note) for e in made] == [
        (ids[0], "confirmed", "fine"),
        (ids[1], "corrected", "off the sternum"),
    ]
    state = load_session(path).state
    assert [e.review for e in state.timeline if e.event.keyframe_id == "k2"] == ["confirmed", "corrected", "confirmed"]
    again = make_reviews(state, [Verdict(i) for i in ids], revise=True)  # a revision names what it replaces
    assert all(event.revises for event in again)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_shipped_checklist_line_is_short_words_never_a_prompt(language: str) -> None:
    """The instruct checklist's card once showed two of its questions as paragraphs of JSON instructions."""
    table = strings_sessions.EN if language == "en" else strings_sessions.ZH
    for path in PROFILES.glob("*.json"):
        for line in checklist_lines(load_checklist(path), (), None, "", language, table):
            for words in (line.words, line.question):
                assert "JSON" not in words and len(words) <= 80, (path.name, line.signal, words)


def test_a_tapped_keyframe_is_shown_large_with_every_answer_and_says_when_only_a_thumbnail_was_kept() -> None:
    import cv2
    import numpy as np

    jpeg = cv2.imencode(".jpg", np.zeros((540, 960, 3), np.uint8))[1].tobytes()
    kept = {("e1-hands_visible", False): jpeg, ("e1-hands_visible", True): jpeg, ("e2-hands_visible", False): jpeg}
    reviews = ReviewList(thumbnails=lambda event_id, large=False: kept.get((event_id, large)))
    entries = reduce(events()).timeline
    reviews.render(entries, {e.event.event_id: ("yes", "no", "unknown") for e in entries}, Calls())
    assert reviews.rows["e1-hands_visible"].thumb_box.visible and reviews.rows["e2-hands_visible"].thumb_box.visible

    def words(control: ft.Control) -> list[str]:
        found = [control.value] if isinstance(control, ft.Text) and control.value else []
        for child in getattr(control, "controls", None) or [getattr(control, "content", None)]:
            found += words(child) if isinstance(child, ft.Control) else []
        return found

    dialog = reviews.enlarged("e1-hands_visible", (1280, 800))
    assert dialog is not None
    said = words(dialog.content)
    assert [line.split(" — ")[1] for line in said[1:]] == ["YES", "NO", "YES"], said  # every question, in order
    image = next(c for c in dialog.content.content.controls if isinstance(c, ft.Semantics)).content
    assert (round(image.width), image.height) == (889, 800 - 300)  # the window's height bounds it, aspect kept
    large = reviews.enlarged("e1-hands_visible", (1920, 1080)).content.content.controls[0].content
    assert (large.width, large.height) == (960, 540)  # its own size, never scaled up
    phone = reviews.enlarged("e1-hands_visible", (390, 844)).content.content.controls[0].content
    assert phone.width == 390 - 112 and round(phone.height) == round((390 - 112) * 540 / 960)  # its aspect kept
    thumb_only = reviews.enlarged("e2-hands_visible", (1280, 800))
    assert thumb_only is not None and strings_sessions.EN["keyframe_no_copy"] in words(thumb_only.content)
    assert reviews.enlarged("e9-nothing", (1280, 800)) is None


def test_practice_says_which_score_cuts_are_in_force() -> None:
    from dataclasses import replace

    view = PracticeView(PracticeActions(*(lambda *a: None for _ in range(4))), ft.Container())
    view.render(PracticeState(worker_status="ready", checklist=CHECKLIST))
    assert not view._score_cut_box.visible, "no cut: nothing said"
    view.render(PracticeState(worker_status="ready", min_score=0.8))
    assert view._score_cut_box.visible and "below 0.80 are withheld" in (view.score_cut.value or "")
    signals = tuple(replace(s, min_score=0.9) if s.signal == "hands_stacked" else s for s in CHECKLIST.signals)
    view.render(PracticeState(worker_status="ready", checklist=replace(CHECKLIST, signals=signals)))
    said = view.score_cut.value or ""
    question = CHECKLIST.signals[[s.signal for s in CHECKLIST.signals].index("hands_stacked")].labels_for("en").question
    assert view._score_cut_box.visible and f"{question} below 0.90" in said, said
    assert said.count("below") == 2  # the line's own "scored below" and the one question with a cut
