"""Constrained vs free decoding: time to a parsed result and validity, same images, one run."""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from app.analyzer import Analyzer, AnalyzerSettings, default_profile_path
from app.engine.stdio import claim_stdout
from app.frames.intake import decode_image_bytes
from app.models.catalog import resolve_model
from app.profile_file import load_profile
from bench._scenes import scenes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None)
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument("--per-kind", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    out = claim_stdout()
    model = resolve_model(args.model)
    profile = load_profile(args.profile or default_profile_path(model))
    analyzers = {
        mode: Analyzer(model, profile, AnalyzerSettings(constrained=mode == "constrained"))
        for mode in ("constrained", "free")
    }
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
    out.write(f"model {model.id}, {len(images)} images x {args.rounds} rounds\n")
    for mode in analyzers:
        t = sorted(times[mode])
        out.write(
            f"{mode:12s} median {statistics.median(t):7.2f} ms  p95 {t[int(0.95 * (len(t) - 1))]:7.2f} ms  "
            f"valid {valid[mode]}/{n}  right {right[mode]}/{n}\n"
        )
    ratio = statistics.median(times["free"]) / statistics.median(times["constrained"])
    out.write(f"free / constrained median time to a parsed result: {ratio:.2f}x\n")


if __name__ == "__main__":
    sys.exit(main())
