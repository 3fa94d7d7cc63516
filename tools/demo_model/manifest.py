"""Write the model-store manifest for the bundled demo model (schema 1)."""

from __future__ import annotations

import json
from pathlib import Path

from app.models.verify import sha256_file  # the app's own streaming hash: what it will check

MANIFEST_ID = "keyframe-demo-cpr"
DISPLAY_NAME = "Keyframe demo (tiny CPR hand-position VLM)"
DISPLAY_NAMES = {"zh": "Keyframe 演示模型（心肺复苏手位小模型）"}
MIN_MNN_VERSION = "3.6.1"
PROFILES = ["hand_position", "cpr_checklist"]  # the shipped profiles whose questions it was trained on
BUNDLED = "keyframe-demo"  # its folder in model_store/, wherever the generator wrote it
# What the Models screen says it is for, and its cost as measured (the same graph shape whatever the
# training: re-measure with the command named when the shape changes).
PURPOSE = {
    "en": "Shows the app working offline: a tiny model trained only on synthetic drawings of hands on a chest; "
    "its answers on real photos mean nothing.",
    "zh": "用于离线演示：只在合成的胸前手位图画上训练的小模型；它对真实照片的回答没有意义。",
}
REFERENCE = {
    "device": {"en": "2-core x86-64 CPU (AMD EPYC), 2 threads", "zh": "2 核 x86-64 处理器，2 个线程"},
    "keyframe_s": 0.0145,
    "peak_memory_mib": 82.4,
    "command": "python -m bench.memory (bench/receipts/memory.json)",
}


def file_entry(path: Path, rel: str) -> dict:
    return {"path": rel, "sha256": sha256_file(path), "size": path.stat().st_size}


def write_manifest(model_dir: Path, runtime_files: list[str], manifest_path: Path, revision: str) -> dict:
    """List every runtime file with its sha256 and size (receipt.json is not one)."""
    manifest = {
        "schema": 1,
        "id": MANIFEST_ID,
        "display_name": DISPLAY_NAME,
        "display_names": DISPLAY_NAMES,
        "licence": "Apache-2.0",
        "purpose": PURPOSE,
        "reference": REFERENCE,
        "architecture": "qwen3-vl",
        "revision": revision,
        "min_mnn_version": MIN_MNN_VERSION,
        "profiles": PROFILES,
        "bundled": BUNDLED,
        "mirrors": [],
        "files": [file_entry(model_dir / name, name) for name in runtime_files],
    }
    manifest_path.parent.mkdir(parents=True, exist_ok=True)
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest
