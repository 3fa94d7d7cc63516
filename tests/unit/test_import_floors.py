"""The import graph of app/ keeps its floors (pyproject's [tool.importlinter]): each package imports
only the floors below it, the UI's shell sits above its screens and the screens above their shared
parts, and no package's modules import each other in a cycle. The same check by hand: `lint-imports`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_import_points_down_a_floor_and_none_makes_a_cycle() -> None:
    linter = Path(sys.executable).parent / "lint-imports"
    run = subprocess.run([str(linter), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout, run.stdout[-3000:]
