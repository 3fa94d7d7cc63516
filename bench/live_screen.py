"""The live screen's own frame path: is it unaffected by a busy worker?

A 30 fps video plays at real speed through the practice screen's path (the
VideoFileSource thread -> preview JPEG -> LivePipeline.offer_frame) while the
worker analyses keyframes back to back. The figure is the interval between
frames reaching the pipeline, compared with the same path when the model is
fast (idle worker), for the child-process host and the thread host. `--pace-ms`
holds the GIL per model phase and token in the worker, as a real-size model's
forward() does (one keyframe then takes longer than the 2 s interval).

    .venv/bin/python -m bench.live_screen [--seconds 12] [--pace-ms 400]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

import cv2
import numpy as np

from app.core.sampler import SamplerConfig
from app.engine.stdio import claim_stdout
from app.frames.intake import DecodedImage
from app.frames.sources import SourceEnded, VideoFileSource
from app.pipeline.live import LivePipeline
from app.ui.practice_controller import PipelineSink, jpeg
from app.worker.messages import WorkerSpec
from app.worker.serve import TEST_PACE_ENV
from bench._scenes import scenes

FPS = 30
GOAL = 1.2  # p95 frame interval with a busy worker at most this times the idle one


def write_video(path: Path, seconds: float) -> None:
    frames = [cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR) for _, data, _ in scenes(1)]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, frames[0].shape[1::-1])
    for i in range(int(seconds * FPS)):
        writer.write(frames[(i // (2 * FPS)) % len(frames)])  # a new scene every 2 s: every keyframe is analysed
    writer.release()


def run(video: Path, host: str, pace_ms: float) -> tuple[list[float], int]:
    os.environ[TEST_PACE_ENV] = str(pace_ms)  # read by the worker (a child inherits it)
    pipeline = LivePipeline(WorkerSpec(), lambda _: None, host_kind=host)
    pipeline.start()
    pipeline.wait_ready(120)
    pipeline.begin_session(None, SamplerConfig(interval_s=2))
    arrivals: list[float] = []

    def frame(t: float, image: DecodedImage) -> None:
        arrivals.append(time.perf_counter())
        jpeg(image.rgb)  # the preview the screen encodes
        pipeline.offer_frame(t, image)

    sink = PipelineSink(pipeline, frame)  # the practice screen's own sink, timed
    ended = threading.Event()

    def on_end(_: SourceEnded) -> None:
        ended.set()

    source = VideoFileSource(video)
    source.start(sink, on_end)
    ended.wait(600)
    analysed = len(pipeline.state.timeline)
    pipeline.stop()
    return [(b - a) * 1000.0 for a, b in zip(arrivals, arrivals[1:], strict=False)], analysed


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[int(0.95 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--pace-ms", type=float, default=400.0)
    args = parser.parse_args()
    out = claim_stdout()
    with tempfile.TemporaryDirectory() as folder:
        video = Path(folder) / "live.avi"
        write_video(video, args.seconds)
        rows = [("idle (fast model)", *run(video, "process", 0.0))]
        rows.append(("busy, child process", *run(video, "process", args.pace_ms)))
        rows.append(("busy, thread", *run(video, "thread", args.pace_ms)))
    base = p95(rows[0][1])
    out.write(
        f"{FPS} fps video for {args.seconds:.0f} s through the live screen's frame path; "
        f"busy worker holds the GIL {args.pace_ms:.0f} ms per phase/token; goal p95 <= {GOAL}x idle\n"
    )
    for name, intervals, analysed in rows:
        ratio = p95(intervals) / base
        verdict = "" if name.startswith("idle") else ("  meets goal" if ratio <= GOAL else "  MISSES goal")
        out.write(
            f"{name:20s} median {statistics.median(intervals):6.1f} ms  p95 {p95(intervals):7.1f} ms  "
            f"p95/idle {ratio:5.2f}x  keyframes answered {analysed}{verdict}\n"
        )


if __name__ == "__main__":
    main()
