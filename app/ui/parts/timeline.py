"""The session timeline: every keyframe as a point over time, one lane per answer.

An answer is told apart three ways at once, so colour is never the only cue:
its lane (labelled in words on the left axis), its marker shape (yes ● filled
circle, no ✕ cross, unknown ■ square, skipped ○ hollow circle, failed □ hollow
square) and its colour; a legend under the chart repeats shape and word, and
the chart's semantics label says the counts in words for screen readers.

A checklist session (several questions per keyframe) has one lane per question
instead, in the order first answered, and the marker alone says the verdict; a
question its gate left unasked gets a small grey hollow square ("not checked").

A camera or video session's compression rhythm (its RhythmSample events) gets a lane of its own
under the keyframes, on the same time axis, when the chart is built with `rhythm=True` (the Sessions
screen): the rate per minute as a line, broken where no rate was measured (never drawn through a
gap), the 100–120 target band shaded and labelled on the axis, and each pause as a thick grey bar
along the bottom. Each is named in the legend and in the tooltips, and the lane's semantics label
says the figures in words.

`timeline_points`, `rhythm_points`, `rate_runs`, `rhythm_pauses` and `rhythm_words` are pure (no
Flet) so what the chart shows is testable as data.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import flet as ft
import flet_charts as fch

from app.core.profile.task import UNKNOWN
from app.core.rhythm import RhythmConfig
from app.core.rhythm_figures import TARGET_RATE_PER_MIN, Pause, rate_band, shown_rate
from app.core.rhythm_summary import summarise_rhythm
from app.core.session import Review, SessionState, TimelineEntry, verdict_counts
from app.core.session_summary import NOT_CHECKED, answer_kind, is_checklist, verdict_kind
from app.ui.words import text
from app.ui.words.sessions import EN, answer_word, session_questions, signal_words

SKIPPED = "skipped"
FAILED = "failed"
_ANSWER_ORDER = ("yes", "no", UNKNOWN)
# A checklist's chart grows with its lanes so each keeps the height a one-question lane has (220 px for 4).
_LANE_PX, _AXIS_PX = 44, 44
# The rate lane: the estimator searches 55–170 per minute; pauses are drawn at 48, under every rate.
_RATE_MIN_Y, _RATE_MAX_Y, _PAUSE_Y = 40, 180, 48
_RATE_TICKS = (60, 100, 120, 160)
_RATE_COLOUR, _BAND_COLOUR, _BAND_EDGE, _PAUSE_COLOUR = (
    ft.Colors.BLUE_800,
    ft.Colors.GREEN_100,
    ft.Colors.GREEN_700,
    ft.Colors.GREY_700,
)


@dataclass(frozen=True)
class MarkStyle:
    colour: str
    icon: ft.IconData  # the same shape as the chart marker, for legends and lists
    shape: str  # circle | cross | square | ring | box | small box


_STYLES: dict[str, MarkStyle] = {
    "yes": MarkStyle(ft.Colors.GREEN_700, ft.Icons.CIRCLE, "circle"),
    "no": MarkStyle(ft.Colors.RED_700, ft.Icons.CLOSE, "cross"),
    UNKNOWN: MarkStyle(ft.Colors.GREY_800, ft.Icons.SQUARE, "square"),
    SKIPPED: MarkStyle(ft.Colors.BLUE_GREY_400, ft.Icons.CIRCLE_OUTLINED, "ring"),
    FAILED: MarkStyle(ft.Colors.DEEP_ORANGE_800, ft.Icons.CROP_SQUARE, "box"),
    # Quieter than every answer: nothing was asked. GREY_600 keeps 3:1 against white, as a marker must.
    NOT_CHECKED: MarkStyle(ft.Colors.GREY_600, ft.Icons.CHECK_BOX_OUTLINE_BLANK, "small box"),
}
_OTHER = MarkStyle(ft.Colors.PURPLE_700, ft.Icons.CIRCLE, "circle")  # answers of other profiles


def mark_style(kind: str) -> MarkStyle:
    """Colour, icon and marker shape of an answer (or `skipped` / `failed` / `not_checked`)."""
    return _STYLES.get(kind, _OTHER)


@dataclass(frozen=True)
class TimelinePoint:
    t: float
    lane: str  # an answer value (a checklist's: the signal), or "skipped" (shared by skipped and failed keyframes)
    kind: str  # the verdict, "not_checked", "skipped" or "failed": decides the marker
    tooltip: str


def ordered_counts(counts: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """Answer counts as people read them: yes, no, unknown, then other answers alphabetically."""
    return sorted(counts, key=lambda item: _answer_rank(item[0]))


def _answer_rank(value: str) -> tuple[int, str]:
    if value in _ANSWER_ORDER:
        return _ANSWER_ORDER.index(value), ""
    return len(_ANSWER_ORDER) + (value == NOT_CHECKED), value  # "not checked" last: nothing was answered


def _answers_seen(state: SessionState) -> tuple[str, ...]:
    """yes, no, unknown, then any other verdict seen (another profile's answers)."""
    others = sorted({e.verdict for e in state.timeline} - set(_ANSWER_ORDER))
    return _ANSWER_ORDER + tuple(others)


def lanes_for(state: SessionState) -> tuple[str, ...]:
    """Lanes top to bottom: yes, no, unknown, any other answer seen, then skipped; a checklist's: its signals,
    in the order first answered, then skipped."""
    return (state.signals if is_checklist(state) else _answers_seen(state)) + (SKIPPED,)


def point_kind(entry: TimelineEntry) -> str:
    """What a point's marker says: the verdict, or "not checked" until an examiner corrects an unasked answer
    (the same rule the report counts by)."""
    return verdict_kind(entry)


def question_words(strings: Mapping[str, str], signal: str, questions: Mapping[str, str] | None = None) -> str:
    """A signal's question in words: the profile's own (`questions`) where given, else the table's."""
    return (questions or {}).get(signal) or signal_words(strings, signal)


def is_stills(state: SessionState) -> bool:
    """A session of still images: their `t` is only their place in the list, never a time."""
    return bool(state.timeline) and all(e.event.still for e in state.timeline)


def timeline_points(
    state: SessionState, strings: Mapping[str, str] = EN, questions: Mapping[str, str] | None = None
) -> tuple[TimelinePoint, ...]:
    """One point per keyframe over time, skipped and failed ones too (from the state, as Sessions' summary
    counts them); for stills, over the images' order (1, 2, 3…), named by file.

    A checklist's keyframe has a point per signal, in that signal's lane; its tooltip names the question
    (`questions`: signal -> words; by default the session's own record of what it asked)."""
    questions = session_questions(strings, state) if questions is None else questions
    stills, checklist = is_stills(state), is_checklist(state)
    order = {t: i + 1 for i, t in enumerate(sorted({e.event.t for e in state.timeline}))} if stills else {}

    def x(t: float) -> float:
        return float(order.get(t, t)) if stills else t

    def where(t: float, name: str = "") -> str:
        return name if stills and name else text(strings, "timeline_at", t=f"{x(t):g}" if stills else f"{t:.1f}")

    points: list[TimelinePoint] = []
    for entry in state.timeline:
        e = entry.event
        at, answer = where(e.t, e.source), answer_word(strings, answer_kind(e))
        latest = entry.latest_review
        if latest is None:
            tip = text(strings, "timeline_point_answer", where=at, answer=answer)
        else:
            key = "review_history_confirmed" if latest.verdict is Review.CONFIRMED else "review_history_corrected"
            verdict = text(strings, key, answer=answer_word(strings, latest.observation))
            tip = text(strings, "timeline_point_review", where=at, answer=answer, verdict=verdict)
        if checklist:
            tip = text(strings, "timeline_point_signal", signal=question_words(strings, e.signal, questions), point=tip)
        # The examiner's verdict is what is plotted; the tooltip keeps what the model said.
        lane = e.signal if checklist else entry.verdict
        points.append(TimelinePoint(x(e.t), lane, point_kind(entry), tip))
    for s in state.skips:
        reason = text(strings, f"skip_{s.reason.value}")
        tip = text(strings, "timeline_point_skipped", where=where(s.t), reason=reason)
        points.append(TimelinePoint(x(s.t), SKIPPED, SKIPPED, tip))
    for f in state.failures:
        tip = text(strings, "timeline_point_failed", where=where(f.t), detail=f.message or f.error)
        points.append(TimelinePoint(x(f.t), SKIPPED, FAILED, tip))
    return tuple(sorted(points, key=lambda p: p.t))


@dataclass(frozen=True)
class RatePoint:
    t: float
    rate_per_min: float | None  # None: no periodic motion in the window, a gap in the line
    band: str | None  # slow | in_band | fast; None without a rate
    tooltip: str


def rhythm_points(state: SessionState, strings: Mapping[str, str] = EN) -> tuple[RatePoint, ...]:
    """One point per rhythm sample, in time order; a sample without a rate is kept as a gap."""
    points = []
    for sample in sorted(state.rhythm, key=lambda s: s.t):
        rate = sample.rate_per_min
        if rate is None:
            points.append(RatePoint(sample.t, None, None, ""))
            continue
        band = rate_band(rate)
        tip = text(
            strings,
            "timeline_rhythm_point",
            where=text(strings, "timeline_at", t=f"{sample.t:.1f}"),
            rate=shown_rate(rate),
            band=text(strings, f"timeline_rhythm_{band}"),
        )
        points.append(RatePoint(sample.t, rate, band, tip))
    return tuple(points)


def rate_runs(points: Iterable[RatePoint]) -> tuple[tuple[RatePoint, ...], ...]:
    """The stretches of consecutive points with a rate: each is one line; a point without a rate ends it."""
    runs: list[tuple[RatePoint, ...]] = []
    run: list[RatePoint] = []
    for point in points:
        if point.rate_per_min is None:
            if run:
                runs.append(tuple(run))
            run = []
        else:
            run.append(point)
    if run:
        runs.append(tuple(run))
    return tuple(runs)


def rhythm_pauses(state: SessionState) -> tuple[Pause, ...]:
    """The session's pauses: the last sample holds every one so far (its last may be ongoing)."""
    return max(state.rhythm, key=lambda s: s.t).pauses if state.rhythm else ()


def rhythm_words(state: SessionState, strings: Mapping[str, str] = EN) -> str:
    """The rate lane in words for a screen reader: median, share of time in the band, pauses ("" without rhythm)."""
    summary = summarise_rhythm(state.rhythm)
    if summary is None:
        return ""
    share = summary.in_band_share
    if summary.median_rate_per_min is None or share is None:
        return text(strings, "timeline_rhythm_semantics_none", pauses=len(summary.pauses))
    low, high = summary.target
    return text(
        strings,
        "timeline_rhythm_semantics",
        rate=shown_rate(summary.median_rate_per_min),
        percent=f"{100 * share:.0f}",
        low=low,
        high=high,
        pauses=len(summary.pauses),
    )


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
    if style.shape == "small box":
        return fch.ChartSquarePoint(color=ft.Colors.WHITE, size=7, stroke_color=style.colour, stroke_width=1.5)
    return fch.ChartCirclePoint(color=style.colour, radius=6)


# A live chart changes every second; fl_chart's default 150 ms move between two states made the browser draw
# about nine more frames for each (in software on a machine without a GPU), for a slide nobody reads.
_NO_ANIMATION = ft.Animation(duration=0)


def _tip(words: str) -> fch.LineChartDataPointTooltip:
    """A point's tooltip as the object, not a str: flet-charts wraps a str in a new tooltip object on every
    page update, which Flet then sends as a change, and the browser redrew (and animated) both charts on
    every preview frame although nothing on them had changed."""
    return fch.LineChartDataPointTooltip(text=words)


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
        self,
        identifier: str = "timeline-chart",
        height: float = 220,
        strings: Mapping[str, str] = EN,
        rhythm: bool = False,
    ) -> None:
        """`rhythm`: show a camera or video session's compression rate in a lane under the keyframes
        (`<identifier>-rhythm`); it stays hidden for a session without rhythm samples."""
        self._strings = strings
        self._rhythm = rhythm
        self._height = height
        self.points: tuple[TimelinePoint, ...] = ()
        self.axis_title = ft.Text(text(strings, "timeline_axis_time"), size=12)
        self.chart = fch.ScatterChart(
            height=height,
            animation=_NO_ANIMATION,
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
        self.rate_points: tuple[RatePoint, ...] = ()
        self._shown: tuple[SessionState, Mapping[str, str] | None] | None = None  # what `update` last drew
        self.rate_chart = fch.LineChart(
            height=150,
            animation=_NO_ANIMATION,
            min_x=0,
            max_x=10,
            min_y=_RATE_MIN_Y,
            max_y=_RATE_MAX_Y,
            interactive=True,
            horizontal_grid_lines=fch.ChartGridLines(interval=20, color=ft.Colors.GREY_200, width=1),
            border=ft.Border.all(1, ft.Colors.GREY_400),
            # The same left room as the keyframes' lanes, so both share one time axis on screen.
            # fl_chart asks for a label at every `label_spacing` from min_y and shows only those we give.
            left_axis=fch.ChartAxis(
                label_size=100,
                label_spacing=20,
                labels=[fch.ChartAxisLabel(value=v, label=ft.Text(f"{v}", size=12)) for v in _RATE_TICKS],
            ),
            bottom_axis=fch.ChartAxis(
                title=ft.Text(text(strings, "timeline_axis_time"), size=12), title_size=20, label_size=24
            ),
            tooltip=fch.LineChartTooltip(bgcolor=ft.Colors.BLUE_GREY_900, max_width=220, fit_inside_horizontally=True),
        )
        self.rate_semantics = ft.Semantics(
            content=ft.Container(self.rate_chart, padding=ft.Padding.only(right=16)),
            identifier=f"{identifier}-rhythm",
            label="",
            container=True,
        )
        low, high = TARGET_RATE_PER_MIN
        self.rate_legend = ft.Row(
            [
                self._legend_row(ft.Icons.SHOW_CHART, _RATE_COLOUR, text(strings, "timeline_legend_rate")),
                self._legend_row(
                    ft.Icons.SQUARE, _BAND_COLOUR, text(strings, "timeline_legend_band", low=low, high=high)
                ),
                self._legend_row(
                    ft.Icons.HORIZONTAL_RULE,
                    _PAUSE_COLOUR,
                    text(strings, "timeline_legend_pause", seconds=f"{RhythmConfig().pause_s:g}"),
                ),
            ],
            wrap=True,
            spacing=16,
            run_spacing=4,
        )
        self.rate_box = ft.Column(
            [
                ft.Text(text(strings, "timeline_rhythm_title"), weight=ft.FontWeight.W_500),
                self.rate_semantics,
                self.rate_legend,
            ],
            spacing=6,
            visible=False,
        )
        self.root = ft.Column(
            [
                ft.Text(text(strings, "timeline_title"), weight=ft.FontWeight.BOLD),
                self.empty,
                self.semantics,
                self.legend,
                self.rate_box,
            ],
            spacing=6,
        )
        self.update(SessionState())

    def update(
        self,
        state: SessionState,
        questions: Mapping[str, str] | None = None,
    ) -> None:
        """Show `state`'s keyframes, its skipped and failed ones included, whether the session is live (Practice)
        or read back (Sessions); `questions`: signal -> the profile's own words for it, which win over the table's
        (by default the session's own record of what it asked, never today's settings)."""
        # The screen renders on every preview frame (4 a second) with the same session: new spots, labels
        # and lines each time made the browser lay out and animate both charts again (~6 frames a render).
        if self._shown is not None and self._shown[0] is state and self._shown[1] == questions:
            return
        self._shown = (state, questions)
        s = self._strings
        questions = session_questions(s, state) if questions is None else questions
        checklist = is_checklist(state)
        lanes = lanes_for(state)
        y_of = {lane: len(lanes) - 1 - i for i, lane in enumerate(lanes)}  # first lane on top
        self.points = timeline_points(state, s, questions)
        self.chart.spots = [
            fch.ScatterChartSpot(
                x=p.t,
                y=y_of[p.lane],
                radius=6,
                color=mark_style(p.kind).colour,
                point=_marker(p.kind),
                tooltip=fch.ScatterChartSpotTooltip(text=p.tooltip),  # an object, not a str: see _tip
            )
            for p in self.points
        ]
        stills = is_stills(state)
        with_rhythm = self._rhythm and bool(state.rhythm) and not stills
        self.rate_points = rhythm_points(state, s) if with_rhythm else ()
        pauses = rhythm_pauses(state) if with_rhythm else ()
        # One time axis for both lanes: the rhythm runs on to the last frame, past the last keyframe.
        last = max(
            [p.t for p in self.points] + [p.t for p in self.rate_points] + [p.start_s + p.length_s for p in pauses],
            default=0.0,
        )
        step = max(1.0, _nice_step(last)) if stills else _nice_step(last)  # images are counted in whole numbers
        self.chart.min_x = 0
        self.chart.max_x = max(step * math.ceil(last / step + 0.25), step)
        self.chart.bottom_axis.label_spacing = step
        self.axis_title.value = text(s, "timeline_axis_images" if stills else "timeline_axis_time")
        self.chart.min_y, self.chart.max_y = -0.5, len(lanes) - 0.5
        # A checklist's lanes are questions: as many as it asks, each with room for two lines of words.
        self.chart.height = max(self._height, len(lanes) * _LANE_PX + _AXIS_PX) if checklist else self._height
        self.chart.left_axis.label_size = 120 if checklist else 100
        self.chart.left_axis.labels = [
            fch.ChartAxisLabel(value=y_of[lane], label=self._lane_label(lane, checklist, questions)) for lane in lanes
        ]
        if with_rhythm:
            self._render_rhythm(state, pauses, step)
        self.rate_box.visible = with_rhythm
        unasked = [NOT_CHECKED] if any(p.kind == NOT_CHECKED for p in self.points) else []
        self.legend.controls = [self._legend_item(k) for k in (*_answers_seen(state), *unasked, SKIPPED, FAILED)]
        self.empty.visible = not self.points
        key, n, counts = self._counts_in_words(state, questions)
        self.semantics.label = text(
            s,
            f"{key}_stills" if stills else key,
            n=n,
            questions=len(state.signals),
            seconds=f"{last:.0f}",
            counts=counts,
            skipped=state.skipped,
            failed=len(state.failures),
        )

    def _render_rhythm(self, state: SessionState, pauses: tuple[Pause, ...], step: float) -> None:
        """The rate lane over the keyframes' x range: the band, the pauses, then one line per run with a rate."""
        s = self._strings
        chart = self.rate_chart
        chart.min_x, chart.max_x = self.chart.min_x, self.chart.max_x
        chart.left_axis.label_size = self.chart.left_axis.label_size  # the plots start at the same x on screen
        chart.bottom_axis.label_spacing = step
        low, high = TARGET_RATE_PER_MIN
        series = [
            # The band: a dashed line at its top edge (not to be read as data), filled down to its bottom edge.
            fch.LineChartData(
                points=[fch.LineChartDataPoint(x, high, show_tooltip=False) for x in (chart.min_x, chart.max_x)],
                color=_BAND_EDGE,
                stroke_width=1,
                dash_pattern=[4, 4],
                below_line_bgcolor=_BAND_COLOUR,
                below_line_cutoff_y=low,
            ),
            fch.LineChartData(
                points=[fch.LineChartDataPoint(x, low, show_tooltip=False) for x in (chart.min_x, chart.max_x)],
                color=_BAND_EDGE,
                stroke_width=1,
                dash_pattern=[4, 4],
            ),
        ]
        for pause in pauses:
            where = text(s, "timeline_at", t=f"{pause.start_s:.1f}")
            key = "timeline_rhythm_pause_ongoing" if pause.ongoing else "timeline_rhythm_pause"
            tip = text(s, key, where=where, length=f"{pause.length_s:.1f}")
            series.append(
                fch.LineChartData(
                    points=[
                        fch.LineChartDataPoint(pause.start_s, _PAUSE_Y, tooltip=_tip(tip)),
                        fch.LineChartDataPoint(pause.start_s + pause.length_s, _PAUSE_Y, tooltip=_tip(tip)),
                    ],
                    color=_PAUSE_COLOUR,
                    stroke_width=8,
                )
            )
        for run in rate_runs(self.rate_points):
            series.append(
                fch.LineChartData(
                    points=[
                        fch.LineChartDataPoint(
                            p.t, min(_RATE_MAX_Y, max(_RATE_MIN_Y, p.rate_per_min or 0)), tooltip=_tip(p.tooltip)
                        )
                        for p in run
                    ],
                    color=_RATE_COLOUR,
                    stroke_width=2,
                    # A lone rate between two gaps is a dot: a line needs two points.
                    point=fch.ChartCirclePoint(color=_RATE_COLOUR, radius=3) if len(run) == 1 else None,
                )
            )
        chart.data_series = series
        self.rate_semantics.label = rhythm_words(state, s)

    def _counts_in_words(self, state: SessionState, questions: Mapping[str, str] | None) -> tuple[str, int, str]:
        """(the semantics label's key, the keyframes, their counts in words): a checklist's per question, as plotted."""
        s = self._strings
        if not is_checklist(state):
            return "timeline_semantics", len(state.timeline), self._said(verdict_counts(state))
        per_signal = [
            text(
                s,
                "signal_counts",
                question=question_words(s, signal, questions),
                counts=self._said(Counter(p.kind for p in self.points if p.lane == signal).items()),
            )
            for signal in state.signals
        ]
        return "timeline_semantics_signals", state.keyframes_answered, text(s, "signal_separator").join(per_signal)

    def _said(self, counts: Iterable[tuple[str, int]]) -> str:
        """Counts in words for a screen reader: "3 YES, 1 NO"."""
        return ", ".join(f"{n} {answer_word(self._strings, value)}" for value, n in ordered_counts(counts)) or "0"

    def _lane_label(self, lane: str, checklist: bool, questions: Mapping[str, str] | None) -> ft.Text:
        s = self._strings
        if lane == SKIPPED:
            words = text(s, "timeline_lane_skipped")
        else:
            words = question_words(s, lane, questions) if checklist else answer_word(s, lane)
        if checklist:  # a question is longer than an answer: two lines, and the whole of it on hover
            return ft.Text(words, size=11, max_lines=2, overflow=ft.TextOverflow.ELLIPSIS, tooltip=words)
        return ft.Text(words, size=12, no_wrap=True)

    @staticmethod
    def _legend_row(icon: ft.IconData, colour: str, label: str) -> ft.Control:
        return ft.Row([ft.Icon(icon, color=colour, size=16), ft.Text(label, size=12)], spacing=4, tight=True)

    def _legend_item(self, kind: str) -> ft.Control:
        style = mark_style(kind)
        if kind in (SKIPPED, FAILED):
            label = text(self._strings, f"timeline_legend_{kind}")
        else:
            label = answer_word(self._strings, kind)
        return ft.Row(
            [ft.Icon(style.icon, color=style.colour, size=16), ft.Text(label, size=12)], spacing=4, tight=True
        )
