"""Regenerate the bundled demo model end to end.

    /work/genenv/bin/python tools/demo_model/generate.py [--out model_store/keyframe-demo] [--minutes N] [--seed S]

Steps: tokenizer -> random Qwen3-VL from a config -> train on synthetic CPR
scenes (time-boxed) -> llmexport to MNN (4-bit) -> runtime settings ->
evaluate the exported model with MNN itself -> receipt.json, manifest,
example images.  Nothing is downloaded; the generator's own venv holds torch,
transformers and llmexport (see README.md), the app never needs them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import sys
import time
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
REPO = HERE.parent.parent

GENERATOR_VERSION = "1"
VERSIONED_PACKAGES = (
    "torch",
    "transformers",
    "tokenizers",
    "llmexport",
    "MNN",
    "onnx",
    "onnxruntime",
    "onnxslim",
    "protobuf",
    "numpy",
    "pillow",
    "opencv-python-headless",
)


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "missing"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description="Regenerate the Keyframe demo model (train, export, receipt, manifest).")
    ap.add_argument("--out", type=Path, default=REPO / "model_store" / "keyframe-demo")
    ap.add_argument("--minutes", type=float, default=19.0, help="training budget in wall-clock minutes")
    ap.add_argument("--seed", type=int, default=1234, help="training seed (init, data, sampling)")
    ap.add_argument("--eval-seed", type=int, default=20261130, help="held-out scenes for the receipt")
    ap.add_argument("--per-kind", type=int, default=50, help="held-out scenes per kind for the receipt")
    ap.add_argument(
        "--quant-bit",
        default="auto",
        choices=("auto", "4", "8"),
        help="auto: export both, keep 4-bit unless 8-bit answers more held-out scenes correctly",
    )
    ap.add_argument("--aux-weight", type=float, default=1.0, help="0 trains without the auxiliary heads")
    ap.add_argument("--work", type=Path, default=Path("/tmp/keyframe-demo-work"))
    ap.add_argument("--manifest", type=Path, default=REPO / "model_store" / "manifests" / "keyframe-demo.json")
    ap.add_argument("--examples", type=Path, default=REPO / "assets" / "examples")
    ap.add_argument("--no-examples", action="store_true")
    args = ap.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    import scenes
    import torch
    from evaluate import eval_set, evaluate
    from examples import write_examples
    from export import export_model
    from manifest import write_manifest
    from model_config import DEMO_SHAPE, make_config
    from sequence import IMAGE_SIZE, make_layout
    from tokenizer import save_hf_tokenizer
    from train import TrainSettings, save_model, torch_decisions, train
    from transformers import AutoTokenizer, Qwen3VLForConditionalGeneration

    work = args.work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    log_fh = open(work / "generate.log", "w")

    def log(msg: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        log_fh.write(line + "\n")
        log_fh.flush()

    # 1. Tokenizer and model.
    hf_dir = work / "hf"
    special = save_hf_tokenizer(hf_dir)
    tok = AutoTokenizer.from_pretrained(str(hf_dir))
    torch.manual_seed(args.seed)
    model = Qwen3VLForConditionalGeneration(make_config(DEMO_SHAPE, special, len(tok)))
    n_params = sum(p.numel() for p in model.parameters())
    n_vision = sum(p.numel() for p in model.model.visual.parameters())
    answers = {a: scenes.answer_json(a) for a in ("yes", "no")}
    layout = make_layout(tok, scenes.QUESTION, answers)
    log(f"model: {n_params} parameters ({n_vision} vision); prompt {len(layout.prompt_ids())} tokens")

    # 2. Train.
    settings = TrainSettings(minutes=args.minutes, seed=args.seed, aux_weight=args.aux_weight)
    summary = train(model, layout, settings, log=log)
    log(f"trained {summary['steps']} steps in {summary['seconds']} s")
    kinds, imgs = eval_set(args.eval_seed, 40)
    import cv2

    rgb = [cv2.cvtColor(im, cv2.COLOR_BGR2RGB) for im in imgs]
    preds = torch_decisions(model, layout, rgb)
    torch_acc = {
        k: round(
            sum(p == scenes.expected_answer(k) for p, kk in zip(preds, kinds, strict=True) if kk == k) / kinds.count(k),
            4,
        )
        for k in scenes.SCENE_KINDS
    }
    log(f"PyTorch decision accuracy (40/kind, eval seed): {torch_acc}")
    save_model(model, tok, hf_dir)

    # 3. Export into staging folders, check them with MNN, then publish one.
    candidates: dict[int, tuple[list[str], dict]] = {}
    for bits in (4, 8) if args.quant_bit == "auto" else (int(args.quant_bit),):
        staging = work / f"mnn_q{bits}"
        t = time.monotonic()
        files = export_model(hf_dir, staging, work, quant_bit=bits, image_size=IMAGE_SIZE)
        log(f"exported {bits}-bit {files} in {time.monotonic() - t:.1f} s")
        result = evaluate(staging, args.eval_seed, args.per_kind, work / f"eval_q{bits}")
        if result["prompt_ids"] != layout.prompt_ids():
            raise SystemExit(f"MNN builds other prompt ids than we trained on: {result['prompt_ids']}")
        log(
            f"MNN {bits}-bit accuracy: {result['per_kind_accuracy']} overall {result['overall_accuracy']}, "
            f"valid JSON {result['valid_json_answers']}/{result['images']}"
        )
        candidates[bits] = (files, result)
    # Smaller wins ties: 4-bit unless 8-bit is strictly better on the held-out set.
    quant_bit = min(candidates, key=lambda b: (-candidates[b][1]["overall_accuracy"], b))
    files, result = candidates[quant_bit]
    staging = work / f"mnn_q{quant_bit}"
    log(f"keeping the {quant_bit}-bit export")

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        if old.is_file():
            old.unlink()
    for name in files:
        shutil.copyfile(staging / name, out / name)
    sizes = {name: (out / name).stat().st_size for name in files}
    revision = f"g{GENERATOR_VERSION}-{dt.date.today().isoformat()}-s{args.seed}"

    # 4. Example images (held-out seeds), answered correctly by this model.
    examples = [] if args.no_examples else write_examples(out, args.examples.resolve(), work / "examples")
    if examples:
        log(f"examples: {[e['file'] for e in examples]}")

    # 5. Receipt and manifest.
    receipt = {
        "model": "keyframe-demo",
        "revision": revision,
        "generated_at": dt.datetime.now(dt.timezone.utc).isoformat(),
        "command": "python tools/demo_model/generate.py " + " ".join(sys.argv[1:]),
        "architecture": "Qwen3VLForConditionalGeneration (random init from config, trained here)",
        "shape": DEMO_SHAPE.as_dict(),
        "parameters": n_params,
        "vision_parameters": n_vision,
        "vocab_size": len(tok),
        "special_token_ids": special,
        "prompt": {
            "question": scenes.QUESTION,
            "mnn_text": "<img>image_0</img>" + scenes.QUESTION,
            "chat_template_applied_by_mnn": result["chat_template_applied"],
            "system_prompt": None,
            "prompt_ids": layout.prompt_ids(),
            "prompt_len": len(layout.prompt_ids()),
            "image_tokens": layout.n_image_tokens,
            "answers": answers,
            "answer_ids": {k: list(v) for k, v in layout.answers.items()},
            "stop_ids": result["stop_ids"],
            "decision_token_index": layout.decision_index(),
        },
        "training": {
            "seed": args.seed,
            "minutes_budget": args.minutes,
            "seconds": summary["seconds"],
            "steps": summary["steps"],
            "batch": settings.batch,
            "lr": settings.lr,
            "decision_weight": settings.decision_weight,
            "aux_weight": settings.aux_weight,
            "render_sizes": [settings.render_min, settings.render_max],
            "image_size": IMAGE_SIZE,
            "torch_threads": 1,
            "data_processes": 1,
            "final_loss": summary["final_loss"],
            "train_acc_ema": summary["train_acc_ema"],
            "history": summary["history"],
            "pytorch_eval_accuracy_40_per_kind": torch_acc,
        },
        "export": {
            "tool": "llmexport",
            "quant_bit": quant_bit,
            "quant_block": 64,
            "compared": {
                f"{b}-bit": {
                    "per_kind_accuracy": r["per_kind_accuracy"],
                    "overall_accuracy": r["overall_accuracy"],
                    "valid_json_answers": r["valid_json_answers"],
                }
                for b, (_, r) in candidates.items()
            },
            "visual_quant_bit": 4,
            "visual_quant_block": 128,
            "visual_note": "llmexport default for qwen3_vl",
            "files": sizes,
            "total_bytes": sum(sizes.values()),
        },
        "evaluation": {k: v for k, v in result.items() if k not in ("prompt_ids", "stop_ids", "chat_template_applied")}
        | {
            "runtime": "MNN.llm response(), CPU, thread_num 2, greedy",
            "feeding": "render 256 px -> JPEG q90 -> cv2.imdecode (BGR) -> INTER_AREA 128x128 -> "
            "MNN.expr.const(NHWC, uint8) -> {'text','images':[{data,width,height}]}",
        },
        "examples": examples,
        "versions": versions(),
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
    }
    (out / "receipt.json").write_text(json.dumps(receipt, indent=2) + "\n")
    write_manifest(out, files, args.manifest.resolve(), revision)
    log(f"wrote {out} ({sum(sizes.values())} bytes of runtime files), receipt and manifest")
    log_fh.close()


if __name__ == "__main__":
    main()
