"""Regenerate the bundled demo model end to end.

    .venv-gen/bin/python tools/demo_model/generate.py [--out model_store/keyframe-demo] [--minutes N] [--seed S]

Steps: tokenizer -> random Qwen3-VL from a config -> train on synthetic CPR
scenes (time-boxed) -> llmexport to MNN (4-bit) -> runtime settings ->
evaluate the exported model with MNN itself -> receipt.json, manifest,
example images.  Nothing is downloaded; the generator's own venv holds torch,
transformers and llmexport (see README.md), the app never needs them.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

# The generator's own modules (torch-free) come from this folder, imported here so that
# a missing dependency fails before anything is trained or overwritten; torch,
# transformers and the tokenizer library wait for build_model, after the options.
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # tools/: checklist_scenes imports demo_model.scenes
import scenes
from checklist_scenes import CHECKLIST_KINDS, SIGNALS, checklist_jpegs
from evaluate import evaluate
from examples import write_examples
from export import export_model
from manifest import write_manifest
from model_config import DEMO_SHAPE, make_config
from questions import answer_json_for, checklist_questions
from sequence import IMAGE_SIZE, PromptLayout, make_layout
from train import TrainSettings, app_view, save_model, torch_decisions, train
from versions import versions

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase, Qwen3VLForConditionalGeneration

REPO = Path(__file__).resolve().parents[2]

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

Log = Callable[[str], None]


@dataclass(frozen=True)
class Settings:
    """The command line, with every path resolved."""

    out: Path
    minutes: float
    seed: int
    eval_seed: int
    per_kind: int
    quant_bits: tuple[int, ...]  # bit widths to export and compare
    aux_weight: float
    lr: float  # peak learning rate (warm-up, then cosine over the wall-clock budget)
    init: Path | None  # continue from this HF checkpoint instead of a random model
    work: Path
    manifest: Path
    examples: Path | None  # None: --no-examples


@dataclass(frozen=True)
class DemoModel:
    """The untrained model, its tokenizer and the fixed prompt it answers."""

    hf_dir: Path  # the tokenizer now, the trained checkpoint for llmexport later
    tok: PreTrainedTokenizerBase
    special: dict[str, int]
    model: Qwen3VLForConditionalGeneration
    answers: dict[str, str]  # "yes"/"no" -> answer JSON
    layout: PromptLayout  # the one-signal profile's question (hand_position)
    layouts: dict[str, PromptLayout]  # every checklist signal's question, SIGNALS order
    n_params: int
    n_vision: int


@dataclass(frozen=True)
class Training:
    """What training used and reported (the model itself is trained in place)."""

    settings: TrainSettings
    summary: dict[str, Any]


@dataclass(frozen=True)
class Candidate:
    """One exported bit width: its staging folder, runtime files and MNN evaluation."""

    staging: Path
    files: list[str]
    result: dict[str, Any]


def parse_settings() -> Settings:
    """Read the options (defaults regenerate the shipped model) into Settings."""
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
    ap.add_argument("--init", type=Path, default=None, help="continue training this HF checkpoint")
    ap.add_argument("--lr", type=float, default=TrainSettings.lr, help="peak learning rate")
    ap.add_argument("--work", type=Path, default=Path("/tmp/keyframe-demo-work"))
    ap.add_argument("--manifest", type=Path, default=REPO / "model_store" / "manifests" / "keyframe-demo.json")
    ap.add_argument("--examples", type=Path, default=REPO / "assets" / "examples")
    ap.add_argument("--no-examples", action="store_true")
    args = ap.parse_args()
    return Settings(
        out=args.out.resolve(),
        minutes=args.minutes,
        seed=args.seed,
        eval_seed=args.eval_seed,
        per_kind=args.per_kind,
        quant_bits=(4, 8) if args.quant_bit == "auto" else (int(args.quant_bit),),
        aux_weight=args.aux_weight,
        lr=args.lr,
        init=args.init.resolve() if args.init else None,
        work=args.work.resolve(),
        manifest=args.manifest.resolve(),
        examples=None if args.no_examples else args.examples.resolve(),
    )


@contextlib.contextmanager
def fresh_work(work: Path) -> Iterator[Log]:
    """Empty the scratch folder and log into it: each line to stdout and work/generate.log."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with open(work / "generate.log", "w") as log_fh:

        def log(msg: str) -> None:
            line = f"[{time.strftime('%H:%M:%S')}] {msg}"
            print(line, flush=True)
            log_fh.write(line + "\n")
            log_fh.flush()

        yield log


