"""Only the app's own page may use the app's server: another web page (another site, a DNS-rebound
name, another loopback address) gets a 403, no websocket and no wildcard CORS header."""

from __future__ import annotations

import http.client
import http.server
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.conditions import wait_until
from tests.e2e.conftest import AppServer, evaluate

pytestmark = pytest.mark.browser


def _get(port: int, host: str, origin: str | None = None) -> http.client.HTTPResponse:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Host": host, **({"Origin": origin} if origin else {})}
    conn.request("GET", "/", headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


def _port(app_url: str) -> int:
    port = urlsplit(app_url).port
    assert port is not None
    return port


def _log(server: AppServer) -> str:
    path = server.data / "logs" / "keyframe.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_a_foreign_host_is_refused_and_the_own_page_has_no_wildcard_cors(app_server: AppServer) -> None:
    port = app_server.port
    own = _get(port, f"127.0.0.1:{port}")
    assert own.status == 200
    assert own.getheader("Access-Control-Allow-Origin") is None
    assert _get(port, f"localhost:{port}").status == 200
    # DNS rebinding: the attacker's name, resolved to 127.0.0.1, arrives with its own Host.
    rebound = _get(port, "evil.example")
    assert rebound.status == 403
    assert rebound.getheader("Access-Control-Allow-Origin") is None
    assert _get(port, f"evil.example:{port}").status == 403
    assert _get(port, f"127.0.0.1:{port}", origin="http://evil.example").status == 403
    assert wait_until(lambda: "refused http /: Host 'evil.example'" in _log(app_server), timeout=10), _log(app_server)


@pytest.mark.parametrize("path", ["/ws", "/camera-motion"])
def test_a_websocket_from_another_origin_is_refused(app_server: AppServer, path: str) -> None:
    """The page's websocket, and the one its script sends the live camera's motion frames to."""
    ws_url = f"ws://127.0.0.1:{app_server.port}{path}"
    for origin in ("http://evil.example", "http://127.0.0.2:8000", f"http://127.0.0.1:{app_server.port + 1}"):
        with pytest.raises(InvalidStatus) as refused:
            with connect(ws_url, origin=origin, open_timeout=30):  # type: ignore[arg-type]
                pass
        assert refused.value.response.status_code == 403, origin
    with pytest.raises(InvalidStatus):  # no Origin at all: no browser does that
        with connect(ws_url, open_timeout=30):
            pass
    # The page's own origin still opens it.
    with connect(ws_url, origin=f"http://127.0.0.1:{app_server.port}", open_timeout=30):  # type: ignore[arg-type]
        pass
    assert f"refused websocket {path}: Origin 'http://evil.example'" in _log(app_server)


class _Page(http.server.BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def foreign_page(app_server: AppServer) -> Iterator[str]:
    """A page served from 127.0.0.2, another origin of this machine, that tries the app's websocket."""
    _Page.body = f"""<!doctype html><title>elsewhere</title><script>
    window.outcome = new Promise((resolve) => {{
        const ws = new WebSocket('ws://127.0.0.1:{app_server.port}/ws');
        ws.onopen = () => resolve('open');
        ws.onerror = () => resolve('refused');
    }});
    </script>""".encode()
    server = http.server.ThreadingHTTPServer(("127.0.0.2", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.2:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_on_another_loopback_address_cannot_open_the_apps_websocket(
    fresh_browser,
    foreign_page: str,
    app_server: AppServer,
) -> None:
    context = fresh_browser.new_context()
    try:
        page = context.new_page()
        page.goto(foreign_page)
        assert evaluate(page, "() => window.outcome") == "refused"
        # Nor can it read the app's page: no wildcard CORS header.
        read = evaluate(
            page,
            f"""async () => {{
                try {{ const r = await fetch('http://127.0.0.1:{app_server.port}/'); return (await r.text()).length; }}
                catch (e) {{ return 'refused'; }}
            }}""",
        )
        assert read == "refused"
    finally:
        context.close()
    assert "refused websocket /ws: Origin 'http://127.0.0.2:" in _log(app_server)
