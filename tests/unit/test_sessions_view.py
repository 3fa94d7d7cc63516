"""The Sessions screen without a browser: Flet controls are dataclasses and handlers are plain calls.

The view is built over a controller over a real session file; clicking Confirm or
choosing a correction must add the review events to that file, and the controls
must then show them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import flet as ft
import flet_charts as fch
import pytest

from app.core.session import ExaminerConfirmed, ExaminerCorrected, reduce
from app.core.session_summary import SignalSummary, summarise
from app.session.report import practice_report
from app.session.review import Verdict
from app.session.store import export_csv, export_jsonl, export_rhythm_csv, load_session
from app.ui.parts.review_list import ReviewList
from app.ui.parts.timeline import FAILED, SKIPPED, TimelineChart, lanes_for, mark_style, timeline_points
from app.ui.sessions.controller import SessionsController, SessionsState
from app.ui.sessions.view import SessionsView
from app.ui.words.sessions import ZH
from tests.unit.asyncrun import run_async
from tests.unit.test_sessions_controller import demo_events, recorded, rhythm_events, write_session


def walk(control: object) -> Iterator[ft.BaseControl]:
    """Every control in the tree (a Semantics' content, a Row's controls, a ListTile's title, chart spots...)."""
    if not isinstance(control, ft.BaseControl):
        return
    yield control
    for f in dataclasses.fields(control):
        value = getattr(control, f.name, None)
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ft.BaseControl) and child is not control.parent:
                yield from walk(child)


def tagged(root: ft.BaseControl, identifier: str) -> ft.Semantics:
    found = [c for c in walk(root) if isinstance(c, ft.Semantics) and c.identifier == identifier]
    assert len(found) == 1, f"{identifier}: {len(found)} controls"
    return found[0]


def shown(root: ft.BaseControl, identifier: str) -> ft.Control:
    """The control behind a test handle, asserting that it and all its ancestors are visible."""
    semantics = tagged(root, identifier)
    assert is_visible(root, semantics), f"{identifier} is hidden"
    assert semantics.content is not None
    return semantics.content


def is_visible(root: ft.BaseControl, target: ft.BaseControl) -> bool:
    def path(node: ft.BaseControl) -> list[ft.BaseControl] | None:
        if node is target:
            return [node]
        for child in walk_children(node):
            found = path(child)
            if found is not None:
                return [node, *found]
        return None

    chain = path(root) or []
    return bool(chain) and all(getattr(c, "visible", True) for c in chain)


def walk_children(control: ft.BaseControl) -> Iterator[ft.BaseControl]:
    for f in dataclasses.fields(control):
        value = getattr(control, f.name, None)
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ft.BaseControl) and child is not control.parent:
                yield child


def texts(root: ft.BaseControl) -> str:
    return "\n".join(c.value for c in walk(root) if isinstance(c, ft.Text) and isinstance(c.value, str))


class Saver:
    def __init__(self, answer: str | None = "/home/ann/session.csv", fail: bool = False) -> None:
        self.saved: list[tuple[str, bytes]] = []
        self.answer, self.fail = answer, fail

    async def __call__(self, file_name: str, data: bytes) -> str | None:
        if self.fail:
            raise PermissionError("read-only folder")
        self.saved.append((file_name, data))
        return self.answer


def build(folder: Path, saver: Saver | None = None) -> tuple[SessionsController, SessionsView]:
    holder: list[SessionsView] = []

    def on_change(state: SessionsState) -> None:  # what the app shell does, without page.update()
        holder[0].render(state)

    controller = SessionsController(folder, on_change, examiner="ann")
    view = SessionsView(controller, save_file=saver or Saver())
    holder.append(view)
    controller.refresh()
    return controller, view


@pytest.fixture
def session(tmp_path: Path) -> Path:
    folder = tmp_path / "sessions"
    folder.mkdir()
    return write_session(folder, "20250101-120000-abcdef", demo_events())


def open_session(view: SessionsView, session_id: str) -> None:
    tile = shown(view.root, f"session-row-{session_id}")
    assert isinstance(tile, ft.ListTile) and tile.on_click is not None
    tile.on_click(None)


