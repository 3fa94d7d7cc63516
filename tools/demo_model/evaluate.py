"""Evaluate an exported MNN model with the real runtime, fed the way the app feeds it.

Each image: rendered scene -> JPEG file bytes (as a camera/file would give)
-> cv2.imdecode (BGR) -> cv2.INTER_AREA to the recipe's square side ``sequence.IMAGE_SIZE``
-> MNN Var (NHWC uint8) -> ``{'text': '<img>image_0</img>QUESTION', 'images': [{'data':
var, 'width': IMAGE_SIZE, 'height': IMAGE_SIZE}]}`` -> ``llm.response``.

MNN runs in a child process: ``import MNN`` and ``response`` print to fd 1,
and a bad input can crash the interpreter (a numpy array as image data
segfaults 3.6.1), so the parent only ever sees a JSON result file.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from scenes import QUESTION, SCENE_KINDS, expected_answer, render_scene
from sequence import IMAGE_SIZE


def app_input(img_rgb, size: int = IMAGE_SIZE, jpeg_quality: int = 90) -> np.ndarray:
    """RGB PIL image -> BGR uint8 (size x size) exactly as the app prepares frames."""
    import cv2

    bgr = cv2.cvtColor(np.asarray(img_rgb), cv2.COLOR_RGB2BGR)
    ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, jpeg_quality])
    assert ok
    return app_input_from_bgr(cv2.imdecode(buf, cv2.IMREAD_COLOR), size)


def app_input_from_bgr(bgr: np.ndarray, size: int = IMAGE_SIZE) -> np.ndarray:
    """Decoded BGR frame -> long side at most ``size`` with INTER_AREA (aspect kept)."""
    import cv2

    h, w = bgr.shape[:2]
    scale = size / max(h, w)
    if scale < 1:
        bgr = cv2.resize(bgr, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
    return np.ascontiguousarray(bgr)


def eval_set(seed: int, per_kind: int, size: int = 256) -> tuple[list[str], np.ndarray]:
    """Held-out scenes: ``per_kind`` of every kind, app-prepared, as (kinds, images)."""
    rng = np.random.default_rng(seed)
    kinds: list[str] = []
    imgs: list[np.ndarray] = []
    for kind in SCENE_KINDS:
        for _ in range(per_kind):
            kinds.append(kind)
            imgs.append(app_input(render_scene(rng, kind, size)))
    return kinds, np.stack(imgs)


def parse_answer(text: str) -> str | None:
    """The observation if the app's own strict parser (app.core.parser) accepts ``text``
    for the bundled profile, else None: the receipt measures what the app accepts."""
    from app.core.parser import parse_answer as app_parse_answer

    parsed = app_parse_answer(text, _bundled_profile())
    return parsed.observation if parsed.valid else None


@functools.cache
def _bundled_profile():
    from app.storage.paths import PROFILES
    from app.storage.profile_file import load_profile

    return load_profile(PROFILES / "hand_position.json")


def run_mnn(
    model_dir: Path, images: np.ndarray, work: Path, token_loop_checks: int = 10, question: str = QUESTION
) -> dict:
    """Answer ``question`` about every image with MNN in a child process; returns the worker's result dict."""
    work.mkdir(parents=True, exist_ok=True)
    npz = work / "eval_images.npy"
    out = work / "eval_result.json"
    np.save(npz, images)
    if out.exists():
        out.unlink()
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        str(model_dir),
        str(npz),
        str(out),
        str(token_loop_checks),
        question,
    ]
    with open(work / "mnn_stdout.log", "w") as fh:
        res = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT)
    if res.returncode != 0 or not out.exists():
        raise RuntimeError(f"MNN worker failed with code {res.returncode}; see {work / 'mnn_stdout.log'}")
    return json.loads(out.read_text())


