"""The type checker is part of the test command: mypy over `app/` as configured in pyproject.toml.

`[tool.mypy]` is strict over all of app/. A type error anywhere fails this test with mypy's own
report. The cache is kept in the checkout's `.mypy_cache/` (ignored by git), so a second run
checks only what changed instead of all ~120 modules again.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_finds_no_type_errors() -> None:
    # Never skipped: mypy is in the test extra, so a missing mypy fails here too ("No module named mypy").
    config = ROOT / "pyproject.toml"
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(ROOT / ".mypy_cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, f"mypy found type errors:\n{run.stdout}{run.stderr}"
