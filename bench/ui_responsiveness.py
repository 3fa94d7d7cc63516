"""Does the UI process keep pumping frames while the model works?

A pump thread wants to run every 33 ms (30 fps) and records its real intervals,
first with the worker idle, then while keyframes are analysed back to back by
the child-process host and by the thread host. MNN's forward() holds the GIL;
on the tiny demo model a step is ~1 ms, so `--pace-ms` emulates a real-size
model's step (e.g. 100 ms, the measured decode step of Qwen3-VL-2B on this CPU)
by holding the GIL that long per step in the worker.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time

from app.engine.stdio import claim_stdout
from app.frames.intake import decode_image_bytes
from app.worker.messages import Analyze, Event, Finished, JobFailed, Ready, WorkerSpec
from app.worker.process_host import ProcessWorkerHost
from app.worker.serve import TEST_PACE_ENV
from app.worker.thread_host import ThreadWorkerHost
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


def p95(values: list[float]) -> float:
    s = sorted(values)
    return s[int(0.95 * (len(s) - 1))]


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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default=None)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--pace-ms", type=float, default=100.0, help="GIL held per model step in the worker")
    args = parser.parse_args()
    out = claim_stdout()
    os.environ[TEST_PACE_ENV] = str(args.pace_ms)  # read by the worker (a child inherits it)
    spec = WorkerSpec(model=args.model, constrained=False)
    idle = pump(args.seconds)
    rows = [("idle", idle, 0)]
    for name, cls in (("child process", ProcessWorkerHost), ("thread", ThreadWorkerHost)):
        intervals, analysed = under_load(cls, spec, args.seconds)
        rows.append((name, intervals, analysed))
    out.write(
        f"frame pump every {TICK_S * 1000:.1f} ms for {args.seconds:.0f} s; "
        f"worker step holds the GIL {args.pace_ms:.0f} ms\n"
    )
    base = p95(idle)
    for name, intervals, analysed in rows:
        out.write(
            f"{name:14s} median {statistics.median(intervals):6.1f} ms  p95 {p95(intervals):7.1f} ms  "
            f"p95/idle {p95(intervals) / base:5.2f}x  keyframes analysed {analysed}\n"
        )


if __name__ == "__main__":
    main()
