"""Test videos made from generated scenes."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np


def write_hands_video(path: Path, seed: int = 3, seconds_per_phase: int = 10, fps: int = 10) -> list[str]:
    """Hands off-centre -> centre -> off-centre; returns the expected answer per phase."""
    from demo_model.scenes import make_video_frames

    frames = make_video_frames(seed, n_frames=9, size=256)
    phases = [frames[0], frames[4], frames[8]]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (256, 256))
    for image, _ in phases:
        bgr = cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2BGR)
        for _ in range(seconds_per_phase * fps):
            writer.write(bgr)
    writer.release()
    return [answer for _, answer in phases]