def build_model(settings: Settings, log: Log) -> DemoModel:
    """Write the tokenizer and build a randomly initialised Qwen3-VL of the demo shape around it."""
    import torch
    from tokenizer import save_hf_tokenizer
    from transformers import AutoTokenizer, Qwen3VLForConditionalGeneration

    hf_dir = settings.work / "hf"
    special = save_hf_tokenizer(hf_dir)
    tok = AutoTokenizer.from_pretrained(str(hf_dir))
    torch.manual_seed(settings.seed)
    if settings.init is not None:
        model = Qwen3VLForConditionalGeneration.from_pretrained(str(settings.init))
        log(f"continuing from {settings.init}")
    else:
        model = Qwen3VLForConditionalGeneration(make_config(DEMO_SHAPE, special, len(tok)))
    n_params = sum(p.numel() for p in model.parameters())
    n_vision = sum(p.numel() for p in model.model.visual.parameters())
    answers = {a: scenes.answer_json(a) for a in ("yes", "no")}
    layout = make_layout(tok, scenes.QUESTION, answers)
    questions = checklist_questions()
    layouts = {
        signal: make_layout(tok, questions[signal], {a: answer_json_for(signal, a) for a in ("yes", "no")})
        for signal in SIGNALS
    }
    if layouts["hand_position_correct"] != layout:
        raise SystemExit("the checklist's position question differs from the one-signal profile's")
    log(f"model: {n_params} parameters ({n_vision} vision); prompt {len(layout.prompt_ids())} tokens")
    return DemoModel(hf_dir, tok, special, model, answers, layout, layouts, n_params, n_vision)


def train_model(settings: Settings, demo: DemoModel, log: Log) -> Training:
    """Train the model in place on synthetic scenes within the wall-clock budget."""
    train_settings = TrainSettings(
        minutes=settings.minutes, seed=settings.seed, aux_weight=settings.aux_weight, lr=settings.lr
    )
    checkpoint_dir = settings.work / "checkpoint"
    summary = train(
        demo.model,
        [demo.layouts[s] for s in SIGNALS],
        train_settings,
        log=log,
        checkpoint=lambda: (save_model(demo.model, demo.tok, checkpoint_dir), log(f"checkpoint in {checkpoint_dir}")),
    )
    log(f"trained {summary['steps']} steps in {summary['seconds']} s")
    return Training(train_settings, summary)


def pytorch_accuracy(settings: Settings, demo: DemoModel, log: Log) -> dict[str, dict[str, float]]:
    """Per-signal, per-kind decision accuracy in PyTorch on held-out checklist scenes (40 a kind,
    framings in turn), to compare with MNN's and the app's."""
    import cv2

    scenes_ = checklist_jpegs(40, settings.eval_seed)
    views = [
        app_view(cv2.cvtColor(cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB))
        for _, _, b, _ in scenes_
    ]
    acc: dict[str, dict[str, float]] = {}
    for signal in SIGNALS:
        asked = [i for i, (_, _, _, truth) in enumerate(scenes_) if truth[signal] is not None]
        preds = torch_decisions(demo.model, demo.layouts[signal], [views[i] for i in asked])
        right: dict[str, list[bool]] = {}
        for i, pred in zip(asked, preds, strict=True):
            kind, _, _, truth = scenes_[i]
            right.setdefault(kind, []).append(pred == truth[signal])
        acc[signal] = {k: round(sum(v) / len(v), 4) for k, v in right.items()}
        log(f"PyTorch {signal}: {acc[signal]}")
    return acc


def save_checkpoint(demo: DemoModel) -> None:
    """Save the trained model and tokenizer to hf_dir, the folder llmexport reads."""
    save_model(demo.model, demo.tok, demo.hf_dir)


def export_candidates(settings: Settings, demo: DemoModel, log: Log) -> dict[int, Candidate]:
    """Export each bit width into its own staging folder and evaluate it with MNN."""
    candidates: dict[int, Candidate] = {}
    for bits in settings.quant_bits:
        staging = settings.work / f"mnn_q{bits}"
        t = time.monotonic()
        files = export_model(demo.hf_dir, staging, settings.work, quant_bit=bits, image_size=IMAGE_SIZE)
        log(f"exported {bits}-bit {files} in {time.monotonic() - t:.1f} s")
        result = evaluate(staging, settings.eval_seed, settings.per_kind, settings.work / f"eval_q{bits}")
        if result["prompt_ids"] != demo.layout.prompt_ids():
            raise SystemExit(f"MNN builds other prompt ids than we trained on: {result['prompt_ids']}")
        log(
            f"MNN {bits}-bit accuracy: {result['per_kind_accuracy']} overall {result['overall_accuracy']}, "
            f"valid JSON {result['valid_json_answers']}/{result['images']}"
        )
        candidates[bits] = Candidate(staging, files, result)
    return candidates


def pick_candidate(candidates: dict[int, Candidate], log: Log) -> int:
    """The bit width to ship: smaller wins ties, so 4-bit unless 8-bit is strictly better held out."""
    quant_bit = min(candidates, key=lambda b: (-candidates[b].result["overall_accuracy"], b))
    log(f"keeping the {quant_bit}-bit export")
    return quant_bit


