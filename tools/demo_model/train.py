"""Train the tiny Qwen3-VL on synthetic CPR scenes, on the CPU, within a time budget.

What paid in the training runs: a steady framing, the decision token's loss x10,
one torch thread plus one data process (two threads were slower per step on
2 cores), and - for scenes like these - auxiliary heads on the vision
merger's output tokens that say where the hands and the correct point are.
The heads are dropped before export, so the runtime model is unchanged.

The checklist: each step asks one of its questions (``SIGNAL_WEIGHTS``) about a
batch of frames that question is asked about (the gate's "no" leaves the others
unasked); the auxiliary heads learn every signal of every frame at once.

The data process renders checklist frames (``checklist_scenes``) at a random
size (160-384 px), takes the centred square and downsizes it with
cv2.INTER_AREA to 128x128 as the app does, and streams uint8 images to the
trainer, which keeps a replay buffer: rendering is slower than a step, so each
image is seen about twice, which costs nothing in accuracy here.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import queue
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from checklist_scenes import CHECKLIST_KINDS, SIGNALS, framings_for, render_checklist_scene
from sequence import IMAGE_SIZE, PromptLayout, image_to_patches

KIND_INDEX = {k: i for i, k in enumerate(CHECKLIST_KINDS)}
# How often each kind is drawn. Hands beside the sternum ("side") were the hard "no" of the first
# runs, one hand against two the hard part of the checklist, and two hands beside or below the
# chest (off_torso, too_low) the last to learn it (85 % and 95 % after 85 minutes): all drawn more.
KIND_WEIGHTS = {
    "correct": 0.2,
    "too_high": 0.05,
    "too_low": 0.08,
    "side": 0.12,
    "off_torso": 0.12,
    "one_hand_correct": 0.13,
    "one_hand_wrong": 0.18,
    "no_hands": 0.06,
    "out_of_frame": 0.06,
}
FRAMING_WEIGHTS = {"square": 0.4, "wide_4_3": 0.05, "wide_16_9": 0.05, "crop_4_3": 0.25, "crop_16_9": 0.25}
# Which question a training step asks (the gate's is the easy one).
SIGNAL_WEIGHTS = (0.2, 0.4, 0.4)
# truth vector: kind, then per signal 0 = yes, 1 = no, -1 = not asked; hands x, y; correct point x, y
TRUTH_LEN = 8
PLAIN_SHARE = 0.5
NOT_ASKED = -1.0


@dataclass
class TrainSettings:
    minutes: float = 15.0
    seed: int = 1234
    batch: int = 16
    lr: float = 5e-3
    warmup: int = 100
    decision_weight: float = 10.0
    answer_weight: float = 2.0  # the fixed JSON tokens: a strict parser rejects any drift there
    aux_weight: float = 1.0  # 0 disables the auxiliary heads
    render_min: int = 160
    render_max: int = 384
    buffer_size: int = 4000
    log_every: int = 100
    history: list = field(default_factory=list)


def app_view(rgb: np.ndarray) -> np.ndarray:
    """What the app shows a square model: the centred square, INTER_AREA to IMAGE_SIZE."""
    import cv2

    h, w = rgb.shape[:2]
    side = min(h, w)
    top, left = (h - side) // 2, (w - side) // 2
    return cv2.resize(rgb[top : top + side, left : left + side], (IMAGE_SIZE, IMAGE_SIZE), interpolation=cv2.INTER_AREA)


def scene_sample(rng: np.random.Generator, render_min: int, render_max: int) -> tuple[np.ndarray, np.ndarray]:
    """One training sample: IMAGE_SIZE square RGB uint8 (the app's view) and its truth vector."""
    kind = str(rng.choice(list(KIND_WEIGHTS), p=list(KIND_WEIGHTS.values())))
    usable = framings_for(kind)
    weights = np.array([FRAMING_WEIGHTS[f] for f in usable])
    framing = str(rng.choice(usable, p=weights / weights.sum()))
    size = int(rng.integers(render_min, render_max + 1))
    img, scene = render_checklist_scene(rng, kind, framing, size)
    answers = [NOT_ASKED if scene.truth[s] is None else float(scene.truth[s] == "no") for s in SIGNALS]
    hands = scene.hands_xy if scene.hands_xy is not None else (-1.0, -1.0)
    truth = np.array([KIND_INDEX[kind], *answers, *hands, *scene.correct_xy], dtype=np.float32)
    return app_view(np.asarray(img)), truth


def _producer(seed: int, render_min: int, render_max: int, out: mp.Queue, chunk: int = 8) -> None:
    """Data process: render forever, one chunk of samples at a time."""
    import cv2

    cv2.setNumThreads(1)
    rng = np.random.default_rng(seed)
    while True:
        imgs, truths = zip(*(scene_sample(rng, render_min, render_max) for _ in range(chunk)), strict=True)
        out.put((np.stack(imgs), np.stack(truths)))


def soft_grid_target(xy: np.ndarray, grid: int, sigma: float = 0.6) -> np.ndarray:
    """(B, 2) normalised points -> (B, grid*grid) soft one-hot over merged tokens."""
    centres = (np.arange(grid) + 0.5) / grid
    gx = np.exp(-(((centres[None, :] - xy[:, :1]) * grid) ** 2) / (2 * sigma**2))
    gy = np.exp(-(((centres[None, :] - xy[:, 1:2]) * grid) ** 2) / (2 * sigma**2))
    t = gy[:, :, None] * gx[:, None, :]
    t = t.reshape(len(xy), -1)
    return (t / t.sum(1, keepdims=True)).astype(np.float32)


def build_aux_heads(width: int):
    """Heads on the merged vision tokens: hand map, correct-point map, and one answer per signal."""
    import torch
    from torch import nn

    class AuxHeads(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.hand = nn.Linear(width, 1)
            self.point = nn.Linear(width, 1)
            self.visible = nn.Linear(width, 1)
            self.decide = nn.Linear(width, 1)
            self.stacked = nn.Linear(width, 1)

        def forward(self, tokens: torch.Tensor) -> dict[str, torch.Tensor]:
            hand_logits = self.hand(tokens).squeeze(-1)  # B, N
            attn = torch.softmax(hand_logits, dim=-1).unsqueeze(-1)
            pooled = (attn * tokens).sum(1)  # features where the hands are
            return {
                "hand": hand_logits,
                "point": self.point(tokens).squeeze(-1),
                "hands_visible": self.visible(tokens.mean(1)).squeeze(-1),
                "hand_position_correct": self.decide(pooled).squeeze(-1),
                "hands_stacked": self.stacked(pooled).squeeze(-1),
            }

    return AuxHeads()


def aux_loss(heads: dict, truth, grid: int):
    """The auxiliary heads' loss for a batch; each part only where its truth exists."""
    import torch
    import torch.nn.functional as F

    total = torch.zeros(())
    for i, signal in enumerate(SIGNALS):
        answer = truth[:, 1 + i]
        asked = answer >= 0
        if asked.any():
            total = total + F.binary_cross_entropy_with_logits(heads[signal][asked], answer[asked])
    for name, cols in (("hand", slice(4, 6)), ("point", slice(6, 8))):
        xy = truth[:, cols]
        seen = ((xy >= 0) & (xy <= 1)).all(-1)
        if seen.any():
            target = torch.from_numpy(soft_grid_target(xy[seen].numpy(), grid))
            total = total - (target * F.log_softmax(heads[name][seen], -1)).sum(-1).mean()
    return total


class Batcher:
    """Turns images + ground truth into the tensors the HF model takes."""

    def __init__(self, layout: PromptLayout) -> None:
        import torch

        self.layout = layout
        seqs = {a: layout.sequence(a) for a in ("yes", "no")}
        self.ids = {a: torch.from_numpy(s[0]) for a, s in seqs.items()}
        self.pos = torch.from_numpy(seqs["yes"][1])
        assert np.array_equal(seqs["yes"][1], seqs["no"][1])
        # The question numbered as the app's checklist numbers it after one image encode (sequence.py).
        self.pos_plain = torch.from_numpy(layout.sequence("yes", plain_tail=True)[1])
        self.labels = {a: torch.from_numpy(s[2]) for a, s in seqs.items()}
        n_prompt = len(layout.prompt_ids())
        self.decision_pos = n_prompt - 1 + layout.decision_index()
        self.yes_id = layout.answers["yes"][layout.decision_index()]
        self.no_id = layout.answers["no"][layout.decision_index()]
        grid_side = IMAGE_SIZE // 16
        self.grid_thw = torch.tensor([[1, grid_side, grid_side]])

    def __call__(self, imgs: np.ndarray, no: np.ndarray, plain: np.ndarray | None = None) -> dict:
        """``no``: per image 0 when the answer is yes, 1 when it is no; ``plain``: per image, number the
        question as the checklist's one-encode path does (else as a whole prompt)."""
        import torch

        b = len(imgs)
        pos = self.pos[:, None, :].expand(3, b, -1)
        if plain is not None:
            mask = torch.from_numpy(np.asarray(plain, dtype=bool))[None, :, None]
            pos = torch.where(mask, self.pos_plain[:, None, :].expand(3, b, -1), pos)
        answers = ["yes" if x < 0.5 else "no" for x in no]
        input_ids = torch.stack([self.ids[a] for a in answers])
        labels = torch.stack([self.labels[a] for a in answers])
        pixel_values = torch.from_numpy(np.concatenate([image_to_patches(im) for im in imgs]))
        return {
            "input_ids": input_ids,
            "position_ids": pos.contiguous(),
            "mm_token_type_ids": (input_ids == self.layout.image_pad).int(),
            "pixel_values": pixel_values,
            "image_grid_thw": self.grid_thw.expand(b, -1).contiguous(),
            "labels": labels,
        }


def train(
    model,
    layouts: list[PromptLayout],
    settings: TrainSettings,
    log=print,
    checkpoint: Callable[[], None] | None = None,
    checkpoint_minutes: float = 10.0,
) -> dict:
    """Train ``model`` in place, one question per step (``layouts`` in ``SIGNALS`` order); returns a
    summary (steps, seconds, losses, accuracy). ``checkpoint`` is called every ``checkpoint_minutes``
    so a long run can be scored, or stopped, on the way."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(settings.seed)
    torch.set_num_threads(1)
    batchers = [Batcher(layout) for layout in layouts]
    grid = layouts[0].grid[0]
    use_aux = settings.aux_weight > 0
    aux = build_aux_heads(model.config.text_config.hidden_size) if use_aux else None
    captured: dict[str, torch.Tensor] = {}
    hook = None
    if use_aux:
        # The merger's output is what the language model receives: teach it
        # directly where things are.
        hook = model.model.visual.merger.register_forward_hook(lambda m, i, o: captured.__setitem__("tok", o))
    params = list(model.parameters()) + (list(aux.parameters()) if aux is not None else [])
    opt = torch.optim.AdamW(params, lr=settings.lr, weight_decay=0.01, betas=(0.9, 0.98))

    ctx = mp.get_context("fork")
    q: mp.Queue = ctx.Queue(maxsize=64)
    proc = ctx.Process(target=_producer, args=(settings.seed, settings.render_min, settings.render_max, q), daemon=True)
    proc.start()
    buf_img = np.zeros((settings.buffer_size, IMAGE_SIZE, IMAGE_SIZE, 3), np.uint8)
    buf_truth = np.zeros((settings.buffer_size, TRUTH_LEN), np.float32)
    filled = 0
    write = 0
    rng = np.random.default_rng(settings.seed + 1)

    def drain(block: bool) -> None:
        nonlocal filled, write
        while True:
            try:
                imgs, truths = q.get(block=block, timeout=30 if block else None)
            except queue.Empty:
                return
            for im, tr in zip(imgs, truths, strict=True):
                buf_img[write] = im
                buf_truth[write] = tr
                write = (write + 1) % settings.buffer_size
                filled = min(filled + 1, settings.buffer_size)
            if block:
                return

    while filled < 8 * settings.batch:
        drain(block=True)

    budget = settings.minutes * 60.0
    t0 = time.monotonic()
    last_checkpoint = t0
    step = 0
    ema: dict[str, float] = {}
    model.train()
    try:
        while True:
            elapsed = time.monotonic() - t0
            if step == 30:
                per_step = elapsed / 30
                log(f"step time {per_step:.3f}s (about {int(budget / per_step)} steps in {settings.minutes} min)")
            if elapsed > budget:
                break
            if checkpoint is not None and time.monotonic() - last_checkpoint > checkpoint_minutes * 60:
                model.eval()
                checkpoint()
                model.train()
                last_checkpoint = time.monotonic()
            drain(block=False)
            signal = int(rng.choice(len(layouts), p=SIGNAL_WEIGHTS))
            pool = rng.integers(0, filled, 6 * settings.batch)
            idx = pool[buf_truth[pool, 1 + signal] >= 0][: settings.batch]
            if len(idx) < settings.batch:
                continue
            truth = torch.from_numpy(buf_truth[idx])
            batcher = batchers[signal]
            # Half the questions numbered as the one-encode checklist path numbers them, half as a whole
            # prompt: the app asks both ways (a checklist, and a one-signal profile).
            batch = batcher(buf_img[idx], buf_truth[idx, 1 + signal], rng.random(len(idx)) < PLAIN_SHARE)
            # Cosine decay over wall-clock time, not steps: the CPU is shared,
            # so the step rate varies; the schedule must still anneal by the end.
            progress = min(1.0, elapsed / budget)
            lr = settings.lr * min(1.0, (step + 1) / settings.warmup) * 0.5 * (1 + math.cos(math.pi * progress))
            for g in opt.param_groups:
                g["lr"] = lr
            labels = batch.pop("labels")
            out = model(**batch)
            logits = out.logits
            ce = F.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), reduction="none", ignore_index=-100
            ).view(labels.shape)
            w = (labels != -100).float() * settings.answer_weight
            w[:, batcher.decision_pos] *= settings.decision_weight  # x10 relative to the other answer tokens
            loss = (ce * w).sum() / w.sum()
            dec_logits = logits[:, batcher.decision_pos, [batcher.yes_id, batcher.no_id]]
            acc = (dec_logits.argmax(-1).float() == truth[:, 1 + signal]).float().mean().item()
            if use_aux:
                loss = loss + settings.aux_weight * aux_loss(
                    aux(captured["tok"].view(len(idx), grid * grid, -1)), truth, grid
                )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            name = SIGNALS[signal]
            ema["loss"] = loss.item() if "loss" not in ema else 0.98 * ema["loss"] + 0.02 * loss.item()
            ema[name] = acc if name not in ema else 0.95 * ema[name] + 0.05 * acc
            step += 1
            if step % settings.log_every == 0:
                rec = {
                    "step": step,
                    "seconds": round(time.monotonic() - t0, 1),
                    "loss": round(ema["loss"], 4),
                    "train_acc": {s: round(ema.get(s, 0.0), 4) for s in SIGNALS},
                    "lr": lr,
                    "buffer": filled,
                }
                settings.history.append(rec)
                log(f"step {step} t={rec['seconds']}s loss={rec['loss']} acc~{rec['train_acc']} lr={lr:.2e}")
    finally:
        proc.terminate()
        proc.join(5)
        if hook is not None:
            hook.remove()
    model.eval()
    return {
        "steps": step,
        "seconds": round(time.monotonic() - t0, 1),
        "final_loss": ema.get("loss"),
        "train_acc_ema": {s: ema.get(s) for s in SIGNALS},
        "history": settings.history,
    }


def torch_decisions(model, layout: PromptLayout, imgs: list[np.ndarray]) -> list[str]:
    """Greedy yes/no at the decision token in PyTorch (teacher-forced prefix)."""
    import torch

    batcher = Batcher(layout)
    out: list[str] = []
    with torch.no_grad():
        for i in range(0, len(imgs), 32):
            chunk = np.stack(imgs[i : i + 32])
            batch = batcher(chunk, np.zeros(len(chunk), np.float32))
            batch.pop("labels")
            logits = model(**batch).logits[:, batcher.decision_pos, [batcher.yes_id, batcher.no_id]]
            out += ["yes" if j == 0 else "no" for j in logits.argmax(-1).tolist()]
    return out


def save_model(model, tok, out_dir: Path) -> None:
    """Write the HF model + tokenizer (what llmexport reads)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir), safe_serialization=True)
    tok.save_pretrained(str(out_dir))
