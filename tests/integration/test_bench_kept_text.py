"""The kept-text and question-place benchmarks on the demo model with tiny parameters: each prints its
rows and writes its receipt; timings are never asserted (this machine is shared), picks are."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.integration.test_bench_scripts import _bench, _goal, _line


def test_kept_text_times_one_signal_kept_against_prefilled_whole_and_the_floor(tmp_path: Path) -> None:
    receipt = tmp_path / "kept_text.json"
    out = _bench("kept_text", "--images", "2", "--rounds", "1", "--receipt", str(receipt))
    assert out.startswith("Kept text: keyframe-demo-cpr, hand_position, 2 images x 1 rounds")
    for place in ("after", "before"):
        assert "n=2" in _line(out, f"question {place} image: text kept")
    after, before = (
        tuple(int(n) for n in re.findall(r"\d+", line))
        for line in out.splitlines()
        if line.strip().startswith("prompt tokens, kept of them")
    )
    assert after[0] == before[0] and 0 < after[1] < before[1] < before[0], "before the image the question is kept"
    after_floor, before_floor = (line for line in out.splitlines() if "kept / floor, median" in line)
    assert "[goal" not in after_floor
    _goal(before_floor, "<= 1.10x")
    assert re.search(r"\b4/4\b", _line(out, "picks equal, kept vs whole"))
    rows = [row["name"] for row in json.loads(receipt.read_text())["rows"]]
    assert rows.count("  kept / floor, median") == 2


def test_question_place_scores_both_places_and_a_control_on_held_out_scenes(tmp_path: Path) -> None:
    receipt = tmp_path / "question_place.json"
    out = _bench("question_place", "--per-kind", "2", "--receipt", str(receipt))
    assert out.startswith("Question place: keyframe-demo-cpr, hand_position, 10 held-out scenes (seed 20261215)")
    for name in ("question after image: right", "question before image: right", "control, "):
        assert re.search(r"\d+/10 \(", _line(out, name)), name
    assert re.search(r"\d+/10$", _line(out, "same pick, after vs before").rstrip())
    data = json.loads(receipt.read_text())
    assert data["command"].startswith("python -m bench.question_place") and data["notes"]
