"""The privacy promise, checked on the real analysis path."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.frames.intake import decode_image_bytes
from app.privacy.guard import active_guard
from app.worker import process_host
from app.worker.messages import Analyze, Finished, JobFailed, LoadFailed, Ready, WorkerSpec
from app.worker.thread_host import ThreadWorkerHost
from tests.conditions import HANG_S, wait_for
from tests.integration.conftest import held_out_scenes, write_scenes
from tests.integration.leaky_worker import leaky_child_main
from tests.integration.video import write_hands_video

ROOT = Path(__file__).resolve().parents[2]


class LoopbackListener:
    """A TCP listener on 127.0.0.1 standing in for a remote host; counts the connections that reach it."""

    def __init__(self) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.port = self.socket.getsockname()[1]

    def accepted(self) -> int:
        count = 0
        while select.select([self.socket], [], [], 0.2)[0]:
            self.socket.accept()[0].close()
            count += 1
        return count

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def listener() -> Iterator[LoopbackListener]:
    stand_in = LoopbackListener()
    yield stand_in
    stand_in.close()


def _run_leaky_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, port: int) -> tuple[list, Finished]:
    leak_log = tmp_path / "leak.log"
    monkeypatch.setenv("KEYFRAME_TEST_LEAK_LOG", str(leak_log))
    monkeypatch.setenv("KEYFRAME_TEST_LEAK_PORT", str(port))
    monkeypatch.setattr(process_host, "_child_main", leaky_child_main)
    events: list = []
    host = process_host.ProcessWorkerHost(WorkerSpec(), events.append)
    host.start()
    try:
        _, data, expected = held_out_scenes(count_per_kind=1, seed=55)[0]
        host.submit(Analyze("kf-1", decode_image_bytes(data), "scene"))
        done = wait_for(
            lambda: [e for e in events if isinstance(e, (Finished, JobFailed, LoadFailed))], bool, 120, "an outcome"
        )
    finally:
        host.stop()
    finished = done[0]
    assert isinstance(finished, Finished), finished
    assert finished.result.observation == expected  # blocking did not break the analysis
    return leak_log.read_text().splitlines(), finished


@pytest.mark.netns
def test_the_worker_child_reaches_no_network_from_python_or_native_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, netns: None, listener: LoopbackListener
) -> None:
    """The real worker child tries two ways out mid-analysis (tests/integration/leaky_worker.py)."""
    session_guard = active_guard()
    blocked_here = session_guard.blocked_count if session_guard is not None else 0
    lines, finished = _run_leaky_worker(tmp_path, monkeypatch, listener.port)
    assert lines[0] == "python: blocked"  # raised by the child's guard, before any connect syscall
    assert finished.network_blocked == 1  # counted by the child's guard and reported with the answer
    # The libc connect() the hook cannot see: the worker's network namespace has no interface up.
    assert lines[1] == "native: Network is unreachable"
    assert listener.accepted() == 0
    if session_guard is not None:
        assert session_guard.blocked_count == blocked_here  # it happened in the child, not in this process


@pytest.mark.netns
def test_the_worker_says_it_is_os_isolated(netns: None) -> None:
    ready = _ready(process_host.ProcessWorkerHost)
    assert ready.isolation == "os-isolated"
    assert ready.isolation_how.startswith("Linux ") and "Network is unreachable" in ready.isolation_how


def test_a_thread_worker_in_the_app_process_says_it_is_only_guarded() -> None:
    """The test process keeps its network, like the app's UI process: a thread worker there is not isolated."""
    ready = _ready(ThreadWorkerHost)
    assert ready.isolation == "guarded"
    assert (
        "thread of the app's own process" in ready.isolation_how and "native code is not covered" in ready.isolation_how
    )


def _ready(kind: type) -> Ready:
    events: list = []
    host = kind(WorkerSpec(), events.append)
    host.start()
    try:
        ready = wait_for(lambda: [e for e in events if isinstance(e, (Ready, LoadFailed))], bool, 60, "a loaded model")
    finally:
        host.stop()
    assert isinstance(ready[0], Ready), ready
    return ready[0]


NON_ROOT = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]  # euid 1000: the path users take
ISOLATE = (
    "import os, socket, sys, threading, time\n"
    "if sys.argv[1] == 'threads':\n"
    "    threading.Thread(target=time.sleep, args=(3,), daemon=True).start()\n"
    "from app.privacy.isolation import isolate_this_process\n"
    "from app.privacy.native_connect import native_connect\n"
    "i = isolate_this_process()\n"
    "print(i.level, os.getuid(), os.getgid(), native_connect('127.0.0.1', int(sys.argv[2])) or 'connected')\n"
    "print(i.how)\n"
)


def _isolate(prefix: list[str], threads: str, port: int) -> list[str]:
    """Runs ISOLATE in a fresh process; its two lines: `level uid gid native-connect-outcome`, then how."""
    command = [*prefix, sys.executable, "-c", ISOLATE, threads, str(port)]
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=HANG_S, check=True
    ).stdout.splitlines()


