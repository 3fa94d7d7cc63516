"""Testers' mode: the evaluation report (app.evaluation.report) and labels.csv (app.evaluation.labels)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.generation import ParseStatus
from app.evaluation.labels import LabelsFileError, decode_labels, parse_labels, read_labels
from app.evaluation.report import (
    CSV_COLUMNS,
    NONE_SHOWN,
    Prediction,
    columns_for,
    csv_text,
    evaluate,
    format_table,
    match_labels,
    positive_value,
)

VALUES = ("yes", "no", "unknown")


def p(
    name: str, expected: str | None, observed: str | None, status: str = ParseStatus.VALID, seconds: float = 0.5
) -> Prediction:
    if observed is None:
        return Prediction(name, expected, None, ParseStatus.ERROR, None, "unreadable: broken")
    return Prediction(
        name, expected, observed, status, seconds, "ok" if status == ParseStatus.VALID else "invalid_json"
    )


# --- evaluate --------------------------------------------------------------------------------


def test_a_worked_example() -> None:
    rows = [
        p("a", "yes", "yes"),
        p("b", "yes", "no"),
        p("c", "yes", "unknown", ParseStatus.REJECTED),
        p("d", "no", "no"),
        p("e", "no", "yes"),
        p("f", "no", "no"),
        p("g", None, "yes"),  # unlabelled: only in the unknown rate and the counts
        p("h", "no", None),  # an error: in no cell and no rate
    ]
    r = evaluate(rows, VALUES)
    assert r.columns == VALUES
    assert r.cell("yes", "yes") == 1 and r.cell("yes", "no") == 1 and r.cell("yes", "unknown") == 1
    assert r.cell("no", "no") == 2 and r.cell("no", "yes") == 1
    assert sum(map(sum, r.matrix)) == 6
    assert r.score("yes").precision == pytest.approx(1 / 2)
    assert r.score("yes").recall == pytest.approx(1 / 3)
    assert r.score("no").precision == pytest.approx(2 / 3)
    assert r.score("no").recall == pytest.approx(2 / 3)
    assert r.score("unknown").precision == 0.0  # one unknown answer, never labelled unknown
    assert r.score("unknown").recall is None  # nothing labelled unknown: undefined, not 0
    assert r.accuracy == pytest.approx(3 / 6)
    assert r.unknown_rate == pytest.approx(1 / 7)  # answered images, labelled or not
    assert r.positive == "yes"
    assert r.predicted_positive_rate == pytest.approx(2 / 6)
    assert r.true_positive_rate == pytest.approx(3 / 6)
    assert r.yes_bias == pytest.approx(2 / 6 - 3 / 6)
    c = r.counts
    assert (c.images, c.answered, c.errors, c.labelled, c.labelled_answered, c.unlabelled) == (8, 7, 1, 7, 6, 1)
    assert (c.valid, c.rejected, c.unknown, c.correct) == (6, 1, 1, 3)


def test_nothing_to_evaluate_gives_none_not_a_division_by_zero() -> None:
    r = evaluate([], VALUES)
    assert r.accuracy is None and r.unknown_rate is None and r.yes_bias is None
    assert all(s.precision is None and s.recall is None for s in r.scores)
    assert not r.has_labels
    table = format_table(r)
    assert "No labelled image was answered" in table and NONE_SHOWN in table


def test_only_errors() -> None:
    r = evaluate([p("a", "yes", None), p("b", None, None)], VALUES)
    assert r.counts.errors == 2 and r.counts.answered == 0
    assert r.accuracy is None and r.unknown_rate is None


def test_unlabelled_answers_give_an_unknown_rate_but_no_matrix() -> None:
    r = evaluate([p("a", None, "unknown", ParseStatus.REJECTED), p("b", None, "yes")], VALUES)
    assert r.unknown_rate == 0.5 and r.accuracy is None and r.yes_bias is None
    assert sum(map(sum, r.matrix)) == 0


def test_a_profile_without_unknown_gets_an_unknown_column() -> None:
    assert columns_for(("yes", "no")) == ("yes", "no", "unknown")
    r = evaluate([p("a", "yes", "unknown", ParseStatus.REJECTED)], ("yes", "no"))
    assert r.values == ("yes", "no") and r.cell("yes", "unknown") == 1
    assert r.score("yes").recall == 0.0


def test_the_positive_value_is_yes_or_the_first_value() -> None:
    assert positive_value(("no", "yes")) == "yes"
    assert positive_value(("left", "right")) == "left"
    r = evaluate([p("a", "left", "left"), p("b", "right", "left")], ("left", "right"))
    assert r.positive == "left" and r.yes_bias == pytest.approx(1.0 - 0.5)
    with pytest.raises(ValueError):
        positive_value(())


def test_labels_and_answers_outside_the_profile_are_refused() -> None:
    with pytest.raises(ValueError, match="maybe"):
        evaluate([p("a", "maybe", "yes")], VALUES)
    with pytest.raises(ValueError, match="perhaps"):
        evaluate([p("a", "yes", "perhaps")], VALUES)


def test_json_is_plain_data() -> None:
    r = evaluate([p("a", "yes", "yes"), p("b", "no", "yes")], VALUES)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["confusion_matrix"]["no"]["yes"] == 1
    assert d["per_value"]["no"]["recall"] == 0.0
    assert d["per_value"]["unknown"]["recall"] is None
    assert d["yes_bias"] == 0.5
    assert d["counts"]["images"] == 2


def test_csv_has_one_row_per_image_in_order_and_no_formulas() -> None:
    rows = [p("=HYPERLINK(evil).jpg", "yes", "no"), p("b.jpg", None, None), p("c.jpg", None, "yes", seconds=1.23456)]
    text = csv_text(evaluate(rows, VALUES))
    got = list(csv.DictReader(io.StringIO(text, newline="")))
    assert tuple(got[0]) == CSV_COLUMNS
    assert [g["file"] for g in got] == ["'=HYPERLINK(evil).jpg", "b.jpg", "c.jpg"]
    assert got[0]["correct"] == "no" and got[1]["correct"] == "" and got[2]["correct"] == ""
    assert got[1]["parse_status"] == ParseStatus.ERROR and got[1]["observed"] == "" and got[1]["seconds"] == ""
    assert got[2]["seconds"] == "1.235"


def test_the_table_names_every_number() -> None:
    r = evaluate([p("a", "yes", "yes"), p("b", "no", "yes")], VALUES)
    table = format_table(r)
    assert "Confusion matrix" in table and "precision" in table and "recall" in table
    assert "unknown rate" in table and "yes-bias" in table and "+0.500" in table


answers = st.sampled_from(VALUES)
predictions = st.lists(
    st.builds(
        Prediction,
        name=st.text(max_size=5),
        expected=st.none() | answers,
        observed=st.none() | answers,
        parse_status=st.sampled_from((ParseStatus.VALID, ParseStatus.REJECTED)),
        seconds=st.none() | st.floats(0, 100),
    ),
    max_size=40,
)


@given(predictions)
def test_properties(rows: list[Prediction]) -> None:
    r = evaluate(rows, VALUES)
    c = r.counts
    assert c.images == len(rows) == c.answered + c.errors == c.labelled + c.unlabelled
    assert sum(map(sum, r.matrix)) == c.labelled_answered
    assert sum(s.correct for s in r.scores) == c.correct
    for s in r.scores:
        for rate in (s.precision, s.recall):
            assert rate is None or 0.0 <= rate <= 1.0
        assert (s.recall is None) == (s.expected == 0)
        assert (s.precision is None) == (s.predicted == 0)
    for rate in (r.accuracy, r.unknown_rate):
        assert rate is None or 0.0 <= rate <= 1.0
    assert (r.accuracy is None) == (c.labelled_answered == 0)
    assert r.yes_bias is None or -1.0 <= r.yes_bias <= 1.0
    # Order does not matter to the numbers.
    assert evaluate(list(reversed(rows)), VALUES).to_dict() == r.to_dict()
    got = list(csv.DictReader(io.StringIO(csv_text(r), newline="")))
    assert all(g["file"] in (x.name, "'" + x.name) for g, x in zip(got, rows, strict=True))


@given(predictions)
def test_a_perfect_model_has_no_bias_and_full_scores(rows: list[Prediction]) -> None:
    perfect = [Prediction(x.name, x.expected, x.expected, ParseStatus.VALID) for x in rows if x.expected is not None]
    r = evaluate(perfect, VALUES)
    if perfect:
        assert r.accuracy == 1.0 and r.yes_bias == 0.0
        assert all(s.recall in (None, 1.0) and s.precision in (None, 1.0) for s in r.scores)


def test_match_labels() -> None:
    m = match_labels(["a.jpg", "b.jpg"], {"a.jpg": "yes", "gone.jpg": "no"})
    assert m.expected == {"a.jpg": "yes", "b.jpg": None}
    assert m.missing == ("gone.jpg",) and m.unlabelled == ("b.jpg",)


# --- labels.csv ----------------------------------------------------------------------------


def test_labels_with_header_bom_whitespace_and_case() -> None:
    labels = decode_labels("\ufeffFile name , Expected\r\n  a.jpg ,  Yes \r\n\r\nb.jpg,no\n".encode(), VALUES)
    assert labels.expected == {"a.jpg": "yes", "b.jpg": "no"}
    assert labels.errors == ()


def test_labels_without_header() -> None:
    assert parse_labels("a.jpg,yes\nb.jpg,unknown\n", VALUES).expected == {"a.jpg": "yes", "b.jpg": "unknown"}


def test_a_cell_over_the_csv_field_limit_is_an_error_of_its_row_only() -> None:
    """csv refuses a field over 128 KB (it used to be a _csv.Error traceback); the other rows count."""
    text = "a.jpg,yes\n" + "b.jpg," + "x" * (200 * 1024) + "\nc.jpg,no\n"
    labels = parse_labels(text, VALUES)
    assert labels.expected == {"a.jpg": "yes", "c.jpg": "no"}
    assert [e.line for e in labels.errors] == [2] and "field limit" in labels.errors[0].message


def test_semicolon_and_quoted_names() -> None:
    labels = parse_labels('file;expected\n"x, y.jpg";no\n', VALUES)
    assert labels.expected == {"x, y.jpg": "no"}


def test_paths_are_cut_to_file_names_and_nfc() -> None:
    labels = parse_labels("photos/a.jpg,yes\nC:\\shots\\b.jpg,no\nCafe\u0301.jpg,yes\n", VALUES)
    assert labels.expected == {"a.jpg": "yes", "b.jpg": "no", "Caf\u00e9.jpg": "yes"}


def test_bad_rows_are_errors_with_their_line_and_the_rest_still_counts() -> None:
    text = "file,expected\na.jpg,maybe\nb.jpg,\n,yes\nc.jpg,yes,extra\nd.jpg,no\n"
    labels = parse_labels(text, VALUES)
    assert labels.expected == {"d.jpg": "no"}
    lines = {e.line: e.message for e in labels.errors}
    assert set(lines) == {2, 3, 4, 5}
    assert "'maybe' is not an answer of this profile (yes, no, unknown)" in lines[2]
    assert "no expected value" in lines[3]
    assert "no file name" in lines[4]
    assert "expected two" in lines[5]
    assert str(labels.errors[0]).startswith("line 2: ")


def test_duplicates() -> None:
    labels = parse_labels("a.jpg,yes\na.jpg,yes\nb.jpg,yes\nb.jpg,no\nb.jpg,yes\n", VALUES)
    assert labels.expected == {"a.jpg": "yes"}  # b's labels disagree: unlabelled
    assert len(labels.notes) == 1 and "line 2" in labels.notes[0]
    assert [e.line for e in labels.errors] == [4, 5]
    assert "line 3" in labels.errors[0].message


def test_a_first_row_that_is_data_is_not_taken_for_a_header() -> None:
    assert parse_labels("name.jpg,yes\n", VALUES).expected == {"name.jpg": "yes"}
    # A cell "name" with a real value is data too.
    assert parse_labels("name,no\n", VALUES).expected == {"name": "no"}


def test_files_that_are_not_labels(tmp_path: Path) -> None:
    with pytest.raises(LabelsFileError, match="no such file"):
        read_labels(tmp_path / "missing.csv", VALUES)
    with pytest.raises(LabelsFileError, match="a folder"):
        read_labels(tmp_path, VALUES)
    with pytest.raises(LabelsFileError, match="not UTF-8"):
        decode_labels("é.jpg,yes\n".encode("latin-1"), VALUES)
    assert decode_labels("file\texpected\né.jpg\tyes\n".encode("utf-16"), VALUES).expected == {"é.jpg": "yes"}
    with pytest.raises(LabelsFileError, match="not a text file"):
        decode_labels(b"\x89PNG\r\n\x1a\n\x00\x00", VALUES)
    good = tmp_path / "labels.csv"
    good.write_text("a.jpg,yes\n", encoding="utf-8")
    assert read_labels(good, VALUES).expected == {"a.jpg": "yes"}


@given(st.text(max_size=200))
def test_any_text_parses_without_raising(text: str) -> None:
    labels = parse_labels(text, VALUES)
    assert set(labels.expected.values()) <= set(VALUES)


# --- the Testers' screen: controller (no Flet) and view (no page) ---------------------------


class FakePractice:
    """Answers every image at once with `answers[name]`, as PracticeController.start_evaluation reports them."""

    def __init__(self, answers: dict[str, str], ready: bool = True) -> None:
        from app.ui.practice.controller import PracticeState

        self.answers = answers
        self.listeners: list = []
        values = ("yes", "no", "unknown") if ready else ()
        self.state = PracticeState(worker_status="ready" if ready else "starting", answer_values=values)
        self.started: list[str] = []

    def subscribe(self, listener) -> None:
        self.listeners.append(listener)
        listener(self.state)

    def unsubscribe(self, listener) -> None:
        self.listeners.remove(listener)

    def publish(self, **changes: object) -> None:
        from dataclasses import replace

        self.state = replace(self.state, **changes)
        for listener in list(self.listeners):
            listener(self.state)

    def stop_session(self) -> None:
        self.publish(running=False)

    def start_evaluation(self, images, label: str) -> float | None:
        from app.core.generation import Timings
        from app.core.session import PracticeEvent, SessionState, apply

        self.started = [name for name, _ in images]
        self.publish(running=True, session_id="s1", session=SessionState())
        session = SessionState()
        for i, (name, _) in enumerate(images):
            observation = self.answers[name]
            timings = Timings(0, 0, 0, 0, 0, 0, 250.0, 0, 0)
            event = PracticeEvent(
                event_id=f"e{i}",
                t=i * 3.0,
                wall_time=0.0,
                keyframe_id=f"kf-{i + 1:05d}",
                signal="s",
                observation=observation,
                parse_status="valid",
                parse_reason="ok",
                raw="{}",
                timings=timings,
                model_id="m",
                model_revision="r",
                backend="cpu",
                source=name,
                still=True,
            )
            session = apply(session, event)
        return 3.0 if self._finish(session) else None

    def _finish(self, session) -> bool:
        # Answers arrive on the worker's thread after the method returned (here: at once, then the end).
        import threading

        threading.Timer(0.05, lambda: (self.publish(session=session), self.publish(running=False))).start()
        return True


def _wait(controller, phases=("done", "stopped"), timeout: float = 10.0) -> None:
    from tests.conditions import wait_for

    wait_for(lambda: controller.state.phase, lambda phase: phase in phases, timeout, "the end of the run")


def _scene_files() -> list[tuple[str, bytes, str]]:
    from tests.integration.conftest import held_out_scenes

    return [(f"{i:02d}-{kind}.jpg", data, expected) for i, (kind, data, expected) in enumerate(held_out_scenes(1))]


def test_the_controller_matches_answers_to_images_and_reports_like_the_cli() -> None:
    from app.ui.testers.controller import TestersController

    files = _scene_files()
    answers = {name: expected for name, _, expected in files}
    answers[files[0][0]] = "unknown"  # one wrong answer
    practice = FakePractice(answers, ready=False)
    seen: list = []
    controller = TestersController(practice, seen.append)
    controller.attach()
    chosen = [(name, data) for name, data, _ in files] + [("broken.jpg", b"not a picture"), ("notes.txt", b"hello")]
    controller.choose_images(list(reversed(chosen)))
    labels = "file,expected\n" + "".join(f"{name},{e}\n" for name, _, e in files) + "gone.jpg,no\n"
    controller.choose_labels("labels.csv", labels.encode())
    assert controller.state.labels_name == "labels.csv" and controller.state.labels_count == 0  # no values yet
    assert controller.state.skipped == ("notes.txt",) and controller.state.images == len(files) + 1
    practice.publish(worker_status="ready", answer_values=VALUES)  # the model is loaded: labels are checked
    assert controller.state.labels_count == len(files) + 1 and controller.state.missing == ("gone.jpg",)
    controller.run()
    _wait(controller)
    state = controller.state
    assert state.phase == "done" and state.done == len(state.rows) == len(files) + 1
    assert practice.started == sorted(name for name, _, _ in files)  # the broken file got no keyframe
    rows = {r.name: r for r in state.rows}
    assert rows["broken.jpg"].parse_status == ParseStatus.ERROR and rows["broken.jpg"].thumb is None
    assert all(rows[name].observed == answers[name] and rows[name].thumb for name, _, _ in files)
    expected_report = evaluate(
        [Prediction(name, e, answers[name], ParseStatus.VALID, 0.25, "ok") for name, _, e in files]
        + [Prediction("broken.jpg", None, None, ParseStatus.ERROR)],
        VALUES,
    )
    assert state.report is not None
    assert state.report.matrix == expected_report.matrix and state.report.scores == expected_report.scores
    assert state.report.yes_bias == expected_report.yes_bias
    name, data = controller.export() or ("", b"")
    assert name.endswith(".csv") and data.decode().count("\n") == len(state.rows) + 1
    assert seen and seen[-1] is state


def test_answers_find_their_image_by_name_and_a_second_image_of_one_name_is_left_out_and_said() -> None:
    """An answer names the image it came from: found whatever its time and order (here all at t 0,
    the last image first); a name twice in one choice could not be told apart, by labels or answers."""
    from app.core.session import SessionState, apply
    from app.ui.testers.controller import TestersController

    class Reordered(FakePractice):
        def publish(self, **changes: object) -> None:
            session = changes.get("session")
            if isinstance(session, SessionState) and session.timeline:
                events = [replace(e.event, t=0.0) for e in reversed(session.timeline)]
                rebuilt = SessionState()
                for event in events:
                    rebuilt = apply(rebuilt, event)
                changes["session"] = rebuilt
            super().publish(**changes)

    files = _scene_files()[:4]
    answers = {name: ("no" if i % 2 else "yes") for i, (name, _, _) in enumerate(files)}
    practice = Reordered(answers)
    controller = TestersController(practice)
    controller.attach()
    chosen = [(name, data) for name, data, _ in files]
    controller.choose_images([*chosen, (f"elsewhere/{files[1][0]}", files[2][1])])
    state = controller.state
    assert state.images == len(files) and state.notice is not None and state.notice.key == "notice_same_name"
    assert dict(state.notice.values)["names"] == files[1][0]
    controller.run()
    _wait(controller)
    assert {r.name: r.observed for r in controller.state.rows} == answers


def test_another_session_stops_the_run() -> None:
    from app.ui.testers.controller import TestersController

    files = _scene_files()
    practice = FakePractice({name: e for name, _, e in files})
    practice._finish = lambda session: True  # the worker never answers  # type: ignore[method-assign]
    controller = TestersController(practice)
    controller.attach()
    controller.choose_images([(name, data) for name, data, _ in files])
    controller.run()
    _wait(controller, ("running",))
    practice.publish(session_id="someone-else")  # practice started in another tab
    _wait(controller)
    assert controller.state.phase == "stopped"
    assert {r.detail for r in controller.state.rows} == {"stopped"}


def test_the_view_renders_the_report_in_both_languages() -> None:
    import flet as ft

    from app.ui.testers.controller import TestersController
    from app.ui.testers.view import TestersView
    from app.ui.words.testers import TABLES

    files = _scene_files()
    practice = FakePractice({name: e for name, _, e in files})
    views: list[TestersView] = []
    controller = TestersController(practice, lambda state: [v.render(state) for v in views])
    views += [TestersView(controller, strings=table) for table in TABLES.values()]
    controller.attach()
    controller.choose_images([(name, data) for name, data, _ in files])
    controller.choose_labels("labels.csv", "".join(f"{n},{e}\n" for n, _, e in files).encode())
    controller.run()
    _wait(controller)
    for view in views:
        view.render(controller.state)
        assert view.summary_box.visible and view.labelled_box.visible
        cells = {}
        for row in view.matrix.controls[1:-1]:
            assert isinstance(row, ft.Row)
            for cell in row.controls:
                if isinstance(cell, ft.Semantics):
                    cells[cell.identifier] = cell.content.content.value
        assert cells["testers-cell-yes-yes"] == "1" and cells["testers-cell-no-no"] == str(len(files) - 1)
        assert len(view.table.controls) == len(files) + 1  # header + one row per image


def test_a_new_view_takes_over_the_run_at_once() -> None:
    """The page rebuilt in another language hands its testers' run to the new view: it sees the
    state at once, then every change; the old view hears nothing more."""
    from app.ui.testers.controller import TestersController

    files = _scene_files()
    practice = FakePractice({name: e for name, _, e in files})
    old: list = []
    controller = TestersController(practice, old.append)
    controller.attach()
    controller.choose_images([(name, data) for name, data, _ in files])
    before = len(old)
    new: list = []
    controller.listen(new.append)
    assert new == [controller.state] and new[0].images == len(files)  # at once, with the chosen images
    controller.run()
    _wait(controller)
    assert new[-1].phase == "done" and len(old) == before
