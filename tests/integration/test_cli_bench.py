"""`python -m app bench` on the bundled demo model: a receipt with every figure, measured where the app runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conditions import HANG_S

ROOT = Path(__file__).resolve().parents[2]


def _bench(tmp_path: Path, *args: str, omp: str | None = "1") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}  # the suite's cap (conftest)
    env["FLET_APP_STORAGE_DATA"] = str(tmp_path / "data")
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    command = [sys.executable, "-m", "app", "bench", *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=HANG_S, env=env)


def test_a_receipt_holds_every_figure_for_the_runs_asked(tmp_path: Path) -> None:
    receipt_file = tmp_path / "receipt.json"
    proc = _bench(tmp_path, "--runs", "3", "--json", "--receipt", str(receipt_file))
    assert proc.returncode == 0, proc.stderr
    receipt = json.loads(proc.stdout)
    assert json.loads(receipt_file.read_text()) == receipt
    assert receipt["runs"] == 3 and receipt["warm_up_runs"] == 1 and receipt["strict_valid"] == 3
    for key in ("answer_ms", "model_call_ms", "first_token_ms", "vision_ms", "prefill_ms"):
        figure = receipt[key]
        assert figure["n"] == 3 and figure["min"] <= figure["median"] <= figure["max"], (key, figure)
    # The model's own time is part of the time to the answer the app gets back.
    assert receipt["model_call_ms"]["median"] <= receipt["answer_ms"]["median"]
    assert receipt["memory_kib"]["at_end"]["peak"] >= receipt["memory_kib"]["at_end"]["rss"] > 0
    assert receipt["model"].startswith("keyframe-demo-cpr@") and receipt["decoding"] == "constrained"
    assert receipt["mnn"] not in ("", "not installed") and "logical CPUs" in receipt["machine"]
    assert "run 3/3" in proc.stderr  # progress, on stderr so stdout stays the receipt


def test_the_receipt_names_the_threads_mnn_was_given_not_only_those_asked(tmp_path: Path) -> None:
    given = []
    for omp in (None, "1"):
        proc = _bench(tmp_path, "--runs", "1", "--threads", "2", "--json", omp=omp)
        assert proc.returncode == 0, proc.stderr
        given.append(json.loads(proc.stdout)["threads"])
    assert given == [2, 1]  # OMP_NUM_THREADS=1 caps the two asked for


def test_the_table_puts_each_goal_beside_its_figure(tmp_path: Path) -> None:
    proc = _bench(tmp_path, "--runs", "2", "--worker", "thread")
    assert proc.returncode == 0, proc.stderr
    lines = {line.split("  ")[0]: line for line in proc.stdout.splitlines()}
    assert "[goal ≤ 2.5 s at 224 px on 2 cores: met]" in lines["keyframe to parsed answer"]
    assert "2 of 2   [goal 2 of 2]" in lines["strict-valid answers"]
    assert "worker thread" in lines["where"]


def test_an_unreadable_image_is_a_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"\xff\xd8 not a jpeg")
    proc = _bench(tmp_path, "--runs", "1", "--image", str(broken))
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and "broken.jpg" in proc.stderr and "Traceback" not in proc.stderr


def test_a_checklist_is_measured_against_one_of_its_signals_in_the_same_run(tmp_path: Path) -> None:
    receipt_file = tmp_path / "checklist.json"
    profile = ROOT / "model_store" / "profiles" / "cpr_checklist.json"
    proc = _bench(tmp_path, "--profile", str(profile), "--runs", "2", "--json", "--receipt", str(receipt_file))
    assert proc.returncode == 0, proc.stderr
    receipt = json.loads(proc.stdout)
    assert json.loads(receipt_file.read_text()) == receipt
    assert receipt["signals"] == ["hands_visible", "hand_position_correct", "hands_stacked"]
    assert receipt["alone"] == "hands_visible" and receipt["rounds"] == 2 and not receipt["failures"]
    for key in ("one_signal_ms", "checklist_ms", "ratio", "image_vision_ms", "first_signal_ms", "signals_asked"):
        figure = receipt[key]
        assert figure["n"] == 2 and figure["min"] <= figure["median"] <= figure["max"], (key, figure)
    asked = receipt["signals_asked"]
    assert 1 <= asked["min"] <= asked["max"] <= 3
    # Every asked answer is strict-valid (constrained): the checklist's and the lone signal's.
    assert receipt["strict_valid"] == receipt["answers"] >= 2 * (1 + 1)
    # Its first answer carries the image, so it costs at least the encode it reports.
    assert receipt["first_signal_ms"]["min"] >= receipt["image_vision_ms"]["min"]


def test_a_checklist_table_separates_the_image_and_each_extra_signal(tmp_path: Path) -> None:
    profile = ROOT / "model_store" / "profiles" / "cpr_checklist.json"
    proc = _bench(tmp_path, "--profile", str(profile), "--runs", "1", "--worker", "thread")
    assert proc.returncode == 0, proc.stderr
    names = [line.strip().split("  ")[0] for line in proc.stdout.splitlines()]
    for row in ("one signal (hands_visible) alone", "the checklist, one encode", "checklist ÷ one, per round",
                "image: vision encode", "first signal (with the image)", "each extra signal"):  # fmt: skip
        assert row in names, (row, proc.stdout)
