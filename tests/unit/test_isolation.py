"""Isolation levels as reported where the OS offers nothing (the real isolation: tests/integration/test_privacy.py)."""

from __future__ import annotations

import pytest

from app.commands.doctor import WorkerCheck
from app.privacy import isolation


@pytest.mark.parametrize("platform", ["win32", "cygwin", "emscripten"])
def test_a_platform_without_os_isolation_is_reported_as_guarded(monkeypatch: pytest.MonkeyPatch, platform: str) -> None:
    monkeypatch.setattr(isolation.sys, "platform", platform)
    level = isolation.isolate_this_process()  # changes nothing in this process on such a platform
    assert level.level == isolation.GUARDED and not level.isolated
    assert (
        level.how.startswith(f"no OS network isolation on {platform}; ") and "native code is not covered" in level.how
    )


@pytest.mark.parametrize(
    ("level", "accepted", "holds"),
    [("os-isolated", 0, True), ("os-isolated", 1, False), ("guarded", 0, False), ("guarded", 1, False)],
)
def test_doctor_passes_only_an_isolation_that_held_against_the_native_connect(
    level: str, accepted: int, holds: bool
) -> None:
    assert WorkerCheck(level, "how", "Network is unreachable", accepted).holds is holds
