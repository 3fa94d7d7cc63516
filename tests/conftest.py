from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# tools/ is not part of the installed app; tests use its scene generator for held-out images.
sys.path.insert(0, str(ROOT / "tools"))


@pytest.fixture(autouse=True)
def _isolated_storage(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's real data and cache folders."""
    base = tmp_path_factory.getbasetemp() / "storage"
    monkeypatch.setenv("FLET_APP_STORAGE_DATA", str(base / "data"))
    monkeypatch.setenv("FLET_APP_STORAGE_CACHE", str(base / "cache"))


def pytest_sessionstart(session: pytest.Session) -> None:
    from app.privacy.guard import NetworkGuard, install

    # The same guard the app installs: any outbound connection from test code fails.
    session.config._keyframe_guard = install(NetworkGuard())  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    guard = getattr(session.config, "_keyframe_guard", None)
    if guard is None:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    line = f"privacy guard: {guard.blocked_count} outbound connections blocked, {guard.outbound_count} let through"
    if reporter is not None:
        reporter.write_line(line)
    if guard.blocked_count or guard.outbound_count:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_report_header(config: pytest.Config) -> str:
    return f"keyframe root: {ROOT} (CI={os.environ.get('CI', '')})"
