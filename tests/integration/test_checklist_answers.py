"""The demo model answers the shipped checklist as trained: held-out frames of every kind, in every
webcam framing (square, 4:3 and 16:9 with room at the sides or cut top and bottom), through
`analyze --profile cpr_checklist.json --jsonl` as a tester runs it. Accuracy itself is the receipt's
(`tools/demo_model/app_receipt.py --set checklist-final`); this keeps a retrained or broken model
from landing unnoticed, and checks the gate's effect on frames without hands."""

from __future__ import annotations

from pathlib import Path

from demo_model.checklist_scenes import CHECKLIST_KINDS, HIDDEN_KINDS, SIGNALS, checklist_jpegs

from app.storage.paths import PROFILES
from tests.integration.test_cli_analyze import json_lines, run_cli

CHECKLIST = PROFILES / "cpr_checklist.json"
SEED = 777  # neither the training's nor a receipt set's


def test_held_out_checklist_frames_get_the_right_answers_and_a_closed_gate_asks_nothing_more(
    tmp_path: Path,
) -> None:
    frames = checklist_jpegs(5, SEED)
    paths = []
    for i, (kind, framing, data, _) in enumerate(frames):
        paths.append(tmp_path / f"{i:03d}-{kind}-{framing}.jpg")
        paths[-1].write_bytes(data)
    proc = run_cli(*map(str, paths), "--profile", str(CHECKLIST), "--jsonl")
    assert proc.returncode == 0, proc.stderr
    records = json_lines(proc.stdout)
    assert [r["file"] for r in records] == list(map(str, paths))
    right = dict.fromkeys(SIGNALS, 0)
    asked = dict.fromkeys(SIGNALS, 0)
    for (kind, framing, _, truth), record in zip(frames, records, strict=True):
        answers = {s["signal"]: s for s in record["signals"]}
        assert list(answers) == list(SIGNALS)
        for signal, expected in truth.items():
            if expected is None:
                continue
            asked[signal] += 1
            right[signal] += answers[signal]["observation"] == expected
        if answers["hands_visible"]["observation"] == "no":
            for signal in SIGNALS[1:]:  # the gate closed: not asked, at no model cost, and said why
                assert answers[signal]["observation"] == "unknown", (kind, framing)
                assert (answers[signal]["parse_status"], answers[signal]["parse_reason"]) == (
                    "not_asked",
                    "not_visible",
                )
    assert asked["hands_visible"] == len(frames)
    assert asked["hands_stacked"] == asked["hand_position_correct"] >= (len(CHECKLIST_KINDS) - len(HIDDEN_KINDS)) * 5
    for signal in SIGNALS:  # at least 95 % each (the receipt's goal is 97 % per kind, on 100 per kind)
        assert right[signal] >= 0.95 * asked[signal], (signal, right, asked)
