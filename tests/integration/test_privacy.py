"""The privacy promise, checked on the real analysis path."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.frames.intake import decode_image_bytes
from app.privacy.guard import active_guard
from app.worker import process_host
from app.worker.messages import Analyze, Finished, JobFailed, LoadFailed, WorkerSpec
from tests.integration.conftest import held_out_scenes, write_scenes
from tests.integration.leaky_worker import leaky_child_main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.netns
def test_a_connection_attempt_in_the_worker_child_is_blocked_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, netns: None
) -> None:
    """The real worker child, with its own guard, tries to connect out mid-analysis (tests/integration/leaky_worker.py).

    The child runs in an empty network namespace, so nothing could leave even if the guard failed:
    then the outcome would read `unreachable` instead of `blocked`, and the count would be 0.
    """
    leak_log = tmp_path / "leak.log"
    monkeypatch.setenv("KEYFRAME_TEST_LEAK_LOG", str(leak_log))
    monkeypatch.setattr(process_host, "_child_main", leaky_child_main)
    session_guard = active_guard()
    blocked_here = session_guard.blocked_count if session_guard is not None else 0
    events: list = []
    host = process_host.ProcessWorkerHost(WorkerSpec(), events.append)
    host.start()
    try:
        _, data, expected = held_out_scenes(count_per_kind=1, seed=55)[0]
        host.submit(Analyze("kf-1", decode_image_bytes(data), "scene"))
        deadline = time.monotonic() + 120
        while not (done := [e for e in events if isinstance(e, (Finished, JobFailed, LoadFailed))]):
            assert time.monotonic() < deadline, events
            time.sleep(0.02)
    finally:
        host.stop()
    finished = done[0]
    assert isinstance(finished, Finished), finished
    assert leak_log.read_text() == "blocked\n"  # raised by the guard, before any connect syscall
    assert finished.network_blocked == 1  # counted by the child's guard and reported with the answer
    assert finished.result.observation == expected  # blocking did not break the analysis
    if session_guard is not None:
        assert session_guard.blocked_count == blocked_here  # it happened in the child, not in this process


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
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "LEAKED=\n" in proc.stderr
    for path in (ROOT / "app").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "MNN.tools" not in text and "mnnconvert" not in text and "mnnquant" not in text, path
