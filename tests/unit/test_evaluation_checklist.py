"""Testers' mode for checklists: labels.csv with a column per signal (app.evaluation.labels), a report per
signal built by the one-signal `evaluate` (app.evaluation.report), and the plot of one panel per signal."""

from __future__ import annotations

import csv
import io
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.generation import ParseStatus
from app.evaluation.labels import LabelsFileError, decode_checklist_labels, parse_checklist_labels
from app.evaluation.plot import render_checklist, render_report
from app.evaluation.report import (
    CHECKLIST_CSV_COLUMNS,
    CSV_COLUMNS,
    UNKNOWN,
    Prediction,
    checklist_csv_text,
    csv_rows,
    evaluate,
    evaluate_checklist,
    format_checklist_table,
    format_table,
)

VALUES = ("yes", "no", "unknown")
SIGNALS = {"hands_visible": VALUES, "hand_position_correct": VALUES, "hands_stacked": ("yes", "no")}
HEADER = "file,hands_visible,hand_position_correct,hands_stacked\n"


# --- labels.csv with a column per signal -------------------------------------------------------


def test_a_column_per_signal_in_any_order_with_empty_cells_unlabelled() -> None:
    text = "hands_stacked;Hand_Position_Correct;File name;hands_visible\nNo;YES;a.jpg;yes\n;no;b.jpg;\nyes;;c.jpg;no\n"
    labels = parse_checklist_labels(text, SIGNALS)
    assert labels.errors == () and labels.notes == ()
    assert labels.expected == {
        "hands_visible": {"a.jpg": "yes", "c.jpg": "no"},
        "hand_position_correct": {"a.jpg": "yes", "b.jpg": "no"},
        "hands_stacked": {"a.jpg": "no", "c.jpg": "yes"},
    }
    assert list(labels.expected) == list(SIGNALS)  # the checklist's order, not the file's


def test_a_signal_without_a_column_is_unlabelled_with_a_note() -> None:
    labels = parse_checklist_labels("file,hand_position_correct\na.jpg,yes\n", SIGNALS)
    assert labels.expected == {"hands_visible": {}, "hand_position_correct": {"a.jpg": "yes"}, "hands_stacked": {}}
    assert labels.notes == (
        "has no column for hands_visible: it is unlabelled on every image",
        "has no column for hands_stacked: it is unlabelled on every image",
    )


def test_a_column_naming_no_signal_makes_the_file_unusable_and_is_named() -> None:
    with pytest.raises(LabelsFileError) as caught:
        parse_checklist_labels("file,hands_visible,hands_stackd\na.jpg,yes,no\n", SIGNALS, "labels.csv")
    message = str(caught.value)
    assert message.startswith("labels.csv line 1: ") and "'hands_stackd' names no signal" in message
    assert "hands_visible, hand_position_correct, hands_stacked" in message
    # A one-signal file given to a checklist: its value column is named, never read as some signal.
    with pytest.raises(LabelsFileError, match="'expected' names no signal"):
        parse_checklist_labels("file,expected\na.jpg,yes\n", SIGNALS)


def test_the_header_is_required_for_a_checklist() -> None:
    for text in ("a.jpg,yes,no,no\n", "hands_visible,hand_position_correct\nyes,no\n", "", "\n  \n"):
        with pytest.raises(LabelsFileError, match="need a header row: file, then a column per signal"):
            parse_checklist_labels(text, SIGNALS)


def test_a_header_column_twice_or_without_a_name_is_refused_but_a_trailing_separator_is_not() -> None:
    with pytest.raises(LabelsFileError, match="hands_visible is a column twice"):
        parse_checklist_labels("file,hands_visible,HANDS_VISIBLE\n", SIGNALS)
    with pytest.raises(LabelsFileError, match="column 2 has no name"):
        parse_checklist_labels("file,,hands_visible\n", SIGNALS)
    labels = parse_checklist_labels("file,hands_visible,\na.jpg,yes,\n", SIGNALS)
    assert labels.expected["hands_visible"] == {"a.jpg": "yes"} and labels.errors == ()


def test_a_bad_cell_is_an_error_of_that_cell_only() -> None:
    text = HEADER + "a.jpg,maybe,yes,unknown\nb.jpg,no,no,no\n"
    labels = parse_checklist_labels(text, SIGNALS)
    assert labels.expected == {
        "hands_visible": {"b.jpg": "no"},
        "hand_position_correct": {"a.jpg": "yes", "b.jpg": "no"},
        "hands_stacked": {"b.jpg": "no"},
    }
    assert [str(e) for e in labels.errors] == [
        "line 2: a.jpg: 'maybe' is not an answer of hands_visible (yes, no, unknown)",
        "line 2: a.jpg: 'unknown' is not an answer of hands_stacked (yes, no)",  # each signal its own answers
    ]


