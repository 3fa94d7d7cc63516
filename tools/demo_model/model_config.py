"""Qwen3-VL configuration of the tiny demo model (random init, no hub).

The shapes are ones llmexport 0.0.5 and MNN 3.6.1 are
known to handle (three deepstack slots, patch 16, merge 2, temporal patch 2,
interleaved M-RoPE with a [4, 2, 2] section for head_dim 16).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class TinyShape:
    """The knobs that set the model's size."""

    text_hidden: int = 64
    text_layers: int = 2
    text_heads: int = 4
    text_kv_heads: int = 2
    head_dim: int = 16
    text_intermediate: int = 192
    vision_hidden: int = 64
    vision_depth: int = 3
    vision_heads: int = 2
    vision_intermediate: int = 192
    num_position_embeddings: int = 256  # a 16x16 learned grid, resampled per image
    mrope_section: tuple[int, int, int] = (4, 2, 2)  # sums to head_dim / 2

    def as_dict(self) -> dict:
        return asdict(self)


DEMO_SHAPE = TinyShape()
# The foreign fixture: differently shaped on purpose (tests must not assume ours).
FOREIGN_SHAPE = TinyShape(
    text_hidden=96,
    text_layers=3,
    text_heads=4,
    text_kv_heads=2,
    head_dim=32,
    text_intermediate=256,
    vision_hidden=48,
    vision_depth=3,
    vision_heads=2,
    vision_intermediate=128,
    num_position_embeddings=144,
    mrope_section=(8, 4, 4),
)


def make_config(shape: TinyShape, special_ids: dict[str, int], vocab_size: int):
    """Build a ``Qwen3VLConfig`` for ``shape`` with the tokenizer's special ids."""
    from transformers import Qwen3VLConfig

    text = dict(
        vocab_size=vocab_size,
        hidden_size=shape.text_hidden,
        intermediate_size=shape.text_intermediate,
        num_hidden_layers=shape.text_layers,
        num_attention_heads=shape.text_heads,
        num_key_value_heads=shape.text_kv_heads,
        head_dim=shape.head_dim,
        max_position_embeddings=4096,
        rms_norm_eps=1e-6,
        tie_word_embeddings=True,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 5_000_000.0,
            "mrope_section": list(shape.mrope_section),
            "mrope_interleaved": True,
        },
        bos_token_id=special_ids["<|endoftext|>"],
        eos_token_id=special_ids["<|im_end|>"],
        pad_token_id=special_ids["<|endoftext|>"],
    )
    vision = dict(
        depth=shape.vision_depth,
        hidden_size=shape.vision_hidden,
        intermediate_size=shape.vision_intermediate,
        num_heads=shape.vision_heads,
        in_channels=3,
        patch_size=16,
        spatial_merge_size=2,
        temporal_patch_size=2,
        out_hidden_size=shape.text_hidden,
        num_position_embeddings=shape.num_position_embeddings,
        deepstack_visual_indexes=[0, 1, 2],
    )
    return Qwen3VLConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=special_ids["<|image_pad|>"],
        video_token_id=special_ids["<|video_pad|>"],
        vision_start_token_id=special_ids["<|vision_start|>"],
        vision_end_token_id=special_ids["<|vision_end|>"],
        tie_word_embeddings=True,
    )
