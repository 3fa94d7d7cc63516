"""An MNN LLM/VLM folder as MNN reads it: `config.json` names the other files.

Reading it up front lets the app say which file is missing or damaged instead
of letting MNN fail, answer silently without the vision encoder, or crash the
process (MNN trusts its files: a truncated weight file, a missing `hidden_size`
or a token id beyond the vocabulary reads past a buffer). Only cheap checks run
here — reading the two JSON files, the op tables of the `.mnn` graphs (for the
weight bytes they read, app.engine.mnn_graph), the tokenizer's header, and
file sizes — so an unpinned folder is refused in milliseconds whatever its
size. A pinned model is hash-verified before this (app.models.catalog).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.generation import RunPhase
from app.core.record import FLAG, NONEMPTY, OBJECT, Rule, check_fields, is_whole, list_of, number, whole
from app.core.vision_size import grid_for_model_type
from app.engine.mnn_graph import GraphError, weight_bytes_needed
from app.engine.tokenizer_header import TokenizerHeader, TokenizerHeaderError, read_tokenizer_header
from app.storage.small_file import BadJSON, open_regular, read_small_json


class ModelFolderError(ValueError):
    pass


# MNN's defaults when config.json does not name a file (llmconfig.hpp).
_FILE_KEYS = {
    "llm_model": "llm.mnn",
    "llm_weight": "llm.mnn.weight",
    "tokenizer_file": "tokenizer.txt",
    "visual_model": "visual.mnn",
}
_EMBEDDING_DEFAULT = "embeddings_bf16.bin"
# config.json and llm_config.json are a few KB (a chat template included); far more is not a config.
MAX_CONFIG_BYTES = 1024 * 1024

# MNN reads these keys with a typed accessor that silently substitutes its default for a value of
# the wrong type (llmconfig.hpp), so a typo changes the model's behaviour without a word: refuse it.
_INT_KEYS = frozenset(
    {"hidden_size", "layer_nums", "thread_num", "max_new_tokens", "vision_start", "vision_end", "image_pad"}
    | {"num_grid_per_side", "image_max_size", "image_min_pixels", "image_max_pixels", "top_k", "n_gram"}
    | {"penalty_window", "kv_cache_size"}
)
_POSITIVE_KEYS = frozenset({"hidden_size", "layer_nums", "thread_num", "max_new_tokens", "num_grid_per_side"})
_NUMBER_KEYS = frozenset(
    {"temperature", "top_p", "min_p", "tfs_z", "typical", "repetition_penalty", "presence_penalty"}
    | {"frequency_penalty", "ngram_factor"}
)
_BOOL_KEYS = frozenset({"is_visual", "is_mrope", "has_deepstack", "use_mmap", "reuse_kv", "kvcache_mmap"})
_STRING_KEYS = frozenset(
    {"backend_type", "precision", "memory", "power", "sampler_type", "model_type", "attention_mask"}
    | {"attention_type", "embedding_file", *_FILE_KEYS}
)
_OBJECT_KEYS = frozenset({"mllm", "jinja"})

# MNN assumes 4096 when hidden_size is absent (llmconfig.hpp) and reads the embedding table with it.
# The widest language models have 16384; beyond 65536 the number is not a hidden size.
HIDDEN_SIZE_MAX = 65536
# The token ids MNN puts around and inside an image's tokens, with its defaults for a visual model
# that declares none (omni.hpp). Without a vocabulary size to check them against: no tokenizer has
# a million tokens (Gemma's 262144 are the most).
_MNN_VISION_TOKENS = {"vision_start": 151857, "vision_end": 151858, "image_pad": 151859}
VOCAB_MAX = 1 << 20

# Vision input side. Qwen-VL patches are 14 or 16 px merged 2x2, so below 28 px there is not one
# visual token; above 4096 px a single keyframe would take minutes on a phone and gigabytes of RAM.
IMAGE_SIZE_MIN, IMAGE_SIZE_MAX = 28, 4096


@dataclass(frozen=True)
class ModelFolder:
    path: Path
    config: dict[str, Any]  # config.json merged with llm_config.json, as MNN merges them
    tokenizer_path: Path
    visual_path: Path
    # The validated `image_size` and the file that declares it (None when neither does).
    declared_image_size: int | None = None
    image_size_source: str | None = None

    @property
    def config_path(self) -> Path:
        return self.path / "config.json"

    def own_config(self) -> dict[str, Any]:
        """config.json alone, as the folder holds it (`config` adds llm_config.json, as MNN does)."""
        return _read_json(self.config_path)

    @property
    def use_template(self) -> bool:
        """Whether MNN applies the model's chat template (config `use_template`, on unless false)."""
        return self.config.get("use_template", True) is not False

    @property
    def image_size(self) -> int | None:
        """Fixed square input side if the model declares one (MNN squashes to it); validated on open."""
        return self.declared_image_size

    @property
    def vision_grid(self) -> int:
        """The pixel grid image sides snap to (patch x merge), from the config's model_type."""
        return grid_for_model_type(self.config.get("model_type"))

    @property
    def vision_token_ids(self) -> tuple[int, int]:
        """The token ids MNN puts before and after an image's tokens (its defaults when not declared)."""
        start, end = (int(self.config.get(k, _MNN_VISION_TOKENS[k])) for k in ("vision_start", "vision_end"))
        return start, end

    @property
    def positions_follow_cache_length(self) -> bool:
        """Whether MNN numbers a multimodal-RoPE model's next tokens from its context's sequence length
        alone: true for a float causal mask of full attention, which the length does not otherwise size
        (an int mask, or sliding-window attention's, is built from it)."""
        config = self.config
        return (
            config.get("is_mrope") is True
            and config.get("attention_mask", "int") == "float"
            and config.get("attention_type", "full") != "mix"
        )

    @property
    def is_visual(self) -> bool:
        return bool(self.config.get("is_visual", True)) and self.visual_path.is_file()

    @property
    def image_size_note(self) -> str | None:
        """A sentence for stderr and the result when a visual model declares no `image_size`.

        The input side is then the app's own choice (the backend's default cap, or
        --image-max-side), aspect kept — not a size the model was made for — and a
        different side can flip the answer, so the user must be told.
        """
        if not self.is_visual or self.declared_image_size is not None:
            return None
        return (
            f"{self.path.name}: the model declares no image_size in llm_config.json or config.json; "
            "images are sent at the app's default size (aspect kept), which may not be what the model expects"
        )


