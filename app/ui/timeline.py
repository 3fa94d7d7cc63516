"""The session timeline: every keyframe as a point over time, one lane per answer.

An answer is told apart three ways at once, so colour is never the only cue:
its lane (labelled in words on the left axis), its marker shape (yes ● filled
circle, no ✕ cross, unknown ■ square, skipped ○ hollow circle, failed □ hollow
square) and its colour; a legend under the chart repeats shape and word, and
the chart's semantics label says the counts in words for screen readers.

`timeline_points` is pure (no Flet) so what the chart shows is testable as data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import flet as ft
import flet_charts as fch

from app.core.parser import UNKNOWN
from app.core.session import KeyframeSkipped, SessionState, verdict_counts
from app.ui.i18n import text
from app.ui.strings_sessions import EN, answer_word

SKIPPED = "skipped"
FAILED = "failed"
_ANSWER_ORDER = ("yes", "no", UNKNOWN)


@dataclass(frozen=True)
class MarkStyle:
    colour: str
    icon: ft.IconData  # the same shape as the chart marker, for legends and lists
    shape: str  # circle | cross | square | ring | box


_STYLES: dict[str, MarkStyle] = {
    "yes": MarkStyle(ft.Colors.GREEN_700, ft.Icons.CIRCLE, "circle"),
    "no": MarkStyle(ft.Colors.RED_700, ft.Icons.CLOSE, "cross"),
    UNKNOWN: MarkStyle(ft.Colors.GREY_800, ft.Icons.SQUARE, "square"),
    SKIPPED: MarkStyle(ft.Colors.BLUE_GREY_400, ft.Icons.CIRCLE_OUTLINED, "ring"),
    FAILED: MarkStyle(ft.Colors.DEEP_ORANGE_800, ft.Icons.CROP_SQUARE, "box"),
}
_OTHER = MarkStyle(ft.Colors.PURPLE_700, ft.Icons.CIRCLE, "circle")  # answers of other profiles


def mark_style(kind: str) -> MarkStyle:
    """Colour, icon and marker shape of an answer (or `skipped` / `failed`)."""
    return _STYLES.get(kind, _OTHER)


@dataclass(frozen=True)
class TimelinePoint:
    t: float
    lane: str  # an answer value, or "skipped" (skipped and failed keyframes share that lane)
    kind: str  # the answer value, "skipped" or "failed": decides the marker
    tooltip: str


def ordered_counts(counts: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """Answer counts as people read them: yes, no, unknown, then other answers alphabetically."""
    return sorted(counts, key=lambda item: _answer_rank(item[0]))


def _answer_rank(value: str) -> tuple[int, str]:
    return (_ANSWER_ORDER.index(value), "") if value in _ANSWER_ORDER else (len(_ANSWER_ORDER), value)


def lanes_for(state: SessionState) -> tuple[str, ...]:
    """Lanes top to bottom: yes, no, unknown, any other answer seen, then skipped."""
    seen = {e.verdict for e in state.timeline}
    others = sorted(seen - set(_ANSWER_ORDER))
    return _ANSWER_ORDER + tuple(others) + (SKIPPED,)


def is_stills(state: SessionState) -> bool:
    """A session of still images: their `t` is only their place in the list, never a time."""
    return bool(state.timeline) and all(e.event.still for e in state.timeline)


def timeline_points(
    state: SessionState, skipped: Iterable[KeyframeSkipped] = (), strings: Mapping[str, str] = EN
) -> tuple[TimelinePoint, ...]:
    """One point per keyframe over time; for stills, over the images' order (1, 2, 3…), named by file."""
    stills = is_stills(state)
    order = {t: i + 1 for i, t in enumerate(sorted({e.event.t for e in state.timeline}))} if stills else {}

    def x(t: float) -> float:
        return float(order.get(t, t)) if stills else t

    def where(t: float, name: str = "") -> str:
        return name if stills and name else text(strings, "timeline_at", t=f"{x(t):g}" if stills else f"{t:.1f}")

    points: list[TimelinePoint] = []
    for entry in state.timeline:
        e = entry.event
        at, answer = where(e.t, e.source), answer_word(strings, e.observation)
        latest = entry.latest_review
        if latest is None:
            tip = text(strings, "timeline_point_answer", where=at, answer=answer)
        else:
            key = "review_history_confirmed" if latest.verdict == "confirmed" else "review_history_corrected"
            verdict = text(strings, key, answer=answer_word(strings, latest.observation))
            tip = text(strings, "timeline_point_review", where=at, answer=answer, verdict=verdict)
        # The examiner's verdict is what is plotted; the tooltip keeps what the model said.
        points.append(TimelinePoint(x(e.t), entry.verdict, entry.verdict, tip))
    for s in skipped:
        reason = text(strings, f"skip_{s.reason.value}")
        tip = text(strings, "timeline_point_skipped", where=where(s.t), reason=reason)
        points.append(TimelinePoint(x(s.t), SKIPPED, SKIPPED, tip))
    for f in state.failures:
        tip = text(strings, "timeline_point_failed", where=where(f.t), detail=f.message or f.error)
        points.append(TimelinePoint(x(f.t), SKIPPED, FAILED, tip))
    return tuple(sorted(points, key=lambda p: p.t))


