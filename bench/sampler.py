"""The keyframe sampler's cost per 1080p frame, as the live screen pays it on every frame.

`LivePipeline.offer_frame` does two things per frame before any keyframe reaches the worker:
`frame_stats` (grey copy, 64x64 thumb for the change test, Laplacian sharpness on a small copy)
and `KeyframeSampler.offer` (keeps the window's sharpest frame; when a window closes, compares
its thumb with the last keyframe's). Both are timed together per frame, on 1920x1080 frames of
generated scenes, each frame with its own sensor noise and shake, fed at 30 fps of fake time so a
2 s window closes every 60 frames; the scene changes with each window (so windows end in
keyframes, with the change test run against the last one) and each keyframe is settled as
answered at once, as a fast model would.

    .venv/bin/python -m bench.sampler [--frames 900] [--scenes 6] [--variants 4]
"""

from __future__ import annotations

import argparse
import time

from app.core.figures import spread
from app.core.sampler import Decision, KeyframeSampler, SamplerConfig
from app.engine.stdio import claim_stdout
from app.frames.intake import DecodedImage
from app.frames.metrics import frame_stats
from bench._frames import HD, camera_frames
from bench._report import Row, add_receipt_option, report, run_benchmark, spread_text

FPS = 30
GOAL_MS = 3.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=900, help="frames timed (default 900: 30 s at 30 fps)")
    parser.add_argument("--scenes", type=int, default=6, help="scenes cycled through, one per window")
    parser.add_argument("--variants", type=int, default=4, help="noisy, shaken frames per scene (6 MB each)")
    parser.add_argument("--interval", type=float, default=2.0, help="sampler interval, seconds")
    add_receipt_option(parser)
    args = parser.parse_args()
    if min(args.frames, args.scenes, args.variants) < 1:
        parser.error("--frames, --scenes and --variants must be at least 1")
    out = claim_stdout()
    frames = [DecodedImage(rgb, "camera") for rgb in camera_frames(args.scenes, HD, variants=args.variants)]
    per_window = round(FPS * args.interval)
    sampler: KeyframeSampler[DecodedImage] = KeyframeSampler(SamplerConfig(interval_s=args.interval))
    frame_stats(frames[0].rgb)  # first call pays OpenCV's one-time set-up: not a per-frame cost
    total: list[float] = []
    stats_only: list[float] = []
    keyframes = unchanged = 0
    for i in range(args.frames):
        scene = (i // per_window) % args.scenes
        image = frames[scene * args.variants + i % args.variants]
        t = i / FPS
        started = time.perf_counter()
        stats = frame_stats(image.rgb)
        computed = time.perf_counter()
        selection = sampler.offer(t, stats, image)
        done = time.perf_counter()
        total.append((done - started) * 1000)
        stats_only.append((computed - started) * 1000)
        if selection is not None:
            if selection.decision is Decision.KEYFRAME:
                keyframes += 1
                sampler.settle(selection.t, answered=True)
            else:
                unchanged += 1
    whole = spread(total)
    rows = [
        Row("frames", f"{args.frames} of 1920x1080x3 uint8 ({len(frames)} distinct), {FPS} fps fake clock"),
        Row(
            "sampler per frame (stats + offer)",
            spread_text(whole),
            f"median <= {GOAL_MS:g} ms",
            whole.median <= GOAL_MS,
        ),
        Row("  of which frame_stats", spread_text(spread(stats_only))),
        Row("windows closed", f"{keyframes} keyframes, {unchanged} unchanged (every {args.interval:g} s)"),
    ]
    return report(out, "Keyframe sampler cost per 1080p frame", rows, args.receipt)


if __name__ == "__main__":
    run_benchmark(main)
