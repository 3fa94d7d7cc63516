"""A browser's or phone's camera feeding the practice session: keyframe pictures, and its movement.

flet-camera lives in the page, so the pump is that page's async task. It runs while the session
is this tab's camera session; the page going away (`stop`) or the camera failing ends it, and the
controller is told which of the two happened.

Two paths, because one cannot carry both: `take_picture` gives full-quality JPEGs for keyframes but
only ~2.5 a second (a round trip through the page each), far too few for the compression rhythm.
The movement comes at the camera's own rate from the platform's image stream where flet-camera has
one (phones), else from the page's own script (`assets/camera-motion.js`, the web page): small grey
frames that reach the session through `MotionStreams` while this pump has them attached.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import cv2
import flet_camera as fc
import numpy as np

from app.core.notice import Notice
from app.frames.motion_stream import MotionFrame, MotionStreams
from app.ui.practice.controller import PracticeController

log = logging.getLogger("keyframe.ui")

CAMERA_PERIOD_S = 0.4  # one picture from the camera this often: enough for 2–5 s keyframes


class CameraPump:
    def __init__(
        self,
        camera: fc.Camera,
        controller: PracticeController,
        tab: str,
        motion: MotionStreams,
        page_id: str,
        page_closed: Callable[[], bool],
    ) -> None:
        """`page_closed`: whether this page's connection has closed, although Flet may not have said so yet."""
        self._camera = camera
        self._page_closed = page_closed
        self._controller = controller
        self._tab = tab
        self._motion = motion
        self._page_id = page_id
        self._pumping = False
        self._streaming = False
        self._last_picture = 0.0

    def _on_motion(self, frame: MotionFrame) -> None:
        self._controller.offer_motion(self._tab, frame)

    def _on_stream_image(self, event: fc.CameraImageEvent) -> None:
        """A phone's image stream: each frame, decoded small and grey, is a motion frame (no capture
        time comes with it: the time it arrived stands in). Flutter's camera takes no picture while it
        streams, so the stream's frames are the keyframe pictures too, one every CAMERA_PERIOD_S."""
        data = np.frombuffer(event.bytes, np.uint8)
        grey = cv2.imdecode(data, cv2.IMREAD_REDUCED_GRAYSCALE_4)
        if grey is None:
            return
        now = time.monotonic()
        self._on_motion(MotionFrame(now, grey))
        if now - self._last_picture >= CAMERA_PERIOD_S:
            self._last_picture = now
            self._controller.offer_picture(event.bytes)

    async def _start_motion(self) -> None:
        """The movement at the camera's rate: the platform's image stream where there is one, and the page's
        script in any case (on the web the stream is not supported and the script is the path)."""
        self._motion.attach(self._page_id, self._on_motion)
        try:
            if await self._camera.supports_image_streaming():
                self._camera.on_stream_image = self._on_stream_image
                await self._camera.start_image_stream()
                self._streaming = True
        except Exception as exc:  # no stream: the keyframe pictures still come, the rhythm says its frames are few
            log.info("the camera's image stream is not available: %s", exc)

    async def _stop_motion(self) -> None:
        self._motion.detach(self._page_id, self._on_motion)
        if self._streaming:
            self._streaming = False
            try:
                await self._camera.stop_image_stream()
            except Exception as exc:  # the page or the camera is gone already
                log.info("the camera's image stream did not stop cleanly: %s", exc)

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
        await self._start_motion()
        try:
            while self._pumping and controller.state.camera_tab == self._tab:
                if self._streaming:  # the stream brings the pictures
                    await asyncio.sleep(CAMERA_PERIOD_S)
                    continue
                try:
                    picture = await self._camera.take_picture()
                except Exception as exc:
                    if self._pumping and self._page_closed():
                        # The tab was reloaded or closed and Flet has not told the page yet (a reload while a
                        # picture was asked for failed so): the session ends as for a tab gone, in those words.
                        self.page_gone()
                    elif self._pumping:  # not a page that just went away (its session ended with a notice)
                        log.warning("the camera stopped sending pictures: %s", exc)
                        controller.camera_failed(Notice("camera_lost", error=True))
                    return
                controller.offer_picture(picture)
                await asyncio.sleep(CAMERA_PERIOD_S)
        finally:
            self._pumping = False
            await self._stop_motion()

    def page_gone(self) -> None:
        """This tab left: if its camera fed the session, the session is over, with a notice saying why."""
        if self._pumping:
            self._pumping = False
            self._controller.camera_tab_gone(self._tab)
