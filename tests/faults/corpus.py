"""The bad-input corpus, generated on the fly (nothing binary is checked in).

Each `Case` is a file (or a path that is not one) and what intake must make of
it: a per-file ImageRejected with one of `reasons`, or a decode that `check`
accepts. Videos are built with cv2.VideoWriter (MJPG .avi) and damaged here.
"""

from __future__ import annotations

import io
import os
import struct
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image

from app.frames.intake import FORMATS, DecodedImage

Check = Callable[[DecodedImage], None]
DECODED = "decoded"


@dataclass(frozen=True)
class Case:
    name: str
    path: Path
    reasons: frozenset[str] = frozenset()  # empty: must decode, and `check` must pass
    check: Check | None = None

    @property
    def must_decode(self) -> bool:
        return not self.reasons


def run_bounded(fn: Callable[[], Any], seconds: float) -> Any:
    """fn() in a daemon thread; AssertionError if it takes longer (a hang), else its result or exception."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise AssertionError(f"no answer within {seconds} s (a hang)")
    if "error" in box:
        raise box["error"]
    return box.get("value")


# ---- image bytes ---------------------------------------------------------------------------------

W, H = 64, 48


def save(img: Image.Image, fmt: str, **kw: Any) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **kw)
    return buf.getvalue()


def marked(w: int = W, h: int = H) -> Image.Image:
    """Grey picture with a red block in the top-left corner, to check orientation."""
    arr = np.full((h, w, 3), 128, np.uint8)
    arr[: h // 4, : w // 4] = (255, 0, 0)
    return Image.fromarray(arr)


def noise(w: int = W, h: int = H, seed: int = 0) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (h, w, 3), np.uint8))


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_header_only(w: int, h: int, bit_depth: int = 1, colour: int = 0) -> bytes:
    """A PNG that declares w x h but carries one tiny IDAT: enough to test size limits."""
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, colour, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + png_chunk(b"IHDR", ihdr)
        + png_chunk(b"IDAT", zlib.compress(b"\0"))
        + png_chunk(b"IEND", b"")
    )


def flip(data: bytes, offset: int, count: int = 1, value: int | None = None) -> bytes:
    out = bytearray(data)
    for i in range(offset, min(len(out), offset + count)):
        out[i] = value if value is not None else out[i] ^ 0xFF
    return bytes(out)


# ---- checks --------------------------------------------------------------------------------------


def size(w: int, h: int) -> Check:
    def check(image: DecodedImage) -> None:
        assert (image.width, image.height) == (w, h), f"{image.width}x{image.height}, expected {w}x{h}"

    return check


def colour_at(y: float, x: float, rgb: tuple[int, int, int], tol: int = 40, w: int = W, h: int = H) -> Check:
    """Size w x h and the pixel at the fractional position (y, x) close to `rgb`."""

    def check(image: DecodedImage) -> None:
        size(w, h)(image)
        px = image.rgb[int(y * (image.height - 1)), int(x * (image.width - 1))].astype(int)
        assert np.abs(px - np.array(rgb)).max() <= tol, f"pixel {px.tolist()}, expected {rgb}"

    return check


def red_corner(corner: str, w: int, h: int) -> Check:
    """After orientation, the red block must sit in `corner` (tl, tr, bl, br) of a w x h picture."""
    y = 0.05 if corner[0] == "t" else 0.95
    x = 0.05 if corner[1] == "l" else 0.95
    return colour_at(y, x, (255, 0, 0), tol=60, w=w, h=h)


def mean_between(lo: float, hi: float, w: int = W, h: int = H) -> Check:
    def check(image: DecodedImage) -> None:
        size(w, h)(image)
        assert lo <= image.rgb.mean() <= hi, f"mean {image.rgb.mean():.1f} outside {lo}-{hi}"

    return check


def any_decode(image: DecodedImage) -> None:
    assert image.rgb.dtype == np.uint8 and image.rgb.ndim == 3 and image.rgb.shape[2] == 3


# ---- the image corpus ----------------------------------------------------------------------------

REJECT_BROKEN = frozenset({"corrupt", "not_an_image"})
REJECT_OR_DECODE = frozenset({"corrupt", "not_an_image", "unsupported_format", "too_small", DECODED})


def image_cases(root: Path) -> list[Case]:
    """Writes every image-file case under `root` and returns them (about 90)."""
    cases: list[Case] = []

    def add(name: str, data: bytes, reasons: frozenset[str] | set[str] = frozenset(), check: Check | None = None):
        path = root / name
        path.write_bytes(data)
        cases.append(Case(name, path, frozenset(reasons), check))

    red = Image.new("RGB", (W, H), (255, 0, 0))
    ramp16 = np.tile(np.linspace(0, 65535, W).astype(np.uint16), (H, 1))
    ramp_f = np.tile(np.linspace(0, 1, W).astype(np.float32), (H, 1))

    # Good files in every format and mode: right size, orientation and colour.
    for fmt, ext, kw in [
        ("JPEG", "jpg", {"quality": 95}),
        ("JPEG", "jpeg", {"progressive": True}),
        ("PNG", "png", {}),
        ("GIF", "gif", {}),
        ("BMP", "bmp", {}),
        ("TIFF", "tif", {}),
        ("TIFF", "tiff", {"compression": "tiff_lzw"}),
        ("TIFF", "tiff", {"compression": "tiff_deflate"}),
        ("WEBP", "webp", {"lossless": True}),
        ("WEBP", "webp", {"quality": 80}),
    ]:
        add(f"ok-{fmt.lower()}-{len(cases)}.{ext}", save(red, fmt, **kw), check=colour_at(0.5, 0.5, (255, 0, 0)))
    if "AVIF" in FORMATS:
        add("ok.avif", save(red, "AVIF"), check=colour_at(0.5, 0.5, (255, 0, 0), tol=60))
    add("ok-grey.png", save(Image.new("L", (W, H), 90), "PNG"), check=colour_at(0.5, 0.5, (90, 90, 90), tol=2))
    add("ok-grey.jpg", save(Image.new("L", (W, H), 90), "JPEG"), check=colour_at(0.5, 0.5, (90, 90, 90), tol=4))
    add("ok-min-side.png", save(Image.new("RGB", (16, 16), "blue"), "PNG"), check=size(16, 16))
    add("ok-tall-strip.png", save(Image.new("RGB", (16, 4000), "blue"), "PNG"), check=size(16, 4000))
    add("ok-jpeg-named.png", save(red, "JPEG"), check=colour_at(0.5, 0.5, (255, 0, 0)))
    add("ok-png-named.jpg", save(red, "PNG"), check=colour_at(0.5, 0.5, (255, 0, 0)))

    # Modes that convert("RGB") got wrong.
    add("16bit-grey.png", save(Image.fromarray(ramp16), "PNG"), check=mean_between(115, 140))
    add("16bit-grey.tif", save(Image.fromarray(ramp16), "TIFF"), check=mean_between(115, 140))
    big_endian = Image.frombytes("I;16B", (W, H), ramp16.astype(">u2").tobytes())
    add("16bit-big-endian.tif", save(big_endian, "TIFF"), check=mean_between(115, 140))
    add("32bit-int.tif", save(Image.fromarray(ramp16.astype(np.int32)), "TIFF"), check=mean_between(115, 140))
    signed = np.tile(np.linspace(-(2**24), 2**24, W).astype(np.int32), (H, 1))
    add("32bit-int-signed.tif", save(Image.fromarray(signed), "TIFF"), check=mean_between(115, 140))
    add("float-0-1.tif", save(Image.fromarray(ramp_f), "TIFF"), check=mean_between(115, 140))
    add("float-0-1000.tif", save(Image.fromarray(ramp_f * 1000), "TIFF"), check=mean_between(115, 140))
    add("float-negative.tif", save(Image.fromarray(ramp_f * 2 - 1), "TIFF"), check=mean_between(115, 140))
    special = ramp_f.copy()
    special[:, :4] = np.nan
    special[:, 4:8] = np.inf
    add("float-nan-inf.tif", save(Image.fromarray(special), "TIFF"), check=mean_between(110, 150))
    add(
        "float-all-nan.tif",
        save(Image.fromarray(np.full((H, W), np.nan, np.float32)), "TIFF"),
        check=mean_between(0, 0),
    )
    bgr16 = np.zeros((H, W, 3), np.uint16)
    bgr16[..., 2] = 65535
    add("48bit-rgb.png", cv2.imencode(".png", bgr16)[1].tobytes(), check=colour_at(0.5, 0.5, (255, 0, 0), tol=1))
    add("48bit-rgb.tif", cv2.imencode(".tiff", bgr16)[1].tobytes(), check=colour_at(0.5, 0.5, (255, 0, 0), tol=1))
    half = np.zeros((H, W, 4), np.uint8)
    half[:, : W // 2] = (0, 0, 255, 255)  # opaque blue | transparent black
    add("rgba.png", save(Image.fromarray(half), "PNG"), check=colour_at(0.5, 0.9, (255, 255, 255), tol=0))
    add("rgba.webp", save(Image.fromarray(half), "WEBP", lossless=True), check=colour_at(0.5, 0.1, (0, 0, 255)))
    add("rgba.tif", save(Image.fromarray(half), "TIFF"), check=colour_at(0.5, 0.9, (255, 255, 255), tol=0))
    add("la.png", save(Image.new("LA", (W, H), (0, 0)), "PNG"), check=mean_between(255, 255))
    palette = Image.new("P", (W, H), 0)
    palette.putpalette([0, 0, 0, 0, 0, 255] + [0] * 762)
    palette.paste(1, (0, 0, W // 2, H))
    add("palette-trns.png", save(palette, "PNG", transparency=0), check=colour_at(0.5, 0.9, (255, 255, 255), tol=0))
    add("palette-alpha.png", save(palette, "PNG", transparency=bytes([0, 255])), check=colour_at(0.5, 0.1, (0, 0, 255)))
    add("palette-trns.gif", save(palette, "GIF", transparency=0), check=colour_at(0.5, 0.9, (255, 255, 255), tol=0))
    add("palette.bmp", save(palette, "BMP"), check=colour_at(0.5, 0.1, (0, 0, 255), tol=0))
    cmyk = Image.new("CMYK", (W, H), (0, 255, 255, 0))
    add("cmyk.jpg", save(cmyk, "JPEG"), check=colour_at(0.5, 0.5, (255, 0, 0)))
    add("cmyk.tif", save(cmyk, "TIFF"), check=colour_at(0.5, 0.5, (255, 0, 0), tol=0))
    one_bit = Image.new("1", (W, H), 1)
    add("1bit.png", save(one_bit, "PNG"), check=mean_between(255, 255))
    add("1bit-g4.tif", save(one_bit, "TIFF", compression="group4"), check=mean_between(255, 255))
    add("1bit.bmp", save(one_bit, "BMP"), check=mean_between(255, 255))
    add("ycbcr.jpg", save(red.convert("YCbCr"), "JPEG"), check=colour_at(0.5, 0.5, (255, 0, 0)))

    # Animations: the first frame is the picture.
    frames = [Image.new("RGB", (W, H), c) for c in ((255, 0, 0), (0, 0, 255), (0, 255, 0))]
    first_red = colour_at(0.5, 0.5, (255, 0, 0))
    add("animated.gif", save(frames[0], "GIF", save_all=True, append_images=frames[1:], duration=50), check=first_red)
    add(
        "animated.webp",
        save(frames[0], "WEBP", save_all=True, append_images=frames[1:], lossless=True),
        check=first_red,
    )
    add("animated.png", save(frames[0], "PNG", save_all=True, append_images=frames[1:]), check=first_red)
    add("multipage.tif", save(frames[0], "TIFF", save_all=True, append_images=frames[1:]), check=first_red)

    # EXIF orientation 1-8: the red block of the stored picture ends where a viewer shows it.
    where = {1: "tl", 2: "tr", 3: "br", 4: "bl", 5: "tl", 6: "tr", 7: "br", 8: "bl"}
    for value, corner in where.items():
        exif = Image.Exif()
        exif[0x0112] = value
        w, h = (W, H) if value <= 4 else (H, W)
        add(f"exif-{value}.jpg", save(marked(), "JPEG", exif=exif, quality=95), check=red_corner(corner, w, h))
    exif = Image.Exif()
    exif[0x0112] = 6
    add("exif-6.png", save(marked(), "PNG", exif=exif), check=red_corner("tr", H, W))
    add("exif-6.webp", save(marked(), "WEBP", exif=exif, lossless=True), check=red_corner("tr", H, W))
    add("exif-garbage.jpg", save(marked(), "JPEG", exif=b"Exif\0\0" + b"\xff" * 40), check=red_corner("tl", W, H))
    exif = Image.Exif()
    exif[0x0112] = 99
    add("exif-out-of-range.jpg", save(marked(), "JPEG", exif=exif), check=red_corner("tl", W, H))

    # Empty, garbage, wrong kind.
    rng = np.random.default_rng(7)
    add("zero-bytes.jpg", b"", {"empty_file"})
    add("one-byte.png", b"\x89", {"not_an_image"})
    add("garbage.jpg", rng.integers(0, 256, 4096, np.uint8).tobytes(), {"not_an_image"})
    add("text.jpg", b"hello, I am not a picture\n" * 20, {"not_an_image"})
    add("pdf.jpg", b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\n", {"not_an_image"})
    add("html.png", b"<!doctype html><html><body>404</body></html>", {"not_an_image"})
    add(
        "jpeg-magic-then-garbage.jpg",
        b"\xff\xd8\xff\xe0" + rng.integers(0, 256, 2048, np.uint8).tobytes(),
        REJECT_BROKEN,
    )
    add("png-magic-only.png", b"\x89PNG\r\n\x1a\n", REJECT_BROKEN)
    add("gif-magic-only.gif", b"GIF89a", REJECT_BROKEN)
    add("riff-not-webp.webp", b"RIFF\x10\0\0\0WAVEfmt " + bytes(16), {"not_an_image"})
    add("heic-named-jpg.jpg", b"\0\0\0\x18ftypheic\0\0\0\0mif1heic" + bytes(64), {"unsupported_format"})

    # Truncated: every format, at several lengths.
    big = noise(96, 80)
    for fmt, ext in [
        ("JPEG", "jpg"),
        ("PNG", "png"),
        ("GIF", "gif"),
        ("BMP", "bmp"),
        ("TIFF", "tif"),
        ("WEBP", "webp"),
    ]:
        data = save(big, fmt)
        for frac in (0.5, 0.9):
            add(f"truncated-{int(frac * 100)}.{ext}", data[: int(len(data) * frac)], REJECT_BROKEN)
    add("truncated-header.png", save(big, "PNG")[:40], REJECT_BROKEN)
    add("png-bad-crc.png", flip(save(big, "PNG"), 29), REJECT_BROKEN)  # inside IHDR's CRC
    add("png-bad-idat.png", flip(save(big, "PNG"), 60, 40), REJECT_BROKEN)
    add("png-zero-width.png", png_header_only(0, 20, 8, 0), REJECT_BROKEN)
    # A damaged JPEG body may still decode (to a wrong picture); it must never raise anything else.
    add("jpeg-flipped-middle.jpg", flip(save(big, "JPEG"), 900, 64), REJECT_OR_DECODE)
    add("gif-bad-lzw.gif", flip(save(big, "GIF"), 800, 64), REJECT_OR_DECODE)
    add("webp-flipped.webp", flip(save(big, "WEBP"), 100, 32), REJECT_OR_DECODE)
    add(
        "tiff-bad-compression.tif",
        _tiff_with_compression(save(big, "TIFF"), 60000),
        REJECT_OR_DECODE | {"unsupported_format"},
    )
    text_bomb = (
        save(red, "PNG")[:-12]
        + png_chunk(b"zTXt", b"k\0\0" + zlib.compress(b"a" * 20_000_000))
        + png_chunk(b"IEND", b"")
    )
    add("png-text-bomb.png", text_bomb, REJECT_OR_DECODE)

    # Decoders that raised outside the caught set, found by fuzzing.
    if "AVIF" in FORMATS:
        avif = save(noise(48, 40), "AVIF")
        for offset in (81, 82, 90, 120):
            add(f"avif-damaged-{offset}.jpg", flip(avif, offset, value=0), REJECT_OR_DECODE | {"too_large"})
    dds = bytearray(save(red, "DDS"))
    add("dds.jpg", bytes(dds), {"unsupported_format"})
    dds[80:84] = bytes(4)
    add("dds-unknown-pixel-format.jpg", bytes(dds), {"unsupported_format", "not_an_image"})
    spider = bytearray(save(Image.new("F", (W, H)), "SPIDER"))
    add("spider.jpg", bytes(spider), {"unsupported_format"})
    spider[104:108] = struct.pack("<f", 1.0)
    add("spider-no-stack-offset.jpg", bytes(spider), {"unsupported_format", "not_an_image"})

    # Formats Pillow knows but the app does not offer.
    for fmt, _ext, mode in [
        ("PPM", "ppm", "RGB"),
        ("PCX", "pcx", "RGB"),
        ("ICO", "ico", "RGB"),
        ("QOI", "qoi", "RGB"),
        ("SGI", "sgi", "RGB"),
        ("JPEG2000", "jp2", "RGB"),
        ("EPS", "eps", "RGB"),
        ("PDF", "pdf", "RGB"),
        ("TGA", "tga", "RGB"),
    ]:
        try:
            data = save(Image.new(mode, (W, H), "red"), fmt)
        except (OSError, KeyError, ValueError):  # an encoder missing from this Pillow build
            continue
        add(f"{fmt.lower()}-as.jpg", data, {"unsupported_format", "not_an_image"})

    # Sizes: tiny and bombs (declared sizes; nothing large is ever decoded).
    add("1x1.png", save(Image.new("RGB", (1, 1)), "PNG"), {"too_small"})
    add("1x1.gif", save(Image.new("P", (1, 1)), "GIF"), {"too_small"})
    add("8x8.jpg", save(Image.new("RGB", (8, 8)), "JPEG"), {"too_small"})
    add("15x300.png", save(Image.new("RGB", (15, 300)), "PNG"), {"too_small"})
    add("bomb-12000.png", save(Image.new("1", (12000, 12000)), "PNG"), {"too_large"})
    add("bomb-20000.png", png_header_only(20000, 20000), {"too_large"})
    gif = bytearray(save(Image.new("P", (32, 32)), "GIF"))
    gif[6:10] = struct.pack("<HH", 60000, 60000)  # the logical screen Pillow takes as the size
    add("bomb-60000.gif", bytes(gif), {"too_large"})
    add("over-pixel-limit.png", png_header_only(8000, 7000), {"too_large"})
    add("bomb-tiff.tif", _tiff_claiming(30000, 30000), {"too_large", "corrupt"})
    return cases


def _tiff_with_compression(data: bytes, value: int) -> bytes:
    """Rewrites the Compression tag (259) of a little-endian TIFF's first IFD."""
    out = bytearray(data)
    ifd = struct.unpack("<I", out[4:8])[0]
    count = struct.unpack("<H", out[ifd : ifd + 2])[0]
    for i in range(count):
        entry = ifd + 2 + 12 * i
        if struct.unpack("<H", out[entry : entry + 2])[0] == 259:
            out[entry + 8 : entry + 10] = struct.pack("<H", value)
    return bytes(out)


