"""Exports open in a spreadsheet as data: text a person chose never runs as a formula (OWASP's CSV
injection), numbers stay numbers, and the JSONL keeps every character as it was."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.csv_text import inert, table_csv
from app.core.session import ExaminerCorrected
from app.session.store import SessionLog, export_csv, export_jsonl, load_session
from tests.unit.test_session import practice

FORMULAS = ['=HYPERLINK("http://x","y")', "+1+1.avi", "-1+2", "@SUM(1).avi", "\t=1", "\r=1", "=1"]
NOT_FORMULAS = ["", "a=b", "hands 1+1", "'=1", "a.jpg", "カメラ"]
NUMBERS = ["-0.25", "-3", "+1", "1e-3", "-1.5E+2", ".5", "-.5", "3."]


@pytest.mark.parametrize("text", FORMULAS)
def test_text_that_starts_a_formula_gets_a_leading_quote(text: str) -> None:
    assert inert(text) == "'" + text


@pytest.mark.parametrize("text", NOT_FORMULAS + NUMBERS)
def test_other_text_and_plain_numbers_are_left_as_they_are(text: str) -> None:
    assert inert(text) == text


def test_cells_that_are_not_text_are_left_alone() -> None:
    assert inert(-3) == -3 and inert(None) is None


def test_a_table_reads_back_with_every_formula_inert_and_every_number_intact() -> None:
    rows = [{"name": f, "score": n} for f, n in zip(FORMULAS, NUMBERS, strict=False)]
    got = list(csv.DictReader(io.StringIO(table_csv(("name", "score"), rows), newline="")))
    assert [g["name"] for g in got] == ["'" + f for f in FORMULAS]
    assert [g["score"] for g in got] == NUMBERS[: len(FORMULAS)]


def test_a_sessions_export_keeps_names_and_notes_inert_and_its_jsonl_exact(tmp_path: Path) -> None:
    # The file name, the examiner's name and note are what a person typed or named.
    event = replace(practice(1, "no"), source='=HYPERLINK("http://evil","open").mp4', model_score=-0.125)
    review = ExaminerCorrected(
        event_id="c1", target_id="e1", wall_time=1002.0, observation="yes", note="+1+1", examiner="@SUM(1)"
    )
    log = SessionLog(tmp_path / "s.jsonl")
    for e in (event, review):
        log.append(e)
    log.close()
    loaded = load_session(tmp_path / "s.jsonl")
    (row,) = csv.DictReader(io.StringIO(export_csv(loaded), newline=""))
    assert row["source"] == "'" + event.source
    assert (row["review_note"], row["reviewed_by"]) == ("'+1+1", "'@SUM(1)")
    assert row["model_score"] == "-0.125"  # a number, not text
    lines = [json.loads(line) for line in export_jsonl(loaded).splitlines()]
    assert lines[0]["source"] == event.source and lines[1]["note"] == "+1+1" and lines[1]["examiner"] == "@SUM(1)"
