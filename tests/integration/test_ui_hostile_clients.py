"""`ui` under clients that are not the app's page, all with the app's own Origin: malformed websocket
frames, and pages that close right after registering. The server stays up and answers the next page;
the terminal shows at most one line about them (the details go to the log file), never a traceback."""

from __future__ import annotations

from pathlib import Path

import msgpack
from websockets.sync.client import connect

from tests.conditions import wait_until
from tests.e2e.conftest import AppServer
from tests.integration.test_ui_exit import _REGISTER_CLIENT, _open_page

PAGE = {"route": "/", "width": 1200, "height": 800, "web": True}
ODD_FRAMES = (
    b"\x00\xc1\xff\x00not msgpack",
    b"\x00" + msgpack.packb([99, {"x": 1}]),  # no such action
    b"\x00" + msgpack.packb([_REGISTER_CLIENT, {"session_id": 5}]),  # a registration missing its page
    "text, not bytes",
)


def _send_and_close(port: int, frame: bytes | str) -> None:
    with connect(f"ws://127.0.0.1:{port}/ws", origin=f"http://127.0.0.1:{port}", open_timeout=60) as ws:  # type: ignore[arg-type]
        ws.send(frame)


def test_odd_clients_leave_the_terminal_quiet_and_the_server_up(tmp_path: Path) -> None:
    with AppServer(tmp_path / "data") as server:
        _open_page(server.port)  # the worker and the app's controllers are up, as in normal use
        terminal = server.data / "app.log"
        before = terminal.read_text(errors="replace")
        register = b"\x00" + msgpack.packb([_REGISTER_CLIENT, {"session_id": "", "page_name": "", "page": PAGE}])
        for _ in range(3):
            for frame in (*ODD_FRAMES, register, register):  # a registration, then gone at once
                _send_and_close(server.port, frame)
        log_file = server.data / "logs" / "keyframe.log"
        assert wait_until(lambda: log_file.read_text(errors="replace").count("Receive loop error") >= 3, 60), (
            "Flet's errors reach the log file"
        )
        _open_page(server.port)  # and a real page is still answered
        said = terminal.read_text(errors="replace")[len(before) :]
    assert "Traceback" not in said, said
    assert len(said.splitlines()) <= 1, said
    assert all(line.startswith("note: the web server logged an error") for line in said.splitlines()), said
