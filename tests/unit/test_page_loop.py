"""Listeners run on the page's loop: a state emitted on another thread reaches the page at once."""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace

import pytest

from app.ui.page_loop import on_page_loop
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
