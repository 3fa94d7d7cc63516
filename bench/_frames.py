"""Camera-like frames for benchmarks: generated scenes upscaled to a camera's size, each with
its own sensor noise and a little hand-held shake, so no two frames are alike; and video files of frames."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from app.frames.intake import decode_image_bytes
from bench._scenes import scenes

HD = (1920, 1080)  # width, height


def camera_frames(count: int, size: tuple[int, int] = HD, seed: int = 7, variants: int = 1) -> list[np.ndarray]:
    """`count` scenes × `variants` RGB uint8 frames of `size` (width, height), scene by scene
    (the variants of one scene are neighbours), the scenes cycling through the kinds."""
    rng = np.random.default_rng(seed)
    per_kind = max(1, math.ceil(count / 5))
    bases = [cv2.resize(decode_image_bytes(data).rgb, size) for _, data, _ in scenes(per_kind, seed)]
    # Interleave the kinds (scenes() lists them kind by kind) so neighbours differ.
    order = [bases[k * per_kind + i] for i in range(per_kind) for k in range(5)]
    frames = []
    for i in range(count * variants):
        dy, dx = (int(v) for v in rng.integers(-12, 13, 2))
        shaken = np.roll(order[(i // variants) % len(order)], (dy, dx), axis=(0, 1))
        noise = rng.integers(-6, 7, size=shaken.shape, dtype=np.int16)
        frames.append(np.clip(shaken.astype(np.int16) + noise, 0, 255).astype(np.uint8))
    return frames


def write_mjpg(path: Path, frames_bgr: Sequence[np.ndarray], fps: float) -> None:
    """An MJPG video file of `frames_bgr` (BGR uint8, all one size), which OpenCV reads back on every platform."""
    height, width = frames_bgr[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), fps, (width, height))
    for frame in frames_bgr:
        writer.write(frame)
    writer.release()
