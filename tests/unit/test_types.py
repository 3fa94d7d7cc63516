"""The type checker is part of the test command: mypy over `app/` as configured in pyproject.toml.

`[tool.mypy]` checks all of app/ and is strict on app/core, app/worker and
app/pipeline. A type error anywhere fails this test with mypy's own report.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_finds_no_type_errors(tmp_path: Path) -> None:
    # Never skipped: mypy is in the test extra, so a missing mypy fails here too ("No module named mypy").
    config = ROOT / "pyproject.toml"
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(tmp_path / "mypy-cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, f"mypy found type errors:\n{run.stdout}{run.stderr}"
