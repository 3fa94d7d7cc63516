"""Constrained decoding with the profile's own short question vs with its full free-generation
prompt (system prompt and format instruction): time to a parsed answer, prompt tokens, and
whether the answers agree. Same images, interleaved, one process, so both see the same load.

The short question is kept only if it is faster and the answers agree.

    .venv/bin/python -m bench.prompts [--model DIR_OR_ID] [--profile F] [--image-max-side N] [--per-kind 2] [--rounds 2]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from app.core.figures import spread
from app.engine.stdio import claim_stdout
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
    report,
    run_benchmark,
    spread_text,
)
from bench._scenes import scenes


def main() -> int:
    parser = argparse.ArgumentParser()
    add_model_options(parser, profile_default=PROFILES / "hand_position_instruct.json")
    add_image_side_option(parser)
    parser.add_argument("--per-kind", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    add_receipt_option(parser)
    args = parser.parse_args()
    out = claim_stdout()
    model = resolve_model(args.model)
    profile = load_profile(args.profile)
    if profile.constrained_prompt is None:
        parser.error(f"{args.profile} gives no constrained prompt: nothing to compare")
    settings = AnalyzerSettings(image_max_side=args.image_max_side)
    analyzers = {
        "short question": Analyzer(model, profile, settings),
        "full prompt": Analyzer(model, replace(profile, constrained_prompt=None, constrained_system=None), settings),
    }
    for a in analyzers.values():
        a.load()
        a.analyze(decode_image_bytes(scenes(1)[0][1]), "warm-up")  # not counted
    images = [(decode_image_bytes(data), expected) for _, data, expected in scenes(args.per_kind)]
    times: dict[str, list[float]] = {name: [] for name in analyzers}
    tokens: dict[str, int] = {}
    right = dict.fromkeys(analyzers, 0)
    agree = 0
    for round_index in range(args.rounds):
        for i, (image, expected) in enumerate(images):
            order = list(analyzers.items())
            if (round_index + i) % 2:
                order.reverse()  # each goes first half the time
            answers = {}
            for name, analyzer in order:
                result = analyzer.analyze(image, "bench")
                times[name].append(result.timings.total_ms)
                tokens[name] = result.timings.prompt_tokens
                answers[name] = result.observation
                right[name] += result.observation == expected
            agree += answers["short question"] == answers["full prompt"]
    n = len(images) * args.rounds
    short, full = spread(times["short question"]), spread(times["full prompt"])
    ratio = short.median / full.median
    rows = [
        Row("constrained, short question", spread_text(short)),
        Row("constrained, full prompt", spread_text(full)),
        Row("short / full, median time", f"{ratio:.2f}x", "< 1", ratio < 1),
        Row("prompt tokens, short / full", f"{tokens['short question']} / {tokens['full prompt']}"),
        Row("same answer", f"{agree} of {n}", f"{n} of {n}", agree == n),
        Row("right answers, short / full", f"{right['short question']} / {right['full prompt']} of {n}"),
    ]
    side = f"{args.image_max_side} px" if args.image_max_side else "the default size"
    title = f"Constrained prompt: {model.id}, {profile.id}, {len(images)} images x {args.rounds} rounds at {side}"
    return report(out, title, rows, args.receipt)


if __name__ == "__main__":
    run_benchmark(main)
