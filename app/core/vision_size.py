"""The image size handed to the model: the biggest latency lever, so the app decides it.

MNN's Qwen-VL path resizes to the requested height/width rounded to its patch
grid (32 px for Qwen3-VL) with plain bilinear interpolation. The app resizes to
exactly that grid itself (with area averaging), so MNN's resize is a no-op and
the cost of a keyframe is known in advance.
"""

from __future__ import annotations

from dataclasses import dataclass

QWEN3_VL_ALIGN = 32  # 16 px patches merged 2x2

# Default longest side per backend, from the real-size Qwen3-VL-2B table in
# shared/design/mnn-notes.md (2-core CPU): a decision at 224² takes ~4 s, within
# the longest keyframe interval (5 s); 448² takes ~14 s. GPU backends get 448².
_BACKEND_CAPS = {"cpu": 224, "metal": 448, "opencl": 448, "vulkan": 448}


def default_cap(backend: str) -> int:
    return _BACKEND_CAPS.get(backend, _BACKEND_CAPS["cpu"])


@dataclass(frozen=True)
class VisionPolicy:
    max_side: int  # longest side after resizing
    square: bool = False  # squash to max_side x max_side (models trained on square inputs)
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
