"""Small generated models, stores in temp folders, and the local servers the downloads use."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.models.download import RetryPolicy
from app.models.manifest import Manifest, manifest_from_dict
from app.models.store import ModelStore

ROOT = Path(__file__).resolve().parents[2]
# Short timeouts and backoffs keep fault tests fast; the algorithm is the same as the defaults'.
FAST = RetryPolicy(
    attempts_per_mirror=3,
    backoff_s=0.01,
    max_backoff_s=0.05,
    max_retry_after_s=5.0,
    connect_timeout_s=2.0,
    read_timeout_s=0.5,
    space_reserve_bytes=0,
)


@dataclass(frozen=True)
class Model:
    id: str
    files: dict[str, bytes]
    data: dict  # the manifest as JSON data

    @property
    def manifest(self) -> Manifest:
        return manifest_from_dict(self.data)

    def served(self, prefix: str = "/m") -> dict[str, bytes]:
        return {f"{prefix}/{path}": content for path, content in self.files.items()}

    def write_manifest(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.id}.json"
        path.write_text(json.dumps(self.data, indent=2))
        return path


def make_model(
    model_id: str = "tiny-vlm",
    sizes: dict[str, int] | None = None,
    *,
    seed: int = 1,
    with_sizes: bool = True,
    contents: dict[str, bytes] | None = None,
    **extra: object,
) -> Model:
    """Random files of the given sizes (or the given contents) and a schema-1 manifest for them."""
    sizes = sizes or {"config.json": 700, "llm.mnn.weight": 900_000, "visual/visual.mnn": 300_000}
    rng = random.Random(seed)
    files = contents or {path: rng.randbytes(size) for path, size in sizes.items()}
    entries = []
    for path, content in files.items():
        entry: dict[str, object] = {"path": path, "sha256": hashlib.sha256(content).hexdigest()}
        if with_sizes:
            entry["size"] = len(content)
        entries.append(entry)
    data = {
        "schema": 1,
        "id": model_id,
        "display_name": f"Test model {model_id}",
        "revision": "test-1",
        "files": entries,
        **extra,
    }
    return Model(model_id, files, data)


def make_store(root: Path, *models: Model, policy: RetryPolicy = FAST, **kwargs: object) -> ModelStore:
    return ModelStore({m.id: m.manifest for m in models}, root, policy=policy, **kwargs)  # type: ignore[arg-type]


def assert_nothing_corrupt_installed(store: ModelStore, model: Model) -> None:
    """Whatever sits at a file's final path is exactly the right file; a usable model is complete."""
    folder = store.folder(model.id)
    for path, content in model.files.items():
        dest = folder / path
        if dest.exists():
            assert dest.read_bytes() == content, f"{path} is installed with wrong bytes"
    status = store.status(model.id)
    for path in status.verified:
        assert (folder / path).read_bytes() == model.files[path]
    if status.usable:
        assert all((folder / p).read_bytes() == c for p, c in model.files.items())


@pytest.fixture
def model() -> Model:
    return make_model()


def cli_env(tmp_path: Path, manifests: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "FLET_APP_STORAGE_DATA": str(tmp_path / "data"),
            "FLET_APP_STORAGE_CACHE": str(tmp_path / "cache"),
            "KEYFRAME_MANIFESTS_DIR": str(manifests),
            "PYTHONPATH": str(ROOT),
        }
    )
    env.pop("FLET_PLATFORM", None)
    return env


# The models command as a user runs it, in a separate process.
CLI = [sys.executable, "-m", "app", "models"]


def run_cli(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


class RecordingGuard:
    """Stands in for NetworkGuard: records which hosts each allowance covered."""

    def __init__(self) -> None:
        self.allowed: list[frozenset[str]] = []

    @contextlib.contextmanager
    def allow_download(self, hosts: frozenset[str]) -> Iterator[None]:
        self.allowed.append(frozenset(hosts))
        yield


@pytest.fixture
def no_system_proxy(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No proxy from the environment: each test sets the one it means."""
    for name in ("no_proxy", "all_proxy", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch
