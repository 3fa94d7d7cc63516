"""Up-front checks of an MNN model folder (issue 7 items 15 and 16) on copies of the demo model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from app.engine.model_folder import ModelFolderError, open_model_folder

DEMO = Path(__file__).resolve().parents[2] / "model_store" / "keyframe-demo"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return Path(shutil.copytree(DEMO, tmp_path / "model"))


def edit(folder: Path, name: str, **changes: object) -> None:
    data = json.loads((folder / name).read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    (folder / name).write_text(json.dumps(data))


def test_the_demo_model_opens_with_its_declared_image_size(folder: Path) -> None:
    opened = open_model_folder(folder)
    assert (opened.image_size, opened.image_size_source, opened.image_size_note) == (128, "llm_config.json", None)


# -- 16: image_size --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["128", 0, -128, True, 128.0, 10**6, [128], None])
def test_16_an_invalid_image_size_is_refused_naming_file_and_value(folder: Path, value: object) -> None:
    edit(folder, "llm_config.json", image_size=value if value is not None else "null-placeholder")
    if value is None:  # JSON null
        text = (folder / "llm_config.json").read_text().replace('"null-placeholder"', "null")
        (folder / "llm_config.json").write_text(text)
    with pytest.raises(ModelFolderError, match=r"llm_config\.json: invalid image_size") as caught:
        open_model_folder(folder)
    assert json.dumps(value)[:10] in str(caught.value)


def test_16_nan_image_size_is_refused(folder: Path) -> None:
    text = (folder / "llm_config.json").read_text().replace('"image_size": 128', '"image_size": NaN')
    (folder / "llm_config.json").write_text(text)
    with pytest.raises(ModelFolderError, match=r"llm_config\.json"):
        open_model_folder(folder)


def test_16_image_size_in_config_json_is_named_there(folder: Path) -> None:
    edit(folder, "llm_config.json", image_size=None)
    edit(folder, "config.json", image_size=-1)
    with pytest.raises(ModelFolderError, match=r"^config\.json: invalid image_size -1"):
        open_model_folder(folder)
    edit(folder, "config.json", image_size=96)
    opened = open_model_folder(folder)
    assert (opened.image_size, opened.image_size_source) == (96, "config.json")


def test_16_a_visual_model_without_image_size_states_the_fallback(folder: Path) -> None:
    edit(folder, "llm_config.json", image_size=None)
    opened = open_model_folder(folder)
    assert opened.image_size is None and opened.image_size_source is None
    assert opened.image_size_note is not None and "declares no image_size" in opened.image_size_note


# -- 15: cheap checks before MNN sees a folder -----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "changes", "match"),
    [
        ("llm_config.json", {"hidden_size": "64"}, r"llm_config\.json: 'hidden_size' must be a positive whole number"),
        ("llm_config.json", {"hidden_size": 0}, r"'hidden_size' must be a positive whole number"),
        ("llm_config.json", {"is_visual": "yes"}, r"'is_visual' must be true or false"),
        ("llm_config.json", {"image_mean": [1, 2]}, r"'image_mean' must be a list of 3 numbers"),
        ("llm_config.json", {"tie_embeddings": [1, 2, 3]}, r"'tie_embeddings' must be a list of 5"),
        ("config.json", {"thread_num": 2.5}, r"config\.json: 'thread_num' must be a positive whole number"),
        ("config.json", {"mllm": {"thread_num": "2"}}, r"config\.json \(mllm\): 'thread_num'"),
        ("config.json", {"tokenizer_file": 5}, r"'tokenizer_file' must be a non-empty string"),
        ("config.json", {"temperature": "hot"}, r"'temperature' must be a number"),
    ],
)
def test_15_wrongly_typed_config_values_are_refused(
    folder: Path, name: str, changes: dict[str, object], match: str
) -> None:
    edit(folder, name, **changes)
    with pytest.raises(ModelFolderError, match=match):
        open_model_folder(folder)


@pytest.mark.parametrize("hidden", [32, 128, 96, 65])
def test_15_a_hidden_size_that_does_not_fit_the_embedding_table_is_refused(folder: Path, hidden: int) -> None:
    edit(folder, "llm_config.json", hidden_size=hidden)
    with pytest.raises(ModelFolderError, match=rf"hidden_size {hidden} does not match the embedding table"):
        open_model_folder(folder)


@pytest.mark.parametrize("keep", [0.5, 0.99])
def test_15_a_truncated_weight_file_is_refused(folder: Path, keep: float) -> None:
    data = (folder / "llm.mnn.weight").read_bytes()
    (folder / "llm.mnn.weight").write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(ModelFolderError, match=r"^llm\.mnn\.weight: \d+ bytes, but .* truncated"):
        open_model_folder(folder)


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("llm.mnn", b"", r"llm\.mnn: empty file"),
        ("visual.mnn", b"\x00" * 8, r"visual\.mnn: 8 bytes is too small"),
        ("visual.mnn", b"\xff\xff\xff\x7f" + bytes(60), r"visual\.mnn: not an MNN model"),
        ("llm.mnn", b"\x24\x00\x00\x00" + bytes(32) + b"\xff\xff\xff\x7f" + bytes(8), r"llm\.mnn: not an MNN model"),
        ("visual.mnn.weight", b"", r"visual\.mnn\.weight: empty file"),
        ("tokenizer.mtok", b"", r"tokenizer\.mtok: empty file"),
        ("tokenizer.mtok", b"hello tokenizer\n", r"tokenizer\.mtok: damaged tokenizer"),
        ("tokenizer.mtok", b"430 4\n1 1 0\n480 9999\n", r"tokenizer\.mtok: token ids up to 9999 but .* 493 tokens"),
    ],
)
def test_15_damaged_files_are_refused_naming_the_file(folder: Path, name: str, content: bytes, match: str) -> None:
    (folder / name).write_bytes(content)
    with pytest.raises(ModelFolderError, match=match):
        open_model_folder(folder)


def test_15_a_missing_visual_graph_of_a_declared_visual_model_is_refused(folder: Path) -> None:
    (folder / "visual.mnn").unlink()
    with pytest.raises(ModelFolderError, match=r"visual\.mnn: missing"):
        open_model_folder(folder)


def test_15_a_broken_link_is_named(folder: Path, tmp_path: Path) -> None:
    (folder / "visual.mnn.weight").unlink()
    (folder / "visual.mnn.weight").symlink_to(tmp_path / "gone")
    with pytest.raises(ModelFolderError, match=r"visual\.mnn\.weight: a broken link"):
        open_model_folder(folder)
