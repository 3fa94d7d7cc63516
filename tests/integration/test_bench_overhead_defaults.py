"""bench.pipeline_overhead and bench.defaults run end to end on the demo model and print each
figure beside its goal. Timings are never asserted: this machine is shared and noisy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conditions import HANG_S

ROOT = Path(__file__).resolve().parents[2]


def _bench(tmp_path: Path, name: str, *args: str) -> tuple[dict[str, str], dict[str, Any]]:
    """(table row name -> its line, the JSON receipt) of one run."""
    env = {**os.environ, "FLET_APP_STORAGE_DATA": str(tmp_path / "data")}
    receipt = tmp_path / f"{name}.json"
    command = [sys.executable, "-m", f"bench.{name}", *args, "--receipt", str(receipt)]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=HANG_S, env=env)
    # Exit 1 is a missed goal (the tiny model's overhead ratio may well miss it), never a crash.
    assert proc.returncode == (1 if "MISSED" in proc.stdout else 0), proc.stderr
    assert "Traceback" not in proc.stderr
    lines = {line.strip().split("  ")[0]: line for line in proc.stdout.splitlines() if line.startswith("  ")}
    return lines, json.loads(receipt.read_text())


def test_pipeline_overhead_reports_both_ratios_beside_their_goal(tmp_path: Path) -> None:
    lines, receipt = _bench(tmp_path, "pipeline_overhead", "--images", "2", "--rounds", "1")
    for mode in ("free", "constrained"):
        assert "[goal ≤ 1.05x" in lines[f"{mode}: app / bare MNN.llm"]
        for row in ("overhead per keyframe", "app, submit to Finished", "bare MNN.llm response()"):
            assert "n=2" in lines[f"{mode}: {row}"], row
    assert lines["free: same prompt tokens"].split()[-3:] == ["2", "of", "2"]  # same prompt, same image size
    assert receipt["bench"].startswith("pipeline overhead")


def test_defaults_reports_the_speed_ratio_and_both_validity_rates(tmp_path: Path) -> None:
    lines, receipt = _bench(tmp_path, "defaults", "--images", "2", "--rounds", "1")
    assert "[goal < 1" in lines["time to a result: Keyframe / MNN defaults"]
    assert "[goal 2 of 2" in lines["strict-valid, Keyframe defaults"]
    assert "of 2" in lines["strict-valid, MNN defaults"]
    assert any(name.startswith("MNN: 1920x1080 as is") for name in lines)
    assert receipt["bench"].startswith("defaults")