def evaluate(model_dir: Path, seed: int, per_kind: int, work: Path) -> dict:
    """Per-kind accuracy of the exported model on held-out scenes."""
    kinds, imgs = eval_set(seed, per_kind)
    result = run_mnn(model_dir, imgs, work)
    answers = result["answers"]
    per_kind_acc: dict[str, float] = {}
    valid = 0
    wrong: list[dict] = []
    for i, (kind, text) in enumerate(zip(kinds, answers, strict=True)):
        obs = parse_answer(text)
        valid += obs is not None
        if obs != expected_answer(kind):
            wrong.append({"index": i, "kind": kind, "answer": text})
    for kind in SCENE_KINDS:
        idx = [i for i, k in enumerate(kinds) if k == kind]
        per_kind_acc[kind] = round(sum(parse_answer(answers[i]) == expected_answer(kind) for i in idx) / len(idx), 4)
    correct = len(kinds) - len(wrong)
    return {
        "seed": seed,
        "images": len(kinds),
        "per_kind_images": per_kind,
        "render_size": 256,
        "per_kind_accuracy": per_kind_acc,
        "overall_accuracy": round(correct / len(kinds), 4),
        "valid_json_answers": valid,
        "wrong": wrong[:20],
        "latency_ms_median": result["latency_ms_median"],
        "latency_ms_p95": result["latency_ms_p95"],
        "token_loop_matches_response": result["token_loop_matches_response"],
        "prompt_len": result["prompt_len"],
        "chat_template_applied": result["template"],
        "stop_ids": result["stop_ids"],
        "prompt_ids": result["prompt_ids"],
    }


def _worker(model_dir: str, npy: str, out: str, token_loop_checks: int, question: str) -> None:
    """Child process body: load MNN, answer each image, write JSON."""
    text = f"<img>image_0</img>{question}"
    import MNN.expr as F
    import MNN.llm as llm

    images = np.load(npy)
    m = llm.create(os.path.join(model_dir, "config.json"))
    if not m._c_obj.load():  # Llm.load() returns None; the C object says if it worked
        raise SystemExit("MNN failed to load the model")
    stop_ids = sorted({m.tokenizer_encode("<|im_end|>")[0], m.tokenizer_encode("<|endoftext|>")[0]})

    def prompt(img: np.ndarray) -> dict:
        var = F.const(img, list(img.shape), F.NHWC, F.uint8)
        return {"text": text, "images": [{"data": var, "width": int(img.shape[1]), "height": int(img.shape[0])}]}

    answers: list[str] = []
    times: list[float] = []
    for img in images:
        t = time.perf_counter()
        answers.append(m.response(prompt(img)))
        times.append((time.perf_counter() - t) * 1000)
    prompt_len = m.context.prompt_len

    # The token loop an engine would drive must give the same text.
    matches = 0
    prompt_ids: list[int] | None = None
    for img, expected in zip(images[:token_loop_checks], answers[:token_loop_checks], strict=True):
        m.generate_init()
        p = prompt(img)
        p["text"] = m.apply_chat_template(p["text"])
        ids = m.tokenizer_encode(p)
        prompt_ids = prompt_ids or [int(i) for i in ids]
        logits = m.forward(ids)
        text = ""
        for _ in range(32):
            tok = int(np.argmax(logits.read()))
            if tok in stop_ids:
                break
            text += m.tokenizer_decode(tok)
            logits = m.forward([tok])
        matches += text == expected.rstrip("\n")
        # A logits Var that outlives the Llm object segfaults at interpreter
        # exit in 3.6.1: drop it as soon as the loop is done.
        del logits
    Path(out).write_text(
        json.dumps(
            {
                "answers": answers,
                "latency_ms_median": round(float(np.median(times)), 2),
                "latency_ms_p95": round(float(np.percentile(times, 95)), 2),
                "token_loop_matches_response": f"{matches}/{min(token_loop_checks, len(images))}",
                "prompt_len": prompt_len,
                "template": m.apply_chat_template(text),
                "stop_ids": stop_ids,
                "prompt_ids": prompt_ids,
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) in (6, 7) and sys.argv[1] == "--worker":
        _worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), (sys.argv[6:] or [QUESTION])[0])
    else:
        raise SystemExit("usage: evaluate.py --worker MODEL_DIR IMAGES.npy OUT.json N_TOKEN_LOOP_CHECKS QUESTION")
