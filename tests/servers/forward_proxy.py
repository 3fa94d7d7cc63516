"""A forward HTTP proxy on 127.0.0.1 that records the absolute URLs it is asked for."""

from __future__ import annotations

import http.client
import http.server
import threading
from types import TracebackType
from urllib.parse import urlsplit


class ForwardProxy:
    def __init__(self) -> None:
        self.seen: list[str] = []
        seen = self.seen

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.path)
                target = urlsplit(self.path)
                conn = http.client.HTTPConnection(target.hostname or "", target.port or 80, timeout=10)
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("range", "user-agent")}
                conn.request("GET", target.path, headers=headers)
                reply = conn.getresponse()
                body = reply.read()
                self.send_response(reply.status)
                for key in ("Content-Range", "Content-Type"):
                    if reply.getheader(key):
                        self.send_header(key, reply.getheader(key) or "")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                conn.close()

            def log_message(self, *args: object) -> None:
                pass

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> ForwardProxy:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