def _tiff_claiming(w: int, h: int) -> bytes:
    data = bytearray(save(Image.new("L", (32, 32)), "TIFF"))
    ifd = struct.unpack("<I", data[4:8])[0]
    count = struct.unpack("<H", data[ifd : ifd + 2])[0]
    for i in range(count):
        entry = ifd + 2 + 12 * i
        tag, typ = struct.unpack("<HH", data[entry : entry + 4])
        if tag in (256, 257):
            value = w if tag == 256 else h
            data[entry + 8 : entry + 12] = struct.pack("<H", value) + b"\0\0" if typ == 3 else struct.pack("<I", value)
    return bytes(data)


# ---- path cases ----------------------------------------------------------------------------------


def path_cases(root: Path) -> list[Case]:
    """Names and special files: each must be a per-file error (or a decode), never a hang."""
    good = save(Image.new("RGB", (W, H), (255, 0, 0)), "JPEG")
    cases: list[Case] = []
    (root / "folder.jpg").mkdir()
    cases.append(Case("folder.jpg", root / "folder.jpg", frozenset({"not_a_file"})))
    os.mkfifo(root / "fifo.jpg")
    cases.append(Case("fifo.jpg", root / "fifo.jpg", frozenset({"not_a_file"})))
    (root / "loop.jpg").symlink_to("loop.jpg")
    cases.append(Case("loop.jpg", root / "loop.jpg", frozenset({"symlink_loop"})))
    (root / "loop-a.jpg").symlink_to("loop-b.jpg")
    (root / "loop-b.jpg").symlink_to("loop-a.jpg")
    cases.append(Case("loop-pair.jpg", root / "loop-a.jpg", frozenset({"symlink_loop"})))
    (root / "dangling.jpg").symlink_to("nowhere.jpg")
    cases.append(Case("dangling.jpg", root / "dangling.jpg", frozenset({"missing"})))
    (root / "link-to-good.jpg").write_bytes(good)
    (root / "link.jpg").symlink_to("link-to-good.jpg")
    cases.append(Case("link.jpg", root / "link.jpg", check=size(W, H)))
    cases.append(Case("missing.jpg", root / "missing.jpg", frozenset({"missing"})))
    (root / "plain-file").write_bytes(good)
    cases.append(Case("under-a-file", root / "plain-file" / "x.jpg", frozenset({"missing"})))
    cases.append(Case("300-char-name", root / ("n" * 300 + ".jpg"), frozenset({"name_too_long"})))
    cases.append(Case("5000-char-path", Path("/" + "d/" * 2500 + "x.jpg"), frozenset({"name_too_long"})))
    for name in ("/dev/zero", "/dev/null", "/dev/urandom"):
        if os.path.exists(name):
            cases.append(Case(name, Path(name), frozenset({"not_a_file"})))
    raw = os.fsencode(root) + b"/non-utf8-\xff\xfe.jpg"
    with open(raw, "wb") as f:
        f.write(good)
    cases.append(Case("non-utf8-name", Path(os.fsdecode(raw)), check=size(W, H)))
    weird = root / "new\nline\x1b[31m.jpg"
    weird.write_bytes(good)
    cases.append(Case("control-chars-in-name", weird, check=size(W, H)))
    sparse = root / "over-64-mib.jpg"
    with open(sparse, "wb") as f:
        f.write(good)
        f.truncate(64 * 1024 * 1024 + 1)
    cases.append(Case("over-64-mib.jpg", sparse, frozenset({"too_large"})))
    return cases


