"""The score cut on the Testers screen: the curve drawn with its points read out, and each row saying what
the cut costs in answers and gains in accuracy, warning (and asking "Keep anyway") when it gains nothing."""

from __future__ import annotations

import flet as ft
import flet.canvas as cv
import pytest

from app.core.generation import ParseStatus
from app.evaluation.report import Prediction, evaluate
from app.ui.testers.cut_chart import HEIGHT, accuracy_floor, cut_chart
from app.ui.testers.view import ReportPanel
from app.ui.words import testers as strings_testers

VALUES = ("yes", "no", "unknown")


def report(rows: list[tuple[str, str, float]], min_score: float | None = None):
    return evaluate(
        [Prediction(f"{i}.jpg", e, o, ParseStatus.VALID, 0.1, "ok", s) for i, (e, o, s) in enumerate(rows)],
        VALUES,
        min_score,
    )


ALL_RIGHT = [("yes", "yes", 0.6), ("no", "no", 0.7), ("yes", "yes", 0.8), ("no", "no", 0.9)]
ONE_WRONG = [("yes", "yes", 0.9), ("no", "no", 0.8), ("no", "yes", 0.3), ("yes", "yes", 0.7)]


def texts(control: ft.Control) -> list[str]:
    """Every Text value under `control`, in order."""
    found: list[str] = []

    def walk(c: object) -> None:
        if isinstance(c, ft.Text):
            found.append(c.value or "")
        for name in ("content", "controls"):
            child = getattr(c, name, None)
            for item in child if isinstance(child, list) else [child] if child is not None else []:
                walk(item)

    walk(control)
    return found


@pytest.mark.parametrize(
    ("lowest", "floor"), [([1.0], 0.9), ([0.86, 1.0], 0.8), ([0.5], 0.4), ([0.02], 0.0), ([], 0.0)]
)
def test_the_accuracy_axis_starts_a_tenth_below_the_lowest_point(lowest: list[float], floor: float) -> None:
    assert accuracy_floor(lowest) == pytest.approx(floor)


def test_the_curve_is_drawn_through_every_point_with_the_saved_cut_ringed_and_read_out() -> None:
    r = report(ONE_WRONG, min_score=0.8)
    chart = cut_chart(strings_testers.EN, r.curve, r.min_score, "testers")
    assert chart.identifier == "testers-curve-chart"
    assert chart.label == "kept 100%, right 75%; kept 75%, right 100%; kept 50%, right 100%; kept 25%, right 100%"
    canvas = chart.content
    assert isinstance(canvas, cv.Canvas)
    line = next(s for s in canvas.shapes if isinstance(s, cv.Points))
    xs = [p.x for p in line.points]
    assert xs == sorted(xs) and len(xs) == len(r.curve.points)  # joined across, one vertex per cut
    rings = [s for s in canvas.shapes if isinstance(s, cv.Circle) and s.radius > 3]
    assert len(rings) == 1 and rings[0].paint.color == ft.Colors.RED_700
    assert all(0 <= s.y <= HEIGHT for s in canvas.shapes if isinstance(s, cv.Circle))


def test_a_row_says_what_its_cut_costs_and_gains() -> None:
    panel = ReportPanel(strings_testers.EN, "testers", lambda _: None)
    panel.render(report(ONE_WRONG), can_keep_cut=True)
    said = texts(panel.curve)
    assert "no cut: every answer given" in said
    assert "withholds 1 of 4 (25%); right 1.000, against 0.750 with no cut" in said
    assert not any("gains nothing" in s for s in said)
    assert [b.content for b in _buttons(panel)] == ["Keep this cut"] * 2


def test_a_cut_that_gains_nothing_is_warned_and_kept_only_anyway() -> None:
    kept: list[float] = []
    panel = ReportPanel(strings_testers.EN, "testers", kept.append)
    panel.render(report(ALL_RIGHT), can_keep_cut=True)
    said = texts(panel.curve)
    assert "withholds 2 of 4 (50%) and gains nothing: right 1.000, against 1.000 with no cut" in said
    buttons = _buttons(panel)
    assert buttons and all(b.content == "Keep anyway" for b in buttons)
    buttons[0].on_click(None)
    assert kept and kept[0] > 0


def test_in_chinese_the_rows_and_the_chart_read_in_chinese() -> None:
    panel = ReportPanel(strings_testers.ZH, "testers", lambda _: None)
    panel.render(report(ALL_RIGHT), can_keep_cut=True)
    said = " ".join(texts(panel.curve))
    assert "却毫无收益" in said and "不设阈值" in said
    chart = panel.curve.controls[0]
    assert chart.label.startswith("保留 100%，正确 100%")


def _buttons(panel: ReportPanel) -> list[ft.TextButton]:
    found: list[ft.TextButton] = []

    def walk(c: object) -> None:
        if isinstance(c, ft.TextButton):
            found.append(c)
        for name in ("content", "controls"):
            child = getattr(c, name, None)
            for item in child if isinstance(child, list) else [child] if child is not None else []:
                walk(item)

    walk(panel.curve)
    return found
