"""Rules of the suite itself, for what a test in one folder can break in another."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_coroutines_run_on_a_thread_of_their_own_beside_the_browser_tests() -> None:
    """A worker that ran a browser test holds Playwright's loop in its thread, and asyncio.run() there
    fails ("cannot be called from a running event loop"): three tests failed so in a full run, never alone."""
    runs = [
        str(p.relative_to(TESTS))
        for p in TESTS.rglob("*.py")
        if p.name not in ("asyncrun.py", Path(__file__).name) and "asyncio.run(" in p.read_text(encoding="utf-8")
    ]
    assert runs == [], f"use tests.unit.asyncrun.run_async instead of asyncio.run in {runs}"


def test_no_two_test_modules_share_a_name() -> None:
    """The test folders are not packages: two modules of one name clash, and one of them is not collected."""
    names = sorted(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for i, n in enumerate(names) if names[i - 1] == n and i] == []
