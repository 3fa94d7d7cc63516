from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.vision_size import VisionPolicy, vision_size


def test_full_hd_frame_at_448() -> None:
    assert vision_size(1080, 1920, VisionPolicy(448)) == (256, 448)


def test_small_images_are_not_blown_up_beyond_the_grid() -> None:
    # Each side snaps to the grid but never above the source (90 -> 64, not 96).
    assert vision_size(100, 90, VisionPolicy(448)) == (96, 64)


def test_a_cap_above_the_image_never_upscales_it() -> None:
    """--image-max-side above the image size used to upscale it."""
    assert vision_size(480, 640, VisionPolicy(2048)) == (480, 640)
    assert vision_size(112, 112, VisionPolicy(448)) == (96, 96)  # rounding alone once gave 128


def test_sides_below_one_cell_become_one_cell() -> None:
    assert vision_size(16, 300, VisionPolicy(448)) == (32, 288)


def test_a_user_cap_never_raises_a_declared_square() -> None:
    """A user cap used to replace the model's image_size, so 4096 fed a 4096² square."""
    from app.core.vision_size import choose_policy

    assert choose_policy("cpu", 128, 4096) == VisionPolicy(128, square=True)
    assert choose_policy("cpu", 448, 256) == VisionPolicy(256, square=True)
    assert choose_policy("cpu", 448, None) == VisionPolicy(224, square=True)
    assert choose_policy("metal", None, None) == VisionPolicy(448)
    assert choose_policy("cpu", None, 100_000).max_side == 2048
    assert choose_policy("cpu", None, 1).max_side == 32  # clamped, never a traceback


def test_square_models_get_squares() -> None:
    assert vision_size(1080, 1920, VisionPolicy(128, square=True)) == (128, 128)


def test_policy_rejects_sizes_below_one_cell() -> None:
    with pytest.raises(ValueError):
        VisionPolicy(16)


@given(st.integers(16, 8000), st.integers(16, 8000), st.integers(32, 2048), st.sampled_from([28, 32]))
def test_sizes_are_on_the_grid_and_within_the_cap(h: int, w: int, cap: int, align: int) -> None:
    if cap < align:
        return
    out_h, out_w = vision_size(h, w, VisionPolicy(cap, align=align))
    assert out_h % align == 0 and out_w % align == 0
    assert align <= out_h <= max(cap, align) and align <= out_w <= max(cap, align)
    assert out_h <= max(h, align) and out_w <= max(w, align)  # never upscaled
    if abs(h - w) > max(h, w) * 0.3 and max(h, w) >= 4 * align and cap >= 4 * align:
        assert (out_h > out_w) == (h > w) or out_h == out_w  # orientation kept


def test_cpu_gets_a_smaller_default_than_gpu_backends() -> None:
    from app.core.vision_size import default_cap

    assert default_cap("cpu") == 224 and default_cap("metal") == 448 and default_cap("unknown") == 224


def test_the_grid_comes_from_the_model_type() -> None:
    from app.core.vision_size import choose_policy, grid_for_model_type

    assert grid_for_model_type("qwen3_vl") == 32
    assert grid_for_model_type("qwen2_vl") == grid_for_model_type("qwen2_5_vl") == 28
    assert grid_for_model_type(None) == grid_for_model_type("something_new") == 32
    qwen25 = choose_policy("cpu", None, None, grid=28)
    assert vision_size(1080, 1920, qwen25) == (112, 224)
    assert vision_size(1080, 1920, choose_policy("cpu", None, None, grid=32)) == (128, 224)
    assert choose_policy("cpu", 448, None, grid=28) == VisionPolicy(224, square=True, align=28)
    assert vision_size(500, 500, choose_policy("cpu", 448, None, grid=28)) == (224, 224)


def test_a_model_folder_reads_its_grid() -> None:
    from app.engine.model_folder import open_model_folder
    from app.storage.paths import MODEL_STORE

    assert open_model_folder(MODEL_STORE / "keyframe-demo").vision_grid == 32  # model_type qwen3_vl


def test_a_square_model_is_shown_the_centred_square_of_a_wide_frame() -> None:
    from app.core.vision_size import VisionPolicy, square_crop

    square = VisionPolicy(max_side=128, square=True)
    assert square_crop(480, 640, square) == (0, 80, 480, 480)  # 4:3: the middle square
    assert square_crop(720, 1280, square) == (0, 280, 720, 720)  # 16:9
    assert square_crop(640, 480, square) == (80, 0, 480, 480)  # portrait
    assert square_crop(480, 640, VisionPolicy(max_side=224)) == (0, 0, 480, 640)  # a model of any shape: all
