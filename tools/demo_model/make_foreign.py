"""Make the "foreign" Qwen3-VL MNN fixture: a model the app did not train.

It differs from the demo model on purpose, so tests catch code that assumes
our model: other widths and depths (text 96 x 3 layers, head_dim 24; vision
48 wide), other token ids, image_size 64 (4 image tokens), 8-bit weights, a
chat template that inserts a default system prompt, and a tokenizer exported
as MNN's text format (``tokenizer.txt``, built from vocab.json + merges.txt)
instead of ``tokenizer.mtok``.  Weights are random: it only has to load and
generate (garbage) text with an image.

    .venv-gen/bin/python tools/demo_model/make_foreign.py [--out tests/fixtures/foreign_qwen3vl]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from model_config import FOREIGN_SHAPE, make_config  # noqa: E402
from tokenizer import SPECIAL_TOKENS, build_tokenizer  # noqa: E402

REPO = HERE.parent.parent
FOREIGN_TEMPLATE = (
    "{%- if messages[0]['role'] != 'system' %}"
    "{{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def save_slow_tokenizer(out: Path, vocab_size: int = 400) -> dict[str, int]:
    """vocab.json + merges.txt + tokenizer_config.json, and no tokenizer.json.

    Without tokenizer.json llmexport falls back to MNN's text tokenizer format.
    """
    from transformers import AutoTokenizer, Qwen2Tokenizer

    out.mkdir(parents=True, exist_ok=True)
    build_tokenizer(vocab_size).model.save(str(out))
    # Special tokens in a different order from ours: ids differ too.
    order = ["<|im_end|>", "<|endoftext|>"] + [t for t in SPECIAL_TOKENS if t not in ("<|im_end|>", "<|endoftext|>")]
    tok = Qwen2Tokenizer(
        vocab_file=str(out / "vocab.json"),
        merges_file=str(out / "merges.txt"),
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=None,
        bos_token=None,
        additional_special_tokens=order[2:],
    )
    tok.chat_template = FOREIGN_TEMPLATE
    tok.save_pretrained(str(out))
    (out / "tokenizer.json").unlink(missing_ok=True)
    tok = AutoTokenizer.from_pretrained(str(out), use_fast=False)
    return {t: tok.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS} | {"__len__": len(tok)}


def _keep_output_ascii(model, tok_dir: Path) -> None:
    """Zero the (tied) embedding rows of the 128 lone high-byte tokens.

    MNN 3.6.1's Python ``tokenizer_decode`` raises UnicodeDecodeError for
    them, and ``response`` raises when the whole answer is not valid UTF-8.
    With zero rows their logit is 0 while the random model's top logits are
    ~+7, so greedy garbage stays ASCII and ``response`` works.
    """
    import torch
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(tok_dir), use_fast=False)
    bad = [i for i in range(len(tok)) if "\ufffd" in tok.decode([i])]
    with torch.no_grad():
        model.get_input_embeddings().weight[bad] = 0.0


def make_foreign(out: Path, seed: int = 7) -> list[str]:
    import torch
    from export import export_model
    from transformers import Qwen3VLForConditionalGeneration

    with tempfile.TemporaryDirectory(prefix="kf_foreign_") as tmp:
        hf = Path(tmp) / "hf"
        ids = save_slow_tokenizer(hf)
        vocab = ids.pop("__len__")
        torch.manual_seed(seed)
        config = make_config(FOREIGN_SHAPE, ids, vocab)
        # A wider init than HF's 0.02: near-zero weights make a random model
        # repeat one (often whitespace) token; this gives visible varied garbage.
        config.text_config.initializer_range = 0.25
        config.vision_config.initializer_range = 0.25
        model = Qwen3VLForConditionalGeneration(config).eval()
        _keep_output_ascii(model, hf)
        model.save_pretrained(str(hf), safe_serialization=True)
        (hf / "tokenizer.json").unlink(missing_ok=True)  # save_pretrained must not bring it back
        if out.exists():
            shutil.rmtree(out)
        files = export_model(hf, out, Path(tmp), quant_bit=8, visual_quant_bit=8, image_size=64, quant_block=32)
    info = {
        "generator": "tools/demo_model/make_foreign.py",
        "seed": seed,
        "shape": FOREIGN_SHAPE.as_dict(),
        "quant_bit": 8,
        "image_size": 64,
        "weights": "random (untrained)",
        "files": files,
        "note": "answers are garbage by design; use it to test loading, prompting and the token loop",
    }
    (out / "fixture.json").write_text(json.dumps(info, indent=2) + "\n")
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "fixtures" / "foreign_qwen3vl")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    files = make_foreign(args.out.resolve(), args.seed)
    total = sum((args.out / f).stat().st_size for f in files)
    print(f"wrote {len(files)} files, {total} bytes, to {args.out}")


if __name__ == "__main__":
    main()
