"""A browser whose connection drops (Wi-Fi gone for a moment, a phone locked and unlocked) gets a
working page back when it reconnects: the screen it was on, taps that answer, a file picker."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e.conftest import AppServer, go_to, node, open_app_page, text_of, wait_text
from tests.e2e.test_practice import choose, start_with_files
from tests.integration.conftest import held_out_scenes
from tests.servers.tcp_relay import TcpRelay

pytestmark = pytest.mark.browser
WIDE = {"width": 1280, "height": 800}


def test_a_page_works_again_after_its_connection_drops(browser, tmp_path: Path) -> None:  # noqa: ANN001
    image = tmp_path / "no.jpg"
    image.write_bytes(next(data for _, data, expected in held_out_scenes(1, seed=9) if expected == "no"))
    with AppServer(tmp_path / "data") as server, TcpRelay(server.port) as relay:
        page = open_app_page(browser, relay.url, viewport=WIDE)
        wait_text(page, "model-status", "Model ready")
        go_to(page, "Settings", "settings-threads")

        assert relay.cut() >= 1, "the page's WebSocket went through the relay"
        time.sleep(3)  # Flet's client reconnects on its own and the server resumes the session
        # The screen it was on is back, and it answers taps (Flet 1.0.5's resumed page did not).
        node(page, "settings-threads").wait_for(timeout=30_000)
        before = text_of(page, "settings-threads")
        node(page, "settings-threads-more").click()
        wait_text(page, "settings-threads", str(int(before) + 1), timeout=20)
        # The file picker came back too, and answers reach the page.
        go_to(page, "Practice", "start-stop")
        choose(page, "Image")
        start_with_files(page, [image])
        wait_text(page, "observation", "NO")