# ---- videos --------------------------------------------------------------------------------------


def frame_for(index: int, w: int, h: int) -> np.ndarray:
    """A BGR frame whose grey level encodes its index (every 5 levels), with a little texture."""
    frame = np.full((h, w, 3), (index * 5) % 250, np.uint8)
    frame[::8, ::8] = 255
    return frame


def index_of(rgb: np.ndarray) -> int:
    """The index frame_for() wrote (modulo 50), read back from a lossy frame."""
    return int(round(float(np.median(rgb)) / 5)) % 50


def write_mjpg(path: Path, frames: int = 152, w: int = 64, h: int = 48, fps: float = 25.0) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, (w, h))
    assert writer.isOpened(), "OpenCV cannot write MJPG here"
    for i in range(frames):
        writer.write(frame_for(i, w, h))
    writer.release()
    return path


def avi_chunks(data: bytes) -> list[int]:
    """Offsets of the '00dc' frame chunks inside the movi list (not the idx1 copies)."""
    start = data.index(b"movi")
    end = data.find(b"idx1", start)
    end = len(data) if end < 0 else end
    offsets, i = [], start
    while (i := data.find(b"00dc", i + 1, end)) >= 0:
        offsets.append(i)
    return offsets


def cut_frame(data: bytes, index: int, keep: int = 100) -> bytes:
    """Frame `index` loses all but its first `keep` bytes; the demuxer then loses its footing."""
    chunks = avi_chunks(data)
    return data[: chunks[index] + keep] + data[chunks[index + 1] :]


