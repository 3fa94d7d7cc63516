"""Where practice frames come from: a video file, still images, a camera the app owns.

Each source runs in one thread owned by its object (`start` / `stop`), pushes
frames with their timestamps into a sink, and reports how it ended. Sources
never wait on the model, except stills and folders, where every image is meant
to be answered (the sink's `wait_idle` paces them, as `watch` does offline).
A browser or phone camera is not a source here: its frames arrive from the UI
(flet-camera) one picture at a time, see `PracticeController.offer_picture`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import cv2

from app.core.notice import Notice
from app.core.session import CAMERA_SOURCE
from app.frames.intake import DecodedImage, ImageRejected, decode_image_bytes
from app.frames.video import RealtimeClock, VideoError, VideoFrames


class FrameSink(Protocol):
    def offer_frame(self, t: float, image: DecodedImage) -> None: ...
    def frame_times_guessed(self) -> None: ...  # before the first frame: its `t` values are a guess
    def flush(self) -> None: ...
    def wait_idle(self, timeout: float | None = None) -> bool: ...
    @property
    def failed(self) -> bool: ...  # the model gave up: nothing will be answered any more


@dataclass(frozen=True)
class SourceEnded:
    ok: bool
    said: tuple[Notice, ...] = ()  # why it stopped early, or what was skipped on the way
    by_user: bool = False  # stopped, not ended


STOPPED = SourceEnded(True, by_user=True)


def refusal(exc: VideoError | ImageRejected | OSError, name: str) -> Notice:
    """The notice for the file `name` that could not be used; the screen words its reason code."""
    if isinstance(exc, VideoError):
        return Notice.of("video_refused", error=True, name=name, reason=exc.reason)
    if isinstance(exc, ImageRejected):
        return Notice.of("image_refused", error=True, name=name, reason=exc.reason)
    return Notice.of("source_unreadable", error=True, name=name)


OnEnd = Callable[[SourceEnded], None]


class FrameSource:
    """Base: one thread, stoppable; subclasses implement `_run`."""

    label = "source"

    def __init__(self, name: str = "") -> None:
        self.name = name  # for the user: a file's name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, sink: FrameSink, on_end: OnEnd) -> None:
        def run() -> None:
            try:
                ended = self._run(sink)
            except (VideoError, ImageRejected, OSError) as exc:
                ended = SourceEnded(False, (refusal(exc, self.name),))
            on_end(ended)

        self._thread = threading.Thread(target=run, name=f"keyframe-source-{self.label}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _run(self, sink: FrameSink) -> SourceEnded:
        raise NotImplementedError

    def _wait_answered(self, sink: FrameSink) -> None:
        """Until nothing is in flight or waiting, or the user stops (checked often, so stop never waits)."""
        while not self._stop.is_set() and not sink.failed and not sink.wait_idle(0.2):
            pass


class VideoFileSource(FrameSource):
    """A video file played at its own speed, as a live camera would deliver it."""

    label = "video"

    def __init__(self, path: Path, name: str = "") -> None:
        """`name`: the video's name for the user (an upload's original name), else the file's."""
        super().__init__(name or Path(path).name)
        self.video = VideoFrames(path)  # opened now: a bad file is refused before anything starts

    def _run(self, sink: FrameSink) -> SourceEnded:
        clock = RealtimeClock()
        if self.video.stats.clock == "guessed":
            sink.frame_times_guessed()
        with self.video:
            for t, rgb in self.video:
                if self._stop.wait(clock.delay(t)):
                    return STOPPED
                sink.offer_frame(t, DecodedImage(rgb, "video", name=self.name))
        sink.flush()
        self._wait_answered(sink)  # the session ends with the last keyframe answered, not cancelled
        return SourceEnded(True, tuple(self.video.stats.notices()))


class StillsSource(FrameSource):
    """Still images (one, or a folder's worth), each one keyframe, each answered in turn."""

    label = "stills"

    def __init__(self, images: Sequence[tuple[str, bytes]], interval_s: float) -> None:
        super().__init__()
        self._images = list(images)
        self._interval = interval_s

    def _run(self, sink: FrameSink) -> SourceEnded:
        rejected: list[Notice] = []
        tables: list[str] = []
        slot = 0
        for name, data in self._images:
            if self._stop.is_set():
                return STOPPED
            if name.lower().endswith(".csv"):  # picked with a folder of test images: not a damaged image
                tables.append(name)
                continue
            try:
                image = decode_image_bytes(data, name=name)
            except ImageRejected as exc:  # that file's error; the others are still analysed
                rejected.append(refusal(exc, name))
                continue
            # One image per interval window: the sampler takes each as its own keyframe.
            sink.offer_frame(slot * self._interval, replace(image, still=True))
            slot += 1
            self._wait_answered(sink)
        sink.flush()
        self._wait_answered(sink)
        left_out = [Notice.of("tables_left_out", names=", ".join(tables))] if tables else []
        return SourceEnded(not rejected, tuple(rejected + left_out))


class OpenCvCameraSource(FrameSource):
    """A camera the app opens itself (a packaged desktop app); browsers and phones use flet-camera."""

    label = "camera"

    def __init__(self, index: int = 0, fps: float = 30.0) -> None:
        super().__init__("camera")
        self._index = index
        self._fps = fps

    def _run(self, sink: FrameSink) -> SourceEnded:
        capture = cv2.VideoCapture(self._index)
        try:
            if not capture.isOpened():
                return SourceEnded(False, (Notice("camera_denied", error=True),))
            # Every frame at the camera's own rate (read() waits for the next one): the compression
            # rhythm needs 15-30 a second; a fixed pause between reads held it at 10.
            capture.set(cv2.CAP_PROP_FPS, self._fps)
            start = time.monotonic()
            while not self._stop.is_set():
                ok, bgr = capture.read()
                if not ok:
                    return SourceEnded(False, (Notice("camera_lost", error=True),))
                rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
                sink.offer_frame(time.monotonic() - start, DecodedImage(rgb, "camera", CAMERA_SOURCE))
        finally:
            capture.release()
        return STOPPED
