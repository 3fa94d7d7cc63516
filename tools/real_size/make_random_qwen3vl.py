"""Build a random-weight model with the real Qwen3-VL-2B-Instruct shape and export it to MNN.

    .venv-gen/bin/python tools/real_size/make_random_qwen3vl.py [--cache DIR] [--seed 0]

For latency and memory receipts only (`python -m app bench --model DIR`): the
weights are random, so its answers mean nothing, but every matrix the runtime
multiplies has the real model's size. Nothing is downloaded (model hubs are
not needed): the config is written out here, the tokenizer is the demo
generator's byte-level BPE padded to the real vocabulary.

Shape (Qwen3-VL-2B-Instruct's config.json):
  text   hidden 2048, intermediate 6144, 28 layers, 16 heads / 8 KV heads,
         head_dim 128, vocab 151936, tied embeddings, rope theta 5e6,
         mrope_section [24, 20, 20] interleaved
  vision depth 24, hidden 1024, intermediate 4096, 16 heads, patch 16,
         temporal patch 2, merge 2, out_hidden 2048, deepstack [5, 11, 17],
         2304 learned position embeddings (a 48x48 grid)

Export: llmexport 4-bit (block 64) with an 8-bit lm_head (the tied embedding
table; with it the runtime files come within a few KB of the real
Qwen3-VL-2B-Instruct-MNN's 1,475,228,382 bytes),
the vision tower at llmexport's qwen3_vl default. The export peaks at about
13 GB of RAM. Output, all outside the repository (default
~/.cache/keyframe-real-size, or $KEYFRAME_REAL_SIZE_CACHE):

  hf/                       the Hugging Face checkpoint (bf16, ~4.3 GB; --drop-hf deletes it)
  work/                     llmexport's log (the raw export is deleted after a good run)
  qwen3-vl-2b-random-q4/    the MNN folder the app loads (--model), with real_size.json

The tokenizer: the demo generator's BPE (tools/demo_model/tokenizer.py), trained
on its corpus plus the bundled profiles' prompts, so the profile prompts take
about as many tokens as the real Qwen tokenizer gives them (about one per
pre-token: English words, JSON punctuation runs), then padded with unreachable
filler tokens `fill000680`... to 151922 regular tokens, then Qwen's 14 special
tokens (ids 151922-151935; the real model has them at 151643-151656, ids do not
change the cost). The fillers are never produced by encoding (no merge leads to
them) and decode to plain ASCII.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import resource
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tools" / "demo_model"))

import tokenizer as demo_tokenizer  # noqa: E402
from export import export_model  # noqa: E402
from model_config import TinyShape, make_config  # noqa: E402
from versions import versions  # noqa: E402

VOCAB_SIZE = 151936
# make_config's knobs at the real size; the two fields it fixes for the tiny models
# (deepstack layers, max positions) are set on the config afterwards.
REAL_SHAPE = TinyShape(
    text_hidden=2048,
    text_layers=28,
    text_heads=16,
    text_kv_heads=8,
    head_dim=128,
    text_intermediate=6144,
    vision_hidden=1024,
    vision_depth=24,
    vision_heads=16,
    vision_intermediate=4096,
    num_position_embeddings=2304,
    mrope_section=(24, 20, 20),
)
DEEPSTACK = [5, 11, 17]
MAX_POSITIONS = 262144
MODEL_DIR = "qwen3-vl-2b-random-q4"
VERSIONED = ("torch", "transformers", "tokenizers", "llmexport", "MNN", "onnx", "onnxslim", "numpy")


def default_cache() -> Path:
    env = os.environ.get("KEYFRAME_REAL_SIZE_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "keyframe-real-size"


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def profile_texts() -> list[str]:
    """The bundled profiles' prompts, system prompts and answers (the text the app sends)."""
    texts: list[str] = []
    for path in sorted((REPO / "model_store" / "profiles").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        texts.append(data.get("system") or "")
        for signal in data.get("signals", [data]):  # a checklist lists its signals; a profile is one
            constrained = signal.get("constrained") or {}
            texts += [signal.get("prompt") or "", constrained.get("prompt") or "", constrained.get("system") or ""]
            texts += [
                json.dumps({"signal": signal["signal"], "observation": v}, separators=(",", ":"))
                for v in signal["values"]
            ]
    return [t for t in texts if t]


# The roles as ChatML writes them, after <|im_start|> with no space before: Qwen's vocabulary has
# each as one token, the demo corpus only " assistant" (with a space), which left every question's
# "<|im_start|>assistant\n" 2 tokens longer than the real model's.
CHAT_ROLES = ["system\n", "user\n", "assistant\n"]


def padded_tokenizer(vocab_size: int = VOCAB_SIZE):
    """The demo BPE (corpus + profile texts) padded with filler tokens to ``vocab_size``."""
    from tokenizers import Tokenizer

    # build_tokenizer trains on the module's _CORPUS; add the profile texts for this call only.
    saved = demo_tokenizer._CORPUS
    demo_tokenizer._CORPUS = list(saved) + profile_texts() + CHAT_ROLES
    try:
        base = demo_tokenizer.build_tokenizer(4000)  # the trainer stops when no pair is left to merge
    finally:
        demo_tokenizer._CORPUS = saved
    data = json.loads(base.to_str())
    data["added_tokens"] = []  # the specials are added back after the fillers
    specials = set(demo_tokenizer.SPECIAL_TOKENS)
    vocab = {t: i for t, i in data["model"]["vocab"].items() if t not in specials}
    assert sorted(vocab.values()) == list(range(len(vocab))), "BPE ids are not contiguous"
    n_trained = len(vocab)
    regular = vocab_size - len(demo_tokenizer.SPECIAL_TOKENS)
    for i in range(n_trained, regular):
        vocab[f"fill{i:06d}"] = i
    data["model"]["vocab"] = vocab
    tok = Tokenizer.from_str(json.dumps(data))
    tok.add_special_tokens(list(demo_tokenizer.SPECIAL_TOKENS))
    assert tok.get_vocab_size() == vocab_size, tok.get_vocab_size()
    return tok, n_trained


def save_tokenizer(out_dir: Path) -> tuple[dict[str, int], int]:
    """tokenizer.json + tokenizer_config.json as the demo's save_hf_tokenizer writes them."""
    from transformers import PreTrainedTokenizerFast

    SPECIALS = demo_tokenizer.SPECIAL_TOKENS
    tok, n_trained = padded_tokenizer()
    out_dir.mkdir(parents=True, exist_ok=True)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=[t for t in SPECIALS if t not in ("<|im_end|>", "<|endoftext|>")],
        clean_up_tokenization_spaces=False,
        model_max_length=MAX_POSITIONS,
    )
    fast.chat_template = demo_tokenizer.CHAT_TEMPLATE  # ChatML; a system message is rendered like Qwen's
    fast.save_pretrained(str(out_dir))
    if len(fast) != VOCAB_SIZE:
        raise SystemExit(f"tokenizer has {len(fast)} tokens, expected {VOCAB_SIZE}")
    return {t: fast.convert_tokens_to_ids(t) for t in demo_tokenizer.SPECIAL_TOKENS}, n_trained


