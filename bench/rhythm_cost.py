"""The compression-rhythm path's cost per 1080p frame: the motion feature, then the estimator's update.

Both run on every decoded frame once the rhythm is wired in, beside the keyframe sampler, so they
must stay far below a frame's time and never compete with the model (goal: <= 2 ms a frame
together). Frames are generated scenes at 1920x1080 with their own sensor noise and shake
(`bench._frames`), a bright block moving at 110 per minute painted over them; 30 fps of fake time,
so the estimator judges its window every 0.25 s as it would live (those frames are the p95).

    .venv/bin/python -m bench.rhythm_cost [--frames 900] [--variants 8]
"""

from __future__ import annotations

import argparse
import math
import time

from app.core.figures import spread
from app.core.rhythm import RhythmEstimator
from app.engine.stdio import claim_stdout
from app.frames.motion import MotionMeter
from bench._frames import HD, camera_frames
from bench._report import Row, add_receipt_option, report, run_benchmark, spread_text

FPS = 30
RATE = 110  # per minute
GOAL_MS = 2.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=900, help="frames timed (default 900: 30 s at 30 fps)")
    parser.add_argument("--variants", type=int, default=8, help="noisy, shaken backgrounds cycled (6 MB each)")
    add_receipt_option(parser)
    args = parser.parse_args()
    if min(args.frames, args.variants) < 1:
        parser.error("--frames and --variants must be at least 1")
    out = claim_stdout()
    backgrounds = camera_frames(1, HD, variants=args.variants)
    meter, estimator = MotionMeter(), RhythmEstimator()
    meter.measure(backgrounds[0])  # first call pays OpenCV's one-time set-up: not a per-frame cost
    feature_ms: list[float] = []
    update_ms: list[float] = []
    total_ms: list[float] = []
    for i in range(args.frames):
        t = i / FPS
        frame = backgrounds[i % args.variants].copy()
        top = 400 + round(60 * (1 - math.cos(2 * math.pi * RATE / 60 * t)))
        frame[top : top + 200, 860:1060] = 235  # the moving hands, generated outside the timing
        started = time.perf_counter()
        feature = meter.measure(frame)
        measured = time.perf_counter()
        estimator.follow(t, feature)
        done = time.perf_counter()
        feature_ms.append((measured - started) * 1000)
        update_ms.append((done - measured) * 1000)
        total_ms.append((done - started) * 1000)
    whole = spread(total_ms)
    result = estimator.snapshot()
    rate = "—" if result.rate_per_min is None else f"{result.rate_per_min:.1f}/min"
    rows = [
        Row("frames", f"{args.frames} of 1920x1080x3 uint8 ({args.variants} backgrounds), {FPS} fps fake clock"),
        Row("motion + rhythm per frame", spread_text(whole), f"median <= {GOAL_MS:g} ms", whole.median <= GOAL_MS),
        Row("  of which motion feature", spread_text(spread(feature_ms))),
        Row("  of which estimator update", spread_text(spread(update_ms), digits=3)),
        Row("rate read (a check the work was real)", f"{rate} of {RATE}; {result.count} counted"),
    ]
    return report(out, "Compression rhythm cost per 1080p frame", rows, args.receipt)


if __name__ == "__main__":
    run_benchmark(main)
