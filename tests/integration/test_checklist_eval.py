"""`eval DIR --profile CHECKLIST.json` on the demo model, as a tester runs it: every signal of an image asked
from one encode, labels.csv with a column per signal, a report per signal in the table, the JSON object, the
CSV and the plot. The demo model answers only hand_position_correct as trained (and the gate decides whether
it is asked at all), so these tests check structure, counting and parsing against what `analyze` answers on
the same images, never accuracy."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from app.storage.paths import PROFILES
from tests.integration.conftest import held_out_scenes, write_scenes
from tests.integration.test_cli_eval import run_app

CHECKLIST = PROFILES / "cpr_checklist.json"
SIGNALS = ("hands_visible", "hand_position_correct", "hands_stacked")
VALUES = ("yes", "no", "unknown")


class Scenes:
    """A folder of five scenes and a damaged image, its labels, and `analyze`'s answers on the scenes."""

    def __init__(self, where: Path) -> None:
        where.mkdir()
        files = write_scenes(where, held_out_scenes(count_per_kind=1, seed=61))
        (where / "broken.jpg").write_bytes(files[0][0].read_bytes()[:200])
        self.where = where
        self.names = [path.name for path, _ in files]
        # Columns in another order than the checklist's, the file column among them; no column for
        # hands_stacked; an empty cell (the second image) and a bad one (the third) for hands_visible.
        visible = {self.names[1]: "", self.names[2]: "perhaps"}
        rows = [f"{expected},{path.name},{visible.get(path.name, 'Yes')}" for path, expected in files]
        rows.append("no,broken.jpg,no")
        (where / "labels.csv").write_text("Hand_Position_Correct,File,hands_visible\n" + "\n".join(rows) + "\n")
        self.labels: dict[str, dict[str, str]] = {
            "hands_visible": {n: "yes" for n in self.names if n not in visible} | {"broken.jpg": "no"},
            "hand_position_correct": {path.name: expected for path, expected in files} | {"broken.jpg": "no"},
            "hands_stacked": {},
        }
        proc = run_app("analyze", *[str(where / n) for n in self.names], "--profile", str(CHECKLIST), "--jsonl")
        assert proc.returncode == 0, proc.stderr
        records = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        # name -> signal -> that signal's entry in analyze's record
        self.answers = {Path(r["file"]).name: {s["signal"]: s for s in r["signals"]} for r in records}
        assert list(self.answers) == self.names

    def not_asked(self, signal: str) -> int:
        return sum(a[signal]["parse_status"] == "not_asked" for a in self.answers.values())

    def matrix(self, signal: str) -> dict[str, dict[str, int]]:
        """The confusion matrix counted by hand: the labels against analyze's answers."""
        counted = {v: dict.fromkeys(VALUES, 0) for v in VALUES}
        for name, label in self.labels[signal].items():
            if name in self.answers:  # broken.jpg has no answer: in no cell
                counted[label][self.answers[name][signal]["observation"]] += 1
        return counted


@pytest.fixture(scope="module")
def scenes(tmp_path_factory: pytest.TempPathFactory) -> Scenes:
    return Scenes(tmp_path_factory.mktemp("checklist-eval") / "scenes")


