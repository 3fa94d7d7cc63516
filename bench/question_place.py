"""Where the question goes: after the image (every shipped profile; what the demo model was trained
on) or before it (all text before the image is kept in the cache across keyframes, so the question
is prefilled once). Both through the app's own path (`Analyzer.analyze`: constrained decoding, the
strict parser), the same profile but for `question_place`, on held-out scenes of a seed no training,
test or receipt uses, interleaved image by image: right answers per kind, strict-valid answers, how
often the two pick the same, the model's score for its pick, time per keyframe. A control asks an
unrelated question after the image: a model that answers it as it answers its own question does not
read the question, and then where it goes cannot matter to it.

    .venv/bin/python -m bench.question_place [--model DIR_OR_ID] [--profile F] [--per-kind 50] [--seed 20261215]

The demo model has only ever seen its question after the image, so "before" measures an untrained
layout there: it says which placement a model answers better, not which one is better in general.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from app.core.figures import spread
from app.core.parser import ParseReason
from app.core.profile.task import QuestionPlace
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

SEED = 20261215  # held out: training uses 777/1234 (+1), receipts 20261130/20261201, tests and benches others
CONTROL = "What colour is the sky today?"


def main() -> int:
    parser = argparse.ArgumentParser()
    add_model_options(parser, profile_default=PROFILES / "hand_position.json")
    parser.add_argument("--per-kind", type=int, default=50, help="scenes per kind (default 50: 250 in all)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"scene seed (default {SEED})")
    add_image_side_option(parser)
    add_receipt_option(parser)
    args = parser.parse_args()
    if args.per_kind < 1:
        parser.error("--per-kind must be at least 1")
    out = claim_stdout()
    model = resolve_model(args.model)
    profile = load_profile(args.profile)
    settings = AnalyzerSettings(image_max_side=args.image_max_side)
    analyzers = {
        place.value: Analyzer(model, replace(profile, question_place=place), settings) for place in QuestionPlace
    }
    analyzers["control"] = Analyzer(model, replace(profile, prompt=CONTROL, constrained_prompt=None), settings)
    images = [(kind, decode_image_bytes(data), expected) for kind, data, expected in scenes(args.per_kind, args.seed)]
    for analyzer in analyzers.values():
        analyzer.load()
        analyzer.analyze(images[0][1], "warm-up")  # not counted: it prefills the text it then keeps
    kinds = list(dict.fromkeys(kind for kind, _, _ in images))
    right = {place: dict.fromkeys(kinds, 0) for place in analyzers}
    valid = dict.fromkeys(analyzers, 0)
    scores: dict[str, list[float]] = {place: [] for place in analyzers}
    times: dict[str, list[float]] = {place: [] for place in analyzers}
    same = 0
    for i, (kind, image, expected) in enumerate(images):
        order = list(analyzers.items())
        if i % 2:
            order.reverse()  # each goes first half the time
        picks = {}
        for place, analyzer in order:
            result = analyzer.analyze(image, kind)
            picks[place] = result.observation
            right[place][kind] += result.observation == expected
            valid[place] += result.answer.reason is ParseReason.OK
            scores[place].append(result.model_score or 0.0)
            times[place].append(result.timings.total_ms)
        same += picks[QuestionPlace.AFTER_IMAGE.value] == picks[QuestionPlace.BEFORE_IMAGE.value]
    n, per_kind = len(images), args.per_kind
    rows = []
    names = {"control": f"control, {CONTROL!r} after the image"}
    for place in analyzers:
        total = sum(right[place].values())
        by_kind = ", ".join(f"{kind} {right[place][kind]}/{per_kind}" for kind in kinds)
        name = names.get(place, f"question {place.replace('_', ' ')}")
        rows += [
            Row(f"{name}: right", f"{total}/{n} ({100 * total / n:.1f} %)"),
            Row("  per kind", by_kind),
            Row("  strict-valid", f"{valid[place]}/{n}"),
            Row("  score of the pick", spread_text(spread(scores[place]), unit="", digits=4)),
            Row("  keyframe to parsed answer", spread_text(spread(times[place]))),
            Row("  prompt tokens kept across keyframes", str(analyzers[place].engine.kept_tokens)),
        ]
    rows.append(Row("same pick, after vs before", f"{same}/{n}"))
    side = analyzers["control"].prepare(images[0][1]).shape[0]
    title = (
        f"Question place: {model.id}, {profile.id}, {n} held-out scenes (seed {args.seed}), constrained, {side}² images"
    )
    notes = ("a model trained with the question after the image may simply not have learned the other layout",)
    return report(out, title, rows, args.receipt, notes)


if __name__ == "__main__":
    run_benchmark(main)
