from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from app.core.generation import Timings
from app.core.session import (
    ExaminerConfirmed,
    ExaminerCorrected,
    KeyframeFailed,
    KeyframeSkipped,
    PracticeEvent,
    SkipReason,
    apply,
    event_from_dict,
    event_to_dict,
    reduce,
)
from app.session.store import SessionLog, export_csv, export_jsonl, load_session, summary_text

TIMINGS = Timings(1.0, 0.5, 2.0, 3.0, 6.0, 4.0, 10.0, 50, 12)


def practice(i: int, observation: str, status: str = "valid") -> PracticeEvent:
    return PracticeEvent(
        event_id=f"e{i}",
        t=i * 3.0,
        wall_time=1000.0 + i,
        keyframe_id=f"k{i}",
        signal="hand_position_correct",
        observation=observation,
        parse_status=status,
        parse_reason="ok" if status == "valid" else "invalid_json",
        raw="{}",
        timings=TIMINGS,
        model_id="m",
        model_revision="r",
        backend="cpu",
    )


def test_generative_answers_are_never_confident(tmp_path: Path) -> None:
    # However sure the model's tokens looked, what the session keeps, shows and exports has confidence 0,
    # the low tier and no strong alert, pending the examiner: checked on the reducer and the CSV export,
    # against the promised values (not against the module's own constant).
    events = [
        replace(practice(1, "yes"), model_score=0.999),
        replace(practice(2, "no"), model_score=0.97),
        practice(3, "unknown", "rejected"),
    ]
    state = reduce(events)
    assert [
        (e.routing.confidence, e.routing.alert_tier, e.routing.status, e.routing.strong_alert) for e in state.timeline
    ] == [(0.0, "low", "pending_examiner_confirmation", False)] * 3
    log = SessionLog(tmp_path / "s.jsonl")
    for event in events:
        log.append(event)
    log.close()
    rows = list(csv.DictReader(io.StringIO(export_csv(load_session(tmp_path / "s.jsonl")))))
    assert [(r["confidence"], r["alert_tier"], r["review"]) for r in rows] == [("0.0", "low", "pending")] * 3


def test_reducer_builds_timeline_counts_and_pending() -> None:
    events = [
        practice(1, "no"),
        practice(2, "yes"),
        practice(3, "yes"),
        KeyframeSkipped(event_id="s1", t=10.0, wall_time=1010.0, keyframe_id="k4", reason=SkipReason.UNCHANGED),
        practice(5, "yes"),
        practice(6, "no"),
        KeyframeFailed(
            event_id="f1", t=20.0, wall_time=1020.0, keyframe_id="k7", error="worker_died", message="the worker exited"
        ),
        ExaminerConfirmed(event_id="c1", target_id="e2", wall_time=1030.0),
        ExaminerCorrected(event_id="c2", target_id="e6", wall_time=1031.0, observation="yes", note="hands were fine"),
        ExaminerConfirmed(event_id="c3", target_id="does-not-exist", wall_time=1032.0),
    ]
    state = reduce(events)
    assert [e.event.event_id for e in state.timeline] == ["e1", "e2", "e3", "e5", "e6"]
    assert state.count("yes") == 3 and state.count("no") == 2
    assert state.signals == ("hand_position_correct",) and state.keyframes_answered == 5
    assert state.count("yes", "hand_position_correct") == 3 and state.count("yes", "hands_stacked") == 0
    assert state.skipped == 1 and state.unchanged == 1 and state.failed == 1
    assert [e.event.event_id for e in state.pending] == ["e1", "e3", "e5"]
    reviewed = {e.event.event_id: (e.review, e.final_observation) for e in state.timeline if e.review != "pending"}
    assert reviewed == {"e2": ("confirmed", "yes"), "e6": ("corrected", "yes")}
    assert all(e.routing.confidence == 0.0 for e in state.timeline)


def test_reducer_does_not_mutate_the_old_state() -> None:
    before = reduce([practice(1, "yes")])
    after = apply(before, ExaminerConfirmed(event_id="c", target_id="e1", wall_time=1.0))
    assert before.timeline[0].review == "pending" and after.timeline[0].review == "confirmed"


@given(st.lists(st.sampled_from(["yes", "no", "unknown"]), max_size=30))
def test_replay_in_pieces_equals_replay_at_once(observations: list[str]) -> None:
    events = [practice(i, o, "valid" if o != "unknown" else "rejected") for i, o in enumerate(observations)]
    half = len(events) // 2
    assert reduce(events[half:], reduce(events[:half])) == reduce(events)
    state = reduce(events)
    assert sum(v for _, v in state.counts) == len(events)


