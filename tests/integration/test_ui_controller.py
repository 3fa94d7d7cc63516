"""The still-image controller with a real worker: the screen follows the last pick."""

from __future__ import annotations

import threading

import pytest

from app.ui.controller import AnalysisController, ScreenState
from app.worker.messages import WorkerSpec
from tests.integration.conftest import held_out_scenes


@pytest.mark.parametrize("host_kind", ["process", "thread"])
def test_latest_pick_wins_and_bad_files_are_reported(host_kind: str) -> None:
    states: list[ScreenState] = []
    settled, ready = threading.Event(), threading.Event()

    def on_change(state: ScreenState) -> None:
        states.append(state)
        if state.model_status == "ready":
            ready.set()
        if state.result is not None and not state.busy:
            settled.set()

    controller = AnalysisController(WorkerSpec(pace_ms=20), on_change, host_kind=host_kind)
    controller.start()
    try:
        assert ready.wait(60)
        scenes = held_out_scenes(count_per_kind=1, seed=61)
        yes = next(s for s in scenes if s[2] == "yes")
        no = next(s for s in scenes if s[2] == "no")
        controller.submit("broken.jpg", b"not an image")
        assert "broken.jpg" in (controller.state.error or "")
        controller.submit("first.jpg", yes[1])
        controller.submit("second.jpg", no[1])  # cancels the first mid-answer (20 ms per step)
        assert settled.wait(60)
        final = controller.state
        assert final.image_name == "second.jpg" and final.result is not None
        assert final.result.source == "second.jpg" and final.result.observation == "no"
        assert final.error is None and final.model_status == "ready"
        assert not any(s.result is not None and s.result.source == "first.jpg" for s in states)
    finally:
        controller.stop()
