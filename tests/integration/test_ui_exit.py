"""`ui` leaves no process behind when it ends on SIGTERM: the worker child and
multiprocessing's resource tracker, which ignores SIGTERM, end before the app does."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import IO

import msgpack
from websockets.sync.client import connect

from tests.conditions import wait_until
from tests.faults.procs import cmdline, workers

ROOT = Path(__file__).resolve().parents[2]
SUBREAPER = Path(__file__).with_name("subreaper.py")
_REGISTER_CLIENT = 1  # Flet's MessageAction: the first message of a page


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _line(stream: IO[bytes], timeout_s: float) -> bytes:
    """The next line the subreaper prints (its stdout is unbuffered here); fails instead of hanging when none comes."""
    assert select.select([stream], [], [], timeout_s)[0], f"nothing in {timeout_s:.0f} s"
    return stream.readline()


def _listens(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def _in_session(sid: int) -> set[int]:
    pids = set()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and os.getsid(int(proc.name)) == sid:
                pids.add(int(proc.name))
        except OSError:
            continue  # ended meanwhile
    return pids


def _end_session(sid: int) -> None:
    try:
        os.killpg(sid, signal.SIGKILL)  # the app leads its session's process group
    except ProcessLookupError:
        pass


def _open_page(port: int) -> None:
    """What the browser's Flet client sends first: the app's main() runs for it and starts the worker."""
    with connect(f"ws://127.0.0.1:{port}/ws", origin=f"http://127.0.0.1:{port}", open_timeout=60) as ws:  # type: ignore[arg-type]
        page = {"route": "/", "width": 1200, "height": 800, "web": True}
        ws.send(b"\x00" + msgpack.packb([_REGISTER_CLIENT, {"session_id": "", "page_name": "", "page": page}]))
        ws.recv(timeout=60)  # the registration's answer


def test_ui_ends_on_sigterm_with_its_worker_and_resource_tracker(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "FLET_APP_STORAGE_DATA": str(tmp_path / "data"), "FLET_APP_STORAGE_CACHE": str(tmp_path)}
    env.pop("DISPLAY", None)  # no browser tab
    app = [sys.executable, "-m", "app", "ui", "--port", str(port)]
    with open(tmp_path / "ui.log", "wb") as log:
        watcher = subprocess.Popen(
            [sys.executable, str(SUBREAPER), *app], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=log, bufsize=0
        )
    assert watcher.stdout is not None
    pid = int(_line(watcher.stdout, timeout_s=60))
    report = None
    try:
        assert wait_until(lambda: _listens(port) or watcher.poll() is not None, timeout=120), "the UI listens"
        _open_page(port)
        assert wait_until(lambda: any(b"resource_tracker" in cmdline(p) for p in _in_session(pid)), timeout=120), (
            "the resource tracker runs"
        )
        assert wait_until(lambda: workers(_in_session(pid)), timeout=120), "the worker child runs"
        os.kill(pid, signal.SIGTERM)
        report = json.loads(_line(watcher.stdout, timeout_s=60))  # the app ended
    finally:
        if report is None:  # the test failed before the app ended: nothing is left running
            _end_session(pid)
        watcher.wait(timeout=60)
    log_text = (tmp_path / "ui.log").read_text(errors="replace")
    assert report["exit"] == 128 + signal.SIGTERM, log_text
    assert report["orphans"] == []  # nothing outlived the app, not even for a moment
