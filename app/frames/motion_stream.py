"""The live camera's movement at the camera's own rate: small grey frames a page sends for the rhythm.

`take_picture` through the page sustains about 2.5 pictures a second in Chromium (a JPEG round trip
each), too few to follow 100–120 compressions a minute. So the app's own page (`assets/camera-motion.js`)
reads every frame of the camera preview it already shows, shrinks it to a small grey copy and sends it
to this server over a websocket: what the motion meter needs, at 15–30 a second. Keyframes for the
model still come from `take_picture` at full quality.

Pure logic: the wire format, its checks, and the hub that routes a page's frames to the camera
session that page runs. The websocket endpoint is `app.ui.shell.web_shell`'s.
"""

from __future__ import annotations

import json
import math
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

# One binary message per frame: <f8 capture time in seconds (the page's clock), <u2 width, <u2 height,
# then width*height grey bytes, row by row.
HEADER = struct.Struct("<dHH")
MAX_SIDE = 320  # the page sends 192x144; anything larger is not this page's script
MIN_SIDE = 16
PAGE_ID_MAX = 64  # Flet's session ids are 16 characters


class BadMotionMessage(ValueError):
    """A message that is not what the app's page sends: the connection is closed."""


@dataclass(frozen=True)
class MotionFrame:
    t: float  # the page's capture time, seconds; only differences between frames are used
    grey: np.ndarray  # HxW uint8


def page_of(hello: str) -> str:
    """The page (Flet session id) a connection's first message names: `{"page": "<id>"}`."""
    try:
        said = json.loads(hello)
    except ValueError as exc:
        raise BadMotionMessage("the first message is not JSON") from exc
    page = said.get("page") if isinstance(said, dict) else None
    if not isinstance(page, str) or not 0 < len(page) <= PAGE_ID_MAX or not page.isprintable():
        raise BadMotionMessage("the first message names no page")
    return page


def frame_of(data: bytes) -> MotionFrame:
    """One frame message, checked: a finite time, a plausible size, exactly that many bytes."""
    if len(data) < HEADER.size:
        raise BadMotionMessage("a frame message shorter than its header")
    t, width, height = HEADER.unpack_from(data)
    if not math.isfinite(t):
        raise BadMotionMessage("a frame time that is not a number")
    if not (MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE):
        raise BadMotionMessage(f"a frame of {width}x{height}, outside {MIN_SIDE}..{MAX_SIDE} a side")
    if len(data) != HEADER.size + width * height:
        raise BadMotionMessage(f"a {width}x{height} frame of {len(data) - HEADER.size} bytes")
    grey = np.frombuffer(data, dtype=np.uint8, offset=HEADER.size).reshape(height, width)
    return MotionFrame(t, grey)


def encode_frame(frame: MotionFrame) -> bytes:
    """What the page's script sends for `frame` (tests and benchmarks play the page)."""
    height, width = frame.grey.shape
    return HEADER.pack(frame.t, width, height) + np.ascontiguousarray(frame.grey, dtype=np.uint8).tobytes()


MotionSink = Callable[[MotionFrame], None]


class MotionStreams:
    """Which page's frames go where: a page's camera pump attaches its session's sink while it runs.

    A connection names its page in its first message (the page reads the id Flet keeps in the tab's
    sessionStorage); frames of a page with nothing attached are dropped, so a tab that is not
    running the camera session feeds nothing.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sinks: dict[str, MotionSink] = {}

    def attach(self, page: str, sink: MotionSink) -> None:
        with self._lock:
            self._sinks[page] = sink

    def detach(self, page: str, sink: MotionSink) -> None:
        with self._lock:
            if self._sinks.get(page) is sink:
                del self._sinks[page]

    def sink(self, page: str) -> MotionSink | None:
        with self._lock:
            return self._sinks.get(page)
