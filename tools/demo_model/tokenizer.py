"""A tiny byte-level BPE tokenizer with Qwen's special tokens and ChatML.

The structure mirrors Qwen3's ``tokenizer.json`` (NFC normaliser, Qwen's split
regex, byte-level pre-tokeniser and decoder) because MNN's ``.mtok`` pipeline
tokenizer is known to reproduce exactly that layout.  Any byte string can be
encoded (byte fallback via the 256 byte symbols), so the foreign-text case
never fails, it just costs more tokens.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

# Order matters only for the ids they get; kept in Qwen's order.
SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
)

# Qwen2/3 pre-tokenisation regex (splits words, single digits, punctuation runs, newlines).
QWEN_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# ChatML without a default system prompt: MNN applies it with only a user
# message (config.json has no system_prompt), so the prompt is exactly
# "<|im_start|>user\n...<|im_end|>\n<|im_start|>assistant\n".
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)

# A little text: the product's own phrases dominate so they become few tokens.
_CORPUS = [
    '{"signal":"hand_position_correct","observation":"yes"}',
    '{"signal":"hand_position_correct","observation":"no"}',
    '{"signal":"hand_position_correct","observation":"unknown"}',
    "Is the hand position correct?",
    "Are the hands on the lower half of the sternum, in the centre of the chest?",
    "Place the heel of one hand on the centre of the chest, the other hand on top.",
    "Compress hard and fast: at least 5 cm deep, 100 to 120 compressions per minute.",
    "Let the chest recoil fully between compressions. Keep the arms straight.",
    "The hands are too high, too low, off to the side or not on the chest at all.",
    "Describe the image. What do you see? The manikin lies on the floor.",
    "system user assistant image video answer question observation signal",
    "yes no correct incorrect hand hands position chest torso manikin sternum",
]


def build_tokenizer(vocab_size: int = 680) -> Tokenizer:
    """Train the BPE on the corpus (deterministic: the trainer is single-pass)."""
    tok = Tokenizer(models.BPE(unk_token=None, byte_fallback=False, fuse_unk=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size - len(SPECIAL_TOKENS),
        min_frequency=1,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
    )
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    tok.add_special_tokens(list(SPECIAL_TOKENS))
    return tok


def save_hf_tokenizer(out_dir: Path, vocab_size: int = 680) -> dict[str, int]:
    """Write tokenizer.json + tokenizer_config.json (HF fast format) into out_dir.

    Returns the ids of the special tokens (the model config needs them).
    """
    from transformers import PreTrainedTokenizerFast

    out_dir.mkdir(parents=True, exist_ok=True)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=build_tokenizer(vocab_size),
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=[t for t in SPECIAL_TOKENS if t not in ("<|im_end|>", "<|endoftext|>")],
        clean_up_tokenization_spaces=False,
        model_max_length=4096,
    )
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(str(out_dir))
    return {t: fast.convert_tokens_to_ids(t) for t in SPECIAL_TOKENS}
