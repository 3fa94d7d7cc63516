"""Image intake: every image is decoded and checked here before it reaches a model.

MNN silently drops an image it cannot read and answers from the text alone, so
a corrupt file must be caught here, with a reason a user can act on.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

# Far above any camera frame, far below what would exhaust memory when decoded.
MAX_PIXELS = 50_000_000
MAX_FILE_BYTES = 64 * 1024 * 1024
MIN_SIDE = 16


class ImageRejected(ValueError):
    """An input that is not a usable image. `reason` is a stable code for reports."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class DecodedImage:
    rgb: np.ndarray  # HxWx3 uint8, EXIF orientation applied
    source_format: str

    @property
    def width(self) -> int:
        return int(self.rgb.shape[1])

    @property
    def height(self) -> int:
        return int(self.rgb.shape[0])


def read_image_file(path: Path) -> DecodedImage:
    path = Path(path)
    if not path.exists():
        raise ImageRejected("missing", f"{path}: no such file")
    if not path.is_file():
        raise ImageRejected("not_a_file", f"{path}: not a regular file")
    size = path.stat().st_size
    if size == 0:
        raise ImageRejected("empty_file", f"{path}: the file is empty")
    if size > MAX_FILE_BYTES:
        raise ImageRejected("too_large", f"{path}: {size} bytes is more than the {MAX_FILE_BYTES} byte limit")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImageRejected("unreadable", f"{path}: cannot read ({exc.strerror or exc})") from exc
    return decode_image_bytes(data, name=str(path))


def decode_image_bytes(data: bytes, name: str = "image") -> DecodedImage:
    if not data:
        raise ImageRejected("empty_file", f"{name}: no data")
    if len(data) > MAX_FILE_BYTES:
        raise ImageRejected("too_large", f"{name}: more than {MAX_FILE_BYTES} bytes")
    try:
        with warnings.catch_warnings():
            # A decompression-bomb warning becomes an error: we check the size ourselves below.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as img:
                fmt = img.format or "unknown"
                w, h = img.size
                if w * h > MAX_PIXELS:
                    raise ImageRejected(
                        "too_large", f"{name}: {w}x{h} pixels is more than the {MAX_PIXELS} pixel limit"
                    )
                img.load()
                oriented = ImageOps.exif_transpose(img)
                rgb = np.asarray(oriented.convert("RGB"), dtype=np.uint8)
    except ImageRejected:
        raise
    except UnidentifiedImageError as exc:
        raise ImageRejected("not_an_image", f"{name}: not a recognised image format") from exc
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageRejected("too_large", f"{name}: image dimensions are too large") from exc
    except (OSError, SyntaxError, ValueError, EOFError) as exc:
        # Pillow reports truncated or damaged data as OSError/SyntaxError.
        raise ImageRejected("corrupt", f"{name}: the image data is damaged ({exc})") from exc
    if rgb.ndim != 3 or min(rgb.shape[:2]) < MIN_SIDE:
        raise ImageRejected("too_small", f"{name}: {rgb.shape[1]}x{rgb.shape[0]} is smaller than {MIN_SIDE} px")
    return DecodedImage(rgb=np.ascontiguousarray(rgb), source_format=fmt)


def resize_exact(rgb: np.ndarray, height: int, width: int) -> np.ndarray:
    """Resize to (height, width); area averaging when shrinking, bilinear when growing."""
    h, w = rgb.shape[:2]
    if (h, w) == (height, width):
        return rgb
    shrinking = height * width < h * w
    return cv2.resize(rgb, (width, height), interpolation=cv2.INTER_AREA if shrinking else cv2.INTER_LINEAR)
