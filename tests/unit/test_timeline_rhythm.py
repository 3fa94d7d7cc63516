"""The timeline's compression-rate lane: what it plots as data (pure), and that only a rhythm session gets it."""

from __future__ import annotations

import dataclasses

import flet_charts as fch

from app.core.rhythm_figures import Pause
from app.core.session import reduce
from app.ui.parts.timeline import TimelineChart, rate_runs, rhythm_pauses, rhythm_points, rhythm_words
from app.ui.words.sessions import ZH
from tests.unit.test_sessions_controller import PAUSES, RATES, demo_events, recorded, rhythm_events, rhythm_samples


def test_every_sample_is_a_point_and_a_sample_without_a_rate_is_a_gap() -> None:
    points = rhythm_points(reduce(rhythm_events()))
    assert [p.t for p in points] == [float(t) for t in range(len(RATES))]
    assert [p.rate_per_min for p in points] == list(RATES)
    assert [p.band for p in points][:5] == [None, "in_band", "in_band", "in_band", "slow"]
    assert points[8].band == "fast"
    # Colour is not the only cue: the tooltip says the rate and its band in words; a gap says nothing.
    assert points[4].tooltip == "4.0 s · 95 /min, below the target"
    assert points[8].tooltip == "8.0 s · 125 /min, above the target"
    assert points[0].tooltip == "" and points[5].tooltip == ""


def test_a_points_band_and_tooltip_follow_the_rate_it_shows() -> None:
    samples = [
        dataclasses.replace(s, rate_per_min=r) for s, r in zip(rhythm_samples(), (99.7, 120.4, 120.6), strict=False)
    ]
    points = rhythm_points(reduce(samples))
    assert [p.band for p in points] == ["in_band", "in_band", "fast"]
    assert points[0].tooltip == "0.0 s · 100 /min, in the target band"
    assert points[2].tooltip == "2.0 s · 121 /min, above the target"


def test_the_line_breaks_at_every_gap_and_never_joins_across_one() -> None:
    runs = rate_runs(rhythm_points(reduce(rhythm_events())))
    assert [[p.t for p in run] for run in runs] == [[1, 2, 3, 4], [8, 9, 10], [12]]
    assert rate_runs(rhythm_points(reduce(demo_events()))) == ()  # no samples: no line


def test_samples_out_of_order_are_plotted_in_time_order() -> None:
    shuffled = list(reversed(rhythm_samples()))
    assert [p.t for p in rhythm_points(reduce(shuffled))] == [float(t) for t in range(len(RATES))]
    assert rhythm_pauses(reduce(shuffled)) == PAUSES  # the last in time holds them all


def test_the_lane_in_words() -> None:
    state = reduce(rhythm_events())
    assert rhythm_words(state) == "Compression rate: median 112 per minute, 75 % of the time in 100–120, pauses: 2"
    assert rhythm_words(state, ZH) == "按压频率：中位数每分钟 112 次，75% 的时间在 100–120 内，停顿 2 次"
    no_rate = [dataclasses.replace(s, rate_per_min=None, median_rate_per_min=None) for s in rhythm_samples()]
    assert rhythm_words(reduce(no_rate)) == "Compression rate: no steady compressions seen, pauses: 2"
    assert rhythm_words(reduce(demo_events())) == ""