def test_events_round_trip_through_json() -> None:
    events = [
        practice(1, "yes"),
        KeyframeSkipped(event_id="s", t=1.0, wall_time=2.0, keyframe_id="k", reason=SkipReason.SUPERSEDED),
        KeyframeFailed(event_id="f", t=1.0, wall_time=2.0, keyframe_id="k", error="e", message="m"),
        KeyframeFailed(event_id="f2", t=1.0, wall_time=2.0, keyframe_id="k2", error="e", message="m", source="a.jpg"),
        ExaminerConfirmed(event_id="c", target_id="e1", wall_time=3.0),
        ExaminerCorrected(event_id="d", target_id="e1", wall_time=4.0, observation="no"),
        # Fields added later: the profile's answers, a confirmation's note, the review a revision replaces.
        replace(practice(2, "no"), profile_id="hand_position", allowed_values=("yes", "no", "unknown")),
        ExaminerConfirmed(
            event_id="c2", target_id="e1", wall_time=5.0, examiner="ann", note="looked again", revises="d"
        ),
        ExaminerCorrected(
            event_id="d2", target_id="e1", wall_time=6.0, observation="yes", note="n", examiner="bo", revises="c2"
        ),
    ]
    for event in events:
        assert event_from_dict(json.loads(json.dumps(event_to_dict(event)))) == event


def test_log_is_append_only_and_survives_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionLog(path) as log:
        log.append(practice(1, "yes"))
        log.append(practice(2, "no"))
    with open(path, "ab") as fh:
        fh.write(b'{"kind":"practice","event_id":"e3","t":')  # a write cut by a crash
    with SessionLog(path) as log:  # reopening appends, never truncates
        log.append(ExaminerConfirmed(event_id="c1", target_id="e1", wall_time=5.0))
    loaded = load_session(path)
    assert [e.event_id for e in loaded.events] == ["e1", "e2", "c1"]
    assert loaded.damaged_lines == (3,)
    assert loaded.state.timeline[0].review == "confirmed"
    assert "Damaged log lines skipped: 3" in summary_text(loaded)