def publish(out: Path, kept: Candidate) -> dict[str, int]:
    """Replace the files in ``out`` with the kept runtime files; returns their sizes."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():
        if old.is_file():
            old.unlink()
    for name in kept.files:
        shutil.copyfile(kept.staging / name, out / name)
    return {name: (out / name).stat().st_size for name in kept.files}


def revision_name(seed: int) -> str:
    """The revision the receipt and the manifest share: generator version, date, training seed."""
    return f"g{GENERATOR_VERSION}-{dt.date.today().isoformat()}-s{seed}"


def write_example_images(settings: Settings, log: Log) -> list[dict[str, Any]]:
    """Write example images (held-out seeds) that the published model answers correctly."""
    if settings.examples is None:
        return []
    examples = write_examples(settings.out, settings.examples, settings.work / "examples")
    if examples:
        log(f"examples: {[e['file'] for e in examples]}")
    return examples


def write_receipt(
    settings: Settings,
    demo: DemoModel,
    training: Training,
    torch_acc: dict[str, dict[str, float]],
    candidates: dict[int, Candidate],
    quant_bit: int,
    sizes: dict[str, int],
    revision: str,
    examples: list[dict[str, Any]],
) -> None:
    """Write out/receipt.json: how the published model was made and how well MNN runs it."""
    result = candidates[quant_bit].result
    layout = demo.layout
    summary = training.summary
    receipt = {
        "model": "keyframe-demo",
        "revision": revision,
        "generated_at": dt.datetime.now(dt.UTC).isoformat(),
        "command": "python tools/demo_model/generate.py " + " ".join(sys.argv[1:]),
        "architecture": "Qwen3VLForConditionalGeneration (random init from config, trained here)",
        "shape": DEMO_SHAPE.as_dict(),
        "parameters": demo.n_params,
        "vision_parameters": demo.n_vision,
        "vocab_size": len(demo.tok),
        "special_token_ids": demo.special,
        "prompt": {
            "question": scenes.QUESTION,
            "mnn_text": "<img>image_0</img>" + scenes.QUESTION,
            "chat_template_applied_by_mnn": result["chat_template_applied"],
            "system_prompt": None,
            "prompt_ids": layout.prompt_ids(),
            "prompt_len": len(layout.prompt_ids()),
            "image_tokens": layout.n_image_tokens,
            "answers": demo.answers,
            "answer_ids": {k: list(v) for k, v in layout.answers.items()},
            "stop_ids": result["stop_ids"],
            "decision_token_index": layout.decision_index(),
        },
        "training": {
            "seed": settings.seed,
            "continued_from": str(settings.init) if settings.init else None,
            "minutes_budget": settings.minutes,
            "seconds": summary["seconds"],
            "steps": summary["steps"],
            "batch": training.settings.batch,
            "lr": training.settings.lr,
            "decision_weight": training.settings.decision_weight,
            "aux_weight": training.settings.aux_weight,
            "render_sizes": [training.settings.render_min, training.settings.render_max],
            "image_size": IMAGE_SIZE,
            "torch_threads": 1,
            "data_processes": 1,
            "final_loss": summary["final_loss"],
            "train_acc_ema": summary["train_acc_ema"],
            "history": summary["history"],
            "kinds": list(CHECKLIST_KINDS),
            "checklist_questions": checklist_questions(),
            "pytorch_eval_accuracy_per_signal_40_per_kind": torch_acc,
        },
        "export": {
            "tool": "llmexport",
            "quant_bit": quant_bit,
            "quant_block": 64,
            "compared": {
                f"{b}-bit": {
                    "per_kind_accuracy": c.result["per_kind_accuracy"],
                    "overall_accuracy": c.result["overall_accuracy"],
                    "valid_json_answers": c.result["valid_json_answers"],
                }
                for b, c in candidates.items()
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
            "feeding": f"render 256 px -> JPEG q90 -> cv2.imdecode (BGR) -> INTER_AREA {IMAGE_SIZE}x{IMAGE_SIZE} -> "
            "MNN.expr.const(NHWC, uint8) -> {'text','images':[{data,width,height}]}",
        },
        "examples": examples,
        "versions": versions(VERSIONED_PACKAGES),
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
    }
    (settings.out / "receipt.json").write_text(json.dumps(receipt, indent=2) + "\n")


def write_store_manifest(settings: Settings, kept: Candidate, revision: str) -> None:
    """Write the model-store manifest: sha256 and size of every published runtime file."""
    write_manifest(settings.out, kept.files, settings.manifest, revision)


def print_summary(out: Path, sizes: dict[str, int], log: Log) -> None:
    """Say where the model went and how big its runtime files are."""
    log(f"wrote {out} ({sum(sizes.values())} bytes of runtime files), receipt and manifest")


def main() -> None:
    """Regenerate the demo model: each step below, in this order, logging as it goes."""
    settings = parse_settings()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    with fresh_work(settings.work) as log:
        demo = build_model(settings, log)
        training = train_model(settings, demo, log)
        torch_acc = pytorch_accuracy(settings, demo, log)
        save_checkpoint(demo)
        candidates = export_candidates(settings, demo, log)
        quant_bit = pick_candidate(candidates, log)
        kept = candidates[quant_bit]
        sizes = publish(settings.out, kept)
        revision = revision_name(settings.seed)
        examples = write_example_images(settings, log)
        write_receipt(settings, demo, training, torch_acc, candidates, quant_bit, sizes, revision, examples)
        write_store_manifest(settings, kept, revision)
        print_summary(settings.out, sizes, log)


if __name__ == "__main__":
    main()