def test_rows_without_a_name_or_with_cells_beyond_the_header_are_errors_and_the_rest_counts() -> None:
    text = HEADER + ",yes,yes,yes\na.jpg,yes,no,no,extra\nb.jpg,no\nc.jpg\n"
    labels = parse_checklist_labels(text, SIGNALS)
    assert {e.line: e.message for e in labels.errors} == {2: "no file name", 3: "5 cells; the header has 4 columns"}
    # A short row: the cells it lacks are empty, so unlabelled; a name alone labels nothing.
    assert labels.expected == {"hands_visible": {"b.jpg": "no"}, "hand_position_correct": {}, "hands_stacked": {}}


def test_duplicates_are_judged_per_signal() -> None:
    text = HEADER + "a.jpg,yes,yes,no\na.jpg,yes,no,\nb.jpg,no,no,no\nb.jpg,no,no,no\n"
    labels = parse_checklist_labels(text, SIGNALS)
    # a.jpg's rows disagree on hand_position_correct only: unlabelled there, labelled elsewhere.
    assert labels.expected["hand_position_correct"] == {"b.jpg": "no"}
    assert labels.expected["hands_visible"] == {"a.jpg": "yes", "b.jpg": "no"}
    assert labels.expected["hands_stacked"] == {"a.jpg": "no", "b.jpg": "no"}
    assert [str(e) for e in labels.errors] == [
        "line 3: a.jpg (hand_position_correct): no here but yes on line 2; it counts unlabelled"
    ]
    assert "line 3: a.jpg (hands_visible) is listed again (line 2) with the same value" in labels.notes
    assert sum("b.jpg" in n for n in labels.notes) == 3  # one per signal repeated with the same value


def test_names_are_cut_to_file_names_and_nfc_and_every_encoding_is_read() -> None:
    text = HEADER + "photos/a.jpg,yes,,\nC:\\shots\\b.jpg,no,,\nCafe\u0301.jpg,yes,,\n"
    assert parse_checklist_labels(text, SIGNALS).expected["hands_visible"] == {
        "a.jpg": "yes",
        "b.jpg": "no",
        "Caf\u00e9.jpg": "yes",
    }
    tabbed = "file\thands_visible\né.jpg\tyes\n"
    for data in (tabbed.encode("utf-16"), ("\ufeff" + tabbed).encode("utf-8"), tabbed.encode("utf-8")):
        assert decode_checklist_labels(data, SIGNALS).expected["hands_visible"] == {"é.jpg": "yes"}
    with pytest.raises(LabelsFileError, match="labels.csv: not UTF-8"):
        decode_checklist_labels((HEADER + "é.jpg,yes,,\n").encode("latin-1"), SIGNALS, "labels.csv")
    with pytest.raises(LabelsFileError, match="not a text file"):
        decode_checklist_labels(b"\x89PNG\r\n\x1a\n\x00\x00", SIGNALS)


def test_a_quoted_cell_over_several_lines_keeps_the_line_numbers_right() -> None:
    labels = parse_checklist_labels(HEADER + '"a\nb.jpg",maybe,,\n', SIGNALS)
    assert [e.line for e in labels.errors] == [3]


@given(st.text(max_size=200))
def test_any_text_after_a_header_parses_without_raising(text: str) -> None:
    labels = parse_checklist_labels(HEADER + text, SIGNALS)
    for signal, expected in labels.expected.items():
        assert set(expected.values()) <= set(SIGNALS[signal])


# --- a report per signal ------------------------------------------------------------------------


def p(name: str, expected: str | None, observed: str | None, status: str = ParseStatus.VALID) -> Prediction:
    if status == ParseStatus.NOT_ASKED:  # what eval records for it: unknown, and no model time
        return Prediction(name, expected, UNKNOWN, ParseStatus.NOT_ASKED, None, "not_visible")
    if observed is None:
        return Prediction(name, expected, None, ParseStatus.ERROR, None, "corrupt: broken")
    return Prediction(name, expected, observed, status, 0.25, "ok" if status == ParseStatus.VALID else "invalid_json")


def _example() -> dict[str, list[Prediction]]:
    """Four images; the gate said no on c.jpg and d.jpg failed to read."""
    return {
        "hands_visible": [p("a", "yes", "yes"), p("b", "yes", "yes"), p("c", "yes", "no"), p("d", "no", None)],
        "hand_position_correct": [
            p("a", "yes", "yes"),
            p("b", None, "unknown", ParseStatus.REJECTED),
            p("c", "no", None, ParseStatus.NOT_ASKED),
            p("d", "yes", None),
        ],
        "hands_stacked": [
            p("a", None, "no"),
            p("b", "yes", "yes"),
            p("c", "no", None, ParseStatus.NOT_ASKED),
            p("d", None, None),
        ],
    }


