"""Does the UI process keep pumping frames while the model works?

A pump thread wants to run every 33 ms (30 fps) and records its real intervals,
first with the worker idle, then while keyframes are analysed back to back by
the child-process host and by the thread host. MNN's forward() holds the GIL;
on the tiny demo model a step is ~1 ms, so `--pace-ms` emulates a real-size
model's step (e.g. 100 ms, the measured decode step of Qwen3-VL-2B on this CPU)
by holding the GIL that long per step in the worker. Goal: the p95 interval with a busy
worker is at most 1.2x the idle one.

    .venv/bin/python -m bench.ui_responsiveness [--seconds 10] [--pace-ms 100] [--receipt F]
"""

from __future__ import annotations

import argparse
import os
import threading
import time

from app.core.figures import spread
from app.engine.stdio import claim_stdout
from app.frames.intake import decode_image_bytes
from app.worker.messages import Analyze, Event, Finished, JobFailed, Ready, WorkerSpec
from app.worker.process_host import ProcessWorkerHost
from app.worker.serve import TEST_PACE_ENV
from app.worker.thread_host import ThreadWorkerHost
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

TICK_S = 1 / 30


def pump(seconds: float) -> list[float]:
    intervals: list[float] = []
    last = time.perf_counter()
    end = last + seconds
    while last < end:
        time.sleep(TICK_S)
        now = time.perf_counter()
        intervals.append((now - last) * 1000.0)
        last = now
    return intervals


def under_load(host_cls: type, spec: WorkerSpec, seconds: float) -> tuple[list[float], int]:
    done = threading.Event()
    ready = threading.Event()
    finished = [0]

    def on_event(event: Event) -> None:
        if isinstance(event, Ready):
            ready.set()
        if isinstance(event, (Finished, JobFailed)):
            finished[0] += 1
            done.set()

    host = host_cls(spec, on_event)
    host.start()
    ready.wait(120)
    images = [decode_image_bytes(data) for _, data, _ in scenes(1)]
    stop = threading.Event()

    def feed() -> None:
        i = 0
        while not stop.is_set():
            done.clear()
            host.submit(Analyze(f"kf-{i}", images[i % len(images)], "bench"))
            done.wait(60)
            i += 1

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    intervals = pump(seconds)
    stop.set()
    feeder.join(60)
    host.stop()
    return intervals, finished[0]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--pace-ms", type=float, default=100.0, help="GIL held per model step in the worker")
    add_receipt_option(parser)
    args = parser.parse_args()
    out = claim_stdout()
    os.environ[TEST_PACE_ENV] = str(args.pace_ms)  # read by the worker (a child inherits it)
    spec = WorkerSpec(model=args.model, constrained=False)
    idle = spread(pump(args.seconds))
    rows = [Row("frame interval, idle", spread_text(idle, digits=1))]
    for name, cls in (("child process", ProcessWorkerHost), ("thread", ThreadWorkerHost)):
        rows += frame_interval_rows(idle, name, *under_load(cls, spec, args.seconds))
    title = (
        f"UI responsiveness: frame pump every {TICK_S * 1000:.1f} ms for {args.seconds:g} s, "
        f"worker step holds the GIL {args.pace_ms:g} ms"
    )
    return report(out, title, rows, args.receipt, [THREAD_HOST_NOTE])


if __name__ == "__main__":
    run_benchmark(main)
