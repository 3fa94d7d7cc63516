"""Model faults: damaged copies of the bundled demo model are refused before MNN sees them.

Every damage is tried two ways:
- pinned: a copy of the demo model with one damaged file. It is recognised as
  the pinned model (catalog.recognise_copy) and its verification names the file.
- unpinned: the same damage in a folder that is no longer a copy (config.json or
  llm_config.json edited harmlessly as well), so only the up-front checks of
  engine.model_folder stand between it and MNN. Damage they cannot see without
  running MNN is marked NEEDS_ISOLATION: only the worker process turns the
  crash it may cause into a clean error.
Both ways also run `python -m app analyze --model DIR` in a subprocess: exit 2,
a one-line error naming the file, no traceback, no signal.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from app.engine.model_folder import ModelFolderError, open_model_folder
from app.models.catalog import DEFAULT_MODEL_ID, ModelNotVerified, resolve_model
from tests.conditions import HANG_S
from tests.models.conftest import ROOT

DEMO = ROOT / "model_store" / "keyframe-demo"
IMAGE = ROOT / "assets" / "examples" / "correct-1.jpg"


def _flip(name: str, offset: Callable[[int], int]) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        data = bytearray((folder / name).read_bytes())
        data[offset(len(data))] ^= 0xFF
        (folder / name).write_bytes(bytes(data))

    return damage


def _truncate(name: str, keep: Callable[[int], int]) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        data = (folder / name).read_bytes()
        (folder / name).write_bytes(data[: keep(len(data))])

    return damage


_DROP = object()  # as the value of _edit_json: the key is removed


def _edit_json(name: str, key: str, value: object) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        data = json.loads((folder / name).read_text())
        if value is _DROP:
            del data[key]
        else:
            data[key] = value
        (folder / name).write_text(json.dumps(data, indent=4))

    return damage


def _write(name: str, content: bytes) -> Callable[[Path], None]:
    return lambda folder: (folder / name).write_bytes(content)


def _remove(name: str) -> Callable[[Path], None]:
    return lambda folder: (folder / name).unlink()


# name -> (damage, the file the error must name)
DAMAGES: dict[str, tuple[Callable[[Path], None], str]] = {
    "visual-flipped-byte": (_flip("visual.mnn", lambda n: n // 2), "visual.mnn"),
    "visual-flipped-root-offset": (_flip("visual.mnn", lambda n: 1), "visual.mnn"),
    "llm-weight-truncated": (_truncate("llm.mnn.weight", lambda n: n // 2), "llm.mnn.weight"),
    "llm-weight-last-byte-cut": (_truncate("llm.mnn.weight", lambda n: n - 1), "llm.mnn.weight"),
    "visual-weight-truncated": (_truncate("visual.mnn.weight", lambda n: n // 2), "visual.mnn.weight"),
    "tokenizer-truncated-header": (_truncate("tokenizer.mtok", lambda n: 40), "tokenizer.mtok"),
    "tokenizer-truncated-body": (_truncate("tokenizer.mtok", lambda n: n // 2), "tokenizer.mtok"),
    "hidden-size-wrong": (_edit_json("llm_config.json", "hidden_size", 128), "llm_config.json"),
    "missing-tokenizer": (_remove("tokenizer.mtok"), "tokenizer.mtok"),
    "missing-visual-weight": (_remove("visual.mnn.weight"), "visual.mnn.weight"),
    "empty-llm-graph": (_write("llm.mnn", b""), "llm.mnn"),
    "empty-visual-weight": (_write("visual.mnn.weight", b""), "visual.mnn.weight"),
    "garbage-config-json": (_write("config.json", b'{"llm_model": "llm.mnn",,,'), "config.json"),
    "garbage-llm-graph": (_write("llm.mnn", bytes(range(256)) * 64), "llm.mnn"),
    "image-size-string": (_edit_json("llm_config.json", "image_size", "128"), "llm_config.json"),
    "image-size-zero": (_edit_json("llm_config.json", "image_size", 0), "llm_config.json"),
    "image-size-huge": (_edit_json("llm_config.json", "image_size", 1_000_000), "llm_config.json"),
    # Each of these was "the inference worker stopped (signal 11)".
    "visual-weight-one-byte": (_write("visual.mnn.weight", b"\0"), "visual.mnn.weight"),
    "hidden-size-missing": (_edit_json("llm_config.json", "hidden_size", _DROP), "llm_config.json"),
    "vision-start-huge": (_edit_json("llm_config.json", "vision_start", 10**9), "llm_config.json"),
}

# Damage the up-front checks cannot see in an unpinned folder (it needs MNN's own parsing of the
# graph's contents or of the binary tokenizer): only the worker's process isolation makes these a
# clean error (before it, `analyze --model DIR` crashed on them). A short or missing weight file
# is seen: the graph says how many bytes it reads.
NEEDS_ISOLATION = {
    "visual-flipped-byte",
    "tokenizer-truncated-body",
}


def damaged_copy(dest: Path, name: str, *, pinned: bool) -> Path:
    """A copy of the demo model with one damage; unpinned copies also differ harmlessly elsewhere."""
    shutil.copytree(DEMO, dest)
    damage, target = DAMAGES[name]
    damage(dest)
    if not pinned:
        # A second changed file: no longer a copy of the pinned model (at most one may differ).
        other = "llm_config.json" if target == "config.json" else "config.json"
        _edit_json(other, "comment", "a user's own export")(dest)
    return dest


def test_an_intact_copy_of_the_demo_is_recognised_and_verified(tmp_path: Path) -> None:
    copy = shutil.copytree(DEMO, tmp_path / "copy")
    ref = resolve_model(str(copy), {"FLET_APP_STORAGE_DATA": str(tmp_path / "data")})
    assert ref.id == DEFAULT_MODEL_ID and ref.folder == copy and ref.manifest is not None
    ref.require_verified()


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_a_damaged_pinned_copy_fails_verification_naming_the_file(tmp_path: Path, name: str) -> None:
    folder = damaged_copy(tmp_path / name, name, pinned=True)
    ref = resolve_model(str(folder), {"FLET_APP_STORAGE_DATA": str(tmp_path / "data")})
    assert ref.id == DEFAULT_MODEL_ID, "a copy with one damaged file is still the pinned model"
    with pytest.raises(ModelNotVerified) as caught:
        ref.require_verified()
    assert [c.path for c in caught.value.report.failures] == [DAMAGES[name][1]]
    assert DAMAGES[name][1] in str(caught.value)


@pytest.mark.parametrize("name", sorted(DAMAGES))
def test_a_damaged_unpinned_folder_is_refused_up_front_naming_the_file(tmp_path: Path, name: str) -> None:
    folder = damaged_copy(tmp_path / name, name, pinned=False)
    ref = resolve_model(str(folder), {"FLET_APP_STORAGE_DATA": str(tmp_path / "data")})
    assert ref.manifest is None, "two changed files: the user's own model, not a copy"
    if name in NEEDS_ISOLATION:
        open_model_folder(folder)  # passes the cheap checks: MNN itself must be contained
        return
    with pytest.raises(ModelFolderError, match=DAMAGES[name][1].replace(".", r"\.")):
        open_model_folder(folder)


def _analyze(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "analyze", "--model", str(folder), str(IMAGE), "--jsonl"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )


CLEAN_IN_CLI = sorted(set(DAMAGES) - NEEDS_ISOLATION)


@pytest.mark.parametrize("pinned", [True, False], ids=["pinned", "unpinned"])
@pytest.mark.parametrize("name", CLEAN_IN_CLI)
def test_analyze_refuses_a_damaged_model_with_one_line_and_exit_2(tmp_path: Path, name: str, pinned: bool) -> None:
    folder = damaged_copy(tmp_path / name, name, pinned=pinned)
    result = _analyze(folder)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stdout == ""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and DAMAGES[name][1] in errors[0], result.stderr[-2000:]
    assert "Traceback" not in result.stderr
