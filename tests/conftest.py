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


def pytest_report_header(config: pytest.Config) -> str:
    return f"keyframe root: {ROOT} (CI={os.environ.get('CI', '')})"