def test_the_list_shows_date_model_counts_and_review_progress(session: Path) -> None:
    _, view = build(session.parent)
    tile = shown(view.root, f"session-row-{session.stem}")
    assert isinstance(tile, ft.ListTile) and isinstance(tile.subtitle, ft.Text)
    assert tile.subtitle.value == "Model m · 2 yes · 1 no · 1 unknown · reviewed 0 of 4"
    assert isinstance(tile.title, ft.Text) and tile.title.value  # the date of the first event
    assert not is_visible(view.root, tagged(view.root, "sessions-empty"))
    assert not is_visible(view.root, tagged(view.root, "sessions-summary"))
    assert not is_visible(view.root, tagged(view.root, "sessions-back"))


def test_an_empty_folder_says_how_sessions_appear(tmp_path: Path) -> None:
    _, view = build(tmp_path)
    assert "No sessions yet" in shown(view.root, "sessions-empty").value


def test_opening_shows_summary_timeline_and_answers(session: Path) -> None:
    _, view = build(session.parent)
    open_session(view, session.stem)

    summary = texts(shown(view.root, "sessions-summary"))
    assert "4 keyframes analysed: 2 YES, 1 NO, 1 UNKNOWN" in summary
    assert "Skipped 1 (unchanged 1) · failed 1" in summary
    assert "Reviewed 0 of 4 · waiting for the examiner 4" in summary
    assert "Agreement with the examiner: nothing reviewed yet" in summary

    chart = shown(view.root, "timeline-chart").content
    assert isinstance(chart, fch.ScatterChart) and len(chart.spots) == 6  # 4 answers, 1 skipped, 1 failed
    label = tagged(view.root, "timeline-chart").label
    assert "Timeline of 4 keyframes" in label and "1 skipped, 1 failed" in label

    for event_id in ("e1", "e2", "e3", "e4"):
        assert isinstance(shown(view.root, f"confirm-{event_id}"), ft.Button)
        assert isinstance(shown(view.root, f"correct-{event_id}"), ft.Dropdown)
    row = view.review_list.rows["e3"]
    assert row.answer.value == "Hands on the lower half of the sternum — UNKNOWN"
    assert row.reason.visible and row.reason.value == "the model's reply was not valid JSON"
    assert "at 9.0 s" in row.when.value
    correct = shown(view.root, "correct-e2")
    assert [o.key for o in correct.options] == ["yes", "unknown"]  # never the model's own answer
    assert [o.text for o in correct.options] == ["YES", "UNKNOWN"]


def test_confirm_and_correct_write_the_file_and_show_the_verdicts(session: Path) -> None:
    _, view = build(session.parent)
    open_session(view, session.stem)

    note = shown(view.root, "note-e1")
    note.value = "hands centred"
    shown(view.root, "confirm-e1").on_click(None)
    dropdown = shown(view.root, "correct-e2")
    dropdown.value = "yes"
    dropdown.on_select(None)  # picked, not yet saved
    assert not isinstance(load_session(session).events[-1], ExaminerCorrected)
    shown(view.root, "confirm-e2").on_click(None)  # "Save correction"

    events = load_session(session).events
    assert isinstance(events[-2], ExaminerConfirmed) and events[-2].target_id == "e1"
    assert (events[-2].note, events[-2].examiner) == ("hands centred", "ann")
    assert isinstance(events[-1], ExaminerCorrected) and (events[-1].target_id, events[-1].observation) == ("e2", "yes")

    # Reviewed rows move below, with their history; their verdict controls are hidden.
    assert view.review_list.pending_title.value == "Waiting for the examiner (2)"
    assert view.review_list.done_title.value == "Reviewed (2)"
    assert texts(shown(view.root, "history-e1")).startswith("confirmed YES — “hands centred” by ann · ")
    assert texts(shown(view.root, "history-e2")).startswith("corrected to YES by ann · ")
    assert not is_visible(view.root, tagged(view.root, "confirm-e1"))
    assert shown(view.root, "note-e3").value == ""
    summary = texts(shown(view.root, "sessions-summary"))
    assert "Agreement with the examiner: 50 % (1 of 2 confirmed, 1 corrected)" in summary
    assert "Corrected the answer at 6.0 s to YES" in texts(shown(view.root, "sessions-notice"))

    # The timeline's tooltips carry the verdicts too.
    tips = [p.tooltip for p in view.timeline.points]
    assert "3.0 s · YES · confirmed YES" in tips and "6.0 s · NO · corrected to YES" in tips


