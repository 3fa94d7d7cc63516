"""Write example scenes (384 px JPEGs) that the exported model answers correctly.

Seeds are from a range the trainer and the receipt never use.  Each slot
tries a few candidates and keeps the first one the MNN model gets right, fed
exactly as the app would read the file (imdecode -> INTER_AREA -> 128 px).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from evaluate import parse_answer, run_mnn
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
EXAMPLE_SEED_BASE = 9_100_000
CANDIDATES = 6


def _jpeg(seed: int, kind: str, size: int) -> bytes:
    # No in-render JPEG: the file itself is the (single) JPEG round trip.
    img = render_scene(np.random.default_rng(seed), kind, size, jpeg=False)
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def write_examples(model_dir: Path, out_dir: Path, work: Path, size: int = 384) -> list[dict]:
    import cv2
    from evaluate import app_input_from_bgr

    cands: list[tuple[str, int, int, bytes]] = []
    for si, (kind, n) in enumerate(SLOTS):
        for c in range(CANDIDATES):
            seed = EXAMPLE_SEED_BASE + si * 100 + c
            cands.append((kind, n, seed, _jpeg(seed, kind, size)))
    imgs = np.stack(
        [app_input_from_bgr(cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR)) for _, _, _, b in cands]
    )
    answers = run_mnn(model_dir, imgs, work, token_loop_checks=0)["answers"]
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[dict] = []
    for kind, n in SLOTS:
        for (k, nn, seed, data), ans in zip(cands, answers, strict=True):
            if (k, nn) == (kind, n) and parse_answer(ans) == expected_answer(kind):
                name = f"{kind}-{n}.jpg"
                (out_dir / name).write_bytes(data)
                written.append(
                    {
                        "file": name,
                        "kind": kind,
                        "expected": expected_answer(kind),
                        "seed": seed,
                        "model_answer": ans.strip(),
                    }
                )
                break
        else:
            raise RuntimeError(f"no candidate for {kind}-{n} was answered correctly")
    return written
