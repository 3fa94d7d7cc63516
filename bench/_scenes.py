"""Held-out generated scenes for benchmarks (tools/ is not part of the app)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))


def scenes(count_per_kind: int, seed: int = 31337) -> list[tuple[str, bytes, str]]:
    from demo_model.scenes import SCENE_KINDS, expected_answer, render_scene

    rng = np.random.default_rng(seed)
    out = []
    for kind in SCENE_KINDS:
        for _ in range(count_per_kind):
            buf = io.BytesIO()
            render_scene(rng, kind, 256).save(buf, "JPEG", quality=90)
            out.append((kind, buf.getvalue(), expected_answer(kind)))
    return out