def test_the_chart_draws_band_pauses_and_one_line_per_run_on_the_keyframes_time_axis() -> None:
    chart = TimelineChart(rhythm=True)
    assert not chart.rate_box.visible
    events = [*rhythm_events(), dataclasses.replace(rhythm_samples()[-1], event_id="late", t=31.0)]
    chart.update(reduce(events))
    assert chart.rate_box.visible
    lane = chart.rate_chart
    assert (lane.min_x, lane.max_x) == (chart.chart.min_x, chart.chart.max_x)
    assert chart.chart.max_x >= 31  # the rhythm runs past the last keyframe (12 s): the axis covers it
    # The axis names the band's edges, at values the chart library asks a label for (every label_spacing).
    ticks = [label.value for label in lane.left_axis.labels]
    assert {100, 120} <= set(ticks) and all((v - lane.min_y) % lane.left_axis.label_spacing == 0 for v in ticks)
    band_top, band_bottom, *rest = lane.data_series
    assert [p.y for p in band_top.points] == [120, 120] and band_top.below_line_cutoff_y == 100
    assert [p.y for p in band_bottom.points] == [100, 100]
    pauses, lines = rest[: len(PAUSES)], rest[len(PAUSES) :]
    assert [(p.points[0].x, p.points[1].x) for p in pauses] == [(4.5, 8.0), (10.4, 10.4 + 2.1)]
    assert all(p.points[0].y < 55 for p in pauses)  # under every rate the estimator can report
    assert pauses[0].points[0].tooltip.text == "Pause from 4.5 s: 3.5 s"
    assert [[p.x for p in line.points] for line in lines] == [[1, 2, 3, 4], [8, 9, 10], [12, 31]]
    assert [p.y for p in lines[0].points] == [110, 112, 108, 95]
    assert all(line.point is None for line in lines)  # every run here has two points or more

    # A lone rate between two gaps is drawn as a dot.
    lone = [dataclasses.replace(s, rate_per_min=None) if s.t != 2 else s for s in rhythm_samples()]
    chart.update(reduce(lone))
    dots = chart.rate_chart.data_series[2 + len(PAUSES) :]
    assert [[p.x for p in d.points] for d in dots] == [[2]] and isinstance(dots[0].point, fch.ChartCirclePoint)


def test_an_ongoing_pause_says_so() -> None:
    last = dataclasses.replace(rhythm_samples()[-1], pauses=(Pause(11.0, 2.5, True),))
    chart = TimelineChart(rhythm=True)
    chart.update(reduce([*rhythm_samples()[:-1], last]))
    (pause,) = [s for s in chart.rate_chart.data_series if s.points and s.points[0].x == 11.0]
    assert pause.points[0].tooltip.text == "Pause from 11.0 s: 2.5 s, until the end"


def test_sessions_without_rhythm_and_the_practice_chart_look_as_before() -> None:
    stills = [dataclasses.replace(recorded(i, "yes"), still=True, source=f"{i}.jpg") for i in (1, 2, 3)]
    with_lane, without = TimelineChart(rhythm=True), TimelineChart()
    for state in (reduce(stills), reduce(demo_events())):
        with_lane.update(state)
        without.update(state)
        assert not with_lane.rate_box.visible
        assert (with_lane.chart.min_x, with_lane.chart.max_x) == (without.chart.min_x, without.chart.max_x)
        assert with_lane.semantics.label == without.semantics.label
    # The Practice screen's chart (no `rhythm=True`) never shows the lane, nor stretches its axis for one.
    keyframes_only = without.chart.max_x  # demo_events, the last just above
    late = dataclasses.replace(rhythm_samples()[-1], event_id="late", t=31.0)
    without.update(reduce([*rhythm_events(), late]))
    assert not without.rate_box.visible and without.rate_chart.data_series == []
    assert without.chart.max_x == keyframes_only < 31


def test_a_render_with_the_same_session_changes_nothing_the_page_would_be_sent() -> None:
    """Practice renders on every preview frame (4 a second). The charts' spots, lines and tooltips must stay
    the very objects they were, or Flet sends them again and the browser redraws both charts (measured: a
    video session's browser CPU fell from 11.7 to 3.6 s per 10 s once they did and stopped animating)."""
    chart = TimelineChart(rhythm=True)
    state = reduce(list(rhythm_events()))
    chart.update(state)
    spots, series, labels = chart.chart.spots, chart.rate_chart.data_series, chart.chart.left_axis.labels
    chart.update(state)
    assert chart.chart.spots is spots and chart.rate_chart.data_series is series
    assert chart.chart.left_axis.labels is labels
    # flet-charts turns a str tooltip into a new tooltip object at every page update: each is an object already.
    points = [*spots, *(p for line in series for p in line.points if p.show_tooltip)]
    assert points
    for point in points:
        point.before_update()
        shown = point._internals["tooltip"]
        point.before_update()
        assert point._internals["tooltip"] is shown, point
    # A live chart does not slide between states (each slide was ~9 more frames drawn).
    for lane in (chart.chart, chart.rate_chart):
        assert lane.animation is not None and lane.animation.duration == 0
    # A new session state is drawn.
    later = reduce([*rhythm_events(), dataclasses.replace(rhythm_samples()[-1], event_id="late", t=31.0)])
    chart.update(later)
    assert chart.rate_chart.data_series is not series
