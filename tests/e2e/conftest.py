"""Serve the real app on 127.0.0.1 and drive it in Debian's headless Chromium."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the app exited early with status {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"the app did not listen on port {port}")


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    log = tmp_path_factory.mktemp("app") / "app.log"
    env = {**os.environ, "FLET_SERVER_PORT": str(port)}
    env.pop("DISPLAY", None)
    with open(log, "wb") as fh:
        # A new process group: the Flet server can outlive its parent, so the whole group is killed.
        proc = subprocess.Popen(
            [sys.executable, "-m", "app", "ui", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture()
def page(browser, app_url: str):  # noqa: ANN001 - playwright types
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    pg = context.new_page()
    pg.goto(app_url)
    pg.wait_for_function("!document.getElementById('loading')", timeout=60_000)
    # Flutter renders to a canvas; its semantics tree gives the DOM nodes the tests read.
    pg.locator("flt-semantics-placeholder").dispatch_event("click")
    yield pg
    context.close()