def test_changing_a_verdict_records_a_revision(session: Path) -> None:
    _, view = build(session.parent)
    open_session(view, session.stem)
    shown(view.root, "confirm-e1").on_click(None)

    change = shown(view.root, "revise-e1")
    change.on_click(None)  # opens the verdict controls again
    dropdown = shown(view.root, "correct-e1")
    shown(view.root, "note-e1").value = "on second look, too high"
    dropdown.value = "no"
    dropdown.on_select(None)
    shown(view.root, "confirm-e1").on_click(None)

    last = load_session(session).events[-1]
    assert isinstance(last, ExaminerCorrected) and last.revises and last.note == "on second look, too high"
    history = texts(shown(view.root, "history-e1")).splitlines()
    assert len(history) == 2 and history[1].startswith("corrected to NO — “on second look, too high”")
    assert not is_visible(view.root, tagged(view.root, "correct-e1"))
    assert "Verdicts changed later: 1" in texts(shown(view.root, "sessions-summary"))


def test_a_refused_review_is_shown_and_nothing_is_written(session: Path) -> None:
    controller, view = build(session.parent)
    open_session(view, session.stem)
    size = session.stat().st_size
    controller.review([Verdict("e1", "maybe")])  # the dropdown never offers it; the rules refuse it anyway
    assert session.stat().st_size == size
    notice = shown(view.root, "sessions-notice")
    assert (
        texts(notice) == "Not recorded: MAYBE is not an answer to this question."
        and view.notice.icon.icon == ft.Icons.ERROR_OUTLINE
    )


def test_export_goes_through_the_save_dialog(session: Path) -> None:
    saver = Saver()
    _, view = build(session.parent, saver)
    open_session(view, session.stem)
    shown(view.root, "confirm-e4").on_click(None)

    for fmt in ("csv", "jsonl"):
        button = shown(view.root, f"export-{fmt}")
        run_async(button.on_click(None))
    loaded = load_session(session)
    assert saver.saved == [
        (f"keyframe-session-{session.stem}.csv", export_csv(loaded).encode("utf-8")),
        (f"keyframe-session-{session.stem}.jsonl", export_jsonl(loaded).encode("utf-8")),
    ]
    assert "Saved /home/ann/session.csv" in texts(shown(view.root, "sessions-notice"))

    failing = Saver(fail=True)
    view._save_file = failing
    run_async(view.export("csv"))
    assert "Could not export" in texts(shown(view.root, "sessions-notice"))


def test_without_a_save_dialog_export_is_disabled(session: Path) -> None:
    controller = SessionsController(session.parent, lambda state: None)
    controller.refresh()
    controller.open(session.stem)
    view = SessionsView(controller)
    assert view.export_buttons["csv"].disabled and view.export_buttons["jsonl"].disabled


def test_back_returns_to_the_list_with_updated_progress(session: Path) -> None:
    _, view = build(session.parent)
    open_session(view, session.stem)
    shown(view.root, "confirm-e1").on_click(None)
    shown(view.root, "sessions-back").on_click(None)
    tile = shown(view.root, f"session-row-{session.stem}")
    assert tile.subtitle.value.endswith("reviewed 1 of 4")
    assert not is_visible(view.root, tagged(view.root, "sessions-summary"))


