from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.vision_size import VisionPolicy, vision_size


def test_full_hd_frame_at_448() -> None:
    assert vision_size(1080, 1920, VisionPolicy(448)) == (256, 448)


def test_small_images_are_not_blown_up_beyond_the_grid() -> None:
    assert vision_size(100, 90, VisionPolicy(448)) == (96, 96)


def test_square_models_get_squares() -> None:
    assert vision_size(1080, 1920, VisionPolicy(128, square=True)) == (128, 128)


def test_policy_rejects_sizes_below_one_cell() -> None:
    with pytest.raises(ValueError):
        VisionPolicy(16)


@given(st.integers(16, 8000), st.integers(16, 8000), st.integers(32, 1024), st.sampled_from([28, 32]))
def test_sizes_are_on_the_grid_and_within_the_cap(h: int, w: int, cap: int, align: int) -> None:
    if cap < align:
        return
    out_h, out_w = vision_size(h, w, VisionPolicy(cap, align=align))
    assert out_h % align == 0 and out_w % align == 0
    assert align <= out_h <= max(cap, align) and align <= out_w <= max(cap, align)
    if abs(h - w) > max(h, w) * 0.3 and max(h, w) >= 4 * align and cap >= 4 * align:
        assert (out_h > out_w) == (h > w) or out_h == out_w  # orientation kept


def test_cpu_gets_a_smaller_default_than_gpu_backends() -> None:
    from app.core.vision_size import default_cap

    assert default_cap("cpu") == 224 and default_cap("metal") == 448 and default_cap("unknown") == 224
