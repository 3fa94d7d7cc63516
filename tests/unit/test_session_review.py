"""Examiner reviews: only the profile's answers, notes kept, a second verdict refused or recorded as a change."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.session import ExaminerConfirmed, ExaminerCorrected, reduce
from app.session.review import ReviewError, allowed_answers, make_review
from app.session.store import LoadedSession, export_csv, export_jsonl, summary_text
from app.storage.paths import PROFILES
from app.storage.profile_file import load_profile
from tests.unit.test_session import practice


def recorded(i: int, observation: str):
    return replace(practice(i, observation), profile_id="hand_position", allowed_values=("yes", "no", "unknown"))


def write_profile(folder: Path, pid: str, signal: str, values: list[str]) -> Path:
    path = folder / f"{pid}.json"
    path.write_text(json.dumps({"schema": 1, "id": pid, "signal": signal, "values": values, "prompt": "?"}))
    return path


def test_a_correction_must_be_one_of_the_recorded_answers() -> None:
    state = reduce([recorded(1, "no")])
    with pytest.raises(ReviewError) as err:
        make_review(state, "e1", correct="maybe")
    assert "'maybe' is not an answer" in str(err.value) and "yes, no, unknown" in str(err.value)
    with pytest.raises(ReviewError, match="model's own answer; use --confirm"):
        make_review(state, "e1", correct="no")
    event = make_review(state, "e1", correct="yes", note="hands centred", examiner="ann")
    assert isinstance(event, ExaminerCorrected)
    assert (event.target_id, event.observation, event.note, event.examiner, event.revises) == (
        "e1",
        "yes",
        "hands centred",
        "ann",
        "",
    )


def test_old_logs_fall_back_to_the_bundled_profile_by_signal(tmp_path: Path) -> None:
    old = practice(1, "no")  # no profile_id, no allowed_values: written before they were recorded
    assert allowed_answers(old).values == load_profile(PROFILES / "hand_position.json").values
    with pytest.raises(ReviewError, match="not an answer"):
        make_review(reduce([old]), "e1", correct="partly")  # (any case of an answer is that answer)

    # Named profile first; then the profiles with its signal, only if they agree.
    write_profile(tmp_path, "strict", "hand_position_correct", ["yes", "no"])
    write_profile(tmp_path, "loose", "hand_position_correct", ["yes", "no", "unknown", "partly"])
    assert allowed_answers(replace(old, profile_id="strict"), profiles_dir=tmp_path).values == ("yes", "no")
    with pytest.raises(ReviewError, match="several bundled profiles disagree.*--profile"):
        allowed_answers(old, profiles_dir=tmp_path)
    with pytest.raises(ReviewError, match="no bundled profile asks for it"):
        allowed_answers(replace(old, signal="depth_ok"), profiles_dir=tmp_path)
    # A recorded id never leaves the profiles folder.
    with pytest.raises(ReviewError):
        allowed_answers(replace(old, profile_id="../loose"), profiles_dir=tmp_path)

    # An explicit profile settles it, if it asks the same question.
    loose = load_profile(tmp_path / "loose.json")
    assert allowed_answers(old, loose).values[-1] == "partly"
    with pytest.raises(ReviewError, match="asks for 'depth_ok'"):
        allowed_answers(old, replace(loose, signal="depth_ok"))


def test_a_confirmation_keeps_its_note() -> None:
    state = reduce([recorded(1, "yes")])
    event = make_review(state, "e1", note="checked on the video", examiner="ann")
    assert isinstance(event, ExaminerConfirmed) and event.note == "checked on the video"
    entry = reduce([recorded(1, "yes"), event]).timeline[0]
    assert entry.review == "confirmed" and entry.latest_review.note == "checked on the video"


def test_a_second_review_is_refused_unless_revised_and_then_kept_as_history() -> None:
    events = [recorded(1, "no")]
    first = make_review(reduce(events), "e1", correct="yes", note="centred", examiner="ann", wall_time=10.0)
    events.append(first)
    with pytest.raises(ReviewError, match=r"already reviewed \(corrected yes by ann\); add --revise"):
        make_review(reduce(events), "e1")
    second = make_review(reduce(events), "e1", revise=True, note="rewatched: off-centre", wall_time=11.0)
    assert isinstance(second, ExaminerConfirmed) and second.revises == first.event_id
    events.append(second)

    entry = reduce(events).timeline[0]
    assert (entry.review, entry.final_observation) == ("confirmed", "no")
    assert [(r.verdict, r.observation, r.note) for r in entry.history] == [
        ("corrected", "yes", "centred"),
        ("confirmed", "no", "rewatched: off-centre"),
    ]

    session = LoadedSession(tuple(events), ())
    row = next(csv.DictReader(io.StringIO(export_csv(session))))
    assert (row["review"], row["final_observation"], row["review_note"]) == ("confirmed", "no", "rewatched: off-centre")
    assert row["review_history"] == "corrected yes -> confirmed no"
    assert [json.loads(line)["kind"] for line in export_jsonl(session).splitlines()] == [
        "practice",
        "corrected",
        "confirmed",
    ]
    summary = summary_text(session)
    assert "(corrected 0, revised 1)" in summary
    assert "revised e1 at 3.0 s: model no; corrected yes -> confirmed no" in summary


def test_a_later_confirm_in_an_old_log_does_not_hide_the_correction() -> None:
    # Logs written before reviews were guarded may hold two verdicts without `revises`.
    events = [
        practice(1, "no"),
        ExaminerCorrected(event_id="c1", target_id="e1", wall_time=1.0, observation="yes"),
        ExaminerConfirmed(event_id="c2", target_id="e1", wall_time=2.0),
    ]
    entry = reduce(events).timeline[0]
    assert entry.revised and [r.describe() for r in entry.history] == ["corrected yes", "confirmed no"]


def test_unknown_target_is_an_error() -> None:
    with pytest.raises(ReviewError, match="no practice event 'e9'"):
        make_review(reduce([recorded(1, "yes")]), "e9")


def test_a_correction_may_be_written_as_the_screen_shows_it() -> None:
    from dataclasses import replace

    from app.core.session import reduce
    from app.session.review import make_review
    from tests.unit.test_session import practice

    event = replace(practice(1, "yes"), profile_id="hand_position", allowed_values=("yes", "no", "unknown"))
    state = reduce([event])
    assert make_review(state, "e1", correct="NO").observation == "no"
    assert make_review(state, "e1", correct="No").observation == "no"