def test_the_json_holds_a_report_per_signal_counted_as_analyze_answers(scenes: Scenes, tmp_path: Path) -> None:
    out_csv = tmp_path / "per-image.csv"
    proc = run_app("eval", str(scenes.where), "--profile", str(CHECKLIST), "--json", "--csv", str(out_csv))
    assert proc.returncode == 1, proc.stderr  # the damaged image and the bad cell; the rest is reported
    report = json.loads(proc.stdout)  # stdout is one JSON object and nothing else
    assert report["profile"] == "cpr_checklist" and report["gate"] == {"signal": "hands_visible", "open": "yes"}
    assert list(report["signals"]) == list(SIGNALS)
    shut = sum(a["hands_visible"]["observation"] != "yes" for a in scenes.answers.values())
    for signal in SIGNALS:
        mine = report["signals"][signal]
        assert mine["gate"] is (signal == "hands_visible")
        assert mine["confusion_matrix"] == scenes.matrix(signal), signal
        assert mine["not_asked"] == scenes.not_asked(signal) == (0 if signal == "hands_visible" else shut), signal
        counts = mine["counts"]
        assert (counts["images"], counts["answered"], counts["errors"]) == (6, 5, 1), signal
        assert counts["labelled"] == len(scenes.labels[signal]), signal
        unknown = sum(a[signal]["observation"] == "unknown" for a in scenes.answers.values())
        assert counts["unknown"] == unknown >= mine["not_asked"], signal  # not asked counts as unknown
        assert counts["valid"] + counts["rejected"] + mine["not_asked"] == counts["answered"], signal
        assert mine["unknown_rate"] == round(unknown / 5, 4), signal
    assert report["signals"]["hands_stacked"]["accuracy"] is None  # no column: unlabelled
    assert "has no column for hands_stacked: it is unlabelled on every image" in proc.stderr

    # Per image, each signal as analyze answered it; the damaged image is an error for every signal.
    assert [i["file"] for i in report["images"]] == [*scenes.names, "broken.jpg"]
    for image in report["images"][:-1]:
        for signal in SIGNALS:
            got, said = image["signals"][signal], scenes.answers[image["file"]][signal]
            assert got["observed"] == said["observation"] and got["parse_status"] == said["parse_status"]
            assert got["expected"] == scenes.labels[signal].get(image["file"])
            assert (got["seconds"] is None) == (said["parse_status"] == "not_asked")
            assert (got["model_score"] is None) == (said["model_score"] is None)  # constrained: scored when asked
            assert got["model_score"] is None or abs(got["model_score"] - said["model_score"]) <= 5e-5
    assert all(s["parse_status"] == "error" for s in report["images"][-1]["signals"].values())
    (bad_cell,) = report["label_errors"]
    assert bad_cell == f"line 4: {scenes.names[2]}: 'perhaps' is not an answer of hands_visible (yes, no, unknown)"
    assert report["missing_images"] == [] and report["unlabelled_images"] == []

    # The CSV: one row per image and signal, in the images' order, with the JSON's answers.
    rows = list(csv.DictReader(out_csv.open(encoding="utf-8", newline="")))
    assert list(rows[0]) == [
        "file", "signal", "expected", "observed", "correct", "parse_status", "detail", "seconds", "model_score"
    ]  # fmt: skip
    assert [(r["file"], r["signal"]) for r in rows] == [(f, s) for f in [*scenes.names, "broken.jpg"] for s in SIGNALS]
    by_image = {i["file"]: i["signals"] for i in report["images"]}
    for row in rows:
        answer = by_image[row["file"]][row["signal"]]
        assert row["observed"] == (answer["observed"] or "") and row["parse_status"] == answer["parse_status"]
        assert row["expected"] == (answer["expected"] or "")


def test_the_table_has_a_section_per_signal_and_the_plot_a_panel_each(scenes: Scenes, tmp_path: Path) -> None:
    from PIL import Image

    from app.evaluation.plot import render_report
    from app.evaluation.report import evaluate

    plot = tmp_path / "report.png"
    proc = run_app("eval", str(scenes.where), "--profile", str(CHECKLIST), "--plot", str(plot))
    assert proc.returncode == 1, proc.stderr
    head, *sections = proc.stdout.split("== ")
    assert head == f"model keyframe-demo-cpr · folder {scenes.where} · checklist cpr_checklist\n"
    assert [s.split("\n", 1)[0] for s in sections] == [
        "hands_visible (the gate: the others are asked when it says yes)",
        "hand_position_correct",
        "hands_stacked",
    ]
    for section in sections:
        for words in ("images 6 · answered 5 · errors 1", "unknown rate", "yes-bias"):
            assert words in section
    assert "Confusion matrix" in sections[1] and "accuracy" in sections[1]  # labelled
    assert "No labelled image was answered" in sections[2]  # no column
    for section, signal in zip(sections[1:], SIGNALS[1:], strict=True):
        n = scenes.not_asked(signal)
        assert f"not asked     {n} of 5 answered images: the gate hands_visible did not say yes" in section
    assert "not asked" not in sections[0]
    progress = [line for line in proc.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 6 and all(s in progress[0] for s in SIGNALS)  # every signal on each image's line
    # One panel per signal, each the size of a one-signal report's (the same three answers).
    panel = render_report(evaluate([], VALUES), "")
    with Image.open(plot) as image:
        assert image.format == "PNG" and image.size == (panel.width, 3 * panel.height)


def _labels(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "labels.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "file,hands_visible,hands_stackd\na.jpg,yes,no\n",
            "line 1: the column 'hands_stackd' names no signal of this checklist"
            " (hands_visible, hand_position_correct, hands_stacked)",
        ),
        (
            "a.jpg,yes\n",
            "line 1: not a header; a checklist's labels need a header row: file, then a column per signal"
            " (hands_visible, hand_position_correct, hands_stacked)",
        ),
    ],
)
def test_a_header_that_cannot_be_used_is_refused_before_the_model_loads(tmp_path: Path, text: str, said: str) -> None:
    no_model = str(tmp_path / "no-such-model")
    labels = _labels(tmp_path, text)
    proc = run_app("eval", str(tmp_path), "--profile", str(CHECKLIST), "--labels", str(labels), "--model", no_model)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr == f"error: {labels} {said}\n"  # one sentence naming the file, its line and the column
    # The same command with usable labels gets as far as the model, which is not there: so the header
    # was refused before the model was even looked for.
    _labels(tmp_path, "file,hands_visible\na.jpg,yes\n")
    reached = run_app("eval", str(tmp_path), "--profile", str(CHECKLIST), "--labels", str(labels), "--model", no_model)
    assert reached.returncode == 2 and "the model could not be loaded" in reached.stderr, reached.stderr
