"""Coroutines run on a loop of their own thread, for tests that run beside the browser tests."""

from __future__ import annotations

import asyncio
import threading


def run_async(coro, timeout: float = 30):
    """Runs a coroutine on a loop of its own thread and returns its result: the browser tests'
    Playwright may already run a loop in this one when the whole suite runs in one process."""
    errors: list[BaseException] = []
    results: list[object] = []

    def run() -> None:
        try:
            results.append(asyncio.run(coro))
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout)
    if errors:
        raise errors[0]
    assert results, f"the coroutine did not end within {timeout} s"
    return results[0]