def _marker(kind: str) -> fch.ChartPointShape:
    style = mark_style(kind)
    if style.shape == "cross":
        return fch.ChartCrossPoint(color=style.colour, size=12, width=3)
    if style.shape == "square":
        return fch.ChartSquarePoint(color=style.colour, size=10, stroke_width=0)
    if style.shape == "ring":
        return fch.ChartCirclePoint(color=ft.Colors.WHITE, radius=5, stroke_color=style.colour, stroke_width=2)
    if style.shape == "box":
        return fch.ChartSquarePoint(color=ft.Colors.WHITE, size=10, stroke_color=style.colour, stroke_width=2)
    return fch.ChartCirclePoint(color=style.colour, radius=6)


def _nice_step(span: float, ticks: int = 6) -> float:
    raw = max(span, 1.0) / ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    return float(next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw))


class TimelineChart:
    """A flet-charts scatter chart of one session; `root` is the control to place.

    `update` only sets properties: the caller calls `page.update()` (or the
    control's `update()`), as for every other render.
    """

    def __init__(
        self, identifier: str = "timeline-chart", height: float = 220, strings: Mapping[str, str] = EN
    ) -> None:
        self._strings = strings
        self.points: tuple[TimelinePoint, ...] = ()
        self.axis_title = ft.Text(text(strings, "timeline_axis_time"), size=12)
        self.chart = fch.ScatterChart(
            height=height,
            min_x=0,
            max_x=10,
            min_y=-0.5,
            max_y=len(_ANSWER_ORDER) + 0.5,
            interactive=True,
            horizontal_grid_lines=fch.ChartGridLines(interval=1, color=ft.Colors.GREY_300, width=1),
            border=ft.Border.all(1, ft.Colors.GREY_400),
            left_axis=fch.ChartAxis(label_size=100),
            bottom_axis=fch.ChartAxis(title=self.axis_title, title_size=20, label_size=24),
            tooltip=fch.ScatterChartTooltip(
                bgcolor=ft.Colors.BLUE_GREY_900, max_width=220, fit_inside_horizontally=True
            ),
        )
        self.empty = ft.Text(text(strings, "timeline_empty"), color=ft.Colors.GREY_700, visible=True)
        self.legend = ft.Row(wrap=True, spacing=16, run_spacing=4)
        # Right padding: the last x label is centred on the chart's edge and would be cut off.
        self.semantics = ft.Semantics(
            content=ft.Container(self.chart, padding=ft.Padding.only(right=16)),
            identifier=identifier,
            label=text(strings, "timeline_empty"),
            container=True,
        )
        self.root = ft.Column(
            [
                ft.Text(text(strings, "timeline_title"), weight=ft.FontWeight.BOLD),
                self.empty,
                self.semantics,
                self.legend,
            ],
            spacing=6,
        )
        self.update(SessionState())

    def update(self, state: SessionState, skipped: Iterable[KeyframeSkipped] = ()) -> None:
        """Show `state`'s keyframes; `skipped` are the session's KeyframeSkipped events (the state only counts them)."""
        s = self._strings
        lanes = lanes_for(state)
        y_of = {lane: len(lanes) - 1 - i for i, lane in enumerate(lanes)}  # first lane on top
        self.points = timeline_points(state, skipped, s)
        self.chart.spots = [
            fch.ScatterChartSpot(
                x=p.t,
                y=y_of[p.lane],
                radius=6,
                color=mark_style(p.kind).colour,
                point=_marker(p.kind),
                tooltip=p.tooltip,
            )
            for p in self.points
        ]
        last = max((p.t for p in self.points), default=0.0)
        stills = is_stills(state)
        step = max(1.0, _nice_step(last)) if stills else _nice_step(last)  # images are counted in whole numbers
        self.chart.min_x = 0
        self.chart.max_x = max(step * math.ceil(last / step + 0.25), step)
        self.chart.bottom_axis.label_spacing = step
        self.axis_title.value = text(s, "timeline_axis_images" if stills else "timeline_axis_time")
        self.chart.min_y, self.chart.max_y = -0.5, len(lanes) - 0.5
        self.chart.left_axis.labels = [
            fch.ChartAxisLabel(value=y_of[lane], label=ft.Text(self._lane_name(lane), size=12, no_wrap=True))
            for lane in lanes
        ]
        kinds = [*lanes[:-1], SKIPPED, FAILED]
        self.legend.controls = [self._legend_item(kind) for kind in kinds]
        self.empty.visible = not self.points
        counts = ", ".join(f"{n} {answer_word(s, value)}" for value, n in ordered_counts(verdict_counts(state))) or "0"
        self.semantics.label = text(
            s,
            "timeline_semantics_stills" if stills else "timeline_semantics",
            n=len(state.timeline),
            seconds=f"{last:.0f}",
            counts=counts,
            skipped=sum(1 for p in self.points if p.kind == SKIPPED),
            failed=len(state.failures),
        )

    def _lane_name(self, lane: str) -> str:
        return text(self._strings, "timeline_lane_skipped") if lane == SKIPPED else answer_word(self._strings, lane)

    def _legend_item(self, kind: str) -> ft.Control:
        style = mark_style(kind)
        if kind in (SKIPPED, FAILED):
            label = text(self._strings, f"timeline_legend_{kind}")
        else:
            label = answer_word(self._strings, kind)
        return ft.Row(
            [ft.Icon(style.icon, color=style.colour, size=16), ft.Text(label, size=12)], spacing=4, tight=True
        )
