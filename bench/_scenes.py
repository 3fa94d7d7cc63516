"""Held-out generated scenes for benchmarks (tools/ is not part of the app)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))


def scenes(count_per_kind: int, seed: int = 31337) -> list[tuple[str, bytes, str]]:
    from demo_model.scenes import scene_jpegs

    return scene_jpegs(count_per_kind, seed)