def _read_json(path: Path) -> dict[str, Any]:
    """A config file of the folder as MNN reads it: UTF-8 without a byte-order mark, standard JSON."""
    try:
        data = read_small_json(path, MAX_CONFIG_BYTES, bom=False, parse_constant=_reject_constant)
    except OSError as exc:
        raise ModelFolderError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except BadJSON as exc:
        raise ModelFolderError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelFolderError(f"{path}: expected a JSON object")
    return data


def _reject_constant(name: str) -> Any:
    # Python accepts NaN/Infinity in JSON; MNN's parser (and the JSON standard) does not.
    raise ValueError(f"{name} is not JSON")


# What each key MNN reads may be (app.core.record): a wrong type is refused here, where MNN would read
# a default or crash.
_RULES: dict[str, Rule] = {
    **{key: whole() for key in _INT_KEYS},
    **{key: whole(1) for key in _POSITIVE_KEYS},
    **{key: number() for key in _NUMBER_KEYS},
    **{key: FLAG for key in _BOOL_KEYS},
    **{key: NONEMPTY for key in _STRING_KEYS},
    **{key: OBJECT for key in _OBJECT_KEYS},
    "image_mean": list_of(number(), "a list of 3 numbers", length=3),
    "image_norm": list_of(number(), "a list of 3 numbers", length=3),
    "tie_embeddings": Rule(
        "a list of 5 non-negative whole numbers",
        lambda v: isinstance(v, list) and len(v) in (0, 5) and all(whole(0)(x) for x in v),
    ),
}


def _check_types(data: dict[str, Any], where: str) -> None:
    def refuse(key: str, rule: Rule, value: object) -> ModelFolderError:
        return ModelFolderError(f"{where}: '{key}' must be {rule.words}, got {json.dumps(value)[:60]}")

    check_fields(data, _RULES, refuse)
    if isinstance(data.get("mllm"), dict):
        _check_types(data["mllm"], f"{where} (mllm)")


