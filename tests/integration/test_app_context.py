"""The app's shared state is closed when the app ends (app.ui.shell.app_context): a running session is ended as
by Stop (its uploaded video copy deleted, its log closed), and the worker process is stopped, instead of
being left to the interpreter's exit."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from app.session.store import load_session
from app.ui.shell.app_context import AppContext
from app.worker.messages import WorkerSpec
from tests.integration.conftest import wait
from tests.integration.video import write_hands_video


def test_closing_the_app_ends_its_session_and_stops_its_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FLET_APP_STORAGE_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("FLET_APP_STORAGE_CACHE", str(tmp_path / "cache"))
    pages: list[object] = []
    app = AppContext(WorkerSpec(), lambda page, context: pages.append((page, context)))
    practice = app.practice()
    assert app.practice() is practice and app.models() is app.models(), "one of each for every tab"
    try:
        wait(practice, lambda s: s.worker_status == "ready")
        upload = tmp_path / "upload-folder"
        upload.mkdir()
        write_hands_video(upload / "hands.avi", seconds_per_phase=60)  # far longer than the test
        practice.set_interval(2)
        practice.start_video("hands.avi", upload / "hands.avi", discard=upload)
        answered = wait(practice, lambda s: s.running and len(s.session.timeline) >= 1)
        assert multiprocessing.active_children(), "the worker runs in a child process"
    except BaseException:
        app.close()
        raise

    app.close()
    app.close()  # at most once: a second call (an exit hook after a signal) changes nothing
    assert not practice.state.running
    assert not upload.exists(), "the copy uploaded for the session is deleted, as by Stop"
    assert multiprocessing.active_children() == []
    log = tmp_path / "data" / "sessions" / f"{answered.session_id}.jsonl"
    assert len([e for e in load_session(log).events if e.kind == "practice"]) >= 1