def build_checkpoint(hf_dir: Path, seed: int) -> dict:
    """Random Qwen3VLForConditionalGeneration of the real shape, saved in bf16 (as the real one ships)."""
    import torch
    from transformers import Qwen3VLForConditionalGeneration

    shutil.rmtree(hf_dir, ignore_errors=True)
    special, n_trained = save_tokenizer(hf_dir)
    config = make_config(REAL_SHAPE, special, VOCAB_SIZE)
    config.vision_config.deepstack_visual_indexes = list(DEEPSTACK)
    config.text_config.max_position_embeddings = MAX_POSITIONS
    torch.manual_seed(seed)
    torch.set_default_dtype(torch.bfloat16)  # builds and initialises in bf16: 4.3 GB instead of 8.5
    try:
        model = Qwen3VLForConditionalGeneration(config).eval()
    finally:
        torch.set_default_dtype(torch.float32)
    n_params = sum(p.numel() for p in model.parameters())
    n_vision = sum(p.numel() for p in model.model.visual.parameters())
    log(f"model: {n_params:,} parameters ({n_vision:,} vision), dtype {next(model.parameters()).dtype}")
    model.save_pretrained(str(hf_dir), safe_serialization=True)
    del model
    gc.collect()
    return {
        "parameters": n_params,
        "vision_parameters": n_vision,
        "special_token_ids": special,
        "bpe_tokens": n_trained,
        "filler_tokens": VOCAB_SIZE - len(special) - n_trained,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=default_cache(), help="where everything goes (outside the repo)")
    ap.add_argument("--seed", type=int, default=0, help="torch seed of the random init")
    ap.add_argument("--quant-bit", type=int, default=4, choices=(4, 8))
    ap.add_argument("--lm-quant-bit", type=int, default=8, choices=(4, 8), help="lm_head (tied embeddings)")
    ap.add_argument(
        "--image-size",
        type=int,
        default=420,
        help="image_size written to llm_config.json (420: what llmexport writes for every Qwen3-VL export); "
        "the app feeds squares of min(this, --image-max-side), snapped to the 32 px grid",
    )
    ap.add_argument("--reuse-hf", action="store_true", help="export the checkpoint already in CACHE/hf")
    ap.add_argument("--drop-hf", action="store_true", help="delete the HF checkpoint after the export")
    args = ap.parse_args()
    cache = args.cache.expanduser().resolve()
    if cache == REPO or REPO in cache.parents:
        raise SystemExit(f"{cache}: the cache must be outside the repository (the model is ~1.5 GB)")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    hf_dir, work, out = cache / "hf", cache / "work", cache / MODEL_DIR
    work.mkdir(parents=True, exist_ok=True)

    t0 = time.monotonic()
    if args.reuse_hf and (hf_dir / "config.json").is_file():
        info = json.loads((hf_dir / "build.json").read_text())
        log(f"reusing {hf_dir}")
    else:
        info = build_checkpoint(hf_dir, args.seed)
        info["seed"] = args.seed
        (hf_dir / "build.json").write_text(json.dumps(info, indent=2) + "\n")
    build_s = time.monotonic() - t0
    log(f"checkpoint ready in {build_s:.0f} s: {hf_dir}")

    t1 = time.monotonic()
    if out.exists():
        shutil.rmtree(out)
    files = export_model(
        hf_dir,
        out,
        work,
        quant_bit=args.quant_bit,
        image_size=args.image_size,
        quant_block=64,
        lm_quant_bit=args.lm_quant_bit,
    )
    export_s = time.monotonic() - t1
    # ru_maxrss of the waited-for children: the llmexport child is the biggest (KiB on Linux).
    child_peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    shutil.rmtree(work / "raw_export", ignore_errors=True)
    if args.drop_hf:
        shutil.rmtree(hf_dir, ignore_errors=True)
    sizes = {name: (out / name).stat().st_size for name in files}
    llm_cfg = json.loads((out / "llm_config.json").read_text())
    record = {
        "generator": "tools/real_size/make_random_qwen3vl.py",
        "made_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": "python tools/real_size/make_random_qwen3vl.py " + " ".join(sys.argv[1:]),
        "weights": "random (untrained, torch.manual_seed); answers are meaningless, costs are real-size",
        "shape": REAL_SHAPE.as_dict()
        | {"deepstack_visual_indexes": DEEPSTACK, "vocab_size": VOCAB_SIZE, "max_position_embeddings": MAX_POSITIONS},
        **info,
        "export": {
            "tool": "llmexport",
            "quant_bit": args.quant_bit,
            "quant_block": 64,
            "lm_quant_bit": args.lm_quant_bit,
            "visual": "llmexport's qwen3_vl default",
            "image_size": llm_cfg.get("image_size"),
            "seconds": round(export_s, 1),
            "child_peak_rss_kib": child_peak_kib,
            "files": sizes,
            "total_bytes": sum(sizes.values()),
        },
        "build_seconds": round(build_s, 1),
        "versions": versions(VERSIONED),
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform()},
    }
    (out / "real_size.json").write_text(json.dumps(record, indent=2) + "\n")
    log(
        f"exported in {export_s:.0f} s (llmexport child peak {child_peak_kib / 1024 / 1024:.1f} GiB): "
        f"{out} ({sum(sizes.values()):,} bytes of runtime files)"
    )
    print(out)


if __name__ == "__main__":
    main()
