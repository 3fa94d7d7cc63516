"""Image intake: every image is decoded and checked here before it reaches a model.

MNN silently drops an image it cannot read and answers from the text alone, so
a corrupt file must be caught here, with a reason a user can act on. Whatever a
decoder raises becomes that file's `ImageRejected`; nothing else escapes.
"""

from __future__ import annotations

import errno
import io
import os
import warnings
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import ExifTags, Image, UnidentifiedImageError

from app.core.names import printable
from app.core.sizes import over_limit
from app.frames.limits import MAX_FILE_BYTES, MAX_PIXELS, MIN_SIDE
from app.storage.small_file import NotAFile, TooLarge, read_small_file

# Only the photo formats are offered to Pillow: each extra plugin is attack surface
# (fuzzing found DDS, SPIDER and libavif raising outside the documented set).
_WANTED_FORMATS = ("JPEG", "PNG", "GIF", "BMP", "TIFF", "WEBP", "AVIF")
Image.init()
FORMATS = tuple(f for f in _WANTED_FORMATS if f in Image.OPEN)

_ERRNO_REASONS = {
    errno.ENOENT: "missing",
    errno.ENOTDIR: "missing",
    errno.ENAMETOOLONG: "name_too_long",
    errno.ELOOP: "symlink_loop",
    errno.EACCES: "unreadable",
    errno.EPERM: "unreadable",
    errno.EISDIR: "not_a_file",
}


