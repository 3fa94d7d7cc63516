"""A checklist's cost: N signals from one image encode against one signal, and against asking each
signal with its whole prompt, same images, one run (interleaved, so all three see the same load).

The image part (vision encode + the image's prefill) is timed on its own; each extra signal adds its
question's prefill and picks. Every signal is asked (the gate is not applied: this measures N). Every
way keeps the chat text before the image across keyframes, as the app does (one signal kept against
prefilled whole: `bench.kept_text`).
The picks of one encode are compared with separate asking, and so are the scores, as log
probabilities (the chosen tokens' under the full softmax; on random weights a probability is about
1/vocabulary, so only its log shows a difference): how far one encode moves it where the picks
agree, and how sure each way was where they differ (near-ties flip on small differences).
Then the least an extra signal can cost, whatever its wording: each question cut to "?", so what is left is
the chat template's end of the turn and the answer's start that every signal prefills (as separate forwards,
for answers equal to asking alone), and the ratio to one signal that leaves.
Last, from the medians: how old the card's oldest answer gets asking every signal on every keyframe,
against the best share of the others asked in turn (`bench._rotation`), at 2, 3 and 5 s intervals.

    .venv/bin/python -m bench.checklist [--model DIR_OR_ID] [--profile CHECKLIST] [--signals N]
        [--images 10] [--rounds 3]

``--signals N`` asks the first N signals in asking order (the gate first): the goal is set for 4.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence

import numpy as np

from app.core.figures import spread
from app.core.profile.task import TaskProfile
from app.engine.mnn_vlm import Choice, SeenImage
from app.engine.stdio import claim_stdout
from app.frames.intake import decode_image_bytes
from app.models.catalog import resolve_model
from app.storage.paths import PROFILES
from app.storage.profile_file import load_checklist
from app.worker.analyzer import Analyzer, AnalyzerSettings
from bench._report import (
    Row,
    add_image_side_option,
    add_model_options,
    add_receipt_option,
    add_rounds_options,
    check_rounds,
    report,
    run_benchmark,
    spread_text,
)
from bench._rotation import KeyframeCost, best_share, oldest_answer_s
from bench._scenes import scenes

GOAL_RATIO = 1.4  # N signals (the goal is set for 4) at most this times one signal (issue 40)
LEAST_QUESTION = "?"  # the shortest question: what is left of an extra signal's cost is what every one needs


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def _log(score: float) -> float:
    return math.log(max(score, 1e-300))


def _gap_text(gaps: list[float]) -> str:
    if not gaps:
        return "none"
    s = spread(gaps)
    return f"largest {s.high:.4f}, median {s.median:.4f} nats (n={s.n})"


def _tokens_text(tokens: list[int]) -> str:
    return f"{min(tokens)}-{max(tokens)}" if tokens else "none"


def _split_text(scores: list[float]) -> str:
    return spread_text(spread(scores), "nats", 3) if scores else "none"


def _turn_rows(cost: KeyframeCost, asked: Sequence[TaskProfile], gate: str | None) -> list[Row]:
    """The card's oldest answer asking every signal on every keyframe, against the best share of the
    others asked in turn (the gate every keyframe), from the medians measured above (`bench._rotation`)."""
    gated = any(spec.signal == gate for spec in asked)
    others = len(asked) - int(gated)
    if others < 2:
        return []
    rows = [Row("oldest answer on the card (from the medians above)", "")]
    for interval in (2.0, 3.0, 5.0):
        every = oldest_answer_s(cost, gated, others, others, interval)
        share = best_share(cost, gated, others, interval)
        turns = min(range(1, others), key=lambda k: oldest_answer_s(cost, gated, others, k, interval))
        in_turns = oldest_answer_s(cost, gated, others, turns, interval)
        figure = (
            f"all {_seconds(every)}, best in turns ({turns} of {others}) {_seconds(in_turns)}: "
            f"{_share_words(share, others)}"
        )
        rows.append(Row(f"  at a {interval:g} s interval", figure))
    return rows


def _least_rows(one_ms: float, least_ms: list[float], tokens: list[int], n: int) -> list[Row]:
    """What the extra signals cost at the least, each question cut to one character, and the ratio that leaves."""
    if not least_ms:
        return []
    floor = spread(least_ms)
    best = (one_ms + (n - 1) * floor.median) / one_ms
    return [
        Row(f"  each extra signal asked only {LEAST_QUESTION!r}", spread_text(floor)),
        Row("    tokens it prefills after the image", _tokens_text(tokens)),
        Row(f"  / one signal, at the least (extra signals asked {LEAST_QUESTION!r})", f"{best:.2f}x"),
    ]


def _seconds(value: float) -> str:
    return f"{value:.2f} s" if value >= 1 else f"{value * 1000:.1f} ms"


def _share_words(share: int, others: int) -> str:
    return "all, every keyframe" if share == others else f"{share} of {others} in turn"


def main() -> int:
    parser = argparse.ArgumentParser()
    add_model_options(parser, profile_default=PROFILES / "cpr_checklist.json")
    add_rounds_options(parser, images=10, rounds=3)
    parser.add_argument("--signals", type=int, default=None, help="ask only the first N signals (asking order)")
    add_image_side_option(parser)
    add_receipt_option(parser)
    args = parser.parse_args()
    check_rounds(parser, args)
    out = claim_stdout()
    model = resolve_model(args.model)
    checklist = load_checklist(args.profile)
    asked = checklist.ordered()
    if args.signals is not None and not 1 <= args.signals <= len(asked):
        parser.error(f"--signals must be 1 to {len(asked)}: {checklist.id} has {len(asked)} signals")
    asked = asked[: args.signals]
    analyzer = Analyzer(model, checklist.signals[0], AnalyzerSettings(image_max_side=args.image_max_side))
    analyzer.load()
    engine = analyzer.engine
    questions = [(spec.ask(True)[0], [spec.answer_text(v) for v in spec.values]) for spec in asked]
    n = len(questions)
    per_kind = max(1, args.images // 5)
    images = [analyzer.prepare(decode_image_bytes(data)) for _, data, _ in scenes(per_kind)][: args.images]
    times: dict[str, list[float]] = {"one": [], "all": [], "separately": [], "image": [], "extra": [], "least": []}
    extra_tokens: list[int] = []  # tokens each extra signal prefilled after the image
    least_tokens: list[int] = []  # the same, each question cut to LEAST_QUESTION
    # The least any extra signal costs, whatever it asks: its turn's end and its answer's start (for the answer to
    # equal asking alone, each its own forward), which no shorter wording removes.
    least = [(LEAST_QUESTION, answers) for _, answers in questions]
    total = 0
    agreed = {spec.signal: 0 for spec in asked}  # picks equal to separate asking, per signal
    agree_gaps: list[float] = []  # |log score one encode - log score separately|, same pick
    split_scores: list[float] = []  # both ways' log scores where the picks differ

    def each_of(seen: SeenImage, count: int, key: str, tokens: list[int]) -> list[Choice]:
        """The `count` answers of `seen` in order, timing each after the first under `key` with its tokens."""
        answers = []
        for i in range(count):
            asked = time.perf_counter()
            answers.append(seen.choose(i))
            if i:
                times[key].append(_ms_since(asked))
                tokens.append(seen.question_tokens(i))
        return answers

    def one_encode(rgb: np.ndarray) -> list[Choice]:
        start = time.perf_counter()
        seen = engine.see(rgb, questions, system=checklist.system)
        times["image"].append(_ms_since(start))
        answers = each_of(seen, len(questions), "extra", extra_tokens)
        times["all"].append(_ms_since(start))
        return answers

    def least_extra(rgb: np.ndarray) -> None:
        each_of(engine.see(rgb, least, system=checklist.system), len(least), "least", least_tokens)

    def separately(rgb: np.ndarray) -> list[Choice]:
        start = time.perf_counter()
        answers = [engine.choose(rgb, q, a, system=checklist.system) for q, a in questions]
        times["separately"].append(_ms_since(start))
        return answers

    for _ in range(args.rounds):
        for rgb in images:
            start = time.perf_counter()
            engine.see(rgb, questions[:1], system=checklist.system).choose(0)
            times["one"].append(_ms_since(start))
            if n > 1:
                least_extra(rgb)
            for spec, t, a in zip(asked, one_encode(rgb), separately(rgb), strict=True):
                total += 1
                if t.index != a.index:
                    split_scores += [_log(c.score) for c in (t, a) if c.score is not None]
                    continue
                agreed[spec.signal] += 1
                if t.score is not None and a.score is not None:
                    agree_gaps.append(abs(_log(t.score) - _log(a.score)))
    same = sum(agreed.values())
    one, together_spread, apart = (spread(times[k]) for k in ("one", "all", "separately"))
    ratio = together_spread.median / one.median
    rows = [
        Row("one signal (image encoded, one question)", spread_text(one)),
        Row(f"{n} signals, one image encode", spread_text(together_spread)),
        Row("  / one signal, median", f"{ratio:.2f}x", f"<= {GOAL_RATIO:g}x", ratio <= GOAL_RATIO),
        Row("  image part (vision + image prefill)", spread_text(spread(times["image"]))),
        Row("  each extra signal", spread_text(spread(times["extra"]))),
        Row("    tokens it prefills after the image", _tokens_text(extra_tokens)),
        *_least_rows(one.median, times["least"], least_tokens, n),
        Row(f"{n} signals asked separately (whole prompt each)", spread_text(apart)),
        Row("  one encode / separately, median", f"{together_spread.median / apart.median:.2f}x"),
        Row("picks equal to separate asking", f"{same}/{total}", "all", same == total),
        *(Row(f"  {signal}", f"{k}/{total // n}") for signal, k in agreed.items()),
        Row("  |log score difference| where the picks agree", _gap_text(agree_gaps)),
        Row("  log scores where the picks differ", _split_text(split_scores)),
        *_turn_rows(KeyframeCost(one.median / 1000.0, spread(times["extra"]).median / 1000.0), asked, checklist.gate),
    ]
    side = images[0].shape[0]
    title = (
        f"Checklist of {n} signals: {model.id}, {checklist.id}, {len(images)} images x {args.rounds} rounds, "
        f"{side}² images"
    )
    return report(out, title, rows, args.receipt)


if __name__ == "__main__":
    run_benchmark(main)
