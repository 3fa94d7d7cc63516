"""The log: a rotating file in the platform log folder, stderr with --verbose, worker tracebacks kept,
answers only when the user allows them, MNN's console lines out of the terminal for the UI."""

from __future__ import annotations

import queue
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import logs
from app.core.generation import Timings
from app.core.session import PracticeEvent
from app.pipeline.live import LivePipeline
from app.session.store import SessionLog
from app.storage import locations
from app.worker.messages import Event, LoadFailed, WorkerSpec
from app.worker.process_host import ProcessWorkerHost
from tests.conditions import HANG_S

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def log_folder(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "logs"
    logs.reset()


def _run_cli(*args: str, env_data: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(env_data), "FLET_APP_STORAGE_DATA": str(env_data)}
    return subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_log_folder_is_the_app_storage_in_built_apps() -> None:
    assert locations.log_dir({"FLET_APP_STORAGE_DATA": "/data/app"}) == Path("/data/app/logs")
    assert locations.log_dir({}).name.lower() in ("log", "logs")  # platformdirs' user log folder


def test_a_failed_model_load_keeps_its_traceback_in_the_worker_log(log_folder: Path) -> None:
    logs.setup(folder=log_folder)
    events: queue.Queue[Event] = queue.Queue()
    host = ProcessWorkerHost(WorkerSpec(model=str(log_folder / "no-such-model")), events.put)
    host.start()
    try:
        while not isinstance(event := events.get(timeout=60), LoadFailed):
            pass
    finally:
        host.stop()
    assert "\n" not in event.message  # the host gets one line ...
    worker_log = (log_folder / logs.WORKER_LOG).read_text()
    assert "the model could not be loaded" in worker_log
    assert "Traceback (most recent call last)" in worker_log  # ... the log keeps the traceback


def test_cli_logs_to_the_file_and_with_verbose_to_stderr(tmp_path: Path) -> None:
    quiet = _run_cli("models", "path", env_data=tmp_path)
    assert quiet.returncode == 0 and "start: models" not in quiet.stderr
    assert "start: models" in (tmp_path / "logs" / logs.APP_LOG).read_text()
    loud = _run_cli("models", "path", "--verbose", env_data=tmp_path)
    assert loud.returncode == 0 and "keyframe.cli INFO start: models" in loud.stderr
    assert loud.stdout == quiet.stdout  # stdout stays the command's own output


def test_answers_reach_the_log_only_when_the_user_allows_it(log_folder: Path) -> None:
    event = PracticeEvent(
        event_id="e1",
        t=1.0,
        wall_time=1000.0,
        keyframe_id="kf-00001",
        signal="hand_position_correct",
        observation="yes",
        parse_status="valid",
        parse_reason="ok",
        raw='{"signal":"hand_position_correct","observation":"yes"}',
        timings=Timings(1.0, 0.5, 2.0, 3.0, 6.0, 4.0, 10.0, 50, 12),
        model_id="m",
        model_revision="r",
        backend="cpu",
    )
    for allowed in (False, True):
        logs.setup(folder=log_folder / str(allowed), answers=allowed)
        with SessionLog(log_folder / f"{allowed}.jsonl") as session_log:
            pipeline = LivePipeline(WorkerSpec(), lambda _: None, log=session_log, host_kind="thread")
            pipeline._record(event)  # what the pipeline does with every answer from the worker
        text = (log_folder / str(allowed) / logs.APP_LOG).read_text()
        assert "kf-00001 answered" in text
        assert ('"observation":"yes"' in text) is allowed


def test_the_ui_worker_sends_mnn_console_lines_to_the_log_not_the_terminal(log_folder: Path) -> None:
    script = (
        "import queue, sys\n"
        "from pathlib import Path\n"
        "from app import logs\n"
        "from app.worker.messages import Ready, LoadFailed, WorkerSpec\n"
        "from app.worker.process_host import ProcessWorkerHost\n"
        f"logs.setup(folder=Path({str(log_folder)!r}), native_output_to_log=True)\n"
        "events = queue.Queue()\n"
        "host = ProcessWorkerHost(WorkerSpec(), events.put)\n"
        "host.start()\n"
        "while not isinstance(e := events.get(timeout=60), (Ready, LoadFailed)): pass\n"
        "host.stop()\n"
        "print(type(e).__name__)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=HANG_S)
    assert run.stdout.strip() == "Ready", run.stderr
    assert "The device supports" not in run.stderr
    assert "The device supports" in (log_folder / logs.WORKER_LOG).read_text()
