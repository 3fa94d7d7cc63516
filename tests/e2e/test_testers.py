"""The Testers' screen in headless Chromium against the served app: a folder of labelled demo
scenes (and one broken file) with its labels.csv, run through the app's worker, shows the same
confusion matrix, precision, recall and unknown rate as `python -m app eval` on the same folder,
cell by cell. Screenshots at 1280x800 and 390x844 are saved for the README."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.evaluation.report import shown
from tests.e2e.conftest import ROOT, AppServer, close_page, go_to, node, open_app_page, shot, text_of, wait_text
from tests.integration.conftest import held_out_scenes, write_scenes

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}


def upload(page, identifier: str, paths: list[Path]) -> None:
    with page.expect_file_chooser() as chooser:
        node(page, identifier).click()
    chooser.value.set_files([str(p) for p in paths])


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path], Path]:
    folder = tmp_path_factory.mktemp("testers") / "scenes"
    folder.mkdir()
    files = write_scenes(folder, held_out_scenes(count_per_kind=2, seed=31337))
    broken = folder / "zz-broken.jpg"
    broken.write_bytes(files[0][0].read_bytes()[:150])
    labels = folder / "labels.csv"
    rows = "".join(f"{path.name},{expected}\n" for path, expected in files)
    labels.write_text("file,expected\n" + rows + "zz-broken.jpg,no\n", encoding="utf-8")
    return folder, [p for p, _ in files] + [broken], labels


def cli_report(folder: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "app", "eval", str(folder), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr  # the broken file is an error row
    return json.loads(proc.stdout)


def run_folder(page, images: list[Path], labels: Path, total: int) -> None:
    go_to(page, "Testers", "testers-pick-images")
    upload(page, "testers-pick-images", images)
    wait_text(page, "testers-chosen", f"{total} images chosen")
    upload(page, "testers-pick-labels", [labels])
    wait_text(page, "testers-chosen", "Labels: labels.csv")
    node(page, "testers-run").click()
    try:
        wait_text(page, "testers-phase", f"Done: {total} of {total} images", timeout=120)
    except AssertionError:
        shot(page, "testers-failed")
        raise
    time.sleep(0.6)  # the buttons' enable animation, for the screenshots


def test_the_screen_shows_the_same_matrix_as_the_cli(browser, app_server: AppServer, labelled) -> None:
    folder, images, labels = labelled
    expected = cli_report(folder)
    assert expected["counts"]["errors"] == 1 and expected["counts"]["labelled_answered"] == len(images) - 1
    page = open_app_page(browser, app_server.url)
    try:
        wait_text(page, "model-status", "Model ready")
        run_folder(page, images, labels, len(images))
        for value, row in expected["confusion_matrix"].items():
            for column, count in row.items():
                assert text_of(page, f"testers-cell-{value}-{column}") == str(count), (value, column)
        for value, score in expected["per_value"].items():
            for kind in ("precision", "recall"):
                rate = score[kind]
                assert text_of(page, f"testers-{kind}-{value}") == ("—" if rate is None else shown(rate)), (
                    kind,
                    value,
                )
        assert shown(expected["unknown_rate"]) in text_of(page, "testers-unknown-rate")
        assert shown(expected["accuracy"]) in text_of(page, "testers-accuracy")
        assert f"{expected['yes_bias']:+.3f}" in text_of(page, "testers-yes-bias")
        # The score cut's rows: the curve `eval` computes, row for row (the highest cut keeping each share).
        cut_rows = page.locator("[flt-semantics-identifier^='testers-cut-']")
        curve = "\n".join(cut_rows.nth(i).inner_text() for i in range(cut_rows.count()))
        points, n = expected["score_cut"]["points"], expected["counts"]["labelled_answered"]
        assert expected["score_cut"]["scored"] == n  # constrained decoding: every answer has a score
        for share in (1.0, 0.95, 0.9, 0.8, 0.7, 0.5):
            fits = [p for p in points if p["coverage"] >= share - 1e-12]
            assert f"{fits[-1]['kept']}/{n}" in curve and shown(fits[-1]["accuracy"]) in curve, (share, curve)
        page.set_viewport_size({"width": 1280, "height": 1500})  # the whole report, the curve at its foot
        wait_text(page, "testers-curve", f"{n}/{n}")
        page.wait_for_timeout(1500)  # the server lays the page out again for the new height
        shot(page, "testers-curve")
        page.set_viewport_size({"width": 1280, "height": 800})
        # One row per image, the broken one an error with its thumbnail missing, not a crash.
        assert node(page, f"testers-row-{len(images) - 1}").count() == 1
        broken_row = text_of(page, f"testers-row-{len(images) - 1}")
        assert "zz-broken.jpg" in broken_row and "error" in broken_row
        shot(page, "testers")
        # The export: the per-image CSV the CLI writes too, through the browser's download.
        with page.expect_download() as download:
            node(page, "testers-export").click()
        saved = Path(download.value.path()).read_text(encoding="utf-8").splitlines()
        assert saved[0].startswith("file,expected,observed") and len(saved) == len(images) + 1
    finally:
        close_page(page)
    page.request_log.assert_local()


def test_phone_layout(browser, app_server: AppServer, labelled) -> None:
    folder, images, labels = labelled
    page = open_app_page(browser, app_server.url, viewport=PHONE)
    try:
        wait_text(page, "model-status", "Model ready")
        run_folder(page, images, labels, len(images))
        box = node(page, "testers-run").bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"], "the buttons wrap on a phone"
        shot(page, "testers")
        page.mouse.move(PHONE["width"] / 2, PHONE["height"] / 2)
        page.mouse.wheel(0, 520)  # down to the confusion matrix
        time.sleep(1)
        shot(page, "testers-matrix")
    finally:
        close_page(page)


def test_a_cut_kept_on_the_curve_withholds_the_next_answers_below_it(browser, tmp_path: Path, labelled) -> None:
    """The tester keeps the highest cut the curve offers: it is saved as a copy of the shipped profile
    among theirs, the worker asks from it, and a practice answer scoring below it is withheld."""
    from tests.e2e.test_practice import choose, start_with_files

    folder, images, labels = labelled
    expected = cli_report(folder)
    answered = [i for i in expected["images"] if i["model_score"] is not None]
    top = max(p["threshold"] for p in expected["score_cut"]["points"])
    below = min(answered, key=lambda i: i["model_score"])
    assert below["model_score"] < top, "the curve has a cut above the lowest score"
    data = tmp_path / "data"
    with AppServer(data) as server:
        page = open_app_page(browser, server.url)
        try:
            wait_text(page, "model-status", "Model ready")
            run_folder(page, images, labels, len(images))
            keep = page.locator("[flt-semantics-identifier^='testers-keep-cut-']")
            keep.last.click()  # the rows go up by threshold: the last is the highest shown
            said = wait_text(page, "testers-notice-text", "Saved: answers scoring below")
            assert "hand_position_cut.json" in said, said
            saved = json.loads((data / "profiles" / "hand_position_cut.json").read_text(encoding="utf-8"))
            cut = saved["min_score"]
            assert 0 < cut <= top
            settings = json.loads((data / "settings.json").read_text(encoding="utf-8"))
            assert settings["profile"] == str(data / "profiles" / "hand_position_cut.json")
            go_to(page, "Practice", "start-stop")
            wait_text(page, "model-status", "Model ready", timeout=90)
            choose(page, "Image")
            start_with_files(page, [folder / below["file"]])
            wait_text(page, "parse-status", "withheld: the model's score was below the profile's cut", timeout=90)
            assert below["model_score"] < cut, (below, cut)  # every cut the curve offers is above the lowest score
            shot(page, "practice-kept-cut")
            page.request_log.assert_local()
        finally:
            close_page(page)