def test_each_signal_gets_the_one_signal_report_of_its_own_predictions() -> None:
    rows = _example()
    report = evaluate_checklist(rows, SIGNALS, gate="hands_visible")
    assert [s.signal for s in report.signals] == list(SIGNALS)
    for s in report.signals:
        assert s.report == evaluate(rows[s.signal], SIGNALS[s.signal])  # the same function, no copy
    assert [s.gate for s in report.signals] == [True, False, False]


def test_a_signal_the_gate_left_unasked_is_unknown_and_counted_as_not_asked() -> None:
    report = evaluate_checklist(_example(), SIGNALS, gate="hands_visible")
    position = report.signal("hand_position_correct")
    assert position.not_asked == 1 and report.signal("hands_visible").not_asked == 0
    c = position.report.counts
    assert (c.answered, c.errors, c.valid, c.rejected, c.unknown) == (3, 1, 1, 1, 2)  # not asked: neither
    assert position.report.cell("no", "unknown") == 1  # labelled no, not asked: an unknown answer
    assert position.report.unknown_rate == pytest.approx(2 / 3)
    stacked = report.signal("hands_stacked").report
    assert stacked.values == ("yes", "no") and stacked.columns == ("yes", "no", "unknown")
    assert stacked.cell("no", "unknown") == 1


def test_the_json_holds_a_report_per_signal() -> None:
    report = evaluate_checklist(_example(), SIGNALS, gate="hands_visible", gate_open="yes")
    d = json.loads(json.dumps(report.to_dict()))
    assert d["gate"] == {"signal": "hands_visible", "open": "yes"}
    assert list(d["signals"]) == list(SIGNALS)
    position = d["signals"]["hand_position_correct"]
    assert position["not_asked"] == 1 and position["gate"] is False
    assert {k: v for k, v in position.items() if k not in ("gate", "not_asked")} == json.loads(
        json.dumps(report.signal("hand_position_correct").report.to_dict())
    )
    assert evaluate_checklist(_example(), SIGNALS).to_dict()["gate"] is None


def test_the_signals_rows_must_name_the_same_images_in_the_same_order() -> None:
    rows = _example()
    rows["hands_stacked"] = list(reversed(rows["hands_stacked"]))
    with pytest.raises(ValueError, match="same order"):
        evaluate_checklist(rows, SIGNALS)


def test_the_table_is_each_signals_table_under_its_name_with_what_the_gate_left_unasked() -> None:
    rows = _example()
    report = evaluate_checklist(rows, SIGNALS, gate="hands_visible")
    table = format_checklist_table(report)
    sections = table.split("\n\n== ")
    assert len(sections) == 3
    assert sections[0].startswith("== hands_visible (the gate: the others are asked when it says yes)\n")
    for s, section in zip(report.signals, sections, strict=True):
        assert format_table(s.report).rstrip("\n") in section
    assert "not asked" not in sections[0]
    assert "not asked     1 of 3 answered images: the gate hands_visible did not say yes" in sections[1]
    assert "not asked     1 of 3 answered images" in sections[2]
    assert "not asked" not in format_checklist_table(evaluate_checklist(rows, SIGNALS))  # no gate, none unasked


def test_the_csv_has_a_row_per_image_and_signal_with_the_one_signal_columns() -> None:
    rows = _example()
    report = evaluate_checklist(rows, SIGNALS, gate="hands_visible")
    got = list(csv.DictReader(io.StringIO(checklist_csv_text(report), newline="")))
    assert tuple(got[0]) == CHECKLIST_CSV_COLUMNS == ("file", "signal", *CSV_COLUMNS[1:])
    assert [(g["file"], g["signal"]) for g in got] == [(f, s) for f in "abcd" for s in SIGNALS]
    for signal, answers in rows.items():  # each signal's rows are the one-signal export's rows
        mine = [{k: v for k, v in g.items() if k != "signal"} for g in got if g["signal"] == signal]
        assert mine == csv_rows(evaluate(answers, SIGNALS[signal]))
    unasked = next(g for g in got if g["file"] == "c" and g["signal"] == "hand_position_correct")
    assert (
        unasked["observed"] == UNKNOWN and unasked["parse_status"] == ParseStatus.NOT_ASKED and unasked["seconds"] == ""
    )


def test_the_plot_is_each_signals_panel_one_under_the_other() -> None:
    report = evaluate_checklist(_example(), SIGNALS, gate="hands_visible")
    image = render_checklist(report, "demo")
    titles = ["demo · hands_visible (the gate)", "demo · hand_position_correct", "demo · hands_stacked"]
    top = 0
    for s, title in zip(report.signals, titles, strict=True):
        panel = render_report(s.report, title)
        assert image.crop((0, top, panel.width, top + panel.height)).tobytes() == panel.tobytes(), s.signal
        top += panel.height
    assert image.height == top
