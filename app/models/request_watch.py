"""Ends a model-file request that blocks: at once when the download is cancelled, and when no answer comes.

httpx's read timeout bounds each read from the socket, not the wait for an answer: a mirror that
sends `HTTP/1.1 100 Continue` again and again (interim answers, which are read until a final one
comes) held a download at 0 bytes for as long as it liked. And a cancel (Ctrl-C, the Cancel
button) is seen between chunks, so against a silent server it waited for that timeout, 30 s.

A watcher thread per request shuts the request's socket down, which wakes a read blocked on it at
once, when the download is cancelled or when the final answer's headers have not come in time.
The socket is the connection's network stream, which httpx's documented `trace` extension hands
over as it connects; the client keeps no idle connection (NO_KEEPALIVE), so every request opens
its own connection and the watcher knows the socket of each.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

import httpx

NO_KEEPALIVE = httpx.Limits(max_keepalive_connections=0)
_POLL_S = 0.05  # how soon a cancel reaches a blocked read
_CONNECTED = (".connect_tcp.complete", ".start_tls.complete")  # httpcore's trace events with the new stream


class RequestWatch:
    """One request's watcher: `extensions` go on the request, `answered()` once its headers are in."""

    def __init__(
        self, cancel: threading.Event, answer_within_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._cancel = cancel
        self._limit_s = answer_within_s
        self._clock = clock
        self._lock = threading.Lock()
        self._stream: Any = None  # httpcore's NetworkStream of the connection in use
        self._deadline: float | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="download-watch", daemon=True)
        self.expired = False  # the answer did not come in time (not set by a cancel)

    @property
    def limit_s(self) -> float:
        return self._limit_s

    @property
    def extensions(self) -> dict[str, object]:
        return {"trace": self._trace}

    def answered(self) -> None:
        """The final answer's headers are in: from here on only a cancel ends the request."""
        with self._lock:
            self._deadline = None

    def __enter__(self) -> RequestWatch:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._done.set()
        self._thread.join()

    def _trace(self, event: str, info: Mapping[str, Any]) -> None:
        if event.endswith(_CONNECTED) and info.get("return_value") is not None:
            with self._lock:  # each hop (a redirect, a proxy's tunnel) gets the whole time again
                self._stream = info["return_value"]
                self._deadline = self._clock() + self._limit_s

    def _watch(self) -> None:
        while not self._done.wait(_POLL_S):
            with self._lock:
                stream = self._stream
                late = self._deadline is not None and self._clock() > self._deadline
            cancelled = self._cancel.is_set()
            if stream is not None and (cancelled or late):
                self.expired = not cancelled
                _shut_down(stream)
                return


def _shut_down(stream: Any) -> None:
    sock = stream.get_extra_info("socket")
    if isinstance(sock, socket.socket):
        try:
            # socket.socket's own shutdown, also for a TLS socket: ssl's would drop its state under the reader.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass  # already closed: nothing is blocked on it
