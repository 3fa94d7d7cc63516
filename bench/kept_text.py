"""One signal with the chat text before the image kept in the model's cache across keyframes, against
the same prompt prefilled whole on every keyframe, and against the floor: what no cache can save (the
vision encoder, then one prefill of the image's tokens, the text after them and the answer's forced
prefix), timed as bare MNN calls on the same loaded model with none of the app's code inside. The
question after the image (the shipped profiles') and before it (the whole question is then kept), each
place interleaved image by image; the engine call is timed (constrained), and the picks of the kept and
the fresh prefill are compared.

    .venv/bin/python -m bench.kept_text [--model DIR_OR_ID] [--profile F] [--image-max-side N] \
        [--images 10] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from app.core.figures import spread
from app.core.profile.task import QuestionPlace
from app.engine.mnn_vlm import Choice, MnnVlm, image_part
from app.engine.stdio import claim_stdout, native_stdout_to_stderr
from app.frames.intake import decode_image_bytes
from app.models.catalog import resolve_model
from app.storage.paths import PROFILES
from app.storage.profile_file import load_profile
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
from bench._scenes import scenes

GOAL_FLOOR = 1.10  # one signal with its constant text kept: at most this times the floor


def _ms_since(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def _floor_ms(engine: MnnVlm, rgb: np.ndarray, text: str, forced: Sequence[int]) -> float:
    """Vision encode + one prefill of everything after the text the engine keeps, with MNN alone."""
    llm: Any = engine._llm
    c_obj = llm._c_obj
    cut = text.index("<img>")
    kept = engine.kept_tokens
    image = image_part(engine._mnn.expr, rgb)  # the app's conversion of the array: not MNN's work
    with native_stdout_to_stderr():
        start = time.perf_counter()
        c_obj.erase_history(kept, c_obj.get_current_history())
        c_obj.set_context({"gen_seq_len": 0, "status": 0})  # prompt numbering, a running status
        ids = list(llm.tokenizer_encode({"text": text[cut:], "images": [image]}))
        llm.forward(ids + list(forced))
        return _ms_since(start)


def main() -> int:
    parser = argparse.ArgumentParser()
    add_model_options(parser, profile_default=PROFILES / "hand_position.json")
    add_image_side_option(parser)
    add_rounds_options(parser, images=10, rounds=3)
    add_receipt_option(parser)
    args = parser.parse_args()
    check_rounds(parser, args)
    out = claim_stdout()
    model = resolve_model(args.model)
    profile = load_profile(args.profile)
    analyzer = Analyzer(model, profile, AnalyzerSettings(image_max_side=args.image_max_side))
    analyzer.load()
    engine = analyzer.engine
    prompt, system = profile.ask(constrained=True)
    answers = [profile.answer_text(v) for v in profile.values]
    forced = engine._choice_tree(tuple(answers)).prefix
    per_kind = max(1, args.images // 5)
    images = [analyzer.prepare(decode_image_bytes(data)) for _, data, _ in scenes(per_kind)][: args.images]
    places = tuple(QuestionPlace)
    times: dict[tuple[QuestionPlace, str], list[float]] = {
        (p, k): [] for p in places for k in ("kept", "fresh", "floor")
    }
    kept_tokens: dict[QuestionPlace, int] = {}
    prompt_tokens: dict[QuestionPlace, int] = {}
    same = total = 0
    worst = 0.0
    load_before = os.getloadavg()[0]

    def ask(place: QuestionPlace, rgb: np.ndarray, kind: str) -> Choice:
        first = place is QuestionPlace.BEFORE_IMAGE
        start = time.perf_counter()
        choice = engine.choose(rgb, prompt, answers, system=system, question_first=first)
        times[(place, kind)].append(_ms_since(start))
        return choice

    for place in places:  # warm-up, not counted: the first keyframe of each place
        ask(place, images[0], "fresh")
        times[(place, "fresh")].clear()
    for round_index in range(args.rounds):
        for i, rgb in enumerate(images):
            order = places if (round_index + i) % 2 == 0 else places[::-1]  # each place goes first half the time
            for place in order:
                engine.forget_prefix()
                fresh = ask(place, rgb, "fresh")  # and the text it keeps for the next two
                text = engine.build_prompt(prompt, system, question_first=place is QuestionPlace.BEFORE_IMAGE)
                if i % 2:  # the floor goes first half the time
                    times[(place, "floor")].append(_floor_ms(engine, rgb, text, forced))
                kept = ask(place, rgb, "kept")
                kept_tokens[place] = engine.kept_tokens
                prompt_tokens[place] = kept.generation.timings.prompt_tokens
                if i % 2 == 0:
                    times[(place, "floor")].append(_floor_ms(engine, rgb, text, forced))
                same += kept.index == fresh.index
                worst = max(worst, abs((kept.score or 0.0) - (fresh.score or 0.0)))
                total += 1
    rows = []
    for place in places:
        kept_s, whole_s, floor_s = (spread(times[(place, kind)]) for kind in ("kept", "fresh", "floor"))
        to_floor = kept_s.median / floor_s.median
        goal = (f"<= {GOAL_FLOOR:.2f}x", to_floor <= GOAL_FLOOR) if place is QuestionPlace.BEFORE_IMAGE else ("", None)
        rows += [
            Row(f"question {place.value.replace('_', ' ')}: text kept", spread_text(kept_s)),
            Row("  prefilled whole every keyframe", spread_text(whole_s)),
            Row("  kept / whole, median", f"{kept_s.median / whole_s.median:.2f}x"),
            Row("  floor: vision + the image's and the rest's prefill", spread_text(floor_s)),
            Row("  kept / floor, median", f"{to_floor:.2f}x", *goal),
            Row("  prompt tokens, kept of them", f"{prompt_tokens[place]}, {kept_tokens[place]}"),
        ]
    before, after = (spread(times[(p, "kept")]).median for p in (QuestionPlace.BEFORE_IMAGE, QuestionPlace.AFTER_IMAGE))
    rows += [
        Row("question before / after the image, both kept, median", f"{before / after:.2f}x"),
        Row("picks equal, kept vs whole", f"{same}/{total}", "all", same == total),
        Row("  largest score difference", f"{worst:.2g}"),
    ]
    side = f"{args.image_max_side} px" if args.image_max_side else "the default size"
    title = f"Kept text: {model.id}, {profile.id}, {len(images)} images x {args.rounds} rounds at {side}, constrained"
    notes = [
        f"load average (1 min) {load_before:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, on this machine"
    ]
    return report(out, title, rows, args.receipt, notes)


if __name__ == "__main__":
    run_benchmark(main)
