"""The score cut's curve drawn: how often the answers kept are right (up) against the share kept
(across), one dot per cut the table could offer, joined from no cut (right) to the highest cut (left),
the profile's saved cut ringed in red. The same points as `eval --plot` (app.evaluation.score_cut), drawn
natively so its words are in the screen's language.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import flet as ft
import flet.canvas as cv

from app.evaluation.score_cut import CutCurve
from app.ui.parts.widgets import tagged
from app.ui.words import text

WIDTH, HEIGHT = 320, 200
_LEFT, _RIGHT, _TOP, _BOTTOM = 44, 22, 18, 34  # room for the tick words and the axes' names
_INK, _GRID, _LINE, _SAVED = ft.Colors.GREY_800, ft.Colors.GREY_400, ft.Colors.TEAL_700, ft.Colors.RED_700


def accuracy_floor(accuracies: list[float]) -> float:
    """The bottom of the accuracy axis: the tenth below the lowest accuracy (0.8 for 0.86, 0.9 for 1.0), so
    that a curve between 0.86 and 1.0 is not a flat line at the top of a 0–1 axis."""
    lowest = min(accuracies, default=0.0)
    return max(0.0, math.floor(lowest * 10 - 1e-9) / 10)


def cut_chart(strings: Mapping[str, str], curve: CutCurve, min_score: float | None, tag: str) -> ft.Control:
    """The curve as a canvas tagged `<tag>-curve-chart`, read out by its points for screen readers."""
    points = [(p.coverage, p.accuracy) for p in curve.points if p.coverage is not None and p.accuracy is not None]
    floor = accuracy_floor([a for _, a in points])
    plot_w, plot_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM

    def at(coverage: float, accuracy: float) -> ft.Offset:
        return ft.Offset(_LEFT + coverage * plot_w, _TOP + (1 - (accuracy - floor) / (1 - floor)) * plot_h)

    line = ft.Paint(color=_GRID, stroke_width=1, style=ft.PaintingStyle.STROKE)
    small = ft.TextStyle(size=11, color=_INK)
    shapes: list[cv.Shape] = [cv.Rect(_LEFT, _TOP, plot_w, plot_h, paint=line)]
    half = _LEFT + plot_w / 2
    shapes.append(cv.Line(half, _TOP, half, _TOP + plot_h, paint=line))
    middle = (1 + floor) / 2
    shapes.append(cv.Line(_LEFT, at(0, middle).y, _LEFT + plot_w, at(0, middle).y, paint=line))
    for value in (floor, middle, 1.0):
        y = at(0, value).y
        shapes.append(cv.Text(_LEFT - 4, y, f"{value:.2f}", style=small, alignment=ft.Alignment.CENTER_RIGHT))
    for share in (0.0, 0.5, 1.0):
        x = _LEFT + share * plot_w
        shapes.append(cv.Text(x, _TOP + plot_h + 3, f"{share:.0%}", style=small, alignment=ft.Alignment.TOP_CENTER))
    shapes.append(
        cv.Text(
            _LEFT + plot_w / 2,
            HEIGHT - 2,
            text(strings, "curve_coverage"),
            style=small,
            alignment=ft.Alignment.BOTTOM_CENTER,
        )
    )
    shapes.append(cv.Text(4, 2, text(strings, "curve_accuracy"), style=small, alignment=ft.Alignment.TOP_LEFT))
    ink = ft.Paint(color=_LINE, stroke_width=2, style=ft.PaintingStyle.STROKE)
    drawn = [at(c, a) for c, a in sorted(points)]
    if len(drawn) > 1:
        shapes.append(
            cv.Points(list[ft.Offset | tuple[float, float]](drawn), point_mode=cv.PointMode.POLYGON, paint=ink)
        )
    dot = ft.Paint(color=_LINE, style=ft.PaintingStyle.FILL)
    shapes += [cv.Circle(o.x, o.y, 3, paint=dot) for o in drawn]
    saved = curve.at(min_score) if min_score is not None else None
    if saved is not None and saved.coverage is not None and saved.accuracy is not None:
        ring = at(saved.coverage, max(saved.accuracy, floor))
        shapes.append(
            cv.Circle(ring.x, ring.y, 7, paint=ft.Paint(color=_SAVED, stroke_width=2, style=ft.PaintingStyle.STROKE))
        )
    spoken = "; ".join(
        text(strings, "curve_point", kept=f"{c:.0%}", right=f"{a:.0%}") for c, a in sorted(points, reverse=True)
    )
    return tagged(cv.Canvas(shapes, width=WIDTH, height=HEIGHT), f"{tag}-curve-chart", spoken)
