"""The live screen's own frame path: is it unaffected by a busy worker?

A 30 fps video plays at real speed through the practice screen's path (the
VideoFileSource thread -> preview JPEG -> LivePipeline.offer_frame) while the
worker analyses keyframes back to back. The figure is the interval between
frames reaching the pipeline, compared with the same path when the model is
fast (idle worker), for the child-process host and the thread host. `--pace-ms`
holds the GIL per model phase and token in the worker, as a real-size model's
forward() does (one keyframe then takes longer than the 2 s interval).

    .venv/bin/python -m bench.live_screen [--seconds 12] [--pace-ms 400] [--receipt FILE]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time
from pathlib import Path

import cv2
import numpy as np

from app.core.figures import spread
from app.core.sampler import SamplerConfig
from app.engine.stdio import claim_stdout
from app.frames.intake import DecodedImage
from app.frames.sources import SourceEnded, VideoFileSource
from app.pipeline.live import LivePipeline
from app.ui.practice.controller import PipelineSink, jpeg
from app.worker.messages import WorkerSpec
from app.worker.serve import TEST_PACE_ENV
from bench._frames import write_mjpg
from bench._report import (
    THREAD_HOST_NOTE,
    Row,
    add_receipt_option,
    frame_interval_rows,
    report,
    run_benchmark,
    spread_text,
)
from bench._scenes import scenes

FPS = 30


def write_video(path: Path, seconds: float) -> None:
    frames = [cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR) for _, data, _ in scenes(1)]
    # A new scene every 2 s: every keyframe is analysed.
    write_mjpg(path, [frames[(i // (2 * FPS)) % len(frames)] for i in range(int(seconds * FPS))], FPS)


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


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--pace-ms", type=float, default=400.0)
    add_receipt_option(parser)
    args = parser.parse_args()
    out = claim_stdout()
    with tempfile.TemporaryDirectory() as folder:
        video = Path(folder) / "live.avi"
        write_video(video, args.seconds)
        idle_intervals, idle_analysed = run(video, "process", 0.0)
        busy = [
            (name, *run(video, host, args.pace_ms))
            for name, host in (("child process", "process"), ("thread", "thread"))
        ]
    idle = spread(idle_intervals)
    rows = [
        Row("frame interval, idle (fast model)", spread_text(idle, digits=1)),
        Row("  keyframes answered", str(idle_analysed)),
    ]
    for name, intervals, analysed in busy:
        rows += frame_interval_rows(idle, name, intervals, analysed)
    title = (
        f"Live screen: a {FPS} fps video for {args.seconds:g} s through the practice screen's frame path; "
        f"the busy worker holds the GIL {args.pace_ms:g} ms per phase and token"
    )
    return report(out, title, rows, args.receipt, [THREAD_HOST_NOTE])


if __name__ == "__main__":
    run_benchmark(main)
