"""Listeners that render on the page's event loop, whichever thread the controller calls them on.

Controllers call their listeners on their own threads (a download, a verify, the worker's
reader, the privacy watcher). Flet 1.0.5 queues each message for the browser with
`asyncio.Queue.put_nowait`, which does not wake the event loop when called from another
thread: the change reached the browser only when something else woke the loop (seen in CI:
a verify's result never shown, the screen stuck at "Verifying: 0 %"). Running the whole
listener on the loop also keeps a render from racing the loop's own diff of the same controls.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
log = logging.getLogger("keyframe.ui")


class _Connection(Protocol):
    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...


class _Session(Protocol):
    @property
    def connection(self) -> _Connection: ...


class LoopPage(Protocol):
    """What is needed of a Flet page: its session's connection's event loop."""

    @property
    def session(self) -> _Session: ...


def on_page_loop(page: LoopPage, listener: Callable[[T], None]) -> Callable[[T], None]:
    """`listener`, always scheduled on `page`'s loop (also from the loop itself, so that every
    state reaches the page in the order it was emitted). Raises when the page has no loop left,
    so a controller drops a listener whose page is gone."""

    def shown(value: T) -> None:
        try:
            listener(value)
        except Exception:
            if not connection_closed(page):
                raise  # a page that is there and cannot show a state: a bug, kept visible
            # A page that went away mid-registration (or while a state was on its way) is a normal event.
            log.info("a page's connection closed while it was shown a new state; not shown")

    def deliver(value: T) -> None:
        page.session.connection.loop.call_soon_threadsafe(shown, value)

    return deliver


def connection_closed(page: LoopPage) -> bool:
    """Whether Flet's connection of `page` has closed, although Flet may not have told the page yet (its
    `on_disconnect` comes later): Flet 1.0.5 (pinned) drops the connection's send queue at once, and a
    `page.update()` in that gap raised AttributeError through the app's render."""
    connection = page.session.connection
    return connection is None or getattr(connection, "_FletApp__send_queue", True) is None


class Ticker:
    """One task on a page's loop calling `tick` every `period_s` while `wanted()` holds: what changes with
    time alone (an answer's age) is shown again although no new state came. `start` while it runs does
    nothing; the task ends by itself once `wanted()` is false, or at `stop` (the page going away).
    `run_task` is the page's (`ft.Page.run_task`): the task runs on the loop that renders the page."""

    def __init__(
        self,
        run_task: Callable[[Callable[[], Coroutine[Any, Any, None]]], Future[None]],
        tick: Callable[[], None],
        wanted: Callable[[], bool],
        period_s: float = 1.0,
    ) -> None:
        self._run_task = run_task
        self._tick = tick
        self._wanted = wanted
        self._period_s = period_s
        self._future: Future[None] | None = None

    @property
    def running(self) -> bool:
        return self._future is not None and not self._future.done()

    def start(self) -> None:
        if not self.running:
            self._future = self._run_task(self._run)

    def stop(self) -> None:
        future, self._future = self._future, None
        if future is not None:
            future.cancel()

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self._period_s)
            if not self._wanted():
                return
            try:
                self._tick()
            except Exception as exc:  # a page torn down between two ticks: nothing left to show it on
                log.info("the page's ticker stopped: %s", exc)
                return
