from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.models.catalog import DEFAULT_MODEL_ID, resolve_model
from app.storage.paths import PROFILES
from app.storage.profile_file import load_profile
from app.worker.analyzer import Analyzer
from tests.conditions import wait_for

# Different from every seed the generator trains on: these scenes are held out.
HELD_OUT_SEED = 424242


@pytest.fixture(scope="session")
def demo_analyzer() -> Iterator[Analyzer]:
    analyzer = Analyzer(resolve_model(DEFAULT_MODEL_ID), load_profile(PROFILES / "hand_position.json"))
    analyzer.load()
    yield analyzer
    analyzer.close()


def held_out_scenes(count_per_kind: int, seed: int = HELD_OUT_SEED, size: int = 256) -> list[tuple[str, bytes, str]]:
    """(kind, JPEG bytes, expected answer) for freshly generated scenes."""
    from demo_model.scenes import scene_jpegs

    return scene_jpegs(count_per_kind, seed, size, quality=92)


def write_scenes(folder: Path, scenes: list[tuple[str, bytes, str]]) -> list[tuple[Path, str]]:
    out = []
    for i, (kind, data, expected) in enumerate(scenes):
        path = folder / f"{i:03d}-{kind}.jpg"
        path.write_bytes(data)
        out.append((path, expected))
    return out


def wait(controller, done, timeout: float = 90):
    """The controller's state once `done(state)` holds; fails after `timeout` seconds."""
    return wait_for(lambda: controller.state, done, timeout, "the controller's state")