@pytest.mark.netns
@pytest.mark.parametrize("as_root", [True, False], ids=["root", "user"])
def test_a_process_isolates_itself_as_root_or_user(netns: None, listener: LoopbackListener, as_root: bool) -> None:
    out = _isolate([] if as_root else NON_ROOT, "single", listener.port)
    uid = os.getuid() if as_root else 1000
    assert out[0] == f"os-isolated {uid} {uid if as_root else 1000} Network is unreachable"  # same ids inside
    assert ("user + network namespace" in out[1]) is (not as_root or os.geteuid() != 0)
    assert listener.accepted() == 0


@pytest.mark.netns
def test_a_user_process_with_threads_says_it_is_only_guarded(netns: None, listener: LoopbackListener) -> None:
    """The kernel gives no user namespace to a multithreaded process: the level must say so, not pretend."""
    out = _isolate(NON_ROOT, "threads", listener.port)
    assert out[0] == "guarded 1000 1000 connected"
    assert "already runs threads" in out[1] and "audit hook" in out[1]
    assert listener.accepted() == 1


@pytest.mark.netns
@pytest.mark.parametrize("as_root", [True, False], ids=["root", "user"])
def test_doctor_checks_the_isolation_with_a_native_connect(netns: None, as_root: bool) -> None:
    prefix = [] if as_root else NON_ROOT
    proc = subprocess.run(
        [*prefix, sys.executable, "-m", "app", "doctor", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    worker = json.loads(proc.stdout)["worker"]
    assert worker["level"] == "os-isolated"
    assert worker["native_connect"] == "Network is unreachable"
    assert worker["listener_accepted"] == 0


def test_the_app_never_imports_mnn_tools(tmp_path: Path) -> None:
    files = write_scenes(tmp_path, held_out_scenes(count_per_kind=1, seed=56)[:1])
    # The model runs in this process (thread host), so every module MNN's path imports is visible here.
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from app.frames.intake import read_image_file\n"
        "from app.worker.blocking import BlockingWorker\n"
        "from app.worker.messages import WorkerSpec\n"
        "with BlockingWorker(WorkerSpec(), host_kind='thread') as worker:\n"
        "    worker.start(60)\n"
        f"    outcome = worker.analyze(read_image_file(Path({str(files[0][0])!r})), 'x')\n"
        "code = 0 if outcome.finished is not None else 1\n"
        "leaked = sorted(m for m in sys.modules if m == 'MNN.tools' or m.startswith('MNN.tools.'))\n"
        "assert 'MNN.llm' in sys.modules\n"
        "sys.stderr.write('LEAKED=' + ','.join(leaked) + '\\n')\n"
        "sys.exit(code)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=HANG_S)
    assert proc.returncode == 0, proc.stderr
    assert "LEAKED=\n" in proc.stderr
    for path in (ROOT / "app").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "MNN.tools" not in text and "mnnconvert" not in text and "mnnquant" not in text, path


@pytest.mark.netns
@pytest.mark.parametrize("command,worker", [("watch", "process"), ("watch", "thread"), ("analyze", "process")])
def test_analyze_and_watch_run_without_a_network_as_a_user(
    netns: None, tmp_path: Path, command: str, worker: str
) -> None:
    """The whole command process (which decodes the video itself) is isolated, and the work still gets done;
    the model's process says so too, whether it is the worker child or this process (thread worker)."""
    if command == "watch":
        target = tmp_path / "clip.avi"
        write_hands_video(target, seconds_per_phase=3, fps=5)
    else:
        target = write_scenes(tmp_path, held_out_scenes(count_per_kind=1, seed=57)[:1])[0][0]
    proc = subprocess.run(
        [
            *NON_ROOT,
            sys.executable,
            "-m",
            "app",
            command,
            str(target),
            "-v",
            *(["--worker", worker] * (command == "watch")),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_S,
        env={**os.environ, "FLET_APP_STORAGE_DATA": str(tmp_path / "data")},
    )
    assert proc.returncode == 0, proc.stderr
    assert "network: os-isolated (Linux user + network namespace with no network interface up" in proc.stderr
    model_process = "network of the model's process: os-isolated ("
    model_process += "Linux user + network namespace" if worker == "process" else "this whole process has no network"
    assert model_process in proc.stderr, proc.stderr
    assert '"observation"' in proc.stdout


def test_what_a_new_worker_child_imports_before_it_isolates_starts_no_thread() -> None:
    """Linux gives a user namespace only to a single-threaded process, and numpy/OpenCV start threads on
    import: the modules a spawned worker child loads to unpickle its arguments must not pull them in."""
    script = (
        "import os, sys\n"
        "import app.worker.process_host, app.worker.messages, app.logs, app.privacy.isolation\n"
        "heavy = sorted(m for m in ('numpy', 'cv2', 'PIL', 'MNN', 'flet') if m in sys.modules)\n"
        "print(len(os.listdir('/proc/self/task')), heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "[]"], out.stdout
