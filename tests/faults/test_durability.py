"""Durability: `watch` killed mid-session loses no event it had printed.

The pipeline appends (and fsyncs) each event before it reports it, so every
line a user saw on stdout must be in the session file after a SIGKILL, and the
file must load (a line torn by the kill is tolerated, never fatal).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue

import pytest

from app.core.session import ExaminerConfirmed
from app.session.store import SessionLog, load_session
from tests.integration.video import write_hands_video

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL and process groups")


@pytest.fixture(scope="module")
def long_video(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # 120 s at --interval 2: 60 keyframes, each one event and one fsync, about 20 ms apart on the demo model,
    # so even a late kill lands well before the end on a loaded machine.
    path = tmp_path_factory.mktemp("video") / "hands.avi"
    write_hands_video(path, seconds_per_phase=40)
    return path


def _pump(stream, lines: Queue) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line)
    lines.put(None)


# (events printed before the kill, then a delay): kills land early, mid-run and deep in the
# fsync-heavy stream of skipped / practice events.
@pytest.mark.parametrize("after_events, delay_s", [(3, 0.0), (4, 0.003), (7, 0.011), (12, 0.027)])
def test_sigkill_mid_session_loses_no_printed_event(
    long_video: Path, tmp_path: Path, after_events: int, delay_s: float
) -> None:
    data = tmp_path / "data"
    env = dict(os.environ, FLET_APP_STORAGE_DATA=str(data))
    stderr = open(tmp_path / "stderr.txt", "wb")  # a file, not a pipe: an orphaned worker may keep it open
    proc = subprocess.Popen(
        [sys.executable, "-m", "app", "watch", str(long_video), "--interval", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr,
        start_new_session=True,  # its own process group, so the test can clean up the worker too
    )
    lines: Queue[bytes | None] = Queue()
    threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True).start()
    printed: list[bytes] = []
    try:
        deadline = time.monotonic() + 120
        while len(printed) < after_events:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, (tmp_path / "stderr.txt").read_text()
            printed.append(line)
        time.sleep(delay_s)
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL, "watch ended before the kill: the test proved nothing"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        # The worker child and resource tracker of *this* run (its group), whether or not they outlive their parent.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        stderr.close()
    # Everything the killed process wrote to stdout, including what the test had not read yet.
    while True:
        try:
            line = lines.get(timeout=30)
        except Empty:
            pytest.fail("stdout never closed after the kill")
        if line is None:
            break
        printed.append(line)
    shown = []
    for line in printed:
        try:
            shown.append(json.loads(line)["event_id"])
        except ValueError:
            assert line is printed[-1] and not line.endswith(b"\n"), "only a last line can be cut by the kill"
    assert len(shown) >= after_events

    files = sorted((data / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    assert files, "no session file"
    path = files[-1]
    loaded = load_session(path)
    on_disk = [e.event_id for e in loaded.events]
    assert set(shown) <= set(on_disk), f"printed but lost: {sorted(set(shown) - set(on_disk))}"
    assert on_disk[: len(shown)] == shown, "the log holds the events in the order they were shown"
    line_count = len(path.read_bytes().splitlines())
    assert set(loaded.damaged_lines) <= {line_count}, "only the last line may be torn"

    # After the "restart" the session is usable: it lists, and a review appends after any torn line.
    with SessionLog(path) as log:
        log.append(ExaminerConfirmed("after-restart", shown[0], time.time()))
    reloaded = load_session(path)
    assert [e.event_id for e in reloaded.events] == on_disk + ["after-restart"]
    listed = subprocess.run(
        [sys.executable, "-m", "app", "sessions", "list", "--json"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0 and json.loads(listed.stdout.splitlines()[0])["id"] == path.stem
