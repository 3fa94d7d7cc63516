"""Does memory stay flat over a long practice session?

Keyframes go through the live screen's own objects: frames -> sampler -> worker child -> parsed
event -> session state and the session log on disk (LivePipeline with the child-process host and a
SessionLog, begun as the practice screen begins a session). Frame times come from a fake clock, as
the integration tests drive the pipeline, so the 2 s sampler windows pass as fast as the model
answers: each window gets a few camera-sized frames and its keyframe is answered before the next
window's frames arrive (a model that keeps up). RSS of this process (the UI side, which runs the
pipeline) and of the worker child is read after each of the first 20 answers after the warm-up
and of the last 20; growth is between the lowest reading of each (see SPAN).

The session keeps every answer in memory by design (the timeline the screen shows), so part of
the UI side's growth is the session itself. `--trace N` prints the N largest tracemalloc
differences between the two points; tracemalloc's own bookkeeping then inflates the RSS figures,
so read those from a run without it. Its largest line is usually multiprocessing/reduction.py:
the command queue's feeder thread keeps the last keyframe's pickled copy until the next one is
sent (one frame's worth, held from the start too, where it was not traced yet: not growth).

    .venv/bin/python -m bench.memory [--keyframes 1000] [--warmup 100] [--model DIR_OR_ID] [--trace 15]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.commands.machine import memory_kib
from app.core.sampler import SamplerConfig
from app.engine.stdio import claim_stdout
from app.frames.intake import DecodedImage
from app.pipeline.live import LivePipeline, PipelineUpdate
from app.session.store import SessionLog
from app.worker.messages import WorkerSpec
from bench._frames import camera_frames
from bench._report import Row, add_receipt_option, report, run_benchmark

INTERVAL_S = 2.0  # the sampler's shortest interval: the most keyframes per frame fed
FRAMES_PER_WINDOW = 4
FRAME_SIZE = (1280, 720)  # a common camera picture
GOAL_MB = 2.0
# RSS is read after each of this many answers at each end and the lowest reading counts: the
# worker's allocator keeps or returns the last frame's few MB from one answer to the next, so a
# single reading swings by that much; a leak raises the floor.
SPAN = 20


@dataclass
class Screen:
    """Stands in for the live screen: keeps the newest update, which the view re-renders from."""

    updates: int = 0
    latest: PipelineUpdate | None = None

    def __call__(self, update: PipelineUpdate) -> None:
        self.updates += 1
        self.latest = update


@dataclass(frozen=True)
class Reading:
    ui_kib: int
    worker_kib: int
    worker_peak_kib: int
    worker_pid: int | None


def rss(pid: int | None) -> tuple[int, int]:
    """(resident, peak) KiB; the figures come from Linux's /proc."""
    memory = memory_kib(pid)
    if memory is None:
        raise SystemExit(f"no /proc/{pid}/status: this benchmark reads RSS the Linux way")
    return memory["rss"], memory["peak"]


def read(pipeline: LivePipeline) -> Reading:
    gc.collect()  # what is left is held, not garbage waiting for a collection
    worker, peak = rss(pipeline.worker_pid)
    return Reading(rss(os.getpid())[0], worker, peak, pipeline.worker_pid)


def feed(pipeline: LivePipeline, frames: list[np.ndarray], window: int, analysed: int) -> int:
    """Feeds whole windows from `window` on until `analysed` keyframes have answers; returns the next window."""
    while len(pipeline.state.timeline) < analysed:
        if pipeline.failure is not None:
            raise RuntimeError(f"the worker gave up: {pipeline.failure}")
        for j in range(FRAMES_PER_WINDOW):
            t = window * INTERVAL_S + j * INTERVAL_S / FRAMES_PER_WINDOW
            pipeline.offer_frame(t, DecodedImage(frames[(window * FRAMES_PER_WINDOW + j) % len(frames)], "camera"))
            if pipeline.busy and not pipeline.wait_idle(120):
                raise RuntimeError(f"no answer within 120 s: {pipeline.failure or 'the worker hangs'}")
        window += 1
    return window


def read_span(pipeline: LivePipeline, frames: list[np.ndarray], window: int, answers: int) -> tuple[int, list[Reading]]:
    """One reading after each of the next `answers` answers; returns the next window and the readings."""
    readings = []
    for _ in range(answers):
        window = feed(pipeline, frames, window, len(pipeline.state.timeline) + 1)
        readings.append(read(pipeline))
    return window, readings


def mib(kib: int) -> str:
    return f"{kib / 1024:.1f}"


def growth_row(name: str, before: list[int], after: list[int]) -> Row:
    mb = (min(after) - min(before)) * 1024 / 1e6
    figure = (
        f"{mb:+.2f} MB (floor {mib(min(before))} -> {mib(min(after))} MiB; "
        f"readings {mib(min(before))}–{mib(max(before))}, then {mib(min(after))}–{mib(max(after))})"
    )
    return Row(name, figure, f"<= {GOAL_MB:g} MB", mb <= GOAL_MB)