def _image_size(config: dict[str, Any], llm_config: dict[str, Any]) -> tuple[int | None, str | None]:
    """The declared square input side, or (None, None); an invalid declaration is refused."""
    source = "llm_config.json" if "image_size" in llm_config else "config.json" if "image_size" in config else None
    if source is None:
        return None, None
    value = (llm_config if source == "llm_config.json" else config)["image_size"]
    # MNN reads image_size as a JSON integer; anything else would be replaced by its default size.
    if not is_whole(value) or not IMAGE_SIZE_MIN <= value <= IMAGE_SIZE_MAX:
        raise ModelFolderError(
            f"{source}: invalid image_size {json.dumps(value)[:40]}: it must be a whole number of pixels "
            f"from {IMAGE_SIZE_MIN} to {IMAGE_SIZE_MAX} (or absent)"
        )
    return value, source


def _require_file(path: Path, what: str) -> int:
    """The size of `path`, which must be a readable, non-empty regular file."""
    if path.is_symlink() and not path.exists():
        raise ModelFolderError(f"{path.name}: a broken link ({what})")
    if not path.exists():
        raise ModelFolderError(f"{path.name}: missing ({what})")
    try:
        with open_regular(path) as fh:  # what MNN will open: a file it may not read crashes it later
            size = os.fstat(fh.fileno()).st_size
    except OSError as exc:
        raise ModelFolderError(f"{path.name}: {what} cannot be read ({exc.strerror or exc})") from exc
    if size == 0:
        raise ModelFolderError(f"{path.name}: empty file ({what})")
    return size


def _check_graph(graph: Path, weight: Path, what: str) -> None:
    """`graph` is an MNN graph, and `weight` holds every byte of weights the graph reads from it."""
    _require_file(graph, f"the {what} graph")
    try:
        needed = weight_bytes_needed(graph)
    except GraphError as exc:
        raise ModelFolderError(f"{graph.name}: {exc}") from exc
    except OSError as exc:
        raise ModelFolderError(f"{graph.name}: the {what} graph cannot be read ({exc.strerror or exc})") from exc
    if not needed and not (weight.exists() or weight.is_symlink()):
        return  # all its weights are inside the graph
    size = _require_file(weight, f"the {what} weights")
    if size < needed:
        raise ModelFolderError(
            f"{weight.name}: {size} bytes, but {graph.name} reads it up to byte {needed}: "
            "the file is truncated or belongs to another model"
        )


def _check_tie_embeddings(folder: Path, config: dict[str, Any], weight: Path, where: str) -> int | None:
    """The quantised embedding table MNN reads from the weight file by offset (diskembedding.cpp).

    Its five numbers and `hidden_size` fix where the table and its scales lie and
    how many tokens it holds; MNN seeks there without checking, so a truncated
    weight file or a `hidden_size` that does not match crashes it. Returns the
    vocabulary size when it can be derived.
    """
    tie = config.get("tie_embeddings") or []
    if len(tie) != 5:
        return None
    w_offset, a_offset, a_size, bits, block = tie
    hidden = config.get("hidden_size")
    source = weight
    if w_offset == 0:  # a separate embedding file
        source = folder / str(config.get("embedding_file", _EMBEDDING_DEFAULT))
        _require_file(source, "the embedding table named by tie_embeddings")
    end = max(a_offset + a_size, w_offset)
    size = source.stat().st_size
    if size < end:
        raise ModelFolderError(
            f"{source.name}: {size} bytes, but {where} places the embedding table up to byte {end}: "
            "the file is truncated or belongs to another model"
        )
    if bits == 16 or not is_whole(hidden):
        return None
    if bits not in (4, 8) or a_offset <= w_offset:
        raise ModelFolderError(f"{where}: tie_embeddings {tie} do not describe a 4- or 8-bit embedding table")
    blocks = hidden // block if block else 1
    table_bits = (a_offset - w_offset) * 8
    vocab, rest = divmod(table_bits, bits * hidden)
    fits = not (block and hidden % block) and not rest and vocab > 0
    if not fits or a_size not in (4 * blocks * vocab, 8 * blocks * vocab):
        raise ModelFolderError(
            f"{where}: hidden_size {hidden} does not match the embedding table in {source.name} "
            f"(tie_embeddings {tie}): the config belongs to another model or was edited"
        )
    return int(vocab)


