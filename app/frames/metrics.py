"""Cheap per-frame statistics for the keyframe sampler."""

from __future__ import annotations

import cv2
import numpy as np

from app.core.sampler import FrameStats

STATS_SIDE = 64  # the tiny copy two frames are compared on (the sampler's "unchanged")
MID_SIDE = 256  # longest side of the copy sharpness is measured on


def _halve(grey: np.ndarray) -> np.ndarray:
    """Exact 2x box averaging while both small copies can still be made from the result.

    OpenCV's area resize has a fast path for exactly 2x; a non-integer factor straight from
    1080p costs ~3 ms a resize on a 2-core CPU (the goal for the whole sampler is 3 ms a frame).
    Averaging 2x2 blocks first gives nearly the same pixels as one area resize.
    """
    while max(grey.shape) >= 2 * MID_SIDE and min(grey.shape) >= 2 * STATS_SIDE:
        h, w = grey.shape
        grey = cv2.resize(grey, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
    return grey


def frame_grey(rgb: np.ndarray) -> np.ndarray:
    """The frame's grey copy, halved while it stays at least MID_SIDE: made once per frame and shared by
    the sampler's statistics and the motion meter (each converting the full frame cost twice)."""
    return _halve(cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))


def frame_stats(rgb: np.ndarray) -> FrameStats:
    """Sharpness = variance of the Laplacian on a small grey copy (blurred frames score low)."""
    return grey_stats(frame_grey(rgb))


def grey_stats(grey: np.ndarray) -> FrameStats:
    """`frame_stats` of a frame's `frame_grey` copy."""
    h, w = grey.shape
    scale = MID_SIDE / max(h, w)
    mid = (
        cv2.resize(grey, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
        if scale < 1
        else grey
    )
    small = cv2.resize(grey, (STATS_SIDE, STATS_SIDE), interpolation=cv2.INTER_AREA)
    sharpness = float(cv2.Laplacian(mid, cv2.CV_64F).var())
    return FrameStats(sharpness=sharpness, thumb=small)
