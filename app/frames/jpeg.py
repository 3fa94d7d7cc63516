"""JPEG copies of frames: the preview sent to the page, keyframe thumbnails and review copies."""

from __future__ import annotations

import cv2
import numpy as np

PREVIEW_SIDE = 480  # longest side of the preview sent to the page
THUMB_SIDE = 160  # longest side of a keyframe's thumbnail (the inset, the review list)
# Longest side of the copy an examiner enlarges: hands, arms and the manikin readable on a laptop, ~60-120 KB.
REVIEW_SIDE = 960


def jpeg(rgb: np.ndarray, side: int = PREVIEW_SIDE) -> bytes:
    """`rgb` scaled down (never up) to `side` on its longest side, as JPEG; b"" if it cannot be encoded."""
    h, w = rgb.shape[:2]
    scale = min(1.0, side / max(h, w))
    small = cv2.resize(rgb, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(small, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 80])
    return buf.tobytes() if ok else b""