def test_exports(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionLog(path) as log:
        for event in (
            practice(1, "yes"),
            practice(2, "no"),
            ExaminerCorrected(event_id="c", target_id="e2", wall_time=9.0, observation="yes"),
        ):
            log.append(event)
    loaded = load_session(path)
    rows = list(csv.DictReader(io.StringIO(export_csv(loaded))))
    assert [(r["event_id"], r["observation"], r["review"], r["final_observation"]) for r in rows] == [
        ("e1", "yes", "pending", ""),
        ("e2", "no", "corrected", "yes"),
    ]
    assert all(r["confidence"] == "0.0" and r["alert_tier"] == "low" for r in rows)
    assert len(export_jsonl(loaded).splitlines()) == 3
    summary = summary_text(loaded)
    assert "Keyframes analysed: 2" in summary and "Pending examiner confirmation: 1" in summary


def test_a_csv_export_keeps_a_carriage_return_inside_its_field(tmp_path: Path) -> None:
    """Found by the testers' property test on the same writer: with "\\n" line ends a bare CR split the row."""
    log = SessionLog(tmp_path / "s.jsonl")
    log.append(replace(practice(1, "yes"), raw="no\ranswer"))
    log.close()
    rows = list(csv.DictReader(io.StringIO(export_csv(load_session(tmp_path / "s.jsonl")), newline="")))
    assert [r["raw"] for r in rows] == ["no\ranswer"]


def test_a_correction_is_the_verdict_everywhere_and_the_models_answer_stays_the_models(tmp_path: Path) -> None:
    from app.ui.parts.review_list import ReviewList
    from app.ui.parts.timeline import timeline_points

    events = [
        practice(1, "yes"),
        practice(2, "no"),
        ExaminerCorrected(event_id="c", target_id="e1", wall_time=9.0, observation="no"),
    ]
    state = reduce(events)
    assert [e.verdict for e in state.timeline] == ["no", "no"]
    assert [e.event.observation for e in state.timeline] == ["yes", "no"]  # the model's, kept
    # The timelines plot the verdict in its lane, with the model's answer in the tooltip.
    first = timeline_points(state)[0]
    assert (first.lane, first.kind) == ("no", "no") and "YES" in first.tooltip
    # The review list leads with the examiner's answer and says what the model said.
    reviews = ReviewList()
    reviews.render(state.timeline, ("yes", "no"), lambda *a: None)
    item = reviews.rows["e1"]
    assert item.answer.value.endswith("NO (examiner; the model said YES)")
    # Exports and the summary: the verdict column, and the verdicts beside the model's answers.
    path = tmp_path / "s.jsonl"
    with SessionLog(path) as log:
        for event in events:
            log.append(event)
    rows = list(csv.DictReader(io.StringIO(export_csv(load_session(path)))))
    assert [(r["observation"], r["verdict"]) for r in rows] == [("yes", "no"), ("no", "no")]
    summary = summary_text(load_session(path))
    assert "Model answers: no 1, yes 1" in summary and "Verdicts (the examiner's where reviewed): no 2" in summary


def checklist_keyframe(i: int, answers: dict[str, str], gated_by: str = "") -> list[PracticeEvent]:
    """A checklist keyframe's events: one per signal, sharing the keyframe; `gated_by` on the unasked."""
    gate = next(iter(answers))
    return [
        replace(
            practice(i, observation),
            event_id=f"e{i}-{signal}",
            signal=signal,
            profile_id="cpr_checklist",
            allowed_values=("yes", "no", "unknown"),
            parse_status="not_asked" if gated_by and signal != gate else "valid",
            parse_reason="not_visible" if gated_by and signal != gate else "ok",
            gated_by=gated_by if signal != gate else "",
        )
        for signal, observation in answers.items()
    ]


def test_a_checklist_session_counts_each_signal_apart_and_reviews_each_answer(tmp_path: Path) -> None:
    events = [
        *checklist_keyframe(1, {"hands_visible": "yes", "hand_position_correct": "no", "hands_stacked": "yes"}),
        *checklist_keyframe(
            2, {"hands_visible": "no", "hand_position_correct": "unknown", "hands_stacked": "unknown"}, "hands_visible"
        ),
        ExaminerCorrected(event_id="c1", target_id="e1-hand_position_correct", wall_time=2000.0, observation="yes"),
    ]
    state = reduce(events)
    assert state.signals == ("hands_visible", "hand_position_correct", "hands_stacked")
    assert state.keyframes_answered == 2 and len(state.timeline) == 6
    assert dict(dict(state.signal_counts)["hands_visible"]) == {"no": 1, "yes": 1}
    assert state.count("unknown", "hands_stacked") == 1 and state.count("yes", "hands_stacked") == 1
    # Each signal's answer is its own entry, pending on its own: the correction touched one of six.
    assert [e.review for e in state.timeline].count("corrected") == 1
    assert len(state.pending) == 5 and all(e.routing.confidence == 0.0 for e in state.timeline)
    log = SessionLog(tmp_path / "c.jsonl")
    for event in events:
        log.append(event)
    log.close()
    loaded = load_session(tmp_path / "c.jsonl")
    assert list(loaded.events) == events  # gated_by survives the log
    summary = summary_text(loaded)
    assert "Keyframes analysed: 2 (a checklist of 3 signals)" in summary
    assert "Model answers, hand_position_correct: no 1, unknown 1" in summary
    assert "Verdicts, hand_position_correct: unknown 1, yes 1" in summary
    rows = list(csv.DictReader(io.StringIO(export_csv(loaded))))
    assert [(r["keyframe_id"], r["signal"], r["verdict"]) for r in rows][:3] == [
        ("k1", "hands_visible", "yes"),
        ("k1", "hand_position_correct", "yes"),
        ("k1", "hands_stacked", "yes"),
    ]
    assert [r["parse_reason"] for r in rows if r["keyframe_id"] == "k2"] == ["ok", "not_visible", "not_visible"]


def test_a_one_signal_record_has_no_checklist_field() -> None:
    # Older readers and exports see exactly the record they always did.
    record = event_to_dict(practice(1, "yes"))
    assert "gated_by" not in record
    gated = checklist_keyframe(1, {"hands_visible": "no", "hands_stacked": "unknown"}, "hands_visible")
    assert [event_to_dict(e).get("gated_by") for e in gated] == [None, "hands_visible"]


def test_a_failures_source_is_written_only_when_known() -> None:
    """Logs written before failures named their image read as before; a failure that knows it says so."""
    old = KeyframeFailed(event_id="f", t=1.0, wall_time=2.0, keyframe_id="k", error="e", message="m")
    assert "source" not in event_to_dict(old)
    assert event_to_dict(replace(old, source="a.jpg"))["source"] == "a.jpg"
