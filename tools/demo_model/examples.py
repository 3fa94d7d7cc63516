"""Write example scenes (384 px JPEGs) that the exported model answers correctly.

Seeds are from a range the trainer and the receipt never use.  Each slot
tries a few candidates and keeps the first one the MNN model gets right, fed
exactly as the app would read the file (imdecode -> INTER_AREA -> 128 px).
The position slots are asked the one-signal profile's question; the last slot,
a chest with no hands on it, the checklist's gate (hands in the picture?), so
the examples show the gate closing too.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from checklist_scenes import render_checklist_scene
from evaluate import parse_answer, run_mnn
from questions import CHECKLIST_PROFILE, answer_json_for
from scenes import expected_answer, render_scene

# 3 yes + 3 no, each "no" a different kind.
SLOTS: tuple[tuple[str, int], ...] = (
    ("correct", 1),
    ("correct", 2),
    ("correct", 3),
    ("too_high", 1),
    ("side", 1),
    ("off_torso", 1),
)
GATE_SLOT = ("no_hands", 1)
GATE_SIGNAL = "hands_visible"
EXAMPLE_SEED_BASE = 9_100_000
CANDIDATES = 6


def _jpeg(seed: int, kind: str, size: int) -> bytes:
    # No in-render JPEG: the file itself is the (single) JPEG round trip.
    rng = np.random.default_rng(seed)
    if kind == GATE_SLOT[0]:
        img = render_checklist_scene(rng, kind, "square", size, jpeg=False)[0]
    else:
        img = render_scene(rng, kind, size, jpeg=False)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def write_examples(model_dir: Path, out_dir: Path, work: Path, size: int = 384) -> list[dict]:
    import cv2
    from evaluate import app_input_from_bgr

    def candidates(slot: int, kind: str) -> list[tuple[int, bytes]]:
        seeds = [EXAMPLE_SEED_BASE + slot * 100 + c for c in range(CANDIDATES)]
        return [(seed, _jpeg(seed, kind, size)) for seed in seeds]

    def answered(cands: list[tuple[int, bytes]], question: str | None = None) -> list[str]:
        imgs = np.stack(
            [app_input_from_bgr(cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR)) for _, b in cands]
        )
        extra = {"question": question} if question else {}
        return run_mnn(model_dir, imgs, work, token_loop_checks=0, **extra)["answers"]

    slots = [(kind, n, candidates(si, kind)) for si, (kind, n) in enumerate(SLOTS)]
    flat = [c for _, _, cands in slots for c in cands]
    answers = iter(answered(flat))
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[dict] = []

    def keep(kind: str, n: int, cands: list[tuple[int, bytes]], replies: list[str], right) -> None:
        for (seed, data), reply in zip(cands, replies, strict=True):
            if right(reply):
                name = f"{kind}-{n}.jpg"
                (out_dir / name).write_bytes(data)
                written.append({"file": name, "kind": kind, "seed": seed, "model_answer": reply.strip()})
                return
        raise RuntimeError(f"no candidate for {kind}-{n} was answered correctly")

    for kind, n, cands in slots:
        replies = [next(answers) for _ in cands]
        keep(kind, n, cands, replies, lambda r, kind=kind: parse_answer(r) == expected_answer(kind))
        written[-1]["expected"] = expected_answer(kind)
    kind, n = GATE_SLOT
    cands = candidates(len(SLOTS), kind)
    keep(
        kind, n, cands, gate_answers(model_dir, cands, work), lambda r: r.strip() == answer_json_for(GATE_SIGNAL, "no")
    )
    written[-1]["expected"] = {GATE_SIGNAL: "no"}
    return written


def gate_answers(model_dir: Path, cands: list[tuple[int, bytes]], work: Path) -> list[str]:
    """The gate's answer to each candidate as the app gives it: `analyze` with the shipped checklist
    (constrained decoding, its strict parser), which is how a person meets this example."""
    work.mkdir(parents=True, exist_ok=True)
    paths = []
    for seed, data in cands:
        paths.append(work / f"gate-{seed}.jpg")
        paths[-1].write_bytes(data)
    command = [sys.executable, "-m", "app", "analyze", *map(str, paths), "--jsonl", "--model", str(model_dir)]
    command += ["--profile", str(CHECKLIST_PROFILE)]
    done = subprocess.run(command, cwd=CHECKLIST_PROFILE.parents[2], capture_output=True, text=True, check=True)
    records = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return [next(s["raw"] for s in r["signals"] if s["signal"] == GATE_SIGNAL) for r in records]
