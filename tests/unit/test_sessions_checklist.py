"""A checklist session (several questions per keyframe) on the timeline and the Sessions screen.

Each question has its own lane, marker verdicts and figures; answers to different questions are
never added up as if they were one. A one-question session reads as it always did.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import flet as ft
import flet_charts as fch

from app.core.session import (
    ExaminerConfirmed,
    ExaminerCorrected,
    KeyframeFailed,
    SessionEvent,
    SessionState,
    reduce,
)
from app.core.session_summary import NOT_CHECKED, summarise
from app.ui.parts.timeline import FAILED, SKIPPED, TimelineChart, lanes_for, mark_style, ordered_counts, timeline_points
from app.ui.sessions.controller import SessionsController
from app.ui.sessions.view import SessionsView
from app.ui.words import sessions as strings_sessions
from app.ui.words.sessions import EN, ZH, signal_words
from tests.unit.test_session import checklist_keyframe, practice
from tests.unit.test_sessions_controller import demo_events, write_session
from tests.unit.test_sessions_view import build, open_session, shown, texts

SIGNALS = ("hands_visible", "hand_position_correct", "hands_stacked")
VISIBLE, POSITION, STACKED = (EN[f"signal_{s}"] for s in SIGNALS)


def keyframes() -> list[SessionEvent]:
    """Three keyframes of the shipped checklist; at 6 s the gate saw no hands, so two questions went unasked."""
    return [
        *checklist_keyframe(1, {"hands_visible": "yes", "hand_position_correct": "no", "hands_stacked": "yes"}),
        *checklist_keyframe(
            2, {"hands_visible": "no", "hand_position_correct": "unknown", "hands_stacked": "unknown"}, "hands_visible"
        ),
        *checklist_keyframe(3, {"hands_visible": "yes", "hand_position_correct": "yes", "hands_stacked": "no"}),
    ]


def reviewed() -> list[SessionEvent]:
    """`keyframes` with three verdicts: hands visible confirmed; hand position confirmed once, corrected once."""
    return [
        *keyframes(),
        ExaminerConfirmed(event_id="c1", target_id="e1-hands_visible", wall_time=2000.0),
        ExaminerCorrected(event_id="c2", target_id="e1-hand_position_correct", wall_time=2001.0, observation="yes"),
        ExaminerConfirmed(event_id="c3", target_id="e3-hand_position_correct", wall_time=2002.0),
    ]


def point(chart: TimelineChart, t: float, lane: str) -> tuple[str, fch.ScatterChartSpot, str]:
    """(kind, spot, tooltip) of the one point at `t` in `lane`."""
    (found,) = [(p, s) for p, s in zip(chart.points, chart.chart.spots, strict=True) if p.t == t and p.lane == lane]
    return found[0].kind, found[1], found[0].tooltip


def lane_labels(chart: TimelineChart) -> dict[float, str]:
    return {label.value: label.label.value for label in chart.chart.left_axis.labels}


# --- the timeline -----------------------------------------------------------------------


def test_a_checklist_has_a_lane_per_question_in_the_order_first_answered() -> None:
    state = reduce(keyframes())
    chart = TimelineChart()
    chart.update(state)

    assert lanes_for(state) == (*SIGNALS, SKIPPED)
    assert lane_labels(chart) == {3: VISIBLE, 2: POSITION, 1: STACKED, 0: "skipped / failed"}
    assert len(chart.chart.spots) == 9
    # Every answer sits in its question's lane, at its keyframe's time.
    y_of = {lane: 3 - i for i, lane in enumerate(SIGNALS)}
    assert all(spot.y == y_of[p.lane] for p, spot in zip(chart.points, chart.chart.spots, strict=True))
    assert sorted({p.t for p in chart.points if p.lane == "hands_stacked"}) == [3.0, 6.0, 9.0]


def test_the_marker_is_the_verdict_and_a_correction_changes_it() -> None:
    chart = TimelineChart()
    chart.update(reduce(keyframes()))
    kind, spot, _ = point(chart, 3.0, "hand_position_correct")
    assert kind == "no" and isinstance(spot.point, fch.ChartCrossPoint) and spot.color == mark_style("no").colour
    kind, spot, _ = point(chart, 3.0, "hands_visible")
    assert kind == "yes" and isinstance(spot.point, fch.ChartCirclePoint)
    kind, spot, _ = point(chart, 9.0, "hands_stacked")
    assert kind == "no" and isinstance(spot.point, fch.ChartCrossPoint)

    chart.update(reduce(reviewed()))
    kind, spot, tip = point(chart, 3.0, "hand_position_correct")
    assert kind == "yes" and isinstance(spot.point, fch.ChartCirclePoint) and spot.color == mark_style("yes").colour
    assert tip == f"{POSITION}\n3.0 s · NO · corrected to YES"  # the model's answer stays in the tooltip


def test_an_unasked_question_has_its_own_quiet_marker_until_the_examiner_corrects_it() -> None:
    chart = TimelineChart()
    chart.update(reduce(keyframes()))
    # The gate itself answered: its "no" is a verdict like any other.
    assert point(chart, 6.0, "hands_visible")[0] == "no"
    kind, spot, tip = point(chart, 6.0, "hands_stacked")
    assert kind == NOT_CHECKED and tip == f"{STACKED}\n6.0 s · not checked"
    failure = KeyframeFailed(event_id="f", t=7.0, wall_time=1007.0, keyframe_id="kf", error="oom", message="")
    chart.update(reduce([*keyframes(), failure]))
    marker, failed = point(chart, 6.0, "hands_stacked")[1].point, point(chart, 7.0, SKIPPED)[1].point
    assert isinstance(marker, fch.ChartSquarePoint) and marker.color == ft.Colors.WHITE  # hollow
    assert marker.stroke_color == ft.Colors.GREY_600 and marker.size < failed.size  # grey, and smaller than a failure
    kinds = ["yes", "no", "unknown", NOT_CHECKED, SKIPPED, FAILED]
    assert len({mark_style(k).shape for k in kinds}) == len(kinds)
    assert len({mark_style(k).icon for k in kinds}) == len(kinds)
    legend = [row.controls[1].value for row in chart.legend.controls]
    assert legend == ["YES", "NO", "UNKNOWN", "not checked", "skipped", "failed"]
    # Counts say "not checked" last, after another profile's answers too: nothing was answered.
    assert ordered_counts([(NOT_CHECKED, 1), ("partly", 2), ("yes", 3)]) == [
        ("yes", 3),
        ("partly", 2),
        (NOT_CHECKED, 1),
    ]

    corrected = ExaminerCorrected(event_id="c", target_id="e2-hands_stacked", wall_time=2000.0, observation="no")
    chart.update(reduce([*keyframes(), corrected]))
    kind, spot, tip = point(chart, 6.0, "hands_stacked")
    assert kind == "no" and isinstance(spot.point, fch.ChartCrossPoint)
    assert tip == f"{STACKED}\n6.0 s · not checked · corrected to NO"
    assert "not checked" in [row.controls[1].value for row in chart.legend.controls]  # hand position: still unasked


def test_the_profiles_own_question_words_win_and_an_unknown_signal_reads_as_words() -> None:
    events = [replace(e, signal="arm_angle_ok") if e.signal == "hands_stacked" else e for e in keyframes()]
    chart = TimelineChart(strings=ZH)
    chart.update(reduce(events), questions={"hand_position_correct": "手的位置正确吗？"})
    assert lane_labels(chart) == {3: "画面里能看到双手", 2: "手的位置正确吗？", 1: "Arm angle ok", 0: "跳过 / 失败"}
    assert point(chart, 3.0, "hand_position_correct")[2] == "手的位置正确吗？\n3.0 秒 · 否"
    assert signal_words(EN, "arm_angle_ok") == "Arm angle ok"
    assert signal_words(ZH, "hands_visible") == "画面里能看到双手"


def test_a_ten_minute_checklist_grows_a_lane_a_question_and_says_each_questions_counts() -> None:
    """300 keyframes at one every 2 s, four questions: 1200 answers in five lanes."""
    answers = ("yes", "yes", "no", "unknown")

    def keyframe(i: int) -> list[SessionEvent]:
        if i % 10 == 0:  # the gate saw no hands: the other three questions unasked
            gated = {"hands_visible": "no", "hand_position_correct": "unknown", "hands_stacked": "unknown"}
            return checklist_keyframe(i, {**gated, "arm_angle_ok": "unknown"}, "hands_visible")
        asked = {
            "hands_visible": "yes",
            "hand_position_correct": answers[i % 4],
            "hands_stacked": "yes" if i % 3 else "no",
        }
        return checklist_keyframe(i, {**asked, "arm_angle_ok": "yes"})

    events = [replace(e, t=i * 2.0) for i in range(300) for e in keyframe(i)]
    chart = TimelineChart()
    three_questions = reduce(keyframes())
    chart.update(three_questions)
    assert chart.chart.height == 220  # four lanes: the one-question chart's height
    chart.update(reduce(events))
    assert len(chart.chart.spots) == 1200 and len(chart.chart.left_axis.labels) == 5
    assert chart.chart.height == 264  # a fifth lane of the same height
    assert chart.chart.max_x >= 598
    label = chart.semantics.label
    assert label.startswith("Timeline of 300 keyframes over 598 s, 4 questions. ")
    assert f"{VISIBLE}: 270 YES, 30 NO; " in label
    # 75 keyframes each of i % 4 = 0..3, less the 15 + 15 unasked among i % 4 = 0 and 2.
    assert f"{POSITION}: 135 YES, 60 NO, 75 UNKNOWN, 30 not checked; " in label
    assert f"{STACKED}: 180 YES, 90 NO, 30 not checked; " in label
    assert label.endswith("Arm angle ok: 270 YES, 30 not checked. 0 skipped, 0 failed")
    # Lane labels are questions: wrapped on two lines at most, the whole question on hover.
    first = chart.chart.left_axis.labels[0].label
    assert first.max_lines == 2 and first.tooltip == first.value == VISIBLE

    zh = TimelineChart(strings=ZH)
    zh.update(reduce(events))
    assert zh.semantics.label.startswith("598 秒内 300 个关键帧、4 个问题的时间线。画面里能看到双手：270 是, 30 否；")


def test_a_one_question_chart_is_drawn_as_before() -> None:
    state = reduce([practice(1, "yes"), practice(2, "no")])
    chart = TimelineChart()
    chart.update(state)
    assert lanes_for(state) == ("yes", "no", "unknown", SKIPPED)
    assert chart.chart.height == 220 and chart.chart.left_axis.label_size == 100
    assert all(label.label.no_wrap and label.label.size == 12 for label in chart.chart.left_axis.labels)
    assert [p.tooltip for p in timeline_points(state)] == ["3.0 s · YES", "6.0 s · NO"]
    assert [p.lane for p in timeline_points(state)] == ["yes", "no"]
    assert chart.semantics.label == "Timeline of 2 keyframes over 6 s: 1 YES, 1 NO; 0 skipped, 0 failed"
    # A checklist before it does not leave its lanes behind.
    chart.update(reduce(keyframes()))
    chart.update(state)
    assert lane_labels(chart) == {3: "YES", 2: "NO", 1: "UNKNOWN", 0: "skipped / failed"}
    assert chart.chart.height == 220 and chart.chart.left_axis.label_size == 100


# --- the summary and the list -------------------------------------------------------------


def test_the_summary_has_each_questions_answers_reviews_and_agreement() -> None:
    summary = summarise(reduce(reviewed()))
    assert (summary.keyframes, summary.analysed, summary.reviewed) == (3, 9, 3)
    figures = {
        s.signal: (dict(s.counts), s.analysed, s.reviewed, s.confirmed, s.corrected, s.agreement)
        for s in summary.signals
    }
    assert list(figures) == list(SIGNALS)
    assert figures == {
        "hands_visible": ({"yes": 2, "no": 1}, 3, 1, 1, 0, 1.0),
        "hand_position_correct": ({"no": 1, NOT_CHECKED: 1, "yes": 1}, 3, 2, 1, 1, 0.5),
        "hands_stacked": ({"yes": 1, NOT_CHECKED: 1, "no": 1}, 3, 0, 0, 0, None),
    }
    assert summarise(reduce(demo_events())).signals == ()  # one question: the session's figures are its own


def summary_lines(strings: dict[str, str], state: SessionState) -> list[str]:
    view = SessionsView(SessionsController(Path("/nonexistent"), lambda _: None), strings=strings)
    return view.summary_lines(summarise(state))


def test_the_summary_says_each_question_apart_as_agreement_with_the_examiner() -> None:
    assert summary_lines(EN, reduce(reviewed())) == [
        "3 keyframes analysed · 3 questions",
        f"{VISIBLE}: 2 YES, 1 NO",
        "Reviewed 1 of 3 · Agreement with the examiner: 100 % (1 of 1 confirmed, 0 corrected)",
        f"{POSITION}: 1 YES, 1 NO, 1 not checked",
        "Reviewed 2 of 3 · Agreement with the examiner: 50 % (1 of 2 confirmed, 1 corrected)",
        f"{STACKED}: 1 YES, 1 NO, 1 not checked",
        "Reviewed 0 of 3 · Agreement with the examiner: nothing reviewed yet",
        "Skipped 0 (unchanged 0) · failed 0",
        "Reviewed 3 of 9 answers · waiting for the examiner 6",
        EN["summary_generative"],
    ]
    zh = summary_lines(ZH, reduce(reviewed()))
    assert zh[:3] == [
        "已分析 3 个关键帧 · 3 个问题",
        "画面里能看到双手：是 2 个, 否 1 个",
        "已复核 1 / 3 · 与考官一致率：100%（确认 1 / 复核 1，更正 0）",
    ]
    assert zh[5] == "双手上下叠放：是 1 个, 否 1 个, 未检查 1 个"
    assert not any("accuracy" in line.lower() for line in summary_lines(EN, reduce(reviewed())))


def test_a_one_question_summary_reads_as_before() -> None:
    state = reduce([*demo_events(), ExaminerConfirmed(event_id="c", target_id="e1", wall_time=2000.0)])
    assert summary_lines(EN, state) == [
        "4 keyframes analysed: 2 YES, 1 NO, 1 UNKNOWN",
        "Verdicts, the examiner's where reviewed: 2 YES, 1 NO, 1 UNKNOWN",
        "Skipped 1 (unchanged 1) · failed 1",
        "Reviewed 1 of 4 · waiting for the examiner 3",
        "Agreement with the examiner: 100 % (1 of 1 confirmed, 0 corrected)",
        EN["summary_generative"],
    ]


def test_a_checklist_row_counts_keyframes_and_questions_never_mixed_answers(tmp_path: Path) -> None:
    session = write_session(tmp_path, "20250101-120000-check", reviewed())
    _, view = build(tmp_path)
    tile = shown(view.root, f"session-row-{session.stem}")
    assert tile.subtitle.value == "Model m · 3 keyframes · 3 questions · reviewed 3 of 9 answers"

    open_session(view, session.stem)
    assert f"{POSITION}: 1 YES, 1 NO, 1 not checked" in texts(shown(view.root, "sessions-summary"))
    assert lane_labels(view.timeline)[2] == POSITION

    zh = SessionsController(tmp_path, lambda _: None)
    zh.refresh()
    zh_view = SessionsView(zh, strings=strings_sessions.ZH)
    zh_tile = shown(zh_view.root, f"session-row-{session.stem}")
    assert zh_tile.subtitle.value == "模型 m · 3 个关键帧 · 3 个问题 · 已复核 3 / 9 个回答"
