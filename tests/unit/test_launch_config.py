"""The file MNN is created from: the model's config.json with the app's backend and threads for the
language model and the vision encoder alike, held to the folder that was checked."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from app.engine.mnn_vlm import EngineError, EngineOptions, capped_threads, launch_config, write_launch_file
from app.engine.model_folder import ModelFolderError, open_model_folder
from app.models.catalog import DEFAULT_MODEL_ID, resolve_model


def demo_copy(tmp_path: Path, **changes: object) -> Path:
    folder = tmp_path / "model"
    shutil.copytree(resolve_model(DEFAULT_MODEL_ID).folder, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    changed = {k: v for k, v in {**config, **changes}.items() if v is not None}  # None: the key left out
    (folder / "config.json").write_text(json.dumps(changed), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    ("threads", "omp", "expected"),
    [(2, None, 2), (4, "1", 1), (2, "3", 2), (3, " 2 ", 2), (2, "0", 2), (2, "-1", 2), (2, "two", 2), (2, "", 2)],
)
def test_omp_num_threads_caps_the_threads_and_a_value_that_is_not_a_count_is_ignored(
    threads: int, omp: str | None, expected: int
) -> None:
    env = {} if omp is None else {"OMP_NUM_THREADS": omp}
    assert capped_threads(threads, env) == expected


def test_the_vision_encoder_gets_the_same_backend_and_threads_and_keeps_its_other_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # the suite's cap (tests/conftest.py)
    folder = demo_copy(tmp_path, mllm={"backend_type": "opencl", "thread_num": 4, "precision": "normal"})
    config = launch_config(open_model_folder(folder), EngineOptions(threads=3, cache_dir=tmp_path / "cache"))
    own = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["mllm"] == {"backend_type": "cpu", "thread_num": 3, "precision": "normal"}
    assert (config["backend_type"], config["thread_num"], config["tmp_path"]) == ("cpu", 3, str(tmp_path / "cache"))
    # Everything else is the model's own: MNN merges llm_config.json itself.
    assert {
        k: v for k, v in config.items() if k not in ("mllm", "backend_type", "thread_num", "tmp_path", "base_dir")
    } == {k: v for k, v in own.items() if k not in ("mllm", "backend_type", "thread_num")}


def test_a_model_without_mllm_gets_one_and_base_dir_is_the_checked_folder_whatever_the_file_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    folder = demo_copy(tmp_path, mllm=None, base_dir="/somewhere/else/")
    config = launch_config(open_model_folder(folder), EngineOptions(threads=2))
    assert config["base_dir"] == f"{folder}{os.sep}"
    assert config["mllm"] == {"backend_type": "cpu", "thread_num": 1} and config["thread_num"] == 1
    assert "tmp_path" not in config  # no cache folder asked for: MNN keeps its own default


def test_a_config_that_went_away_after_the_check_is_a_model_folder_error(tmp_path: Path) -> None:
    checked = open_model_folder(demo_copy(tmp_path))
    (checked.path / "config.json").write_text("{", encoding="utf-8")
    with pytest.raises(ModelFolderError, match="config.json"):
        launch_config(checked, EngineOptions())


def test_the_launch_file_goes_to_the_temporary_folder_when_the_cache_cannot_take_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    folder = open_model_folder(resolve_model(DEFAULT_MODEL_ID).folder)
    options = EngineOptions(cache_dir=tmp_path / "file" / "cache")  # a folder inside a file: never writable
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "temporary"))
    (tmp_path / "temporary").mkdir()
    launch = write_launch_file(folder, options)
    assert launch.parent == tmp_path / "temporary"
    assert json.loads(launch.read_text(encoding="utf-8")) == launch_config(folder, options)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "file" / "temporary"))  # neither can take it
    with pytest.raises(EngineError, match=r"cannot write the file MNN starts from .*file/cache.*file/temporary"):
        write_launch_file(folder, options)
    assert sorted(p.name for p in (tmp_path / "temporary").iterdir()) == [launch.name]  # nothing left behind
