"""The score cut (app.evaluation.score_cut): withholding low-score answers, and the coverage–accuracy curve."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.generation import ParseStatus
from app.core.parser import ParsedAnswer, ParseReason
from app.core.profile.checklist import checklist_from_dict
from app.core.profile.task import ProfileError, profile_from_dict
from app.evaluation.report import Prediction, csv_text, evaluate, format_table
from app.evaluation.score_cut import cut, cut_curve, threshold_words, withheld

VALUES = ("yes", "no", "unknown")
PROFILE = {"signal": "hand_position_correct", "values": list(VALUES), "prompt": "Correct?"}


def scored(
    name: str, expected: str | None, observed: str, score: float | None, picked: str | None = None
) -> Prediction:
    reason = "low_score" if picked is not None else "ok"
    status = ParseStatus.REJECTED if picked is not None else ParseStatus.VALID
    return Prediction(name, expected, observed, status, 0.1, reason, score, picked)


# --- withholding one answer ------------------------------------------------------------------


def test_a_valid_answer_below_the_cut_becomes_unknown_and_keeps_what_the_model_picked() -> None:
    answer = ParsedAnswer("yes", ParseReason.OK, '{"signal":"s","observation":"yes"}')
    low = cut(answer, 0.4, 0.5)
    assert (low.observation, low.reason, low.withheld, low.raw) == ("unknown", ParseReason.LOW_SCORE, "yes", answer.raw)
    assert not low.valid
    assert cut(answer, 0.5, 0.5) == answer  # at the threshold: kept
    assert cut(answer, 0.4, None) == answer  # no cut
    assert cut(answer, None, 0.5) == answer  # free generation has no score: never withheld


@pytest.mark.parametrize(
    "answer",
    [
        ParsedAnswer("unknown", ParseReason.INVALID_JSON, "{"),
        ParsedAnswer("unknown", ParseReason.OK, '{"signal":"s","observation":"unknown"}'),
        ParsedAnswer("unknown", ParseReason.NOT_VISIBLE, ""),
    ],
)
def test_an_answer_that_is_already_unknown_is_left_as_it_is(answer: ParsedAnswer) -> None:
    assert cut(answer, 0.01, 0.5) == answer


def test_withheld_is_below_the_threshold_only_with_both_a_score_and_a_cut() -> None:
    assert withheld(0.49, 0.5) and not withheld(0.5, 0.5) and not withheld(None, 0.5) and not withheld(0.1, None)


# --- the curve ---------------------------------------------------------------------------------


def test_the_curve_trades_answers_for_accuracy_at_every_score_given() -> None:
    rows = [
        scored("a", "yes", "yes", 0.9),
        scored("b", "no", "no", 0.8),
        scored("c", "no", "yes", 0.3),  # wrong, and unsure
        scored("d", "yes", "unknown", 0.95),  # the model's own unknown: never given
        scored("e", None, "yes", 0.1),  # no label: not on the curve
        Prediction("f", "yes", None, "error", None, "unreadable"),  # an error: not on the curve
    ]
    curve = cut_curve(rows)
    assert (curve.labelled, curve.scored, curve.unscored) == (4, 3, 0)
    got = [(p.threshold, p.kept, p.correct) for p in curve.points]
    assert got == [(0.0, 3, 2), (0.8, 2, 2), (0.9, 1, 1)]  # a cut at 0.3, the lowest, is no cut
    assert [p.coverage for p in curve.points] == [0.75, 0.5, 0.25]
    assert curve.points[0].accuracy == pytest.approx(2 / 3) and curve.points[1].accuracy == 1.0
    assert (curve.at(0.5).kept, curve.at(0.85).kept, curve.at(0.99).kept) == (2, 1, 0)
    assert curve.at(0.99).accuracy is None  # nothing given: no accuracy, not 0 or 1


def test_a_cut_says_what_it_costs_in_answers_and_gains_in_accuracy() -> None:
    rows = [scored("a", "yes", "yes", 0.9), scored("b", "no", "no", 0.8), scored("c", "no", "yes", 0.3)]
    rows.append(scored("d", "yes", "unknown", 0.95))  # never given: not a cost of any cut
    gains = cut_curve(rows).trade(0.8)
    assert (gains.withheld, gains.given, gains.after, gains.gains) == (1, 3, 1.0, True)
    assert gains.share == pytest.approx(1 / 3) and gains.before == pytest.approx(2 / 3)
    # Every answer right already: a cut that withholds half of them gains nothing, and says so.
    right = cut_curve([scored(n, "yes", "yes", s) for n, s in zip("abcd", (0.6, 0.7, 0.8, 0.9), strict=True)])
    nothing = right.trade(0.8)
    assert (nothing.withheld, nothing.given, nothing.share, nothing.before, nothing.after) == (2, 4, 0.5, 1.0, 1.0)
    assert not nothing.gains
    worse = cut_curve([scored("a", "yes", "yes", 0.6), scored("b", "no", "yes", 0.9)]).trade(0.9)
    assert worse.after == 0.0 and not worse.gains  # a cut that keeps only wrong answers
    empty = right.trade(0.99)
    assert (empty.withheld, empty.after, empty.gains) == (4, None, False)  # nothing left: no accuracy, no gain
    assert cut_curve([]).trade(0.5).share == 0.0


@pytest.mark.parametrize(
    ("thresholds", "words"),
    [
        ([0.0, 0.934521, 0.981234], ["0", "0.93", "0.98"]),
        ([0.9991, 0.9994], ["0.9991", "0.9994"]),  # as many digits as it takes to tell them apart
        ([0.99995512, 0.99995541], ["0.9999551", "0.9999554"]),  # alike to six digits (seen on the demo model)
        ([0.5, 0.5], ["0.5", "0.5"]),
        ([1e-7, 2e-7], ["1e-07", "2e-07"]),
    ],
)
def test_thresholds_are_written_short_but_never_alike(thresholds: list[float], words: list[str]) -> None:
    assert threshold_words(thresholds) == words


def test_the_curve_is_computed_from_the_picks_before_a_saved_cut() -> None:
    """A profile's cut already made some answers unknown; the curve still shows every threshold."""
    before = [scored("a", "yes", "yes", 0.9), scored("b", "no", "yes", 0.3)]
    after = [scored("a", "yes", "yes", 0.9), scored("b", "no", "unknown", 0.3, picked="yes")]
    assert cut_curve(before) == cut_curve(after)
    report = evaluate(after, VALUES, min_score=0.5)
    assert report.cell("no", "unknown") == 1 and report.accuracy == 0.5  # the report counts what was shown
    assert report.curve.at(0.5).accuracy == 1.0


