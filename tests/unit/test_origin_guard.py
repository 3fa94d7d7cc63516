"""The app's web server serves only its own page: Host and Origin checks, no wildcard CORS (pure ASGI)."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import pytest

from app.commands.doctor import WebServerCheck, check_web_server
from app.privacy.origin_guard import OriginGuard, ask, judge
from app.ui.shell import web_shell
from tests.unit.asyncrun import run_async

PORT = 8550
OWN = {"host": f"127.0.0.1:{PORT}"}


@pytest.mark.parametrize(
    ("kind", "headers", "allowed"),
    [
        ("http", OWN, True),
        ("http", {"host": f"localhost:{PORT}"}, True),
        ("http", {"host": f"LOCALHOST:{PORT}"}, True),  # host names are not case-sensitive
        ("http", {**OWN, "origin": f"http://127.0.0.1:{PORT}"}, True),
        ("websocket", {**OWN, "origin": f"http://127.0.0.1:{PORT}"}, True),
        ("websocket", {**OWN, "origin": f"http://localhost:{PORT}"}, True),
        # DNS rebinding: a name of the attacker's resolving to 127.0.0.1
        ("http", {"host": "evil.example"}, False),
        ("http", {"host": f"evil.example:{PORT}"}, False),
        ("websocket", {"host": "evil.example", "origin": "http://evil.example"}, False),
        ("http", {"host": "127.0.0.1"}, False),  # another port's page (80)
        ("http", {"host": "127.0.0.1:9999"}, False),
        ("http", {"host": f"127.0.0.2:{PORT}"}, False),
        ("http", {}, False),  # no Host at all (HTTP/1.0)
        # A page of another site opening our websocket: the browser sends its own Origin.
        ("websocket", {**OWN, "origin": "http://evil.example"}, False),
        ("websocket", {**OWN, "origin": f"http://127.0.0.2:{PORT}"}, False),
        ("websocket", {**OWN, "origin": "http://127.0.0.1:9999"}, False),
        ("websocket", {**OWN, "origin": f"https://127.0.0.1:{PORT}"}, False),
        ("websocket", {**OWN, "origin": "null"}, False),  # a sandboxed frame or a file:// page
        ("websocket", OWN, False),  # browsers always send Origin on a websocket
        ("http", {**OWN, "origin": "http://evil.example"}, False),  # e.g. a cross-site upload PUT
    ],
)
def test_judge(kind: str, headers: dict[str, str], allowed: bool) -> None:
    assert judge(kind, headers, PORT).allowed is allowed


class _App:
    """An app that answers every request, with Flet's wildcard CORS header, and accepts websockets."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, scope: dict, receive, send) -> None:
        self.calls += 1
        if scope["type"] == "websocket":
            await receive()
            await send({"type": "websocket.accept"})
            return
        headers = [(b"content-type", b"text/html"), (b"Access-Control-Allow-Origin", b"*")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"page"})


def test_the_own_page_is_served_without_the_wildcard_cors_header() -> None:
    answer = run_async(ask(OriginGuard(_App(), PORT), "http", OWN))
    assert answer.status == 200
    assert "access-control-allow-origin" not in answer.headers
    assert answer.body == b"page"


def test_a_foreign_host_gets_403_and_a_line_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    app = _App()
    with caplog.at_level(logging.WARNING, logger="keyframe"):
        answer = run_async(ask(OriginGuard(app, PORT), "http", {"host": "evil.example"}))
    assert app.calls == 0, "the app never saw the request"
    assert answer.status == 403
    assert b"only its own page" in answer.body
    assert "refused http /: Host 'evil.example'" in caplog.text


def test_a_foreign_origin_websocket_is_closed_before_it_opens() -> None:
    app = _App()
    answer = run_async(ask(OriginGuard(app, PORT), "websocket", {**OWN, "origin": "http://evil.example"}, "/ws"))
    assert app.calls == 0
    # A close before accept: the server answers the handshake with HTTP 403.
    assert answer.status == 403


def test_the_own_pages_websocket_opens() -> None:
    headers = {**OWN, "origin": f"http://127.0.0.1:{PORT}"}
    assert run_async(ask(OriginGuard(_App(), PORT), "websocket", headers, "/ws")).status == 101


def test_a_repeated_host_header_is_refused() -> None:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def receive() -> dict:
        return {"type": "http.request"}

    scope = {"type": "http", "path": "/", "headers": [(b"host", b"127.0.0.1:8550"), (b"host", b"evil.example")]}
    run_async(OriginGuard(_App(), PORT)(scope, receive, send))
    assert sent[0]["status"] == 403


def test_lifespan_passes_through() -> None:
    app = _App()
    calls: list[str] = []

    async def inner(scope: dict, receive, send) -> None:
        calls.append(scope["type"])

    run_async(OriginGuard(inner, PORT)({"type": "lifespan"}, None, None))  # type: ignore[arg-type]
    assert calls == ["lifespan"]
    assert app.calls == 0


def _doctor_check() -> WebServerCheck:
    """doctor's check runs its own event loop: on a thread (the browser tests may run one in this one)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(check_web_server).result(timeout=60)


def test_doctor_asks_the_app_as_ui_serves_it() -> None:
    check = _doctor_check()
    assert check == WebServerCheck(own_page=200, wildcard_cors=False, foreign_host=403, foreign_origin_websocket=403)
    assert check.holds


def test_doctor_fails_on_flets_server_without_the_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(web_shell, "OriginGuard", lambda app, port: app)
    check = _doctor_check()
    # Flet alone: any Host is served, with the wildcard CORS header.
    assert check.foreign_host == 200 and check.wildcard_cors
    assert not check.holds
