"""A checklist about each image on the demo model: every signal answered from one image encode, the gate
first; a closed gate leaves the others `unknown` (not_visible) without a single forward of theirs; a
one-signal profile's record is today's; `analyze --jsonl` prints one object per image with every signal,
and a damaged checklist file is refused in a sentence naming it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from app.core.generation import FinishReason
from app.core.parser import ParseReason
from app.core.profile.checklist import checklist_from_dict
from app.frames.intake import decode_image_bytes
from app.storage.paths import PROFILES
from app.worker.analyzer import Analyzer
from tests.conditions import HANG_S
from tests.integration.conftest import held_out_scenes, write_scenes
from tests.integration.test_cli_analyze import ROOT, json_lines, run_cli

TRAINED = "Is the hand position correct?"  # the demo model's question: a gate it answers as trained


def _checklist(*others: str, gate: bool = True) -> Any:
    signals = [{"signal": "hand_position_correct", "values": ["yes", "no", "unknown"], "prompt": TRAINED}]
    signals += [{"signal": name, "values": ["yes", "no", "unknown"], "prompt": f"Is it {name}?"} for name in others]
    data: dict[str, Any] = {"schema": 1, "id": "check", "signals": signals}
    if gate:
        data["gate"] = {"signal": "hand_position_correct", "open": "yes"}
    return checklist_from_dict(data, "check.json")


class _CountedForwards:
    """The loaded model with its forward calls counted (the real calls, passed through)."""

    def __init__(self, llm: Any) -> None:
        self._llm = llm
        self.forwards = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)

    def forward(self, ids: list[int]) -> Any:
        self.forwards += 1
        return self._llm.forward(ids)


def _forwards(analyzer: Analyzer, run: Any) -> tuple[Any, int]:
    engine = analyzer.engine
    real = engine._llm
    counted = engine._llm = _CountedForwards(real)
    try:
        return run(), counted.forwards
    finally:
        engine._llm = real


def test_a_closed_gate_leaves_the_others_unknown_without_a_forward(demo_analyzer: Analyzer) -> None:
    scenes = {kind: data for kind, data, _ in held_out_scenes(count_per_kind=1, seed=17)}
    image = decode_image_bytes(scenes["off_torso"])  # the trained question says no
    closed, with_others = _forwards(
        demo_analyzer, lambda: demo_analyzer.analyze_checklist(image, "a.jpg", _checklist("arms_straight", "stacked"))
    )
    _, gate_only = _forwards(demo_analyzer, lambda: demo_analyzer.analyze_checklist(image, "a.jpg", _checklist()))
    assert closed.gate == "hand_position_correct" and closed.gate_open is False
    assert with_others == gate_only, "the other signals cost nothing"
    for signal in ("arms_straight", "stacked"):
        result = closed.result(signal)
        assert result.observation == "unknown" and result.answer.reason is ParseReason.NOT_VISIBLE
        assert result.finish is FinishReason.NOT_ASKED and result.answer.raw == "" and result.timings.total_ms == 0
    record = closed.to_dict()
    assert record["gate"] == {"signal": "hand_position_correct", "open": False}
    assert [s["parse_status"] for s in record["signals"]] == ["valid", "not_asked", "not_asked"]

    opened = demo_analyzer.analyze_checklist(decode_image_bytes(scenes["correct"]), "b.jpg", _checklist("stacked"))
    assert opened.gate_open is True and opened.result("stacked").answer.reason is ParseReason.OK


def test_every_signal_is_the_answer_asked_with_one_encode_and_the_trained_one_is_right(
    demo_analyzer: Analyzer,
) -> None:
    checklist = _checklist("hands_stacked", gate=False)
    for kind, data, expected in held_out_scenes(count_per_kind=1, seed=23):
        image = decode_image_bytes(data)
        result = demo_analyzer.analyze_checklist(image, kind, checklist)
        assert result.gate is None and [r.signal for r in result.results] == ["hand_position_correct", "hands_stacked"]
        assert result.result("hand_position_correct").observation == expected, kind
        assert all(r.answer.reason is ParseReason.OK and r.decoding == "constrained" for r in result.results)
        # The whole-prompt path (a one-signal profile) agrees on the trained question.
        assert demo_analyzer.analyze(image, kind).observation == expected


def test_analyze_prints_one_object_per_image_with_every_signal(tmp_path: Path) -> None:
    files = write_scenes(tmp_path, held_out_scenes(count_per_kind=1, seed=9)[:2])
    proc = run_cli(*[str(p) for p, _ in files], "--profile", str(PROFILES / "cpr_checklist.json"), "--jsonl")
    assert proc.returncode == 0, proc.stderr
    records = json_lines(proc.stdout)
    assert [r["file"] for r in records] == [str(p) for p, _ in files]
    for record in records:
        assert record["profile"] == "cpr_checklist" and record["confidence"] == 0.0
        assert record["gate"]["signal"] == "hands_visible"
        signals = [s["signal"] for s in record["signals"]]
        assert signals == ["hands_visible", "hand_position_correct", "hands_stacked"]
        assert all(s["observation"] in ("yes", "no", "unknown") and s["confidence"] == 0.0 for s in record["signals"])


def test_a_one_signal_profile_prints_todays_record(tmp_path: Path) -> None:
    (scene,) = write_scenes(tmp_path, held_out_scenes(count_per_kind=1, seed=9)[:1])
    proc = run_cli(str(scene[0]), "--profile", str(PROFILES / "hand_position.json"), "--jsonl")
    assert proc.returncode == 0, proc.stderr
    (record,) = json_lines(proc.stdout)
    assert list(record) == [
        "file", "ok", "signal", "observation", "parse_status", "parse_reason", "raw", "finish", "decoding",
        "model_score", "confidence", "model", "profile", "timings_ms",
    ]  # fmt: skip


def test_a_damaged_checklist_is_refused_in_a_sentence_naming_the_file(tmp_path: Path) -> None:
    (scene,) = write_scenes(tmp_path, held_out_scenes(count_per_kind=1, seed=9)[:1])
    bad = tmp_path / "broken-checklist.json"
    data = json.loads((PROFILES / "cpr_checklist.json").read_text())
    data["gate"]["signal"] = "no_such_signal"
    bad.write_text(json.dumps(data))
    proc = run_cli(str(scene[0]), "--profile", str(bad), "--jsonl")
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: the profile could not be used: ") and str(bad) in line and "gate" in line


def test_the_app_refuses_a_damaged_checklist_in_words_before_it_starts(tmp_path: Path) -> None:
    """The app asks a checklist (tests/e2e/test_practice_checklist.py); a damaged one given to `ui` is
    refused with the reader's sentence before any server or worker starts."""
    bad = tmp_path / "broken-checklist.json"
    data = json.loads((PROFILES / "cpr_checklist.json").read_text())
    data["signals"][1]["values"] = ["yes", "yes"]
    bad.write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, "-m", "app", "ui", "--port", "1", "--profile", str(bad)],
        cwd=ROOT, capture_output=True, text=True, timeout=HANG_S,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: the profile could not be used: ") and str(bad) in line and "duplicates" in line
