"""Up-front checks of an MNN model folder on copies of the demo model."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from app.core.generation import RunPhase
from app.engine.mnn_graph import weight_bytes_needed
from app.engine.model_folder import (
    ModelFolderError,
    check_failed,
    check_suspects,
    model_files,
    open_model_folder,
    stopped_while_loading,
)
from tests.unit.unprivileged import as_unprivileged

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
def test_an_invalid_image_size_is_refused_naming_file_and_value(folder: Path, value: object) -> None:
    edit(folder, "llm_config.json", image_size=value if value is not None else "null-placeholder")
    if value is None:  # JSON null
        text = (folder / "llm_config.json").read_text().replace('"null-placeholder"', "null")
        (folder / "llm_config.json").write_text(text)
    with pytest.raises(ModelFolderError, match=r"llm_config\.json: invalid image_size") as caught:
        open_model_folder(folder)
    assert json.dumps(value)[:10] in str(caught.value)


def test_a_nan_image_size_is_refused_naming_llm_config_json(folder: Path) -> None:
    text = (folder / "llm_config.json").read_text().replace('"image_size": 128', '"image_size": NaN')
    (folder / "llm_config.json").write_text(text)
    with pytest.raises(ModelFolderError, match=r"llm_config\.json"):
        open_model_folder(folder)


def test_an_image_size_in_config_json_is_named_there_when_invalid_and_used_when_valid(folder: Path) -> None:
    edit(folder, "llm_config.json", image_size=None)
    edit(folder, "config.json", image_size=-1)
    with pytest.raises(ModelFolderError, match=r"^config\.json: invalid image_size -1"):
        open_model_folder(folder)
    edit(folder, "config.json", image_size=96)
    opened = open_model_folder(folder)
    assert (opened.image_size, opened.image_size_source) == (96, "config.json")


def test_a_visual_model_without_image_size_states_the_fallback(folder: Path) -> None:
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
def test_wrongly_typed_config_values_are_refused_naming_file_and_key(
    folder: Path, name: str, changes: dict[str, object], match: str
) -> None:
    edit(folder, name, **changes)
    with pytest.raises(ModelFolderError, match=match):
        open_model_folder(folder)


@pytest.mark.parametrize("hidden", [32, 128, 96, 65])
def test_a_hidden_size_that_does_not_fit_the_embedding_table_is_refused(folder: Path, hidden: int) -> None:
    edit(folder, "llm_config.json", hidden_size=hidden)
    with pytest.raises(ModelFolderError, match=rf"hidden_size {hidden} does not match the embedding table"):
        open_model_folder(folder)


@pytest.mark.parametrize("keep", [0.5, 0.99])
def test_a_truncated_llm_weight_file_is_refused_as_truncated(folder: Path, keep: float) -> None:
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
def test_empty_short_or_garbled_model_files_are_refused_naming_the_file(
    folder: Path, name: str, content: bytes, match: str
) -> None:
    (folder / name).write_bytes(content)
    with pytest.raises(ModelFolderError, match=match):
        open_model_folder(folder)


def test_a_missing_visual_graph_of_a_declared_visual_model_is_refused(folder: Path) -> None:
    (folder / "visual.mnn").unlink()
    with pytest.raises(ModelFolderError, match=r"visual\.mnn: missing"):
        open_model_folder(folder)


def test_a_broken_link_in_place_of_a_model_file_is_named(folder: Path, tmp_path: Path) -> None:
    (folder / "visual.mnn.weight").unlink()
    (folder / "visual.mnn.weight").symlink_to(tmp_path / "gone")
    with pytest.raises(ModelFolderError, match=r"visual\.mnn\.weight: a broken link"):
        open_model_folder(folder)


# -- damage that MNN met as "signal 11" -------------------------------------------------------------

FOREIGN = DEMO.parents[1] / "tests" / "fixtures" / "foreign_qwen3vl"
# What each graph reads from its weight file: all of it, as the exporter wrote it.
WEIGHT_BYTES = {(DEMO, "llm.mnn"): 84562, (DEMO, "visual.mnn"): 400722}
WEIGHT_BYTES |= {(FOREIGN, "llm.mnn"): 475396, (FOREIGN, "visual.mnn"): 433314}


@pytest.mark.parametrize(("model", "graph"), sorted(WEIGHT_BYTES), ids=lambda v: getattr(v, "name", v))
def test_a_graph_reads_as_many_weight_bytes_as_its_weight_file_holds(model: Path, graph: str) -> None:
    assert (
        weight_bytes_needed(model / graph) == WEIGHT_BYTES[model, graph] == (model / f"{graph}.weight").stat().st_size
    )


@pytest.mark.parametrize("keep", [1, 200_000, 400_721])
def test_a_vision_weight_file_shorter_than_its_graph_reads_is_refused(folder: Path, keep: int) -> None:
    data = (folder / "visual.mnn.weight").read_bytes()
    (folder / "visual.mnn.weight").write_bytes(data[:keep])
    pattern = rf"^visual\.mnn\.weight: {keep} bytes, but visual\.mnn reads it up to byte 400722: .* truncated"
    with pytest.raises(ModelFolderError, match=pattern):
        open_model_folder(folder)


@pytest.mark.parametrize(
    ("model", "short"), [(DEMO, "visual.mnn.weight"), (FOREIGN, "llm.mnn.weight")], ids=["demo", "foreign"]
)
def test_swapped_weight_files_are_refused_naming_the_short_one(tmp_path: Path, model: Path, short: str) -> None:
    folder = Path(shutil.copytree(model, tmp_path / "model"))
    (folder / "llm.mnn.weight").rename(folder / "swap")
    (folder / "visual.mnn.weight").rename(folder / "llm.mnn.weight")
    (folder / "swap").rename(folder / "visual.mnn.weight")
    with pytest.raises(ModelFolderError, match=rf"^{re.escape(short)}: \d+ bytes, but .* belongs to another model"):
        open_model_folder(folder)


def test_an_unreadable_weight_file_is_refused_naming_it() -> None:
    with tempfile.TemporaryDirectory() as top:  # under /tmp: reachable by an unprivileged user
        os.chmod(top, 0o755)
        folder = Path(shutil.copytree(DEMO, Path(top) / "model"))
        (folder / "visual.mnn.weight").chmod(0)

        def refusal() -> str:
            try:
                open_model_folder(folder)
            except ModelFolderError as exc:
                return str(exc)
            return "accepted"

        message = as_unprivileged(refusal)
    assert message == "visual.mnn.weight: the vision encoder weights cannot be read (Permission denied)"


def test_a_folder_in_place_of_a_weight_file_is_refused_naming_it(folder: Path) -> None:
    (folder / "visual.mnn.weight").unlink()
    (folder / "visual.mnn.weight").mkdir()
    with pytest.raises(ModelFolderError, match=r"^visual\.mnn\.weight: the vision encoder weights cannot be read"):
        open_model_folder(folder)


def test_a_missing_hidden_size_is_refused_and_one_in_config_json_accepted(folder: Path) -> None:
    edit(folder, "llm_config.json", hidden_size=None)
    with pytest.raises(ModelFolderError, match=r"^llm_config\.json: no 'hidden_size', so MNN would assume 4096"):
        open_model_folder(folder)
    edit(folder, "config.json", hidden_size=64)
    assert open_model_folder(folder).config["hidden_size"] == 64


def test_a_hidden_size_beyond_any_model_is_refused(folder: Path) -> None:
    edit(folder, "llm_config.json", hidden_size=10**9)
    with pytest.raises(ModelFolderError, match=r"^llm_config\.json: 'hidden_size' 1000000000 is out of range"):
        open_model_folder(folder)


@pytest.mark.parametrize(("key", "value"), [("vision_start", 10**9), ("vision_end", -1), ("image_pad", 493)])
def test_a_vision_token_beyond_the_vocabulary_is_refused(folder: Path, key: str, value: int) -> None:
    edit(folder, "llm_config.json", **{key: value})
    pattern = rf"^llm_config\.json: '{key}' {value} is not a token of this model \(its embedding table has 493 tokens\)"
    with pytest.raises(ModelFolderError, match=pattern):
        open_model_folder(folder)


def test_the_last_token_of_the_vocabulary_is_a_vision_token_like_any(folder: Path) -> None:
    edit(folder, "llm_config.json", vision_start=0, image_pad=492)
    open_model_folder(folder)


def test_a_visual_model_without_vision_tokens_gets_mnns_defaults_checked(folder: Path) -> None:
    edit(folder, "llm_config.json", vision_start=None)
    with pytest.raises(ModelFolderError, match=r"no 'vision_start', so MNN would use token 151857, which is not"):
        open_model_folder(folder)


def test_without_a_known_vocabulary_vision_tokens_are_bounded_by_any_vocabulary(folder: Path) -> None:
    edit(folder, "llm_config.json", tie_embeddings=None, vision_start=None, image_pad=151859)
    open_model_folder(folder)  # MNN's default and a large id may be this model's: only the table could tell
    edit(folder, "llm_config.json", image_pad=2**20)
    with pytest.raises(ModelFolderError, match=r"'image_pad' 1048576 is not a token of this model \(no model has"):
        open_model_folder(folder)


def test_the_files_being_loaded_are_named_when_the_worker_stops(folder: Path) -> None:
    names = ("config.json", "llm_config.json", "llm.mnn", "llm.mnn.weight", "tokenizer.mtok", "visual.mnn")
    assert model_files(folder) == (*names, "visual.mnn.weight")
    assert stopped_while_loading(folder, "signal 11") == (
        f"the inference worker stopped (signal 11) while the model's files {', '.join(names)}, visual.mnn.weight "
        f"in {folder} were being loaded: one of them is damaged or belongs to another model"
    )


def test_the_files_are_named_whatever_the_configs_hold(folder: Path, tmp_path: Path) -> None:
    """Composed after a crash: a config that is not JSON or names impossible files must not raise."""
    (folder / "llm_config.json").write_bytes(b"\xff not json")
    edit(folder, "config.json", llm_model="a\u0000b", tokenizer_file=7, visual_model="../outside.mnn")
    assert model_files(folder) == ("config.json", "llm_config.json", "llm.mnn.weight")  # tokenizer.txt: absent
    assert stopped_while_loading(tmp_path / "gone", "exit code -6").endswith("was being loaded: its files are missing")


def test_a_failed_check_names_the_files_of_the_step_it_failed_in(folder: Path) -> None:
    """The worker's check on a built-in image names the part of the model that was running."""
    assert check_suspects(folder, RunPhase.VISION) == ("visual.mnn", "visual.mnn.weight", "tokenizer.mtok")
    assert check_suspects(folder, RunPhase.PREFILL) == ("llm.mnn", "llm.mnn.weight")
    assert check_suspects(folder, None) == ("config.json", "llm_config.json", "tokenizer.mtok")  # before the image
    assert check_suspects(folder, "a step nobody knows") == model_files(folder)
    assert check_failed(folder, RunPhase.DECODE, "stopped, signal 11", verified=False) == (
        f"the model in {folder} loaded, then failed its check on a built-in image while its language model "
        "answered (stopped, signal 11): llm.mnn, llm.mnn.weight most likely damaged or from another model"
    )
    # Files that match a pinned manifest are not damaged: the runtime is what cannot run them.
    assert check_failed(folder, RunPhase.VISION, "stopped, signal 11", verified=True).endswith(
        "its files match the pinned manifest, so this version of MNN cannot run it"
    )
