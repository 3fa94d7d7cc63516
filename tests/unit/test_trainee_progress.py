"""Trainee and examiner names on a session, and a trainee's progress across sessions (pure logic)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.person_names import MAX_NAME, NameRefused, person_name, same_person
from app.core.progress import ProgressPoint, progress, progress_point, trainees
from app.core.rhythm_figures import Pause
from app.core.session import (
    ExaminerCorrected,
    RhythmSample,
    SessionNamed,
    event_from_dict,
    event_to_dict,
    reduce,
)
from app.session.naming import name_session, named
from app.session.review import Verdict, record_reviews
from app.session.store import SessionLog, load_session
from tests.unit.test_session import checklist_keyframe, practice

pytestmark = pytest.mark.quick


def test_a_typed_name_is_tidied_and_what_is_not_a_name_is_refused_with_its_reason() -> None:
    assert person_name("  Ana   Lima ") == "Ana Lima"
    assert person_name("") == ""
    for raw, reason in (
        ("Ana\nLima", "name_control"),
        ("Ana\u200e", "name_control"),
        ("x" * (MAX_NAME + 1), "name_too_long"),
    ):
        with pytest.raises(NameRefused) as why:
            person_name(raw)
        assert why.value.reason == reason
    # One person however the name was typed: case, spaces, full-width letters from a Chinese keyboard.
    assert same_person("Ana Lima") == same_person(" ana  LIMA") == same_person("Ａｎａ Lima")
    assert same_person("Ana") != same_person("Anna")


def test_the_latest_names_count_and_the_log_keeps_them_all(tmp_path: Path) -> None:
    first = named("Ana", "Dr Bea", wall_time=1.0)
    later = named("Ana Lima", "", wall_time=2.0)
    state = reduce([first, practice(1, "yes"), later])
    assert (state.trainee, state.examiner) == ("Ana Lima", "")
    assert event_from_dict(event_to_dict(first)) == first
    # A hand-edited line that is not a name as the app keeps one is damage, not a name.
    with pytest.raises(ValueError, match="trainee"):
        event_from_dict({**event_to_dict(first), "trainee": "Ana\r\nLima"})
    path = tmp_path / "s.jsonl"
    with SessionLog(path) as log:
        log.append(practice(1, "yes"))
    name_session(path, " Ana ", "Dr  Bea")
    loaded = load_session(path)
    assert (loaded.state.trainee, loaded.state.examiner) == ("Ana", "Dr Bea")
    assert [type(e) for e in loaded.events][-1] is SessionNamed and not loaded.damaged_lines
    with pytest.raises(NameRefused):
        name_session(path, "Ana\x00", "")
    assert len(load_session(path).events) == 2, "a refused name writes nothing"


def test_a_verdict_carries_the_examiner_the_session_was_given(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionLog(path) as log:
        log.append(practice(1, "yes"))
    name_session(path, "Ana", "Dr Bea")
    (review,) = record_reviews(path, [Verdict("e1", "no")])
    assert isinstance(review, ExaminerCorrected) and review.examiner == "Dr Bea"


def sample(t: float, median: float, ccf: float, pauses: tuple[Pause, ...] = ()) -> RhythmSample:
    return RhythmSample(
        event_id=f"r{t}",
        t=t,
        wall_time=t,
        rate_per_min=median,
        periodicity=0.9,
        count=int(t * median / 60),
        median_rate_per_min=median,
        compression_fraction=ccf,
        pauses=pauses,
    )


def recorded(session_id: str, started: float, trainee: str, *events: object) -> ProgressPoint:
    state = reduce([named(trainee, "", wall_time=started), *events])  # type: ignore[list-item]
    return progress_point(session_id, started, 60.0, "camera", state)


def test_progress_lists_one_trainees_sessions_oldest_first_with_rhythm_and_each_questions_yes_share() -> None:
    open_hands = {"hands_visible": "yes", "hand_position_correct": "no", "hands_stacked": "yes"}
    good = {"hands_visible": "yes", "hand_position_correct": "yes", "hands_stacked": "yes"}
    no_hands = {"hands_visible": "no", "hand_position_correct": "unknown", "hands_stacked": "unknown"}
    late = recorded(
        "s3",
        3000.0,
        "ana lima",  # the same trainee typed another way
        *checklist_keyframe(1, good),
        *checklist_keyframe(2, no_hands, "hands_visible"),  # the gate left two questions unasked
        *(sample(t, 110.0, 0.85) for t in (1.0, 2.0, 3.0)),
    )
    early = recorded(
        "s1",
        1000.0,
        "Ana Lima",
        *checklist_keyframe(1, open_hands),
        ExaminerCorrected(event_id="c", target_id="e1-hand_position_correct", wall_time=5.0, observation="yes"),
        *(sample(t, 90.0, 0.6, (Pause(1.0, 12.0, ongoing=False),)) for t in (1.0, 2.0, 20.0)),
    )
    other = recorded("s2", 2000.0, "Ben", practice(1, "yes"))
    stills = recorded("s4", 4000.0, "Ana Lima", practice(1, "no"))
    points = progress([late, other, stills, early], "ANA LIMA")
    assert [p.session_id for p in points] == ["s1", "s3", "s4"]
    first, second, third = points
    assert first.median_rate_per_min == 90.0 and first.pauses == 1 and first.long_pauses == 1
    assert second.median_rate_per_min == 110.0 and second.in_band_share == 1.0 and second.long_pauses == 0
    assert third.median_rate_per_min is None and third.pauses is None, "stills: no rhythm, never a zero"
    shares = {q.signal: q for q in first.questions}
    corrected = shares["hand_position_correct"]
    assert (corrected.yes, corrected.answered, corrected.reviewed) == (1, 1, 1), "the examiner's verdict counts"
    later = {q.signal: q for q in second.questions}
    assert (later["hands_stacked"].yes, later["hands_stacked"].answered) == (1, 1), "unasked answers left out"
    assert (later["hands_visible"].yes, later["hands_visible"].answered) == (1, 2)
    assert progress([late, early], "") == ()
    # Spelt as most of their sessions spell them: the newest, "ana lima", is one of three.
    assert trainees([late, other, stills, early]) == ("Ana Lima", "Ben")
    assert trainees([late]) == ("ana lima",)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_report_names_trainee_and_examiner_escaped_with_lines_to_sign(tmp_path: Path, language: str) -> None:
    from app.session.report import practice_report
    from app.session.report_words import report_words

    w = report_words(language)
    path = tmp_path / "s.jsonl"
    with SessionLog(path) as log:
        log.append(practice(1, "yes"))
    unnamed = practice_report(load_session(path), "s", language)
    assert w["people"].format(trainee=w["none"], examiner=w["none"]) in unnamed
    name_session(path, "Ana <b>Lima</b>", "Dr Bea")
    report = practice_report(load_session(path), "s", language)
    assert "Ana &lt;b&gt;Lima&lt;/b&gt;" in report and "<b>Lima" not in report
    assert w["people"].format(trainee="Ana &lt;b&gt;Lima&lt;/b&gt;", examiner="Dr Bea") in report
    sign = report[report.index(w["sign_title"]) :]
    for key in ("sign_trainee", "sign_examiner", "sign_name", "sign_date", "sign_signature"):
        assert w[key] in sign


def test_the_report_warns_of_the_demo_model_and_says_the_frame_rate_it_measured_from(tmp_path: Path) -> None:
    from dataclasses import replace

    from app.core.rhythm_figures import Rhythm
    from app.models.catalog import DEFAULT_MODEL_ID
    from app.session.report import practice_report
    from app.session.report_words import EN

    path, demo = tmp_path / "real.jsonl", tmp_path / "demo.jsonl"
    rhythm = Rhythm(10.0, 110.0, 0.9, 18, 110.0, (), 0.9, frame_rate=29.7)
    with SessionLog(path) as log:
        log.append(practice(1, "yes"))
        log.append(RhythmSample.of(rhythm, event_id="r1", wall_time=1010.0))
    with SessionLog(demo) as log:
        log.append(replace(practice(1, "yes"), model_id=DEFAULT_MODEL_ID))
    real = practice_report(load_session(path), "real")
    assert EN["demo_caveat"] not in real and "Measured from 30 frames a second" in real
    assert EN["demo_caveat"] in practice_report(load_session(demo), "demo")


def test_a_sessions_source_is_said_in_the_screens_language_and_a_file_name_as_it_is() -> None:
    from app.ui.words.sessions import EN, ZH, source_words

    assert (source_words(EN, "camera"), source_words(ZH, "camera")) == ("camera", "摄像头")
    assert (source_words(EN, "3 images", 3), source_words(ZH, "3 images", 3)) == ("3 images", "3 张图像")
    assert source_words(ZH, "hands.avi") == "hands.avi"


def test_a_model_time_reads_in_milliseconds_under_a_second_never_as_zero() -> None:
    from app.core.durations import model_time_words
    from app.ui.words.testers import EN, ZH

    assert model_time_words(0.003021, EN) == "3.0 ms"  # the demo model's answer: "0.00 s" before
    assert model_time_words(0.0421, EN) == "42 ms"
    assert model_time_words(0.00004, EN) == "< 0.1 ms"
    assert model_time_words(8.38, EN) == "8.38 s"
    assert model_time_words(0.5, ZH) == "500 毫秒"


def test_a_printout_is_served_once_and_forgotten_after_a_few_minutes() -> None:
    from app.ui.shell.printouts import TTL_S, Printouts

    now = [0.0]
    desk = Printouts(clock=lambda: now[0])
    token = desk.add("<p>report</p>")
    assert len(token) >= 24 and desk.take("guess") is None
    assert desk.take(token) == b"<p>report</p>" and desk.take(token) is None, "once"
    stale = desk.add("<p>old</p>")
    now[0] = TTL_S + 1
    assert desk.take(stale) is None
