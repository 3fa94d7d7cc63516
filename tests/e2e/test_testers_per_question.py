"""The Testers' screen with the shipped checklist running, in headless Chromium: the example images and a
checklist's labels.csv (a column per signal) go through the app's worker, and each signal's confusion
matrix, precision, recall, unknown rate, yes-bias, not-asked count and score-cut rows on screen are those
`python -m app eval --json --profile CHECKLIST` gives for the same folder and labels; the export has a row
per image and signal, as `eval --csv`; a cut kept on one signal is saved into that signal of a copy of
the checklist, and only there. Screenshots at 1280 and 390 wide."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.evaluation.report import shown
from app.storage.paths import EXAMPLES, PROFILES
from tests.conditions import HANG_S
from tests.e2e.conftest import ROOT, AppServer, close_page, go_to, node, open_app_page, shot, text_of, wait_text
from tests.e2e.test_practice import choose, start_with_files
from tests.e2e.test_testers import PHONE, run_folder

pytestmark = pytest.mark.browser
CHECKLIST = PROFILES / "cpr_checklist.json"
SIGNALS = ("hands_visible", "hand_position_correct", "hands_stacked")
# A column per signal, in another order than the checklist's; no label for hands_stacked on side-1.jpg.
LABELS = """file,hands_stacked,hand_position_correct,hands_visible
correct-1.jpg,yes,yes,yes
correct-2.jpg,yes,yes,yes
correct-3.jpg,yes,yes,yes
off_torso-1.jpg,yes,no,yes
no_hands-1.jpg,,,no
side-1.jpg,,no,yes
too_high-1.jpg,yes,no,yes
"""


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path], Path, dict]:
    """The example images with the checklist's labels, and `eval`'s JSON report on them."""
    folder = tmp_path_factory.mktemp("testers-checklist") / "examples"
    folder.mkdir()
    images = []
    for source in sorted(EXAMPLES.glob("*.jpg")):
        images.append(folder / source.name)
        images[-1].write_bytes(source.read_bytes())
    labels = folder / "labels.csv"
    labels.write_text(LABELS, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "app", "eval", str(folder), "--labels", str(labels), "--profile", str(CHECKLIST)]
        + ["--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert list(report["signals"]) == list(SIGNALS)
    return folder, images, labels, report


def _rate(x: float | None) -> str:
    return "—" if x is None else shown(x)


def check_signal(page, signal: str, expected: dict) -> None:
    """One signal's figures on screen against `eval`'s report for it."""
    tag = f"testers-{signal}"
    for value, row in expected["confusion_matrix"].items():
        for column, count in row.items():
            assert text_of(page, f"{tag}-cell-{value}-{column}") == str(count), (signal, value, column)
    for value, score in expected["per_value"].items():
        for kind in ("precision", "recall"):
            assert text_of(page, f"{tag}-{kind}-{value}") == _rate(score[kind]), (signal, kind, value)
    counts = expected["counts"]
    assert f"{_rate(expected['unknown_rate'])} ({counts['unknown']} of {counts['answered']})" in text_of(
        page, f"{tag}-unknown-rate"
    ), signal
    assert f"{_rate(expected['accuracy'])} ({counts['correct']} of {counts['labelled_answered']})" in text_of(
        page, f"{tag}-accuracy"
    ), signal
    assert f"Yes-bias {expected['yes_bias']:+.3f}" in text_of(page, f"{tag}-yes-bias"), signal
    if not expected["gate"]:
        said = text_of(page, f"{tag}-gate")
        assert f"Not asked {expected['not_asked']} of {counts['answered']}" in said, (signal, said)
    # The score cut's rows: the curve `eval` computes, row for row (the highest cut keeping each share).
    cut_rows = page.locator(f"[flt-semantics-identifier^='{tag}-cut-']")
    curve = "\n".join(cut_rows.nth(i).inner_text() for i in range(cut_rows.count()))
    points, n = expected["score_cut"]["points"], counts["labelled_answered"]
    for share in (1.0, 0.95, 0.9, 0.8, 0.7, 0.5):
        fits = [p for p in points if p["coverage"] >= share - 1e-12]
        if fits:  # no cut keeps this share when the gate or the parser made some answers unknown
            assert f"{fits[-1]['kept']}/{n}" in curve and _rate(fits[-1]["accuracy"]) in curve, (signal, share, curve)


def test_each_signal_shows_the_figures_of_eval_and_a_kept_cut_goes_into_that_signal(
    browser,
    tmp_path: Path,
    labelled,
) -> None:
    folder, images, labels, expected = labelled
    data = tmp_path / "data"
    with AppServer(data, "--profile", str(CHECKLIST)) as server:
        page = open_app_page(browser, server.url)
        try:
            wait_text(page, "model-status", "Model ready")
            run_folder(page, images, labels, len(images))
            for signal in SIGNALS:
                check_signal(page, signal, expected["signals"][signal])
            # A row per image and signal; the gate's "no" on no_hands-1.jpg leaves the others unasked.
            rows = len(images) * len(SIGNALS)
            assert node(page, f"testers-row-{rows - 1}").count() == 1 and node(page, f"testers-row-{rows}").count() == 0
            bare = [p.name for p in images].index("no_hands-1.jpg") * len(SIGNALS) + SIGNALS.index("hands_stacked")
            said = text_of(page, f"testers-row-{bare}")
            assert "not asked" in said and "Hands stacked" in said, said
            # Every signal's report at once, its buttons in reach without scrolling.
            page.set_viewport_size({"width": 1280, "height": 2400})
            page.wait_for_timeout(1500)  # the server lays the page out again for the new height
            shot(page, "testers-checklist")
            # The export: `eval --csv`'s rows, one per image and signal.
            with page.expect_download() as download:
                node(page, "testers-export").click()
            saved_csv = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
            assert [(r["file"], r["signal"]) for r in saved_csv] == [(p.name, s) for p in images for s in SIGNALS]
            wait_text(page, "testers-notice-text", "Saved keyframe-testers.csv")
            page.wait_for_timeout(1000)  # the notice moved the page down: painted, as its semantics say, before a tap

            # Keep the highest cut the gate's curve offers: saved into hands_visible of a copy, nowhere else.
            keep = page.locator("[flt-semantics-identifier^='testers-hands_visible-keep-cut-']")
            keep.last.click()  # the rows go up by threshold: the last is the highest shown
            said = wait_text(page, "testers-notice-text", "Saved: answers to")
            assert "Hands in the picture" in said and "cpr_checklist_cut.json" in said, said
            copy = data / "profiles" / "cpr_checklist_cut.json"
            saved = {s["signal"]: s for s in json.loads(copy.read_text(encoding="utf-8"))["signals"]}
            points = expected["signals"]["hands_visible"]["score_cut"]["points"]
            top = max(p["threshold"] for p in points if p["coverage"] >= 0.5)
            assert saved["hands_visible"]["min_score"] == pytest.approx(top, abs=1e-6)
            assert "min_score" not in saved["hand_position_correct"] and "min_score" not in saved["hands_stacked"]
            assert "min_score" not in json.loads(CHECKLIST.read_text(encoding="utf-8"))["signals"][0]
            settings = json.loads((data / "settings.json").read_text(encoding="utf-8"))
            assert settings["profile"] == str(copy)
            # The worker reloads with the copy: the same questions, so the report stays, marking the cut.
            wait_text(page, "testers-hands_visible-curve", "(the profile's cut)", timeout=120)
            assert "(the profile's cut)" not in text_of(page, "testers-hands_stacked-curve")
            # The next practice run asks with the cut: the image the gate scored lowest is withheld there
            # (unknown, low score), so the gate stays shut and the other questions are not checked.
            gate_scores = {i["file"]: i["signals"]["hands_visible"]["model_score"] for i in expected["images"]}
            lowest = min((f for f, score in gate_scores.items() if score is not None), key=gate_scores.__getitem__)
            assert gate_scores[lowest] < saved["hands_visible"]["min_score"], gate_scores
            go_to(page, "Practice", "start-stop")
            choose(page, "Image")
            start_with_files(page, [folder / lowest])
            wait_text(page, "check-hands_visible", "UNKNOWN", timeout=90)
            said = wait_text(
                page, "check-note-hands_visible", "withheld: the model's score was below the profile's cut"
            )
            assert "No usable answer" in said, said
            wait_text(page, "check-hands_stacked", "NOT CHECKED")
            shot(page, "practice-checklist-kept-cut")
            page.request_log.assert_local()
        finally:
            close_page(page)


def test_phone_layout(browser, tmp_path: Path, labelled) -> None:
    folder, images, labels, _ = labelled
    with AppServer(tmp_path / "data", "--profile", str(CHECKLIST)) as server:
        page = open_app_page(browser, server.url, viewport=PHONE)
        try:
            wait_text(page, "model-status", "Model ready")
            run_folder(page, images, labels, len(images))
            for identifier in ("testers-run", "testers-signal-hands_visible"):
                box = node(page, identifier).bounding_box()
                assert box is not None and box["x"] + box["width"] <= PHONE["width"], identifier
            page.mouse.move(PHONE["width"] / 2, PHONE["height"] / 2)
            page.mouse.wheel(0, 520)  # down to the first signal's report
            time.sleep(1)
            shot(page, "testers-checklist-signal")
            page.mouse.wheel(0, 2600)  # down to the last signal's and the rows
            time.sleep(1)
            shot(page, "testers-checklist-rows")
            page.mouse.wheel(600, 0)  # the rows' table goes on sideways, as a one-signal profile's does
            time.sleep(1)
            shot(page, "testers-checklist-rows-sideways")
        finally:
            close_page(page)