def _check_tokenizer(path: Path, vocab: int | None) -> TokenizerHeader:
    _require_file(path, "the tokenizer")
    try:
        header = read_tokenizer_header(path)
    except TokenizerHeaderError as exc:
        raise ModelFolderError(f"{path.name}: damaged tokenizer ({exc})") from exc
    ids = header.special_ids + header.stop_ids + header.prefix_ids
    if vocab is not None and any(not 0 <= i < vocab for i in ids):
        raise ModelFolderError(
            f"{path.name}: token ids up to {max(ids)} but the model's embedding table has {vocab} tokens: "
            "the tokenizer belongs to another model"
        )
    return header


def _where(key: str, config: dict[str, Any], llm_config: dict[str, Any]) -> str:
    """The file that declares `key` (llm_config.json wins, as in MNN), or where it belongs when neither does."""
    return "config.json" if key in config and key not in llm_config else "llm_config.json"


def _check_hidden_size(config: dict[str, Any], where: str) -> None:
    hidden = config.get("hidden_size")  # its type is checked with the others'
    if hidden is None:
        raise ModelFolderError(
            f"{where}: no 'hidden_size', so MNN would assume 4096 and misread the model's embedding table"
        )
    if hidden > HIDDEN_SIZE_MAX:
        raise ModelFolderError(f"{where}: 'hidden_size' {hidden} is out of range (1 to {HIDDEN_SIZE_MAX})")


def _check_vision_token(config: dict[str, Any], key: str, vocab: int | None, where: str) -> None:
    """MNN embeds a vision token id like any token, without a bounds check: past the table it reads foreign memory."""
    if key in config:
        value, said = config[key], f"'{key}' {config[key]}"
    elif config.get("is_visual") is True:
        value = _MNN_VISION_TOKENS[key]
        said = f"no '{key}', so MNN would use token {value}, which"
    else:
        return  # not a visual model for MNN: it embeds no image tokens
    if not 0 <= value < (vocab or VOCAB_MAX):
        table = f"its embedding table has {vocab} tokens" if vocab else f"no model has {VOCAB_MAX} tokens"
        raise ModelFolderError(f"{where}: {said} is not a token of this model ({table})")


def open_model_folder(path: Path) -> ModelFolder:
    path = Path(path)
    if path.is_file() and path.name == "config.json":
        path = path.parent
    if not path.is_dir():
        raise ModelFolderError(f"{path}: not a model folder")
    config_path = path / "config.json"
    if not config_path.exists():
        raise ModelFolderError(f"{path}: no config.json (an MNN model folder needs one)")
    config = _read_json(config_path)
    _check_types(config, "config.json")
    llm_config_path = path / "llm_config.json"
    llm_config = _read_json(llm_config_path) if llm_config_path.exists() else {}
    _check_types(llm_config, "llm_config.json")
    merged = {**config, **llm_config}
    where = "llm_config.json" if "hidden_size" in llm_config or "tie_embeddings" in llm_config else "config.json"
    image_size, image_size_source = _image_size(config, llm_config)
    files = {key: path / str(merged.get(key, default)) for key, default in _FILE_KEYS.items()}
    for p in files.values():
        if p.resolve().parent != path.resolve():
            raise ModelFolderError(f"{path}: config.json points outside the model folder: {p}")
    missing = [p.name for key, p in files.items() if key != "visual_model" and not p.exists()]
    if missing:
        raise ModelFolderError(f"{path}: missing model files: {', '.join(missing)}")
    _check_hidden_size(merged, _where("hidden_size", config, llm_config))  # after: a missing file says more
    _check_graph(files["llm_model"], files["llm_weight"], "language model")
    visual = files["visual_model"]
    if merged.get("is_visual") is True or visual.exists():
        _check_graph(visual, visual.with_name(visual.name + ".weight"), "vision encoder")
    vocab = _check_tie_embeddings(path, merged, files["llm_weight"], where)
    _check_tokenizer(files["tokenizer_file"], vocab)
    for key in _MNN_VISION_TOKENS:
        _check_vision_token(merged, key, vocab, _where(key, config, llm_config))
    return ModelFolder(
        path=path,
        config=merged,
        tokenizer_path=files["tokenizer_file"],
        visual_path=visual,
        declared_image_size=image_size,
        image_size_source=image_size_source,
    )


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # unreadable folder; a name with a NUL byte
        return False