class ImageRejected(ValueError):
    """An input that is not a usable image. `reason` is a stable code for reports."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class DecodedImage:
    rgb: np.ndarray  # HxWx3 uint8, EXIF orientation applied
    source_format: str
    name: str = ""  # where it came from, for the user: a file's name, "camera" ("" unknown)
    still: bool = False  # a still image (its session time is only its place in the list)

    @property
    def width(self) -> int:
        return int(self.rgb.shape[1])

    @property
    def height(self) -> int:
        return int(self.rgb.shape[0])


def display_name(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """A path as people and JSON can take it (`printable`; bytes not UTF-8 as \\xNN): never to open."""
    raw = os.fsencode(path)
    return printable(raw.decode("utf-8", "backslashreplace"))


def _os_rejection(exc: OSError, shown: str) -> ImageRejected:
    reason = _ERRNO_REASONS.get(exc.errno or 0, "unreadable")
    detail = {"missing": "no such file", "name_too_long": "the file name or path is too long"}.get(reason)
    return ImageRejected(reason, f"{shown}: {detail or f'cannot read ({exc.strerror or exc})'}")


def read_image_file(path: str | os.PathLike[str]) -> DecodedImage:
    """Decode one file. Every failure, down to a FIFO or a 5000-character path, is an ImageRejected."""
    shown = display_name(path)
    try:
        data = read_small_file(path, MAX_FILE_BYTES)
    except NotAFile as exc:
        raise ImageRejected("not_a_file", f"{shown}: {exc.strerror}") from exc
    except TooLarge as exc:
        raise ImageRejected("too_large", over_limit(shown, exc.size, exc.limit)) from exc
    except OSError as exc:
        raise _os_rejection(exc, shown) from exc
    except ValueError as exc:  # an embedded NUL byte
        raise ImageRejected("invalid_name", f"{shown}: not a valid file name") from exc
    if not data:
        raise ImageRejected("empty_file", f"{shown}: the file is empty")
    return decode_image_bytes(data, name=shown)


def decode_image_bytes(data: bytes, name: str = "image") -> DecodedImage:
    name = printable(name)
    if not data:
        raise ImageRejected("empty_file", f"{name}: no data")
    if len(data) > MAX_FILE_BYTES:
        raise ImageRejected("too_large", over_limit(name, len(data), MAX_FILE_BYTES))
    try:
        with warnings.catch_warnings():
            # Pillow's "possibly corrupt" warnings are noise here: real damage raises below.
            warnings.simplefilter("ignore")
            # A decompression-bomb warning becomes an error: we check the size ourselves below.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=FORMATS) as img:
                fmt = img.format or "unknown"
                w, h = img.size
                if w * h > MAX_PIXELS:
                    raise ImageRejected(
                        "too_large", f"{name} is {w}x{h} pixels, over the limit of {MAX_PIXELS / 1e6:g} megapixels"
                    )
                img.load()  # the first frame of an animation
                orientation = _orientation(img)
                rgb = to_rgb8(img)
        rgb = apply_orientation(rgb, orientation)
    except ImageRejected:
        raise
    except UnidentifiedImageError as exc:
        other = _other_format(data)
        if other:
            raise ImageRejected("unsupported_format", f"{name}: {other} images are not supported") from exc
        raise ImageRejected("not_an_image", f"{name}: not a recognised image format") from exc
    except (Image.DecompressionBombError, Image.DecompressionBombWarning, MemoryError) as exc:
        raise ImageRejected("too_large", f"{name}: image dimensions are too large") from exc
    except NotImplementedError as exc:
        raise ImageRejected("unsupported_format", f"{name}: this kind of {fmt} image is not supported") from exc
    except Exception as exc:
        raise ImageRejected("corrupt", f"{name}: the image data is damaged ({type(exc).__name__}: {exc})") from exc
    if rgb.ndim != 3 or rgb.shape[2] != 3 or min(rgb.shape[:2]) < MIN_SIDE:
        raise ImageRejected("too_small", f"{name}: {rgb.shape[1]}x{rgb.shape[0]} is smaller than {MIN_SIDE} px")
    return DecodedImage(rgb=np.ascontiguousarray(rgb, dtype=np.uint8), source_format=fmt, name=name)


def _other_format(data: bytes) -> str | None:
    """The name of a format Pillow knows but we do not offer, for a useful message."""
    head = data[:32]
    if head[4:8] == b"ftyp" and head[8:12] in (b"heic", b"heix", b"heim", b"heis", b"mif1", b"msf1"):
        return "HEIF/HEIC"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(io.BytesIO(data)) as img:  # header only: no pixel is decoded
                return img.format or None
    except Exception:
        return None


def _orientation(img: Image.Image) -> int:
    # Damaged EXIF must not cost the picture: without a readable tag it is shown as stored.
    try:
        value = int(img.getexif().get(ExifTags.Base.Orientation, 1))
    except Exception:
        return 1
    return value if 1 <= value <= 8 else 1


def apply_orientation(rgb: np.ndarray, orientation: int) -> np.ndarray:
    """EXIF orientation 1-8 applied as ImageOps.exif_transpose does (np.rot90 turns anticlockwise)."""
    if orientation == 2:
        return rgb[:, ::-1]
    if orientation == 3:
        return rgb[::-1, ::-1]
    if orientation == 4:
        return rgb[::-1]
    if orientation == 5:
        return rgb.transpose(1, 0, 2)
    if orientation == 6:
        return np.rot90(rgb, -1)
    if orientation == 7:
        return rgb[::-1, ::-1].transpose(1, 0, 2)
    if orientation == 8:
        return np.rot90(rgb, 1)
    return rgb


def to_rgb8(img: Image.Image) -> np.ndarray:
    """Any Pillow mode to HxWx3 uint8. convert("RGB") clips 16-bit and float data
    (a 16-bit grey PNG turns white, a float TIFF black), so those are scaled here;
    transparent pixels are composited on white, not left as their hidden colour."""
    mode = img.mode
    if mode == "RGB":
        return np.asarray(img)
    if mode.startswith("I;16") or mode in ("I", "F"):
        samples = np.asarray(img)
        grey = scale_to_8bit(samples, sixteen_bit=mode.startswith("I;16") or img.format == "PNG")
        hidden = img.info.get("transparency")
        if isinstance(hidden, int):  # a grey PNG's tRNS: pixels of this one sample value are transparent
            grey = np.where(samples == hidden, np.uint8(255), grey)
        return np.repeat(grey[:, :, None], 3, axis=2)
    if img.has_transparency_data:
        rgba = np.asarray(img.convert("RGBA"))
        alpha = rgba[:, :, 3:4].astype(np.uint16)
        mixed = (rgba[:, :, :3].astype(np.uint16) * alpha + 255 * (255 - alpha) + 127) // 255
        return mixed.astype(np.uint8)
    return np.asarray(img.convert("RGB"))


def scale_to_8bit(values: np.ndarray, sixteen_bit: bool = False) -> np.ndarray:
    """Grey samples of any depth to uint8.

    16-bit data keeps its brightness (top 8 bits). Other integers: 0-255 as is,
    0-65535 as 16-bit, anything else stretched over its range. Floats: 0-1 (the
    usual convention) or 0-255 as is, anything else stretched over its finite
    range; NaN becomes black, +inf white, -inf black.
    """
    a = np.asarray(values)
    if (a.dtype.kind == "u" and a.dtype.itemsize == 2) or (sixteen_bit and a.dtype.kind in "iu"):
        top: np.ndarray = (np.clip(a, 0, 65535).astype(np.uint32) >> 8).astype(np.uint8)
        return top
    if a.dtype.kind in "iu":
        lo, hi = int(a.min()), int(a.max())
        if lo >= 0 and hi <= 255:
            return a.astype(np.uint8)
        if lo >= 0 and hi <= 65535:
            return (a.astype(np.uint32) >> 8).astype(np.uint8)
        return _stretch(a.astype(np.float64), lo, hi)
    f = a.astype(np.float32)
    finite = np.isfinite(f)
    if not finite.any():
        return np.where(np.isposinf(f), 255, 0).astype(np.uint8)
    low, high = float(f[finite].min()), float(f[finite].max())
    if low >= 0.0 and high <= 1.0:
        low, high = 0.0, 1.0
    elif low >= 0.0 and high <= 255.0:
        low, high = 0.0, 255.0
    f = np.nan_to_num(f, nan=low, posinf=high, neginf=low)
    return _stretch(f, low, high)


def _stretch(a: np.ndarray, lo: float, hi: float) -> np.ndarray:
    if hi <= lo:
        return np.zeros(a.shape, np.uint8)
    return np.clip(np.rint((a - lo) * (255.0 / (hi - lo))), 0, 255).astype(np.uint8)


def resize_exact(rgb: np.ndarray, height: int, width: int) -> np.ndarray:
    """Resize to (height, width); area averaging when shrinking, bilinear when growing."""
    h, w = rgb.shape[:2]
    if (h, w) == (height, width):
        return rgb
    shrinking = height * width < h * w
    return cv2.resize(rgb, (width, height), interpolation=cv2.INTER_AREA if shrinking else cv2.INTER_LINEAR)
