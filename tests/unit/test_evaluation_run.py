"""The evaluation run `eval` and the Testers screen share: labels paired with images by name, answers
taken by the image's place, the report over the images answered so far."""

from __future__ import annotations

import pytest

from app.core.generation import ParseStatus
from app.evaluation.labels import LabelsFileError
from app.evaluation.report import ChecklistReport, Report
from app.evaluation.run import SINGLE, EvaluationRun, Questions, answered, failed
from app.storage.paths import PROFILES
from app.storage.profile_file import load_checklist

YES_NO = ("yes", "no", "unknown")


def _one(names: list[str], labels: bytes | None) -> EvaluationRun:
    questions = Questions.one_signal(YES_NO)
    return EvaluationRun(names, questions, None if labels is None else questions.read_labels(labels, "labels.csv"))


def test_labels_pair_with_images_by_name_and_what_does_not_pair_is_said() -> None:
    run = _one(["a.jpg", "b.jpg", "c.jpg"], b"a.jpg,yes\nb.jpg,no\ngone.jpg,yes\n")
    assert [run.expected(i) for i in range(3)] == ["yes", "no", None]
    assert run.missing == ("gone.jpg",)
    assert run.unlabelled == ("c.jpg",)


def test_without_labels_no_image_is_called_unlabelled() -> None:
    run = _one(["a.jpg", "b.jpg"], None)
    assert not run.labelled
    assert run.unlabelled == () and run.missing == ()


def test_the_report_covers_the_images_answered_so_far_in_their_order() -> None:
    run = _one(["a.jpg", "b.jpg", "c.jpg"], b"a.jpg,yes\nb.jpg,no\nc.jpg,yes\n")
    run.answer(2, {SINGLE: answered("c.jpg", run.expected(2), "no", ParseStatus.VALID, 0.5, "ok")})
    run.answer(0, {SINGLE: answered("a.jpg", run.expected(0), "yes", ParseStatus.VALID, 0.4, "ok")})
    report = run.report()
    assert isinstance(report, Report)
    assert [p.name for p in report.rows] == ["a.jpg", "c.jpg"]
    assert report.cell("yes", "yes") == 1 and report.cell("yes", "no") == 1
    run.answer(1, {SINGLE: failed("b.jpg", run.expected(1), "decode: not an image")})
    assert [p.name for p in run.report().rows] == ["a.jpg", "b.jpg", "c.jpg"]
    assert run.answered == 3


def test_an_answer_must_cover_every_signal_asked() -> None:
    run = _one(["a.jpg"], None)
    with pytest.raises(ValueError, match="asked"):
        run.answer(0, {"hands_visible": failed("a.jpg", None, "x")})


def test_a_signal_the_gate_left_unasked_took_no_model_time() -> None:
    p = answered("a.jpg", "no", "unknown", ParseStatus.NOT_ASKED, 0.7, "not_asked", 0.1, "yes")
    assert p.seconds is None and p.score is None and p.picked is None
    q = answered("a.jpg", "no", "no", ParseStatus.VALID, 0.7, "ok", -0.2, None)
    assert q.seconds == 0.7 and q.score == -0.2


def test_a_checklist_reads_a_column_per_signal_and_reports_each() -> None:
    checklist = load_checklist(PROFILES / "cpr_checklist.json")
    questions = Questions.of(checklist)
    labels = questions.read_labels(b"file,hands_visible,hands_stacked\na.jpg,yes,no\nb.jpg,no,\n", "labels.csv")
    run = EvaluationRun(["a.jpg", "b.jpg"], questions, labels)
    assert run.expected(0, "hands_stacked") == "no" and run.expected(1, "hands_stacked") is None
    assert run.expected(0, "hand_position_correct") is None
    assert run.unlabelled == ()
    for i, name in enumerate(run.names):
        run.answer(
            i, {s: answered(name, run.expected(i, s), "yes", ParseStatus.VALID, 1.0, "ok") for s in questions.signals}
        )
    report = run.report()
    assert isinstance(report, ChecklistReport)
    assert [s.signal for s in report.signals] == list(questions.signals)


def test_a_one_signal_file_is_not_a_checklists_labels() -> None:
    questions = Questions.of(load_checklist(PROFILES / "cpr_checklist.json"))
    with pytest.raises(LabelsFileError):
        questions.read_labels(b"a.jpg,yes\n", "labels.csv")
