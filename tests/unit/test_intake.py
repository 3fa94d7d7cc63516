from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from app.frames.intake import ImageRejected, decode_image_bytes, read_image_file


def _jpeg(w: int = 64, h: int = 48, **save: object) -> bytes:
    img = Image.new("RGB", (w, h), (200, 30, 30))
    buf = io.BytesIO()
    img.save(buf, "JPEG", **save)
    return buf.getvalue()


def test_decodes_to_rgb_uint8() -> None:
    image = decode_image_bytes(_jpeg())
    assert image.rgb.shape == (48, 64, 3) and image.rgb.dtype == np.uint8
    r, g, b = image.rgb[24, 32]
    assert r > 150 and g < 80 and b < 80  # RGB order, not BGR


def test_exif_orientation_is_applied() -> None:
    img = Image.new("RGB", (64, 32), "white")
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise for display
    buf = io.BytesIO()
    img.save(buf, "JPEG", exif=exif)
    assert decode_image_bytes(buf.getvalue()).rgb.shape[:2] == (64, 32)


def test_grey_and_alpha_become_rgb() -> None:
    for mode in ("L", "RGBA", "P"):
        buf = io.BytesIO()
        Image.new(mode, (20, 20)).save(buf, "PNG")
        assert decode_image_bytes(buf.getvalue()).rgb.shape == (20, 20, 3)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty_file"),
        (b"hello, not an image", "not_an_image"),
        (b"%PDF-1.4\n...", "not_an_image"),
    ],
)
def test_non_images_are_rejected(data: bytes, reason: str) -> None:
    with pytest.raises(ImageRejected) as err:
        decode_image_bytes(data)
    assert err.value.reason == reason


def test_truncated_jpeg_is_corrupt() -> None:
    data = _jpeg(256, 256, quality=95)
    with pytest.raises(ImageRejected) as err:
        decode_image_bytes(data[: len(data) // 2])
    assert err.value.reason == "corrupt"


def test_tiny_image_is_refused() -> None:
    with pytest.raises(ImageRejected) as err:
        decode_image_bytes(_jpeg(8, 8))
    assert err.value.reason == "too_small"


def test_decompression_bomb_is_refused_before_decoding() -> None:
    buf = io.BytesIO()
    Image.new("1", (12000, 12000)).save(buf, "PNG")  # 144 MP, a few KB on disk
    with pytest.raises(ImageRejected) as err:
        decode_image_bytes(buf.getvalue())
    assert err.value.reason == "too_large"


def test_files(tmp_path: Path) -> None:
    with pytest.raises(ImageRejected) as err:
        read_image_file(tmp_path / "nope.jpg")
    assert err.value.reason == "missing"
    with pytest.raises(ImageRejected) as err:
        read_image_file(tmp_path)
    assert err.value.reason == "not_a_file"
    good = tmp_path / "ok.jpg"
    good.write_bytes(_jpeg())
    assert read_image_file(good).width == 64


def test_resize_exact() -> None:
    from app.frames.intake import resize_exact

    rgb = np.zeros((100, 200, 3), np.uint8)
    assert resize_exact(rgb, 64, 96).shape == (64, 96, 3)
    assert resize_exact(rgb, 100, 200) is rgb
