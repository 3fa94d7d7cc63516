"""The image size handed to the model: the biggest latency lever, so the app decides it.

MNN's Qwen-VL path resizes to the requested height/width rounded to its patch
grid (32 px for Qwen3-VL) with plain bilinear interpolation. The app resizes to
exactly that grid itself (with area averaging), so MNN's resize is a no-op and
the cost of a keyframe is known in advance.
"""

from __future__ import annotations

from dataclasses import dataclass

QWEN3_VL_ALIGN = 32  # 16 px patches merged 2x2


@dataclass(frozen=True)
class VisionPolicy:
    max_side: int                 # longest side after resizing
    square: bool = False          # squash to max_side x max_side (models trained on square inputs)
    align: int = QWEN3_VL_ALIGN

    def __post_init__(self) -> None:
        if self.max_side < self.align:
            raise ValueError(f"max_side must be at least {self.align}")


def vision_size(height: int, width: int, policy: VisionPolicy) -> tuple[int, int]:
    """(height, width) on the model's grid, longest side <= max_side, aspect kept unless square."""
    a = policy.align
    top = max(a, policy.max_side // a * a)
    if policy.square:
        return top, top
    scale = min(1.0, policy.max_side / max(height, width))

    def snap(v: float) -> int:
        return int(min(top, max(a, round(v * scale / a) * a)))

    return snap(height), snap(width)
