"""Frames of a video file, with their timestamps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np


class VideoError(ValueError):
    pass


def iter_video_frames(path: Path) -> Iterator[tuple[float, np.ndarray]]:
    """Yields (seconds from the start, RGB frame) for every decodable frame."""
    path = Path(path)
    if not path.is_file():
        raise VideoError(f"{path}: no such file")
    capture = cv2.VideoCapture(str(path))
    try:
        if not capture.isOpened():
            raise VideoError(f"{path}: not a video OpenCV can read")
        fps = capture.get(cv2.CAP_PROP_FPS)
        index = 0
        while True:
            ok, bgr = capture.read()
            if not ok:
                break
            # Frame index / fps is exact for constant-rate files; fall back to the container clock.
            t = index / fps if fps and fps > 0 else capture.get(cv2.CAP_PROP_POS_MSEC) / 1000.0
            index += 1
            yield t, cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        if index == 0:
            raise VideoError(f"{path}: no frame could be decoded")
    finally:
        capture.release()
