"""Constrained vs free decoding: time to a parsed result and validity, same images, one run.

Both analyzers see every image in turn (interleaved, so both see the same machine load). No
goal: the figures say what constrained decoding costs or saves on this model.

    .venv/bin/python -m bench.decoding [--model DIR_OR_ID] [--profile F] [--per-kind 10] [--rounds 3]
"""

from __future__ import annotations

import argparse

from app.core.figures import spread
from app.engine.stdio import claim_stdout
from app.frames.intake import decode_image_bytes
from app.models.catalog import resolve_model
from app.storage.profile_file import load_profile
from app.worker.analyzer import Analyzer, AnalyzerSettings, default_profile_path
from bench._report import Row, add_model_options, add_receipt_option, report, run_benchmark, spread_text
from bench._scenes import scenes

MODES = ("constrained", "free")


def main() -> int:
    parser = argparse.ArgumentParser()
    add_model_options(parser)
    parser.add_argument("--per-kind", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    add_receipt_option(parser)
    args = parser.parse_args()
    out = claim_stdout()
    model = resolve_model(args.model)
    profile = load_profile(args.profile or default_profile_path(model))
    analyzers = {mode: Analyzer(model, profile, AnalyzerSettings(constrained=mode == "constrained")) for mode in MODES}
    for a in analyzers.values():
        a.load()
    images = [(decode_image_bytes(data), expected) for _, data, expected in scenes(args.per_kind)]
    times: dict[str, list[float]] = {m: [] for m in analyzers}
    valid = {m: 0 for m in analyzers}
    right = {m: 0 for m in analyzers}
    for _ in range(args.rounds):
        for image, expected in images:
            for mode, analyzer in analyzers.items():  # interleaved: both see the same machine load
                result = analyzer.analyze(image, "bench")
                times[mode].append(result.timings.total_ms)
                valid[mode] += result.answer.valid
                right[mode] += result.observation == expected
    n = len(images) * args.rounds
    # Each figure for both modes on neighbouring lines, so they read side by side.
    rows = [Row(f"time to a parsed result, {m}", spread_text(spread(times[m]))) for m in MODES]
    rows += [Row(f"valid answers, {m}", f"{valid[m]}/{n} ({100 * valid[m] / n:.0f} %)") for m in MODES]
    rows += [Row(f"right answers, {m}", f"{right[m]}/{n}") for m in MODES]
    ratio = spread(times["free"]).median / spread(times["constrained"]).median
    rows.append(Row("free / constrained, median time", f"{ratio:.2f}x"))
    title = f"Constrained vs free decoding: {model.id}, {len(images)} images x {args.rounds} rounds"
    return report(out, title, rows, args.receipt)


if __name__ == "__main__":
    run_benchmark(main)
