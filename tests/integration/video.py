"""Test videos made from generated scenes: hands off-centre, then centred, then off-centre."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

if TYPE_CHECKING:
    from demo_model.compressions import CompressionVideo, VideoSpec


def hands_phases(seed: int = 3, size: int = 256) -> list[tuple[np.ndarray, str]]:
    """Three RGB scenes (off-centre, centre, off-centre) with the answer each should get."""
    from demo_model.scenes import make_video_frames

    frames = make_video_frames(seed, n_frames=9, size=size)
    return [(np.asarray(frames[i][0]), frames[i][1]) for i in (0, 4, 8)]


def write_hands_video(
    path: Path, seed: int = 3, seconds_per_phase: int = 10, fps: int = 10, size: int = 256
) -> list[str]:
    """An MJPEG .avi of the three phases, `size` pixels square; returns the expected answer per phase."""
    phases = hands_phases(seed, size)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (size, size))
    for rgb, _ in phases:
        bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
        for _ in range(seconds_per_phase * fps):
            writer.write(bgr)
    writer.release()
    return [answer for _, answer in phases]


def write_hands_y4m(
    path: Path, seed: int = 3, seconds_per_phase: int = 6, fps: int = 10, width: int = 256
) -> list[str]:
    """The same phases as a raw .y4m, which Chromium's fake camera plays (and loops). A `width` over
    256 centres each square scene between grey side bars, as a webcam's 4:3 or 16:9 frame holds it."""
    phases = hands_phases(seed)
    write_y4m(path, [rgb for rgb, _ in phases], seconds_per_phase, fps, width)
    return [answer for _, answer in phases]


def write_y4m(
    path: Path, scenes: list[np.ndarray], seconds_per_phase: int = 6, fps: int = 10, width: int = 256
) -> None:
    """256×256 RGB `scenes`, each shown for `seconds_per_phase`, as a .y4m for Chromium's fake camera."""
    from demo_model.compressions import write_y4m as write_frames

    framed = []
    for rgb in scenes:
        frame = np.full((256, width, 3), 96, np.uint8)
        left = (width - 256) // 2
        frame[:, left : left + 256] = rgb
        framed.append(frame)
    write_frames(path, [f for f in framed for _ in range(seconds_per_phase * fps)], fps)


def write_compression_video(path: Path, spec: VideoSpec, seed: int) -> CompressionVideo:
    """A generated video of compressions (`tools/demo_model/compressions.py`) as an MJPEG .avi; returns it,
    with its truth."""
    from demo_model.compressions import make_video

    video = make_video(spec, seed)
    height, width = video.frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), spec.fps, (width, height))
    for frame in video.frames:
        writer.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
    writer.release()
    return video
