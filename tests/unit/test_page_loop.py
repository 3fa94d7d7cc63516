"""Listeners run on the page's loop: a state emitted on another thread reaches the page at once."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from types import SimpleNamespace

import pytest

from app.ui.shell.page_loop import on_page_loop
from tests.unit.asyncrun import run_async


def _page(loop: asyncio.AbstractEventLoop) -> SimpleNamespace:
    return SimpleNamespace(session=SimpleNamespace(connection=SimpleNamespace(loop=loop)))


def test_states_from_another_thread_run_on_an_idle_loop_at_once_and_in_order() -> None:
    seen: list[tuple[int, int]] = []

    async def idle() -> tuple[int, float]:
        # The loop sleeps in select() with nothing to do but a timer 30 s away, as Flet's server
        # does between messages: only a wake-up from the emitting thread gets the states shown.
        loop = asyncio.get_running_loop()
        all_seen = loop.create_future()
        loop.call_later(30, lambda: all_seen.done() or all_seen.set_result(None))

        def listener(value: int) -> None:
            seen.append((value, threading.get_ident()))
            if len(seen) == 3:
                all_seen.set_result(None)

        deliver = on_page_loop(_page(loop), listener)
        started = time.monotonic()

        def emit() -> None:
            time.sleep(0.3)  # the loop is asleep by now
            for value in (1, 2, 3):
                deliver(value)

        threading.Thread(target=emit).start()
        await all_seen
        return threading.get_ident(), time.monotonic() - started

    loop_thread, took = run_async(idle(), timeout=60)
    assert [v for v, _ in seen] == [1, 2, 3]
    assert {t for _, t in seen} == {loop_thread}, "rendered on the loop's thread"
    assert took < 5, f"the states waited {took:.1f} s for something else to wake the loop"


class _GoneConnection:
    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        raise RuntimeError("Event loop is not set")


def test_a_page_without_a_loop_raises_so_the_controller_drops_it() -> None:
    page = SimpleNamespace(session=SimpleNamespace(connection=_GoneConnection()))
    with pytest.raises(RuntimeError, match="not set"):
        on_page_loop(page, lambda v: None)(1)


def test_practice_states_reach_a_listener_in_the_order_they_were_made(tmp_path) -> None:
    """Two threads updating the practice state: a listener never sees an older state after a newer one."""
    import threading
    from dataclasses import replace

    from app.ui.practice.controller import PracticeController
    from app.worker.messages import WorkerSpec

    controller = PracticeController(WorkerSpec(), tmp_path)  # never started: no worker
    seen: list[int] = []

    def slow_listener(state) -> None:
        seen.append(state.blocked)
        time.sleep(0.001)  # a page that takes a moment: the other thread's newer state waits its turn

    controller.subscribe(slow_listener)
    counter = iter(range(1, 10_000))
    lock = threading.Lock()

    def bump() -> None:
        for _ in range(200):
            with lock:
                n = next(counter)
            controller._update(lambda s, n=n: replace(s, blocked=max(s.blocked, n)))

    threads = [threading.Thread(target=bump) for _ in range(3)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch often: the gap between making a state and handing it on shows
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert seen == sorted(seen), "an older state reached the listener after a newer one"
    assert seen[-1] == controller.state.blocked


def test_the_ticker_ticks_while_wanted_runs_once_and_stops() -> None:
    """The page's one periodic task: a second start while it runs starts nothing; it ends by itself once
    it is no longer wanted (the session ended), and at stop (the page went away)."""
    from app.ui.shell.page_loop import Ticker

    async def scenario() -> tuple[int, int, bool, int]:
        loop = asyncio.get_running_loop()
        ticks: list[int] = []
        started: list[object] = []

        def run_task(handler):
            started.append(handler)
            return asyncio.run_coroutine_threadsafe(handler(), loop)

        ticker = Ticker(run_task, lambda: ticks.append(1), wanted=lambda: len(ticks) < 3, period_s=0.01)
        ticker.start()
        ticker.start()
        done = loop.create_future()
        loop.call_later(10, lambda: done.done() or done.set_result(None))
        while ticker.running and not done.done():
            await asyncio.sleep(0.01)
        ended_by_itself = not ticker.running
        forever = Ticker(run_task, lambda: ticks.append(1), wanted=lambda: True, period_s=0.01)
        forever.start()
        forever.stop()
        await asyncio.sleep(0.05)
        return len(ticks), len(started), ended_by_itself, int(forever.running)

    ticks, started, ended, still_running = run_async(scenario(), timeout=30)
    assert (ticks, started, ended, still_running) == (3, 2, True, 0)