def test_timeline_is_not_colour_only_and_serves_a_live_session() -> None:
    events = demo_events()
    state = reduce(events)
    chart = TimelineChart(identifier="live-timeline")
    assert chart.empty.visible and chart.chart.spots == []
    chart.update(state)
    assert not chart.empty.visible

    # Each kind has its own lane (named in words), its own marker shape and its own legend entry.
    assert lanes_for(state) == ("yes", "no", "unknown", SKIPPED)
    labels = {label.value: label.label.value for label in chart.chart.left_axis.labels}
    assert labels == {3: "YES", 2: "NO", 1: "UNKNOWN", 0: "skipped / failed"}
    kinds = ["yes", "no", "unknown", SKIPPED, FAILED]
    shapes = {mark_style(k).shape for k in kinds}
    assert len(shapes) == len(kinds) and len({mark_style(k).icon for k in kinds}) == len(kinds)
    assert [row.controls[1].value for row in chart.legend.controls] == ["YES", "NO", "UNKNOWN", "skipped", "failed"]
    by_kind = {p.kind: spot.point for p, spot in zip(chart.points, chart.chart.spots, strict=True)}
    assert isinstance(by_kind["no"], fch.ChartCrossPoint) and isinstance(by_kind["unknown"], fch.ChartSquarePoint)
    assert isinstance(by_kind["yes"], fch.ChartCirclePoint) and by_kind[SKIPPED].color == ft.Colors.WHITE
    assert [p.t for p in timeline_points(state)] == [3.0, 4.5, 6.0, 9.0, 10.5, 12.0]  # skipped and failed: sorted in

    # A later keyframe moves the x range; another profile's answer gets a lane of its own.
    more = [*events, recorded(40, "partly")]
    chart.update(reduce(more))
    assert chart.chart.max_x >= 120 and lanes_for(reduce(more))[3] == "partly"


def test_review_list_works_standalone_with_one_list_of_answers() -> None:
    state = reduce([recorded(1, "yes"), recorded(2, "no")])
    calls: list[tuple] = []
    reviews = ReviewList()
    reviews.render(state.timeline, ("yes", "no"), lambda verdicts, revise: calls.append((list(verdicts), revise)))
    row = reviews.rows["e2"]
    assert [o.key for o in row.correct.options] == ["yes"]
    row.note.value = "n"
    row.confirm.on_click(None)
    assert calls == [([Verdict("e2", None, "n")], False)]


def test_a_picked_correction_is_saved_with_the_note_written_after_it() -> None:
    """Picking a correction records nothing: the note typed next is that verdict's, saved with it. (It
    used to be recorded on the pick with an empty note, and the note then went to the next verdict.)"""
    state = reduce([recorded(1, "yes"), recorded(2, "no")])
    calls: list[tuple] = []
    reviews = ReviewList()

    def render() -> None:
        reviews.render(state.timeline, ("yes", "no"), lambda verdicts, revise: calls.append((list(verdicts), revise)))

    render()
    row = reviews.rows["e2"]
    row.correct.value = "yes"
    row.correct.on_select(None)
    assert calls == [] and row.confirm.content == "Save correction"
    render()  # a live session re-renders on every keyframe: the pick stays
    assert row.correct.value == "yes"
    row.note.value = "hands were centred"
    row.confirm.on_click(None)
    assert calls == [([Verdict("e2", "yes", "hands were centred")], False)]

    # Several waiting answers: each one's verdict and note at once.
    calls.clear()
    assert is_visible(reviews.root, tagged(reviews.root, "confirm-all-waiting"))
    assert reviews.confirm_waiting.content == "Confirm all waiting (2)"
    reviews.rows["e1"].note.value = "fine"
    reviews.confirm_waiting.on_click(None)
    assert calls == [([Verdict("e1", None, "fine"), Verdict("e2", "yes", "hands were centred")], False)]


def test_an_answer_whose_answers_are_unknown_cannot_be_corrected_and_says_so() -> None:
    state = reduce([recorded(1, "yes"), recorded(2, "no")])
    reviews = ReviewList()
    reviews.render(state.timeline, {}, lambda *a: None)
    assert reviews.rows["e1"].correct.disabled and "unknown" in reviews.rows["e1"].correct.tooltip


