"""The app's own web server answers only the page it served.

Flet's server accepts any `Host` and any websocket `Origin` and marks every
response `Access-Control-Allow-Origin: *`. A browser does not stop a page of
another site from opening `ws://127.0.0.1:PORT/ws` (websockets are not bound by
the same-origin policy), and a DNS-rebound name (`evil.example` resolving to
127.0.0.1) reaches the server with its own `Host`. Either would let any web page
drive the app and watch a live session.

`OriginGuard` wraps the whole ASGI app (pure ASGI, no Flet): a request is served
only when its `Host` is this server's loopback address and port (or `localhost`
on that port); a websocket only when its `Origin` is the page this server
serves; a plain request with a foreign `Origin` is refused too. Refusals are a
403 with one sentence, and a warning in the log naming what was refused. The
wildcard CORS header is taken off every response. A browser cannot forge
`Host` or `Origin`, so no web page gets past this; local programs are outside
what a browser-facing check can stop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("keyframe")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK = "127.0.0.1"
REFUSED = b"Refused: this is Keyframe's local server; it answers only its own page.\n"
_CORS = b"access-control-allow-origin"


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str = ""  # why a request was refused, for the log


def own_hosts(port: int) -> frozenset[str]:
    """The `Host` values of this server: its loopback address and `localhost`, on its port."""
    return frozenset({f"{LOOPBACK}:{port}", f"localhost:{port}"})


def own_origins(port: int) -> frozenset[str]:
    """The origins of the page this server serves (the browser may be pointed at either name)."""
    return frozenset(f"http://{host}" for host in own_hosts(port))


def judge(kind: str, headers: dict[str, str], port: int) -> Verdict:
    """Whether a request of `kind` ("http" or "websocket") with these headers (lower-case names) is served."""
    host = headers.get("host", "").strip().lower()
    if host not in own_hosts(port):
        return Verdict(False, f"Host {host or '(none)'!r} is not this server's")
    origin = headers.get("origin")
    if origin is None:
        # Browsers always send Origin on a websocket handshake; a page's own GETs may omit it.
        return Verdict(False, "a websocket without an Origin") if kind == "websocket" else Verdict(True)
    if origin.strip().lower() not in own_origins(port):
        return Verdict(False, f"Origin {origin!r} is not this server's page")
    return Verdict(True)


def _headers(scope: Scope) -> dict[str, str]:
    """The request's headers by lower-case name; a repeated Host or Origin counts as foreign."""
    seen: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        if name in seen and name in ("host", "origin"):
            value = f"{seen[name]}, {value}"  # never equal to one of ours
        seen[name] = value
    return seen


class OriginGuard:
    """ASGI middleware: serves `app` only to requests from this server's own page (see the module)."""

    def __init__(self, app: ASGIApp, port: int) -> None:
        self._app = app
        self._port = port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):  # lifespan
            await self._app(scope, receive, send)
            return
        verdict = judge(kind, _headers(scope), self._port)
        if not verdict.allowed:
            log.warning("web server: refused %s %s: %s", kind, scope.get("path", ""), verdict.reason)
            await (self._refuse_websocket(receive, send) if kind == "websocket" else self._refuse_http(send))
            return
        if kind == "http":
            await self._app(scope, receive, _without_wildcard_cors(send))
        else:
            await self._app(scope, receive, send)

    @staticmethod
    async def _refuse_http(send: Send) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 403,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", b"%d" % len(REFUSED))],
            }
        )
        await send({"type": "http.response.body", "body": REFUSED})

    @staticmethod
    async def _refuse_websocket(receive: Receive, send: Send) -> None:
        message = await receive()  # websocket.connect
        if message.get("type") == "websocket.connect":
            # A close before accept is answered with HTTP 403 (ASGI spec): no websocket is opened.
            await send({"type": "websocket.close", "code": 1008})


def _without_wildcard_cors(send: Send) -> Send:
    async def sender(message: Message) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [(k, v) for k, v in message.get("headers", []) if k.lower() != _CORS]
        await send(message)

    return sender


@dataclass(frozen=True)
class Answer:
    """What an ASGI app answered one request: the HTTP status (101: a websocket was accepted)."""

    status: int
    headers: dict[str, str]
    body: bytes = b""


async def ask(app: ASGIApp, kind: str, headers: dict[str, str], path: str = "/") -> Answer:
    """Sends one request through `app` in this process, no socket (for `doctor` and tests)."""
    scope: Scope = {
        "type": kind,
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "scheme": "ws" if kind == "websocket" else "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
        "client": (LOOPBACK, 50000),
        "server": (LOOPBACK, 80),
    }
    incoming: list[Message] = [{"type": "websocket.connect"} if kind == "websocket" else {"type": "http.request"}]
    sent: list[Message] = []
    answered = asyncio.Event()  # a websocket the app accepted stays open: the answer is its first message
    final = "websocket.accept websocket.close http.response.body".split()

    async def receive() -> Message:
        if incoming:
            return incoming.pop(0)
        await answered.wait()
        return {"type": f"{kind}.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)
        if message["type"] in final and not message.get("more_body"):
            answered.set()

    task = asyncio.ensure_future(app(scope, receive, send))
    waiter = asyncio.ensure_future(answered.wait())
    await asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED)
    for pending in (task, waiter):
        if not pending.done():
            pending.cancel()
    await asyncio.gather(task, waiter, return_exceptions=True)
    if not task.cancelled() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]
    for message in sent:
        if message["type"] == "websocket.accept":
            return Answer(101, {})
        if message["type"] == "websocket.close":
            return Answer(403, {})
        if message["type"] == "http.response.start":
            got = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in message.get("headers", [])}
            body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
            return Answer(int(message["status"]), got, body)
    raise RuntimeError(f"the app sent no answer to a {kind} request")
