"""The app's pipeline overhead: keyframe handed to the worker -> parsed answer, divided by a bare
`MNN.llm` on the same model, image size and prompt, for free and for constrained decoding.

A (the app): the worker child as the app runs it (ProcessWorkerHost), timed from `submit` to the
Finished event as the host's reader thread delivers it: pickling the full keyframe, the child's
resize, the engine, the strict parser and the way back all count.
B (bare): MNN.llm in this process, created from the same config, given the keyframe already resized
to the size the app feeds (the app's own `prepare`) and the prompt the app builds; timed around
`response()` only. For constrained decoding B generates the same answer freely: its token limit is
the app's answer length plus the stop token, what a trained model generating that answer costs.
A and B alternate image by image (and which goes first), so both see the same machine load.
"""

from __future__ import annotations

import argparse
import queue
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.core.figures import spread
from app.core.results import AnalysisResult
from app.engine.mnn_vlm import write_launch_file
from app.engine.stdio import claim_stdout
from app.frames.intake import DecodedImage, decode_image_bytes
from app.models.catalog import resolve_model
from app.worker.analyzer import Analyzer
from app.worker.messages import Analyze, Event, Finished, JobFailed, LoadFailed, Ready, WorkerSpec
from app.worker.process_host import ProcessWorkerHost
from app.worker.serve import build_analyzer
from bench._bare_mnn import BareMnn
from bench._report import (
    Row,
    add_image_side_option,
    add_model_options,
    add_receipt_option,
    add_rounds_options,
    check_rounds,
    report,
    run_benchmark,
    spread_text,
)
from bench._scenes import scenes

GOAL_RATIO = 1.05  # the goal: the app adds at most 5 % to what MNN itself takes
MODES = ("free", "constrained")


@dataclass(frozen=True)
class Pair:
    """One keyframe through both paths."""

    app_ms: float
    bare_ms: float
    same_answer: bool  # bare MNN's text is the app's answer (whitespace aside)
    same_prompt: bool  # both tokenised the same prompt + image (free only: constrained adds the answers' prefix)

    @property
    def ratio(self) -> float:
        return self.app_ms / self.bare_ms

    @property
    def overhead_ms(self) -> float:
        return self.app_ms - self.bare_ms


class AppPath:
    """The app's worker child; `answer` is timed from submit to the Finished event."""

    def __init__(self, spec: WorkerSpec) -> None:
        # Stamped in the host's reader thread as the event arrives, not when this thread wakes up.
        self._events: queue.Queue[tuple[float, Event]] = queue.Queue()
        self._host = ProcessWorkerHost(spec, lambda event: self._events.put((time.perf_counter(), event)))
        self._jobs = 0

    def start(self) -> Ready:
        self._host.start()
        while True:
            _, event = self._events.get()
            if isinstance(event, Ready):
                return event
            if isinstance(event, LoadFailed):
                raise RuntimeError(f"the worker could not load the model: {event.message}")

    def answer(self, image: DecodedImage) -> tuple[float, AnalysisResult]:
        self._jobs += 1
        job_id = f"bench-{self._jobs}"
        start = time.perf_counter()
        self._host.submit(Analyze(job_id, image, "bench"))
        while True:
            at, event = self._events.get()
            if isinstance(event, Finished) and event.job_id == job_id:
                return (at - start) * 1000.0, event.result
            if isinstance(event, (JobFailed, LoadFailed)):
                raise RuntimeError(f"the worker failed: {event}")

    def stop(self) -> None:
        self._host.stop()


