"""Isolation levels as reported where the OS offers nothing (the real isolation: tests/integration/test_privacy.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.commands.doctor import WorkerCheck
from app.core.isolation import IsolationLevel
from app.privacy import isolation

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("platform", ["win32", "cygwin", "emscripten"])
def test_a_platform_without_os_isolation_is_reported_as_guarded(monkeypatch: pytest.MonkeyPatch, platform: str) -> None:
    monkeypatch.setattr(isolation.sys, "platform", platform)
    level = isolation.isolate_this_process()  # changes nothing in this process on such a platform
    assert level.level is IsolationLevel.GUARDED and not level.isolated
    assert (
        level.how.startswith(f"no OS network isolation on {platform}; ") and "native code is not covered" in level.how
    )


@pytest.mark.parametrize(
    ("level", "accepted", "holds"),
    [
        (IsolationLevel.OS_ISOLATED, 0, True),
        (IsolationLevel.OS_ISOLATED, 1, False),
        (IsolationLevel.GUARDED, 0, False),
        (IsolationLevel.GUARDED, 1, False),
    ],
)
def test_doctor_passes_only_an_isolation_that_held_against_the_native_connect(
    level: IsolationLevel, accepted: int, holds: bool
) -> None:
    assert WorkerCheck(level, "how", "Network is unreachable", accepted).holds is holds


def test_the_command_line_is_single_threaded_until_it_isolates() -> None:
    """Every command's parser is built before the process cuts itself off the network, and the kernel
    refuses a new namespace to a process that runs threads: importing the commands must start none
    (numpy's BLAS starts its pool at import; the session log's records once pulled it in)."""
    import subprocess
    import sys

    probe = "import os, app.cli as c; c._build_parser(); print(len(os.listdir('/proc/self/task')))"
    if not Path("/proc/self/task").is_dir():
        pytest.skip("counts threads through Linux's /proc")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
