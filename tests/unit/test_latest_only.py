"""A burst of requests is one piece of work on the newest value, off the caller's thread."""

from __future__ import annotations

import threading
import time

import pytest

from app.ui.practice.latest_only import LatestOnly


def test_a_burst_runs_once_on_the_newest_value_and_the_caller_never_waits() -> None:
    done: list[int] = []
    running, release = threading.Event(), threading.Event()

    def work(value: int) -> None:
        running.set()
        release.wait(10)
        done.append(value)

    runner = LatestOnly(work, quiet_s=0.2, name="t")
    started = time.monotonic()
    for value in (1, 2, 3):
        runner.submit(value)
    assert time.monotonic() - started < 0.1, "submit returned at once"
    assert running.wait(10)  # after the quiet period, the work on 3 runs (and waits for release)
    runner.submit(4)  # while it runs: the next piece of work
    runner.submit(5)
    release.set()
    assert runner.wait_idle(10)
    assert done == [3, 5]
    assert runner.stop()


def test_a_request_inside_the_quiet_period_restarts_it() -> None:
    done: list[tuple[int, float]] = []
    quiet = 1.5  # far longer than the pause below, even on a machine at load 10
    runner = LatestOnly(lambda v: done.append((v, time.monotonic())), quiet_s=quiet, name="t")
    first = time.monotonic()
    runner.submit(1)
    time.sleep(0.2)
    last = time.monotonic()
    runner.submit(2)
    assert last - first < quiet, "the second request came inside the quiet period"
    assert runner.wait_idle(10)
    assert [v for v, _ in done] == [2]
    assert done[0][1] - last >= quiet - 0.01  # the period started again at the second request
    runner.stop()


def test_a_failure_is_logged_and_the_next_request_still_runs(caplog: pytest.LogCaptureFixture) -> None:
    done: list[int] = []

    def work(value: int) -> None:
        if value == 1:
            raise RuntimeError("boom")
        done.append(value)

    runner = LatestOnly(work, quiet_s=0.01, name="restart")
    runner.submit(1)
    assert runner.wait_idle(10)
    runner.submit(2)
    assert runner.wait_idle(10)
    assert done == [2] and "restart failed" in caplog.text
    runner.stop()


def test_stop_drops_what_is_pending_and_ends_the_thread() -> None:
    done: list[int] = []
    runner = LatestOnly(done.append, quiet_s=5, name="t")
    runner.submit(1)
    assert runner.stop(timeout=2)
    runner.submit(2)  # after stop: ignored
    time.sleep(0.1)
    assert done == [] and runner.wait_idle(0)
