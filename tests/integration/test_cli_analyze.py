"""`python -m app analyze` as a user runs it: a real subprocess, JSON only on stdout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.models.catalog import DEFAULT_MODEL_ID, ModelNotVerified, ModelRef, resolve_model
from app.storage.paths import PROFILES
from app.storage.profile_file import load_profile
from app.worker.analyzer import Analyzer
from tests.integration.conftest import held_out_scenes, write_scenes

ROOT = Path(__file__).resolve().parents[2]
FOREIGN = ROOT / "tests" / "fixtures" / "foreign_qwen3vl"


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", "analyze", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def json_lines(stdout: str) -> list[dict]:
    lines = [line for line in stdout.splitlines() if line.strip()]
    return [json.loads(line) for line in lines]  # any non-JSON line on stdout fails here


def test_held_out_scenes_get_the_right_answers(tmp_path: Path) -> None:
    files = write_scenes(tmp_path, held_out_scenes(count_per_kind=4, seed=2024))
    proc = run_cli(*[str(p) for p, _ in files], "--jsonl")
    assert proc.returncode == 0, proc.stderr
    records = json_lines(proc.stdout)
    assert [r["file"] for r in records] == [str(p) for p, _ in files]
    right = sum(r["observation"] == expected for r, (_, expected) in zip(records, files, strict=False))
    assert right >= len(files) - 1
    for r in records:
        assert r["ok"] and r["parse_status"] == "valid" and r["parse_reason"] == "ok"
        assert r["model"]["id"] == DEFAULT_MODEL_ID and r["signal"] == "hand_position_correct"
        assert r["raw"].startswith("{") and r["timings_ms"]["total_ms"] > 0


def test_bad_inputs_are_reported_and_the_rest_analysed(tmp_path: Path) -> None:
    (good,) = write_scenes(tmp_path, held_out_scenes(count_per_kind=1, seed=5)[:1])
    corrupt = tmp_path / "corrupt.jpg"
    corrupt.write_bytes(good[0].read_bytes()[:300])
    text = tmp_path / "notes.jpg"
    text.write_text("this is not a picture")
    missing = tmp_path / "missing.png"
    proc = run_cli(str(corrupt), str(good[0]), str(text), str(missing), "--jsonl")
    assert proc.returncode == 1
    records = json_lines(proc.stdout)
    assert [r["file"] for r in records] == [str(corrupt), str(good[0]), str(text), str(missing)]
    assert [r["ok"] for r in records] == [False, True, False, False]
    assert [r.get("error") for r in records] == ["corrupt", None, "not_an_image", "missing"]
    assert records[1]["observation"] == good[1]
    for name in ("corrupt.jpg", "notes.jpg", "missing.png"):
        assert name in proc.stderr


def test_pretty_output_is_still_one_object_per_image(tmp_path: Path) -> None:
    files = write_scenes(tmp_path, held_out_scenes(count_per_kind=1, seed=9)[:2])
    proc = run_cli(str(tmp_path))  # a folder expands to its images
    assert proc.returncode == 0, proc.stderr
    decoder = json.JSONDecoder()
    text, objects = proc.stdout.strip(), []
    while text:
        obj, end = decoder.raw_decode(text)
        objects.append(obj)
        text = text[end:].strip()
    assert [o["file"] for o in objects] == [str(p) for p, _ in files]


def test_unknown_model_is_a_setup_error() -> None:
    proc = run_cli("x.jpg", "--model", "no-such-model")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "no-such-model" in proc.stderr


def test_tampered_model_is_refused_before_loading(tmp_path: Path) -> None:
    pinned = resolve_model(DEFAULT_MODEL_ID)
    copy = tmp_path / "model"
    shutil.copytree(pinned.folder, copy)
    weight = copy / "llm.mnn.weight"
    data = bytearray(weight.read_bytes())
    data[len(data) // 2] ^= 0x01
    weight.write_bytes(bytes(data))
    with pytest.raises(ModelNotVerified, match="llm.mnn.weight"):
        Analyzer(ModelRef(pinned.id, copy, pinned.manifest), load_profile(PROFILES / "hand_position.json"))


@pytest.mark.skipif(not (FOREIGN / "config.json").exists(), reason="foreign fixture model not generated")
def test_a_model_folder_the_app_did_not_make_runs_with_a_profile(tmp_path: Path) -> None:
    (scene,) = write_scenes(tmp_path, held_out_scenes(count_per_kind=1, seed=3)[:1])
    profile = tmp_path / "profile.json"
    profile.write_text(
        json.dumps(
            {
                "schema": 1,
                "id": "describe",
                "signal": "scene_ok",
                "values": ["yes", "no"],
                "prompt": "Describe the picture.",
                "system": "You are terse.",
                "max_new_tokens": 12,
            }
        )
    )
    base = [str(scene[0]), "--model", str(FOREIGN), "--profile", str(profile), "--jsonl"]

    free = run_cli(*base, "--free")
    assert free.returncode == 0, free.stderr
    (record,) = json_lines(free.stdout)
    assert record["ok"] and record["model"]["id"].startswith("local:") and record["decoding"] == "free"
    # An untrained model says nothing sensible: the strict parser must not turn that into a guess.
    assert record["observation"] == "unknown" and record["parse_status"] == "rejected"
    assert record["timings_ms"]["generated_tokens"] > 0

    constrained = run_cli(*base)
    assert constrained.returncode == 0, constrained.stderr
    (record,) = json_lines(constrained.stdout)
    # Constrained decoding can only give one of the profile's answers, whatever the weights.
    assert record["decoding"] == "constrained" and record["parse_status"] == "valid"
    assert record["observation"] in ("yes", "no") and 0 < record["model_score"] <= 1
    assert record["confidence"] == 0.0


def test_a_model_without_image_size_says_how_images_are_fed(tmp_path: Path) -> None:
    """The fallback is stated on stderr and in every result, never silent."""
    (scene,) = write_scenes(tmp_path, held_out_scenes(count_per_kind=1, seed=3)[:1])
    model = tmp_path / "no-image-size"
    shutil.copytree(FOREIGN, model)
    for name in ("config.json", "llm_config.json"):
        config = json.loads((model / name).read_text())
        config.pop("image_size", None)
        (model / name).write_text(json.dumps(config))
    profile = ROOT / "model_store" / "profiles" / "hand_position.json"
    proc = run_cli(str(scene[0]), "--model", str(model), "--profile", str(profile), "--jsonl")
    assert proc.returncode == 0, proc.stderr
    (record,) = json_lines(proc.stdout)
    assert "declares no image_size" in record["note"]
    assert "note:" in proc.stderr and "declares no image_size" in proc.stderr