def bench_images(count: int) -> list[DecodedImage]:
    """`count` held-out scenes, every kind in turn."""
    per_kind = -(-count // 5)  # five scene kinds
    return [decode_image_bytes(data) for _, data, _ in scenes(per_kind)][:count]


def measure_mode(
    spec: WorkerSpec, analyzer: Analyzer, bare: BareMnn, images: Sequence[DecodedImage], rounds: int
) -> list[Pair]:
    """Both paths on every image, interleaved, after a warm-up that is not counted."""
    prompt, system = analyzer.profile.ask(spec.constrained)
    text = bare.text(prompt, system, analyzer.folder.use_template)
    parts = [bare.image(analyzer.prepare(image)) for image in images]  # the size the app feeds, by the app's code
    app = AppPath(spec)
    app.start()
    try:
        # Warm-up, and each image's answer: greedy decoding gives the same one every round.
        answers = [app.answer(image)[1].answer.raw for image in images]
        # Free: the app's own token limit. Constrained: the app's answer and a stop token.
        limits = [
            bare.token_count(answer) + 1 if spec.constrained else analyzer.profile.max_new_tokens for answer in answers
        ]
        bare.answer(parts[0], text, limits[0])  # warm-up
        pairs: list[Pair] = []
        for r in range(rounds):
            for i, image in enumerate(images):
                if (r * len(images) + i) % 2:  # alternate which path goes first
                    got = bare.answer(parts[i], text, limits[i])
                    app_ms, result = app.answer(image)
                else:
                    app_ms, result = app.answer(image)
                    got = bare.answer(parts[i], text, limits[i])
                same_answer = got.text.strip() == result.answer.raw.strip()
                pairs.append(Pair(app_ms, got.ms, same_answer, got.prompt_tokens == result.timings.prompt_tokens))
    finally:
        app.stop()
    return pairs


def mode_rows(mode: str, pairs: Sequence[Pair]) -> list[Row]:
    ratio = spread([p.ratio for p in pairs]).median
    n = len(pairs)
    rows = [
        Row(f"{mode}: app / bare MNN.llm", f"{ratio:.2f}x", f"≤ {GOAL_RATIO:.2f}x", ratio <= GOAL_RATIO),
        Row(f"{mode}: overhead per keyframe", spread_text(spread([p.overhead_ms for p in pairs]))),
        Row(f"{mode}: app, submit to Finished", spread_text(spread([p.app_ms for p in pairs]))),
        Row(f"{mode}: bare MNN.llm response()", spread_text(spread([p.bare_ms for p in pairs]))),
        Row(f"{mode}: bare answer = app answer", f"{sum(p.same_answer for p in pairs)} of {n}"),
    ]
    if mode == "free":
        rows.append(Row(f"{mode}: same prompt tokens", f"{sum(p.same_prompt for p in pairs)} of {n}"))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    add_model_options(parser)
    add_image_side_option(parser)
    add_rounds_options(parser)
    add_receipt_option(parser)
    args = parser.parse_args(argv)
    check_rounds(parser, args)
    out = claim_stdout()  # MNN prints on fd 1; the table owns stdout
    base = WorkerSpec(model=args.model, profile=args.profile, image_max_side=args.image_max_side)
    # Never loaded: the app's own resize, prompt and MNN config, in this process.
    analyzer = build_analyzer(base, resolve_model(base.model))
    # The very file the app creates MNN from: its backend and threads reach the vision encoder only this way.
    launch = write_launch_file(analyzer.folder, analyzer.engine.options)
    try:
        bare = BareMnn(launch)
        images = bench_images(args.images)
        rows: list[Row] = []
        for mode in MODES:
            pairs = measure_mode(replace(base, constrained=mode == "constrained"), analyzer, bare, images, args.rounds)
            rows += mode_rows(mode, pairs)
    finally:
        launch.unlink(missing_ok=True)
    height, width = analyzer.prepare(images[0]).shape[:2]
    notes = [
        f"model {analyzer.model.id}, profile {analyzer.profile.id}, {len(images)} images x {args.rounds} rounds, "
        f"fed at {width}x{height}, one warm-up pass not counted",
        "ratio: median of the per-image ratios (each pair ran back to back, so it shares the machine's load)",
        "overhead: app minus bare per image; on a tiny model IPC and pickling dominate a few-ms model call, "
        "so the ratio only means something on a real-size model",
        "constrained: bare MNN generates freely with the app's answer length plus a stop as its token limit",
    ]
    return report(out, "pipeline overhead: the app's worker vs bare MNN.llm", rows, args.receipt, notes)


if __name__ == "__main__":
    run_benchmark(main)
