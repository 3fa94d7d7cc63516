"""Every Pillow mode becomes correct RGB uint8, and any
decoder failure is that file's ImageRejected."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
from PIL import Image

from app.frames.intake import ImageRejected, decode_image_bytes

W, H = 64, 32


def _save(img: Image.Image, fmt: str, **kw: object) -> bytes:
    buf = io.BytesIO()
    img.save(buf, fmt, **kw)
    return buf.getvalue()


def _ramp16() -> np.ndarray:
    return np.tile(np.linspace(0, 65535, W).astype(np.uint16), (H, 1))


@pytest.mark.parametrize("fmt", ["PNG", "TIFF"])
def test_a_16_bit_grey_image_keeps_its_brightness(fmt: str) -> None:
    """convert("RGB") clipped 16-bit grey to solid white."""
    rgb = decode_image_bytes(_save(Image.fromarray(_ramp16()), fmt)).rgb
    assert rgb.dtype == np.uint8 and rgb.shape == (H, W, 3)
    assert rgb[0, 0].tolist() == [0, 0, 0] and rgb[0, -1].tolist() == [255, 255, 255]
    assert 120 < rgb.mean() < 135  # a ramp, not white


def test_a_16_bit_big_endian_tiff_keeps_its_brightness() -> None:
    img = Image.frombytes("I;16B", (W, H), _ramp16().astype(">u2").tobytes())
    rgb = decode_image_bytes(_save(img, "TIFF")).rgb
    assert 120 < rgb.mean() < 135 and rgb[0, -1, 0] == 255


def test_a_32_bit_integer_tiff_is_stretched_to_the_full_range() -> None:
    wide = np.tile(np.linspace(-(2**20), 2**20, W).astype(np.int32), (H, 1))
    rgb = decode_image_bytes(_save(Image.fromarray(wide), "TIFF")).rgb
    assert rgb[0, 0, 0] == 0 and rgb[0, -1, 0] == 255 and 120 < rgb.mean() < 135


@pytest.mark.parametrize(("top", "expected_max"), [(1.0, 255), (0.5, 128), (1000.0, 255)])
def test_float_tiff_is_scaled_not_black(top: float, expected_max: int) -> None:
    """A float TIFF used to become black. 0-1 is the usual convention; other ranges are stretched."""
    ramp = np.tile(np.linspace(0, top, W).astype(np.float32), (H, 1))
    rgb = decode_image_bytes(_save(Image.fromarray(ramp), "TIFF")).rgb
    assert abs(int(rgb.max()) - expected_max) <= 1 and rgb[0, 0, 0] == 0


def test_float_nan_and_inf_are_handled() -> None:
    ramp = np.tile(np.linspace(0, 1, W).astype(np.float32), (H, 1))
    ramp[0, :3] = [np.nan, np.inf, -np.inf]
    rgb = decode_image_bytes(_save(Image.fromarray(ramp), "TIFF")).rgb
    assert rgb[0, :3, 0].tolist() == [0, 255, 0]
    assert rgb[5, -1, 0] == 255
    everything_nan = np.full((H, W), np.nan, np.float32)
    assert decode_image_bytes(_save(Image.fromarray(everything_nan), "TIFF")).rgb.max() == 0


def test_scale_to_8bit_rules() -> None:
    from app.frames.intake import scale_to_8bit

    assert scale_to_8bit(np.array([[0, 255]], np.int32)).tolist() == [[0, 255]]
    assert scale_to_8bit(np.array([[0, 65535]], np.int32)).tolist() == [[0, 255]]
    assert scale_to_8bit(np.array([[0, 255]], np.int32), sixteen_bit=True).tolist() == [[0, 0]]
    assert scale_to_8bit(np.array([[7.0, 7.0]], np.float32)).tolist() == [[7, 7]]  # 0-255 kept
    assert scale_to_8bit(np.array([[-5.0, 5.0]], np.float32)).tolist() == [[0, 255]]


def test_transparent_pixels_are_white_not_their_hidden_colour() -> None:
    rgba = np.zeros((H, W, 4), np.uint8)
    rgba[:, : W // 2] = (255, 0, 0, 255)  # opaque red | fully transparent black
    rgb = decode_image_bytes(_save(Image.fromarray(rgba), "PNG")).rgb
    assert rgb[0, 0].tolist() == [255, 0, 0] and rgb[0, -1].tolist() == [255, 255, 255]
    la = Image.new("LA", (W, H), (10, 0))
    assert decode_image_bytes(_save(la, "PNG")).rgb.min() == 255


def test_a_16_bit_grey_png_with_a_transparent_value_is_white_there() -> None:
    """tRNS names one 16-bit grey value transparent; it used to decode as grey 156."""
    grey = np.full((H, W), 40000, np.uint16)
    grey[:, W // 2 :] = 20000
    rgb = decode_image_bytes(_save(Image.fromarray(grey), "PNG", transparency=40000)).rgb
    assert rgb[0, 0].tolist() == [255, 255, 255]  # transparent: composited on white
    assert rgb[0, -1].tolist() == [78, 78, 78]  # opaque: 20000 >> 8, as without tRNS
    only = np.full((H, W), 40000, np.uint16)
    assert decode_image_bytes(_save(Image.fromarray(only), "PNG", transparency=40000)).rgb.min() == 255


def test_palette_with_transparency_and_pa() -> None:
    p = Image.new("P", (W, H), 0)
    p.putpalette([0, 0, 0, 0, 0, 255] + [0] * 762)
    p.paste(1, (0, 0, W // 2, H))
    rgb = decode_image_bytes(_save(p, "PNG", transparency=0)).rgb
    assert rgb[0, 0].tolist() == [0, 0, 255] and rgb[0, -1].tolist() == [255, 255, 255]
    rgb = decode_image_bytes(_save(p, "GIF", transparency=0)).rgb
    assert rgb[0, 0].tolist() == [0, 0, 255] and rgb[0, -1].tolist() == [255, 255, 255]
    pa = p.convert("PA")  # PA cannot be saved; to_rgb8 is checked through it directly
    from app.frames.intake import to_rgb8

    assert to_rgb8(pa)[0, 0].tolist() == [0, 0, 255]


@pytest.mark.parametrize("fmt", ["JPEG", "TIFF"])
def test_cmyk_becomes_rgb(fmt: str) -> None:
    rgb = decode_image_bytes(_save(Image.new("CMYK", (W, H), (0, 255, 255, 0)), fmt)).rgb
    r, g, b = rgb[H // 2, W // 2].tolist()
    assert r > 240 and g < 15 and b < 15


def test_one_bit_becomes_black_and_white() -> None:
    img = Image.new("1", (W, H), 0)
    img.paste(1, (0, 0, W // 2, H))
    rgb = decode_image_bytes(_save(img, "PNG")).rgb
    assert rgb[0, 0].tolist() == [255, 255, 255] and rgb[0, -1].tolist() == [0, 0, 0]


def test_a_16_bit_rgb_png_keeps_its_colour() -> None:
    import cv2

    bgr16 = np.zeros((H, W, 3), np.uint16)
    bgr16[..., 2] = 65535  # red in OpenCV's BGR order
    ok, buf = cv2.imencode(".png", bgr16)
    assert ok
    assert decode_image_bytes(buf.tobytes()).rgb[0, 0].tolist() == [255, 0, 0]


# Inputs that made Pillow raise outside the caught set (found by fuzzing), each
# rebuilt deterministically. DDS and SPIDER are no longer offered to Pillow at all.


def _dds_unknown_pixel_format() -> bytes:
    data = bytearray(_save(Image.new("RGB", (W, H), "red"), "DDS"))
    data[80:84] = bytes(4)  # pixel-format flags 0: NotImplementedError in DdsImagePlugin
    return bytes(data)


def _spider_without_stack_offset() -> bytes:
    data = bytearray(_save(Image.new("F", (W, H)), "SPIDER"))
    data[26 * 4 : 27 * 4] = struct.pack("<f", 1.0)  # AttributeError: no 'stkoffset'
    return bytes(data)


@pytest.mark.parametrize(
    ("make", "reasons"),
    [
        (_dds_unknown_pixel_format, {"not_an_image", "unsupported_format"}),
        (_spider_without_stack_offset, {"not_an_image", "unsupported_format"}),
        (lambda: _save(Image.new("RGB", (W, H)), "DDS"), {"unsupported_format"}),
        (lambda: _save(Image.new("RGB", (W, H)), "PCX"), {"unsupported_format"}),
    ],
)
def test_foreign_decoders_are_never_reached(make, reasons: set[str]) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ImageRejected) as err:
        decode_image_bytes(make(), name="photo.jpg")
    assert err.value.reason in reasons
    assert "photo.jpg" in str(err.value)


def test_damaged_avif_is_rejected_not_raised() -> None:
    """libavif raised RuntimeError for a damaged colour plane; any failure is the file's error."""
    from app.frames.intake import FORMATS

    if "AVIF" not in FORMATS:
        pytest.skip("this Pillow has no AVIF support")
    good = _save(Image.fromarray(np.random.default_rng(0).integers(0, 255, (40, 48, 3), np.uint8)), "AVIF")
    outcomes = set()
    for offset in range(40, 140):
        data = bytearray(good)
        data[offset] = 0
        try:
            decode_image_bytes(bytes(data))
            outcomes.add("decoded")
        except ImageRejected as exc:
            outcomes.add(exc.reason)
    assert outcomes <= {"decoded", "corrupt", "not_an_image", "unsupported_format", "too_small", "too_large"}
    assert "corrupt" in outcomes


def test_memory_error_in_conversion_is_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    """Conversion failures (numpy/OpenCV) are the file's error too; MemoryError reads as too large.
    MemoryError cannot be provoked safely for real, so this one path is simulated."""
    import app.frames.intake as intake

    def boom(img: Image.Image) -> np.ndarray:
        raise MemoryError

    monkeypatch.setattr(intake, "to_rgb8", boom)
    with pytest.raises(ImageRejected) as err:
        decode_image_bytes(_save(Image.new("RGB", (W, H)), "PNG"))
    assert err.value.reason == "too_large"