def _model_parts(path: Path) -> dict[str, tuple[str, ...]]:
    """The files of the model folder `path` that MNN loads, by name as far as its configs say, grouped
    by the part of the model that reads them; only files that exist. Never raises."""
    config: dict[str, Any] = {}
    for name in ("config.json", "llm_config.json"):
        with contextlib.suppress(ModelFolderError):
            config.update(_read_json(path / name))

    def named(key: str, default: str) -> str:
        value = config.get(key)
        return value if isinstance(value, str) and value else default

    graphs = {key: named(key, default) for key, default in _FILE_KEYS.items()}
    parts = {
        "config": ("config.json", "llm_config.json"),  # the chat template is in one of them
        "llm": (graphs["llm_model"], graphs["llm_weight"]),
        "tokenizer": (graphs["tokenizer_file"],),
        "visual": (graphs["visual_model"], graphs["visual_model"] + ".weight"),
        "embedding": (named("embedding_file", _EMBEDDING_DEFAULT),),
    }
    return {part: tuple(name for name in names if _exists(path / name)) for part, names in parts.items()}


def model_files(path: Path) -> tuple[str, ...]:
    """The files of the model folder `path` that MNN loads, by name, as far as its configs say.

    Never raises, whatever the folder holds: it names the suspects when loading crashed.
    """
    return tuple(dict.fromkeys(name for names in _model_parts(path).values() for name in names))


# The steps of the worker's check of a loaded model on a built-in image (the model run's phases; None
# is the chat text and answers, before the image), the parts of the model each reads, and its words.
_CHECK_STEPS: dict[RunPhase | None, tuple[tuple[str, ...], str]] = {
    None: (("config", "tokenizer"), "while its chat text and answers were prepared"),
    RunPhase.VISION: (("visual", "tokenizer"), "in its vision encoder"),
    RunPhase.PREFILL: (("llm", "embedding"), "while its language model read the prompt"),
    RunPhase.DECODE: (("llm", "embedding"), "while its language model answered"),
}


def check_suspects(path: Path, phase: RunPhase | None) -> tuple[str, ...]:
    """The files most likely at fault when the check failed in `phase` (every file if it is unknown)."""
    parts = _model_parts(path)
    wanted, _ = _CHECK_STEPS.get(phase, (tuple(parts), ""))
    return tuple(dict.fromkeys(name for part in wanted for name in parts[part])) or model_files(path)


def check_failed(path: Path, phase: RunPhase | None, what: str, verified: bool) -> str:
    """The sentence for a model that loaded but failed the worker's check on a built-in image:
    `what` went wrong ("stopped (signal 11)", or the error) in `phase`. A model whose files match its
    pinned manifest is not damaged: then this MNN cannot run it."""
    _, where = _CHECK_STEPS.get(phase, ((), "while it answered"))
    head = f"the model in {path} loaded, then failed its check on a built-in image {where} ({what})"
    if verified:
        return f"{head}: its files match the pinned manifest, so this version of MNN cannot run it"
    files = check_suspects(path, phase)
    if not files:
        return f"{head}: its files are missing"
    return f"{head}: {', '.join(files)} most likely damaged or from another model"


def stopped_while_loading(path: Path, how: str) -> str:
    """The sentence for an inference worker that died (`how`: "signal 11") while MNN loaded the model at `path`.

    The up-front checks passed, so MNN itself found something it could not use
    in one of these files; naming them tells the user where to look.
    """
    files = model_files(path)
    if not files:
        return f"the inference worker stopped ({how}) while the model in {path} was being loaded: its files are missing"
    return (
        f"the inference worker stopped ({how}) while the model's files {', '.join(files)} in {path} "
        "were being loaded: one of them is damaged or belongs to another model"
    )