def test_answers_without_a_score_are_counted_and_never_withheld() -> None:
    curve = cut_curve([scored("a", "yes", "yes", None), scored("b", "no", "no", 0.7), scored("c", "no", "yes", 0.2)])
    assert (curve.scored, curve.unscored) == (2, 1)
    assert curve.at(0.99).kept == 1  # the unscored one


@given(
    st.lists(
        st.tuples(st.sampled_from(VALUES), st.sampled_from(VALUES), st.floats(0.0, 1.0) | st.none(), st.booleans()),
        max_size=40,
    ),
    st.floats(0.0, 1.0),
)
def test_every_point_is_what_the_cut_at_its_threshold_leaves(rows: list, threshold: float) -> None:
    predictions = [scored(str(i), e if labelled else None, o, s) for i, (e, o, s, labelled) in enumerate(rows)]
    curve = cut_curve(predictions)
    kept = [
        p
        for p in predictions
        if p.expected is not None and p.observed != "unknown" and not withheld(p.score, threshold)
    ]
    point = curve.at(threshold)
    assert (point.kept, point.correct) == (len(kept), sum(p.observed == p.expected for p in kept))
    assert [p.threshold for p in curve.points] == sorted(p.threshold for p in curve.points)
    assert all(
        a.kept >= b.kept for a, b in zip(curve.points, curve.points[1:], strict=False)
    )  # a higher cut never gives more
    assert all(point in curve.points for point in curve.summary())


def test_the_summary_takes_the_highest_cut_that_keeps_each_share() -> None:
    rows = [scored(str(i), "yes", "yes" if i % 4 else "no", i / 20) for i in range(1, 21)]
    coverage = [p.coverage for p in cut_curve(rows).summary()]
    assert coverage == [1.0, 0.95, 0.9, 0.8, 0.7, 0.5]


# --- reports -----------------------------------------------------------------------------------


def test_the_report_prints_the_curve_and_marks_the_saved_cut() -> None:
    rows = [scored("a", "yes", "yes", 0.999509), scored("b", "no", "no", 0.999839), scored("c", "no", "yes", 0.6)]
    text = format_table(evaluate(rows, VALUES, min_score=0.999839))
    assert "score cut (coverage: answers still given; accuracy: of those, the label's)" in text
    assert "0.999509     0.667     1.000        2/3" in text  # six digits: the cut reads as it acts
    assert "0.999839     0.333     1.000        1/3  <- the profile's min_score" in text
    assert all(line == line.rstrip() for line in text.splitlines())


def test_without_scores_the_report_says_the_curve_needs_constrained_decoding() -> None:
    text = format_table(evaluate([scored("a", "yes", "yes", None)], VALUES))
    assert "score cut: no answer has a model score (constrained decoding gives one)" in text


def test_the_json_and_csv_carry_the_scores_and_the_curve() -> None:
    report = evaluate([scored("a", "yes", "yes", 0.9), scored("b", "no", "unknown", 0.3, picked="yes")], VALUES, 0.5)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["min_score"] == 0.5
    assert data["score_cut"]["points"] == [
        {"threshold": 0.0, "kept": 2, "correct": 1, "coverage": 1.0, "accuracy": 0.5},
        {"threshold": 0.9, "kept": 1, "correct": 1, "coverage": 0.5, "accuracy": 1.0},
    ]
    lines = csv_text(report).splitlines()
    assert lines[0].endswith(",seconds,model_score") and lines[1].endswith(",0.9") and lines[2].endswith(",0.3")


# --- the profile's min_score -------------------------------------------------------------------


def test_a_profile_and_a_checklist_signal_may_save_a_cut() -> None:
    assert profile_from_dict({**PROFILE, "min_score": 0.75}).min_score == 0.75
    assert profile_from_dict(PROFILE).min_score is None
    checklist = checklist_from_dict({"id": "c", "signals": [{**PROFILE, "min_score": 1}]})
    assert checklist.signals[0].min_score == 1.0


@pytest.mark.parametrize("value", [0, -0.1, 1.5, "0.5", True, float("nan"), float("inf"), [0.5]])
def test_a_cut_outside_0_to_1_is_refused_with_a_sentence(value: object) -> None:
    with pytest.raises(ProfileError, match=r"'min_score' must be a number above 0 and at most 1"):
        profile_from_dict({**PROFILE, "min_score": value}, "p.json")
