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
from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")


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

    def deliver(value: T) -> None:
        page.session.connection.loop.call_soon_threadsafe(listener, value)

    return deliver