def smash_frames(data: bytes, first: int, count: int) -> bytes:
    """Overwrites the JPEG data of frames first..first+count-1 (headers kept)."""
    out = bytearray(data)
    chunks = avi_chunks(data)
    for i in range(first, first + count):
        start, end = chunks[i] + 8, chunks[i + 1]
        out[start + 20 : end - 4] = bytes(end - 4 - start - 20)
    return bytes(out)


def with_frame_rate(data: bytes, rate: int, scale: int) -> bytes:
    """The stream header claims rate/scale frames per second (and avih agrees)."""
    out = bytearray(data)
    strh = out.index(b"strh")
    out[strh + 8 + 20 : strh + 8 + 28] = struct.pack("<II", scale, rate)
    avih = out.index(b"avih")
    out[avih + 8 : avih + 12] = struct.pack("<I", min(2**32 - 1, int(1e6 * scale / max(rate, 1))))
    return bytes(out)


def with_default_duration(data: bytes, nanoseconds: int) -> bytes:
    """A Matroska file whose header claims `nanoseconds` per frame (its DefaultDuration element);
    its blocks keep their own times."""
    at = data.index(bytes([0x23, 0xE3, 0x83]))
    assert data[at + 3] == 0x84, "a 4-byte DefaultDuration, as FFmpeg writes it"
    return data[: at + 4] + struct.pack(">I", nanoseconds) + data[at + 8 :]
