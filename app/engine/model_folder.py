"""An MNN LLM/VLM folder as MNN reads it: `config.json` names the other files.

Reading it up front lets the app say which file is missing instead of letting
MNN fail (or, worse, silently answer without the vision encoder).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class ModelFolderError(ValueError):
    pass


# MNN's defaults when config.json does not name a file (llmconfig.hpp).
_FILE_KEYS = {
    "llm_model": "llm.mnn",
    "llm_weight": "llm.mnn.weight",
    "tokenizer_file": "tokenizer.txt",
    "visual_model": "visual.mnn",
}


@dataclass(frozen=True)
class ModelFolder:
    path: Path
    config: dict[str, Any]  # config.json merged with llm_config.json, as MNN merges them
    tokenizer_path: Path
    visual_path: Path

    @property
    def config_path(self) -> Path:
        return self.path / "config.json"

    @property
    def image_size(self) -> int | None:
        """Fixed square input side if the model declares one (MNN squashes to it)."""
        size = self.config.get("image_size")
        return int(size) if isinstance(size, (int, float)) and size > 0 else None

    @property
    def is_visual(self) -> bool:
        return bool(self.config.get("is_visual", True)) and self.visual_path.is_file()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelFolderError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelFolderError(f"{path}: not valid JSON") from exc
    if not isinstance(data, dict):
        raise ModelFolderError(f"{path}: expected a JSON object")
    return data


def open_model_folder(path: Path) -> ModelFolder:
    path = Path(path)
    if path.is_file() and path.name == "config.json":
        path = path.parent
    if not path.is_dir():
        raise ModelFolderError(f"{path}: not a model folder")
    config_path = path / "config.json"
    if not config_path.is_file():
        raise ModelFolderError(f"{path}: no config.json (an MNN model folder needs one)")
    config = _read_json(config_path)
    llm_config = path / "llm_config.json"
    merged = {**config, **(_read_json(llm_config) if llm_config.is_file() else {})}
    files = {key: path / str(config.get(key, default)) for key, default in _FILE_KEYS.items()}
    missing = [str(p.name) for key, p in files.items() if key != "visual_model" and not p.is_file()]
    if missing:
        raise ModelFolderError(f"{path}: missing model files: {', '.join(missing)}")
    for p in files.values():
        if p.resolve().parent != path.resolve():
            raise ModelFolderError(f"{path}: config.json points outside the model folder: {p}")
    return ModelFolder(
        path=path, config=merged, tokenizer_path=files["tokenizer_file"], visual_path=files["visual_model"]
    )
