"""Durability: `watch` killed mid-session loses no event it had printed.

The pipeline appends (and fsyncs) each event before it reports it, so every
line a user saw on stdout must be in the session file after a SIGKILL, and the
file must load (a line torn by the kill is tolerated, never fatal).

Reviews: eight examiners confirming one keyframe at once record one first verdict
(before the session lock, two of eight did), and a read-only or full disk ends a
review in one sentence (it was a traceback).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from queue import Empty, Queue

import pytest

from app.core.session import ExaminerConfirmed
from app.session.store import SessionLog, load_session, session_locked
from tests.conditions import wait_until
from tests.integration.video import write_hands_video
from tests.unit.test_session import practice

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
        log.append(ExaminerConfirmed(event_id="after-restart", target_id=shown[0], wall_time=time.time()))
    reloaded = load_session(path)
    assert [e.event_id for e in reloaded.events] == on_disk + ["after-restart"]
    listed = subprocess.run(
        [sys.executable, "-m", "app", "sessions", "list", "--json"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0 and json.loads(listed.stdout.splitlines()[0])["id"] == path.stem


# --- examiners' reviews: one first verdict whoever asks at once, and a disk that refuses it ---------------


def _unreviewed_session(data: Path) -> Path:
    path = data / "sessions" / "s.jsonl"
    with SessionLog(path) as log:
        log.append(replace(practice(1, "yes"), profile_id="hand_position", allowed_values=("yes", "no", "unknown")))
    return path


def _review_cli(examiner: str) -> list[str]:
    return [sys.executable, "-m", "app", "sessions", "review", "s", "e1", "--confirm", "--examiner", examiner]


def _waiting_for_lock(path: Path, pids: set[int]) -> set[int]:
    """The pids blocked in flock on `path`, from /proc/locks ("1: -> FLOCK ADVISORY WRITE pid maj:min:inode …")."""
    inode = path.stat().st_ino
    waiting = set()
    for line in Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        if len(fields) > 6 and fields[1] == "->" and int(fields[6].rsplit(":", 1)[1]) == inode:
            waiting.add(int(fields[5]))
    return waiting & pids


def test_eight_examiners_confirming_one_keyframe_at_once_record_one_first_verdict(tmp_path: Path) -> None:
    data = tmp_path / "data"
    path = _unreviewed_session(data)
    env = dict(os.environ, FLET_APP_STORAGE_DATA=str(data))
    # While this test holds the session's lock (as a Sessions screen in another process would), all eight
    # reviews start and must wait for it; released together, they race for the first verdict.
    with session_locked(path):
        procs = [
            subprocess.Popen(_review_cli(f"ex{i}"), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for i in range(8)
        ]
        pids = {p.pid for p in procs}

        def all_waiting() -> bool:
            if _waiting_for_lock(path, pids) == pids:
                return True
            ended = [p for p in procs if p.poll() is not None]
            assert not ended, f"a review went ahead without the session's lock: {ended[0].communicate()}"
            return False

        assert wait_until(all_waiting, timeout=120), "the reviews neither waited for the lock nor ended"
    results = [(p.wait(timeout=120), *(s.decode() for s in p.communicate())) for p in procs]
    assert sorted(code for code, _, _ in results) == [0] + [1] * 7, results
    for code, out, err in results:
        assert "Traceback" not in err
        if code:
            assert out == "" and len(err.splitlines()) == 1 and "e1 was already reviewed (confirmed yes by ex" in err
    verdicts = [e for e in load_session(path).events if isinstance(e, ExaminerConfirmed)]
    assert len(verdicts) == 1 and verdicts[0].revises == ""


def _review_in_namespace(data: Path, mount: str) -> subprocess.CompletedProcess[str]:
    """`sessions review` in a user + mount namespace, after the shell commands `mount` ($S: data/sessions)."""
    cli = " ".join(f"'{a}'" for a in _review_cli("ann"))
    script = f"S='{data / 'sessions'}'\n{mount} || exit 99\nexec {cli}\n"
    env = dict(os.environ, FLET_APP_STORAGE_DATA=str(data))
    proc = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 99, proc.stderr
    return proc


# A tmpfs over the sessions folder with the session copied onto it, then made read-only or filled up.
_ON_TMPFS = 'cp "$S/s.jsonl" "$S.copy" && mount -t tmpfs -o size=64k tmpfs "$S" && cp "$S.copy" "$S/s.jsonl"'


@pytest.mark.enospc
@pytest.mark.usefixtures("real_tmpfs")
@pytest.mark.parametrize(
    "mount, why",
    [
        (f'{_ON_TMPFS} && mount -o remount,ro "$S"', "Read-only file system"),
        (f'{_ON_TMPFS} && {{ cat /dev/zero > "$S/fill" 2>/dev/null; true; }}', "No space left on device"),
    ],
    ids=["read-only", "full"],
)
def test_a_review_the_disk_refuses_ends_in_one_sentence(tmp_path: Path, mount: str, why: str) -> None:
    data = tmp_path / "data"
    path = _unreviewed_session(data)
    with open(path, "ab") as fh:  # to a page's end: on a full tmpfs any append then needs a page there is not
        fh.write(b" " * (4095 - path.stat().st_size) + b"\n")
    proc = _review_in_namespace(data, mount)
    assert proc.returncode == 1 and proc.stdout == "", proc
    assert proc.stderr.splitlines() == [f"error: cannot record the review in {path}: {why}"], proc.stderr