def traced_growth(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, top: int) -> list[str]:
    keep = [tracemalloc.Filter(False, tracemalloc.__file__)]
    stats = after.filter_traces(keep).compare_to(before.filter_traces(keep), "lineno")
    total = sum(s.size_diff for s in stats)
    lines = [f"tracemalloc, warm-up -> end: {total / 1024:+.1f} KiB in Python objects; largest:"]
    for s in stats[:top]:
        frame = s.traceback[0]
        lines.append(f"  {s.size_diff / 1024:+8.1f} KiB {s.count_diff:+6d} blocks  {frame.filename}:{frame.lineno}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model folder or catalog id (default: the demo model)")
    parser.add_argument("--keyframes", type=int, default=1000, help="keyframes to answer in all (default 1000)")
    parser.add_argument("--warmup", type=int, default=100, help="of which answered before the first reading")
    parser.add_argument("--trace", type=int, default=0, metavar="N", help="print the N largest tracemalloc growths")
    add_receipt_option(parser)
    args = parser.parse_args()
    if not 0 < args.warmup <= args.keyframes - 2:
        parser.error("--warmup must be at least 1 and leave at least 2 keyframes to measure")
    span = min(SPAN, (args.keyframes - args.warmup) // 2)
    out = claim_stdout()
    frames = camera_frames(10, FRAME_SIZE)
    screen = Screen()
    pipeline = LivePipeline(WorkerSpec(model=args.model), screen, host_kind="process")
    pipeline.start()
    with tempfile.TemporaryDirectory() as folder:
        log_path = Path(folder) / "session.jsonl"
        try:
            if not pipeline.wait_ready(180):
                print(f"error: the model could not be loaded: {pipeline.failure}", file=sys.stderr)
                return 2
            with SessionLog(log_path) as log:
                pipeline.begin_session(log, SamplerConfig(interval_s=INTERVAL_S))
                window = feed(pipeline, frames, 0, args.warmup)
                if args.trace:
                    tracemalloc.start()
                snapshot = tracemalloc.take_snapshot() if args.trace else None
                started = time.perf_counter()
                window, start = read_span(pipeline, frames, window, span)
                window = feed(pipeline, frames, window, args.keyframes - span)
                _, end = read_span(pipeline, frames, window, span)
                seconds = time.perf_counter() - started
                traced = traced_growth(snapshot, tracemalloc.take_snapshot(), args.trace) if snapshot else []
            state = pipeline.state
            logged = len(log_path.read_bytes().splitlines())
        finally:
            pipeline.stop()
    measured = args.keyframes - args.warmup
    ui_start, ui_end = [r.ui_kib for r in start], [r.ui_kib for r in end]
    rows = [
        Row("keyframes analysed", f"{len(state.timeline)} ({args.warmup} warm-up, then {measured} measured)"),
        Row(
            "session events",
            f"{logged} in the log ({len(state.timeline)} answers, {state.skipped} skipped, {state.failed} failed)",
        ),
        Row("time for the measured keyframes", f"{seconds:.1f} s ({seconds / measured * 1000:.1f} ms each)"),
        growth_row("UI process RSS growth after warm-up", ui_start, ui_end),
        # The timeline keeps every answer by design: growth that is linear in answers is the session.
        Row("  per measured answer", f"{(min(ui_end) - min(ui_start)) * 1024 / measured / 1000:+.2f} KB"),
        growth_row("worker child RSS growth after warm-up", [r.worker_kib for r in start], [r.worker_kib for r in end]),
        Row("worker child peak RSS", f"{mib(end[-1].worker_peak_kib)} MiB"),
    ]
    notes = [
        f"{FRAME_SIZE[0]}x{FRAME_SIZE[1]} frames, {FRAMES_PER_WINDOW} per {INTERVAL_S:g} s window on a fake clock",
        f"RSS read after each of the first and the last {span} measured answers; growth is between the lowest of each",
        f"pipeline updates delivered to the screen's stand-in: {screen.updates}",
    ]
    if start[0].worker_pid != end[-1].worker_pid:
        notes.append(
            f"the worker child was replaced during the run (pid {start[0].worker_pid} -> {end[-1].worker_pid})"
        )
    if args.trace:
        notes.append("tracemalloc was on from the warm-up: its bookkeeping is part of the UI process's RSS growth")
    notes += traced
    model = pipeline.model.model_id if pipeline.model is not None else "?"
    title = f"Memory over {args.keyframes} keyframes through the live pipeline ({model})"
    return report(out, title, rows, args.receipt, notes)


if __name__ == "__main__":
    run_benchmark(main)
