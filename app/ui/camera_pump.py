"""A browser's or phone's camera feeding the practice session: open it, then one picture every CAMERA_PERIOD_S.

flet-camera lives in the page, so the pump is that page's async task. It runs while the session
is this tab's camera session; the page going away (`stop`) or the camera failing ends it, and the
controller is told which of the two happened.
"""

from __future__ import annotations

import asyncio
import logging

import flet_camera as fc

from app.core.notice import Notice
from app.ui.practice_controller import PracticeController

log = logging.getLogger("keyframe.ui")

CAMERA_PERIOD_S = 0.4  # one picture from the camera this often: enough for 2–5 s keyframes


class CameraPump:
    def __init__(self, camera: fc.Camera, controller: PracticeController, tab: str) -> None:
        self._camera = camera
        self._controller = controller
        self._tab = tab
        self._pumping = False

    async def run(self) -> None:
        """Opens the first camera and sends its pictures until the session or this page ends."""
        controller = self._controller
        controller.prepare_camera()
        try:
            cameras = await self._camera.get_available_cameras()
            if not cameras:
                controller.camera_failed(Notice("camera_denied", error=True))
                return
            await self._camera.initialize(cameras[0], fc.ResolutionPreset.MEDIUM, enable_audio=False)
        except Exception as exc:  # the browser refused (permission) or has no device
            log.warning("the camera could not be opened: %s", exc)  # e.g. CameraException(cameraNotFound, …)
            controller.camera_failed(Notice("camera_denied", error=True))
            return
        controller.start_camera(tab=self._tab)
        self._pumping = True
        try:
            while self._pumping and controller.state.camera_tab == self._tab:
                try:
                    picture = await self._camera.take_picture()
                except Exception as exc:
                    if self._pumping:  # not a page that just went away (its session ended with a notice)
                        log.warning("the camera stopped sending pictures: %s", exc)
                        controller.camera_failed(Notice("camera_lost", error=True))
                    return
                controller.offer_picture(picture)
                await asyncio.sleep(CAMERA_PERIOD_S)
        finally:
            self._pumping = False

    def page_gone(self) -> None:
        """This tab left: if its camera fed the session, the session is over, with a notice saying why."""
        if self._pumping:
            self._pumping = False
            self._controller.camera_tab_gone(self._tab)
