"""Whole runs of `analyze` and `watch` traced with strace: no process of theirs connects anywhere.

strace sees the syscalls of every process (the command, its worker child, Python's resource
tracker), whoever makes them: Python, MNN, FFmpeg inside OpenCV, libc through ctypes.
The UI's trace is in tests/e2e/test_ui_network_trace.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conditions import HANG_S
from tests.integration.conftest import held_out_scenes, write_scenes
from tests.integration.network_trace import addressed_calls, isolation_probes, strace_prefix
from tests.integration.video import write_hands_video

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.strace, pytest.mark.netns]


@pytest.mark.parametrize("command", ["analyze", "watch"])
def test_a_traced_run_makes_no_connection_at_all(strace: str, netns: None, tmp_path: Path, command: str) -> None:
    if command == "watch":
        targets = [tmp_path / "clip.avi"]
        write_hands_video(targets[0], seconds_per_phase=3, fps=5)
    else:
        targets = [path for path, _ in write_scenes(tmp_path, held_out_scenes(count_per_kind=1, seed=58)[:2])]
    trace = tmp_path / "trace"
    trace.mkdir()
    proc = subprocess.run(
        [*strace_prefix(strace, trace), sys.executable, "-m", "app", command, *map(str, targets)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_S,
        env={**os.environ, "FLET_APP_STORAGE_DATA": str(tmp_path / "data")},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count('"observation"') == (len(targets) if command == "analyze" else 3)  # the work was done
    calls, processes = addressed_calls(trace)
    report = "\n".join(map(str, calls))
    assert processes >= 2, report  # the command and its worker child were both traced
    # Nothing named an internet address except each isolated process's own check, and that failed.
    probes = isolation_probes(calls)
    assert [c for c in calls if c.internet and c not in probes] == [], report
    assert probes and all(c.errno == "ENETUNREACH" for c in probes), report
    assert len({c.pid for c in probes}) == 2, report  # the command and the worker each isolated themselves