def test_a_stills_timeline_counts_images_in_order_and_names_them() -> None:
    """Six stills answered within a second were plotted at 0-10 s: times they were never taken at."""
    from tests.unit.test_session import practice

    answers = ["no", "yes"] * 3
    events = [dataclasses.replace(practice(i, a), source=f"trainee-{i}.jpg", still=True) for i, a in enumerate(answers)]
    chart = TimelineChart()
    chart.update(reduce(events))
    assert [p.t for p in chart.points] == [1, 2, 3, 4, 5, 6]
    assert [p.tooltip for p in chart.points][:2] == ["trainee-0.jpg · NO", "trainee-1.jpg · YES"]
    assert chart.axis_title.value == "Image, in the order chosen"
    assert chart.semantics.label.startswith("Timeline of 6 images:")
    # A video or camera session keeps its seconds.
    chart.update(reduce([practice(i, "yes") for i in range(3)]))
    assert [p.t for p in chart.points] == [0.0, 3.0, 6.0] and chart.axis_title.value == "Time (s)"


def test_a_rhythm_session_shows_its_figures_a_rate_lane_and_exports_them(tmp_path: Path) -> None:
    path = write_session(tmp_path, "cam", rhythm_events())
    saver = Saver()
    _, view = build(tmp_path, saver)
    open_session(view, "cam")

    figures = {
        key: shown(view.root, f"rhythm-summary-{key}").value for key in ("count", "rate", "band", "pauses", "ccf")
    }
    assert figures == {
        "count": "Compressions counted: 20 in 12 s",
        "rate": "Median rate: 112 /min (target 100–120)",
        "band": "Time in the target band: 6 s of 8 s with a rate (75 %) · too slow 1 s · too fast 1 s",
        "pauses": "Pauses of 2 s or more: 2, the longest 3.5 s",
        "ccf": "Compression fraction (CCF): 70 %",
    }
    assert shown(view.root, "rhythm-summary-depth").value == "Depth and recoil are not measured by the camera"
    assert not is_visible(view.root, tagged(view.root, "rhythm-summary-times_guessed"))  # the file gave its rate
    # The rhythm is a box of its own: the summary's node keeps its own lines (a browser reads them there).
    summary = texts(shown(view.root, "sessions-summary"))
    assert "4 keyframes analysed: 2 YES, 1 NO, 1 UNKNOWN" in summary and "Compressions" not in summary

    lane = shown(view.root, "timeline-chart-rhythm")
    assert isinstance(lane, ft.Container) and isinstance(lane.content, fch.LineChart)
    label = tagged(view.root, "timeline-chart-rhythm").label
    assert label == "Compression rate: median 112 per minute, 75 % of the time in 100–120, pauses: 2"

    for fmt in ("rhythm", "report"):
        button = shown(view.root, f"export-{fmt}")
        assert not button.disabled
        run_async(button.on_click(None))
    loaded = load_session(path)
    assert saver.saved == [
        ("keyframe-session-cam-rhythm.csv", export_rhythm_csv(loaded).encode("utf-8")),
        ("keyframe-session-cam-report.html", practice_report(loaded, "cam").encode("utf-8")),
    ]
    assert [b.content for b in (view.export_buttons["rhythm"], view.export_buttons["report"])] == [
        "Rhythm CSV",
        "Report (HTML)",
    ]


def test_a_rhythm_on_guessed_frame_times_says_so_first(tmp_path: Path) -> None:
    """A video without a usable frame rate or times of its own: its rhythm scales with a guess."""
    events = [dataclasses.replace(e, frame_times_guessed=True) if e.kind == "rhythm" else e for e in rhythm_events()]
    write_session(tmp_path, "guessed", events)
    _, view = build(tmp_path, Saver())
    open_session(view, "guessed")
    said = shown(view.root, "rhythm-summary-times_guessed").value
    assert said.startswith("Frame times guessed: the video gives no usable frame rate") and "scale" in said, said
    assert shown(view.root, "rhythm-summary-count").value == "Compressions counted: 20 in 12 s"


