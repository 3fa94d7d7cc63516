"""The image size handed to the model: the biggest latency lever, so the app decides it.

MNN's Qwen-VL path resizes to the requested height/width rounded to its patch
grid with plain bilinear interpolation. The grid is the model's vision patch
times its 2x2 merge: 14 x 2 = 28 px for Qwen2-VL and Qwen2.5-VL, 16 x 2 = 32 px
for Qwen3-VL (`grid_for_model_type`, from the model's config). The app resizes to
exactly that grid itself (with area averaging), so MNN's resize is a no-op and
the cost of a keyframe is known in advance.
"""

from __future__ import annotations

from dataclasses import dataclass

QWEN2_VL_GRID = 28  # 14 px patches merged 2x2 (Qwen2-VL, Qwen2.5-VL)
QWEN3_VL_GRID = 32  # 16 px patches merged 2x2 (Qwen3-VL)
_GRID_BY_MODEL_TYPE = {"qwen2_vl": QWEN2_VL_GRID, "qwen2_5_vl": QWEN2_VL_GRID, "qwen3_vl": QWEN3_VL_GRID}
# A model type this table does not know gets the larger grid: a side on the 32 px
# grid is also a whole number of 16 px patches, and never below one cell of 28.
DEFAULT_GRID = QWEN3_VL_GRID


def grid_for_model_type(model_type: object) -> int:
    """The pixel grid MNN snaps image sides to, from the config's `model_type`."""
    return _GRID_BY_MODEL_TYPE.get(model_type, DEFAULT_GRID) if isinstance(model_type, str) else DEFAULT_GRID


# Default longest side per backend, from timings of the real-size Qwen3-VL-2B on a
# 2-core CPU (tools/real_size): a decision at 224² takes ~4 s, within
# the longest keyframe interval (5 s); 448² takes ~14 s. GPU backends get 448².
_BACKEND_CAPS = {"cpu": 224, "metal": 448, "opencl": 448, "vulkan": 448}


# Bounds of a user's --image-max-side: below one cell (of the larger grid) MNN has no
# grid; above 2048 px a CPU decision takes minutes (vision cost grows faster than pixels).
MIN_USER_SIDE = QWEN3_VL_GRID
MAX_USER_SIDE = 2048


def default_cap(backend: str) -> int:
    return _BACKEND_CAPS.get(backend, _BACKEND_CAPS["cpu"])


def choose_policy(
    backend: str, declared: int | None, user_cap: int | None = None, grid: int = DEFAULT_GRID
) -> VisionPolicy:
    """The policy for a model: `declared` is its fixed square `image_size` (None if it
    has none), `user_cap` the user's --image-max-side (None: the backend default),
    `grid` its patch grid (`grid_for_model_type`).

    A declared size is a ceiling: a user cap may lower it, never raise it, so a
    square model is never fed more than it was trained on. The cap itself is
    clamped to MIN_USER_SIDE..MAX_USER_SIDE (the CLI refuses values outside).
    """
    cap = default_cap(backend) if user_cap is None else min(max(user_cap, MIN_USER_SIDE), MAX_USER_SIDE)
    if declared is not None:
        return VisionPolicy(max_side=max(grid, min(declared, cap)), square=True, align=grid)
    return VisionPolicy(max_side=cap, align=grid)


@dataclass(frozen=True)
class VisionPolicy:
    max_side: int  # longest side after resizing
    square: bool = False  # squash to max_side x max_side (models trained on square inputs)
    align: int = DEFAULT_GRID  # the model's patch grid in pixels

    def __post_init__(self) -> None:
        if self.max_side < self.align:
            raise ValueError(f"max_side must be at least {self.align}")


def square_crop(height: int, width: int, policy: VisionPolicy) -> tuple[int, int, int, int]:
    """(top, left, height, width) of the part of a frame a model is shown: for a square model the
    centred square, so a webcam's 4:3 or 16:9 frame keeps the scene's shape instead of being squashed
    into the square (the demo model answered YES for hands on the side in a 4:3 frame); the whole frame
    otherwise."""
    if not policy.square or height == width:
        return 0, 0, height, width
    side = min(height, width)
    return (height - side) // 2, (width - side) // 2, side, side


def vision_size(height: int, width: int, policy: VisionPolicy) -> tuple[int, int]:
    """(height, width) on the model's grid, longest side <= max_side, aspect kept unless square.

    Never larger than the source, so a cap above the image never upscales it;
    the one exception is a side shorter than one grid cell, which becomes one
    cell (MNN cannot take less).

    A square policy is the model's fixed input: such a model was trained on squares of
    its `image_size`, so that square is returned whatever the source size (a small image
    is stretched to it). MNN squashes an image to `image_size` only when it is given no
    size; given one (as the app always does) it encodes that size as is, even 1920x1088
    on a model declaring 128 (bench.defaults), so this function is what holds the line.
    """
    a = policy.align
    top = max(a, policy.max_side // a * a)
    if policy.square:
        return top, top
    scale = min(1.0, policy.max_side / max(height, width, 1))

    def snap(v: int) -> int:
        nearest = max(a, round(v * scale / a) * a)
        not_above_source = max(a, v // a * a)
        return int(min(top, nearest, not_above_source))

    return snap(height), snap(width)
