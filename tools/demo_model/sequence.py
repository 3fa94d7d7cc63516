"""Token sequences, position ids and pixel patches exactly as MNN 3.6.1 builds them.

Training must see what the runtime feeds the graph, bit for bit where it can:

* Prompt: MNN applies the chat template to ``<img>image_0</img>QUESTION`` and
  then tokenises the text *around* the image tag separately, inserting
  ``<|vision_start|>`` + N x ``<|image_pad|>`` + ``<|vision_end|>`` between.
* Position ids (``Omni::gen_position_ids`` / ``addPositionIds`` in 3.6.1):
  prompt text counts up 0, 1, ...; the vision start token takes the next
  index c; image token (t, h, w) gets (c+1+t, c+1+h, c+1+w); vision end gets
  (last w index + 1); text continues from there.  Decode steps, however, get
  the *plain* sequence position ``all_seq_len + i`` (= prompt length L for
  the first generated token fed back), not the compressed one HF uses.
* Pixels: BGR->RGB, (x - 127.5) / 127.5, the frame duplicated for the
  temporal patch of 2, then the Qwen2-VL patch/merge flattening.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PATCH = 16
MERGE = 2
TEMPORAL = 2
IMAGE_SIZE = 128


def image_to_patches(rgb: np.ndarray) -> np.ndarray:
    """(H, W, 3) uint8 RGB -> (grid_h * grid_w, 3 * 2 * 16 * 16) float32, MNN order."""
    h, w, _ = rgb.shape
    x = (rgb.astype(np.float32) - 127.5) / 127.5
    x = x.transpose(2, 0, 1)[None]  # 1, C, H, W
    x = np.concatenate([x, x], axis=0)  # temporal duplicate: T=2, C, H, W
    gh, gw = h // PATCH, w // PATCH
    x = x.reshape(1, TEMPORAL, 3, gh // MERGE, MERGE, PATCH, gw // MERGE, MERGE, PATCH)
    x = x.transpose(0, 3, 6, 4, 7, 2, 1, 5, 8)
    return np.ascontiguousarray(x.reshape(gh * gw, 3 * TEMPORAL * PATCH * PATCH))


@dataclass(frozen=True)
class PromptLayout:
    """Token ids of the fixed prompt and both answers."""

    prefix: tuple[int, ...]  # text before the image (template start)
    suffix: tuple[int, ...]  # text after the image (question, template end)
    vision_start: int
    vision_end: int
    image_pad: int
    grid: tuple[int, int]  # merged image tokens (rows, cols)
    answers: dict[str, tuple[int, ...]]  # "yes"/"no" -> answer ids incl. <|im_end|>

    @property
    def n_image_tokens(self) -> int:
        return self.grid[0] * self.grid[1]

    def prompt_ids(self) -> list[int]:
        return (
            list(self.prefix)
            + [self.vision_start]
            + [self.image_pad] * self.n_image_tokens
            + [self.vision_end]
            + list(self.suffix)
        )

    def decision_index(self) -> int:
        """Index (within the answer) of the first token where yes and no differ."""
        a, b = self.answers["yes"], self.answers["no"]
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return i
        raise ValueError("answers do not differ")

    def prompt_positions(self, plain_tail: bool = False) -> np.ndarray:
        """(3, L) M-RoPE position ids of the prompt, MNN 3.6.1 scheme.

        ``plain_tail``: the text after the image numbered by its place in the sequence, as MNN 3.6.1
        numbers tokens forwarded after an image prefilled on its own (the app's checklist: one image
        encode, then each question), instead of on from the vision end as in a whole prompt."""
        t_ids: list[int] = []
        h_ids: list[int] = []
        w_ids: list[int] = []

        def text(n: int) -> None:
            start = (w_ids[-1] + 1) if w_ids else 0
            for i in range(n):
                t_ids.append(start + i)
                h_ids.append(start + i)
                w_ids.append(start + i)

        text(len(self.prefix))
        text(1)  # vision start
        cur = w_ids[-1] + 1
        rows, cols = self.grid
        for r in range(rows):
            for c in range(cols):
                t_ids.append(cur)
                h_ids.append(cur + r)
                w_ids.append(cur + c)
        text(1)  # vision end: last w + 1
        if plain_tail:
            start = len(t_ids)
            for ids in (t_ids, h_ids, w_ids):
                ids.extend(range(start, start + len(self.suffix)))
        else:
            text(len(self.suffix))
        return np.array([t_ids, h_ids, w_ids], dtype=np.int64)

    def sequence(self, answer: str, plain_tail: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """input_ids (S,), position_ids (3, S), labels (S,) for teacher forcing.

        labels[i] is the token to predict after input i (-100 = no loss).  The
        answer tokens sit at plain positions L, L+1, ... as MNN decodes them.
        """
        prompt = self.prompt_ids()
        ans = list(self.answers[answer])
        ids = prompt + ans[:-1]
        n_prompt = len(prompt)
        pos = self.prompt_positions(plain_tail)
        dec = np.arange(n_prompt, n_prompt + len(ans) - 1, dtype=np.int64)
        pos = np.concatenate([pos, np.stack([dec, dec, dec])], axis=1)
        labels = np.full(len(ids), -100, dtype=np.int64)
        labels[n_prompt - 1 :] = ans
        return np.array(ids, dtype=np.int64), pos, labels


def make_layout(tok, question: str, answers: dict[str, str], image_size: int = IMAGE_SIZE) -> PromptLayout:
    """Build the layout with an HF tokenizer, splitting the template like MNN does."""
    text = tok.apply_chat_template(
        [{"role": "user", "content": f"<img>image_0</img>{question}"}], tokenize=False, add_generation_prompt=True
    )
    before, rest = text.split("<img>", 1)
    after = rest.split("</img>", 1)[1]
    enc = lambda s: tuple(tok.encode(s, add_special_tokens=False))  # noqa: E731
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    grid = (image_size // (PATCH * MERGE), image_size // (PATCH * MERGE))
    return PromptLayout(
        prefix=enc(before),
        suffix=enc(after),
        vision_start=tok.convert_tokens_to_ids("<|vision_start|>"),
        vision_end=tok.convert_tokens_to_ids("<|vision_end|>"),
        image_pad=tok.convert_tokens_to_ids("<|image_pad|>"),
        grid=grid,
        answers={k: enc(v) + (im_end,) for k, v in answers.items()},
    )
