"""Bounded-time fuzzing of the image decoder.

Valid PNG, JPEG, GIF, TIFF, WebP, BMP (and AVIF where Pillow has it) files are
mutated with bit flips, byte sets, truncations, insertions and splices. Only
ImageRejected may escape decode_image_bytes; a decode is always HxWx3 uint8.
KEYFRAME_FUZZ_EXAMPLES sets the count (CI default keeps it to a few seconds).
"""

from __future__ import annotations

import io
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from app.frames.intake import FORMATS, ImageRejected, decode_image_bytes
from app.frames.limits import MIN_SIDE

EXAMPLES = int(os.environ.get("KEYFRAME_FUZZ_EXAMPLES", "4000"))


def _seeds() -> list[bytes]:
    rng = np.random.default_rng(3)
    rgb = Image.fromarray(rng.integers(0, 256, (24, 32, 3), np.uint8))
    out = []
    for fmt, img, kw in [
        ("PNG", rgb, {}),
        ("PNG", Image.fromarray(np.tile(np.arange(32, dtype=np.uint16) * 2000, (24, 1))), {}),
        ("JPEG", rgb, {"quality": 90}),
        ("JPEG", rgb, {"progressive": True}),
        ("GIF", rgb.convert("P"), {}),
        ("TIFF", rgb, {}),
        ("TIFF", rgb, {"compression": "tiff_lzw"}),
        ("TIFF", Image.fromarray(rng.random((24, 32), np.float32)), {}),
        ("WEBP", rgb, {"quality": 70}),
        ("WEBP", rgb, {"lossless": True}),
        ("BMP", rgb, {}),
        ("AVIF", rgb, {}),
    ]:
        if fmt not in FORMATS:
            continue
        buf = io.BytesIO()
        img.save(buf, fmt, **kw)
        out.append(buf.getvalue())
    return out


SEEDS = _seeds()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["flip", "set", "truncate", "insert", "splice", "zero"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "set" and data:
            data[pos] = draw(st.sampled_from([0x00, 0xFF, 0x7F, 0x80, 0x01]))
        elif op == "truncate":
            del data[pos + 1 :]
        elif op == "insert":
            data[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        elif op == "splice":
            other = draw(st.sampled_from(SEEDS))
            cut = draw(st.integers(0, len(other)))
            data[pos:] = other[cut:]
        elif op == "zero":
            data[pos : pos + draw(st.integers(1, 64))] = bytes(min(64, len(data) - pos))
    return bytes(data)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_only_image_rejected_escapes_the_decoder(data: bytes) -> None:
    try:
        image = decode_image_bytes(data, name="fuzz.jpg")
    except ImageRejected as exc:
        assert exc.reason in {"empty_file", "not_an_image", "corrupt", "too_small", "too_large", "unsupported_format"}
        return
    assert image.rgb.dtype == np.uint8 and image.rgb.ndim == 3 and image.rgb.shape[2] == 3
    assert min(image.rgb.shape[:2]) >= MIN_SIDE


@settings(max_examples=max(50, EXAMPLES // 10), deadline=None)
@given(st.binary(max_size=512))
def test_arbitrary_bytes_are_rejected_cleanly(data: bytes) -> None:
    try:
        decode_image_bytes(data)
    except ImageRejected:
        pass