def test_a_stills_session_shows_no_rhythm_and_cannot_export_one(tmp_path: Path) -> None:
    stills = [dataclasses.replace(recorded(i, "yes"), still=True, source=f"{i}.jpg") for i in (1, 2)]
    write_session(tmp_path, "stills", stills)
    saver = Saver()
    _, view = build(tmp_path, saver)
    open_session(view, "stills")
    for key in ("count", "rate", "band", "pauses", "ccf"):
        assert not is_visible(view.root, tagged(view.root, f"rhythm-summary-{key}"))
    assert not is_visible(view.root, tagged(view.root, "timeline-chart-rhythm"))
    assert not is_visible(view.root, view.rhythm_box)  # its title too
    rhythm_button = shown(view.root, "export-rhythm")
    assert rhythm_button.disabled and "No compression rhythm" in rhythm_button.tooltip
    assert not shown(view.root, "export-report").disabled and not shown(view.root, "export-csv").disabled
    run_async(view.export("rhythm"))
    assert saver.saved == []  # nothing to save, and no dialog opened


def test_the_rhythm_figures_read_in_chinese_too(tmp_path: Path) -> None:
    write_session(tmp_path, "cam", rhythm_events())
    controller = SessionsController(tmp_path, lambda state: None)
    controller.refresh()
    controller.open("cam")
    view = SessionsView(controller, strings=ZH)
    assert view.rhythm_texts["rate"].value == "中位频率：112 次/分（目标 100–120）"
    assert view.rhythm_texts["pauses"].value == "2 秒以上的停顿：2 次，最长 3.5 秒"
    assert view.export_buttons["report"].content == "报告（网页）"


def test_one_keyframe_is_counted_in_the_singular(session: Path) -> None:
    _, view = build(session.parent)
    many = summarise(reduce(load_session(session).events))
    one = dataclasses.replace(many, analysed=1, counts=(("yes", 1),), keyframes=1)
    assert view.summary_lines(one)[0] == "1 keyframe analysed: 1 YES"
    assert view.summary_lines(many)[0] == "4 keyframes analysed: 2 YES, 1 NO, 1 UNKNOWN"
    signals = tuple(SignalSummary(name, (("yes", 1),), 1, 0, 0, 0) for name in ("hands_visible", "hands_stacked"))
    checklist = dataclasses.replace(one, signals=signals)
    assert view.summary_lines(checklist)[0] == "1 keyframe analysed · 2 questions"


def test_pauses_over_10_s_are_counted_in_words_and_colour_but_not_the_pause_until_the_end(tmp_path: Path) -> None:
    from app.core.rhythm_figures import Pause
    from tests.unit.test_sessions_controller import rhythm_samples

    samples = rhythm_samples()
    long = (Pause(4.5, 3.5, False), Pause(20.0, 12.3, False), Pause(40.0, 10.04, False), Pause(60.0, 14.0, True))
    last = dataclasses.replace(samples[-1], t=74.0, pauses=long)  # the last pause ends at the sample's time
    write_session(tmp_path, "cam", sorted([*demo_events(), *samples[:-1], last], key=lambda e: e.t))
    write_session(tmp_path, "short", rhythm_events())
    _, view = build(tmp_path)
    open_session(view, "cam")
    line = shown(view.root, "rhythm-summary-long_pauses")
    assert isinstance(line, ft.Text)
    # 12.3 s is over; 10.04 s reads "10.0 s", not over; 14 s until the end is the end, not an interruption.
    assert line.value == "Pauses over 10 s: 1 (guidelines: none over 10 s)"
    assert line.color == ft.Colors.RED_800 and line.weight == ft.FontWeight.BOLD
    assert view.rhythm_texts["pauses"].value == "Pauses of 2 s or more: 4, the longest 14.0 s"
    _, calm = build(tmp_path)
    open_session(calm, "short")
    assert calm.rhythm_texts["long_pauses"].value == "Pauses over 10 s: 0 (guidelines: none over 10 s)"
    assert calm.rhythm_texts["long_pauses"].color is None
    controller = SessionsController(tmp_path, lambda state: None)
    controller.refresh()
    controller.open("cam")
    zh = SessionsView(controller, strings=ZH)
    assert zh.rhythm_texts["long_pauses"].value == "超过 10 秒的停顿：1 次（指南：任何一次都不超过 10 秒）"
