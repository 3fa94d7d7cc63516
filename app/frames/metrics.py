"""Cheap per-frame statistics for the keyframe sampler."""

from __future__ import annotations

import cv2
import numpy as np

from app.core.sampler import FrameStats

THUMB_SIDE = 64


def frame_stats(rgb: np.ndarray) -> FrameStats:
    """Sharpness = variance of the Laplacian on a small grey copy (blurred frames score low)."""
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    small = cv2.resize(grey, (THUMB_SIDE, THUMB_SIDE), interpolation=cv2.INTER_AREA)
    h, w = grey.shape
    scale = 256 / max(h, w)
    mid = (
        cv2.resize(grey, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
        if scale < 1
        else grey
    )
    sharpness = float(cv2.Laplacian(mid, cv2.CV_64F).var())
    return FrameStats(sharpness=sharpness, thumb=small)
