"""The camera pump when a picture fails: a tab that is going away is not a camera that broke."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from app.frames.motion_stream import MotionStreams
from app.ui.practice.camera_pump import CameraPump
from tests.unit.asyncrun import run_async


class FailingCamera:
    """A browser camera whose page's connection just closed: Flet's send queue is gone."""

    async def get_available_cameras(self) -> list[str]:
        return ["front"]

    async def initialize(self, *_: Any, **__: Any) -> None:
        return None

    async def supports_image_streaming(self) -> bool:
        return False

    async def take_picture(self) -> bytes:
        raise AttributeError("'NoneType' object has no attribute 'put_nowait'")


class RecordingController:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.state = SimpleNamespace(camera_tab="")

    def prepare_camera(self) -> None:
        self.calls.append(("prepare", ""))

    def start_camera(self, tab: str = "") -> None:
        self.state.camera_tab = tab

    def camera_failed(self, notice: Any) -> None:
        self.calls.append(("failed", notice.key))

    def camera_tab_gone(self, tab: str) -> bool:
        self.calls.append(("gone", tab))
        return True


@pytest.mark.parametrize(
    ("closed", "said"),
    [
        (True, ("gone", "tab-1")),  # a reload: every tab says the camera's tab was reloaded or closed
        (False, ("failed", "camera_lost")),  # the page is there: the camera itself stopped
    ],
)
def test_a_picture_that_fails_as_the_tab_goes_ends_the_session_as_a_tab_gone(closed: bool, said: tuple) -> None:
    controller = RecordingController()
    pump = CameraPump(
        FailingCamera(),
        controller,
        "tab-1",
        MotionStreams(),
        "page-1",
        page_closed=lambda: closed,  # type: ignore[arg-type]
    )
    run_async(pump.run())
    assert controller.calls == [("prepare", ""), said]
    pump.page_gone()  # Flet's own word that the page left, later: the session is not ended twice
    assert controller.calls == [("prepare", ""), said]
