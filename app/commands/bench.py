"""`bench`: a receipt for any model: load, time to a parsed answer, phases, validity, memory.

The model runs where the app runs it (the worker child, `--worker thread` for the phones' path),
on the given images or the bundled examples, one warm-up run first (reported, not counted).
Figures are medians with min–max and n, each beside its goal; `--receipt FILE` writes them as
JSON with the machine they were measured on.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from app.commands.common import EXIT_FAILED, EXIT_OK, EXIT_SETUP, add_model_options, worker_spec
from app.commands.machine import cpu_name, memory_kib, package_version

if TYPE_CHECKING:
    from app.commands.common import Subparsers
    from app.core.results import AnalysisResult

# The goal on a 2-core CPU at 224 px: keyframe to parsed answer (the demo model is far below it).
GOAL_ANSWER_S = 2.5
GOAL_SIDE = 224


def add_parser(sub: Subparsers) -> None:
    parser = sub.add_parser("bench", help="measure a model where the app runs it and print a receipt")
    add_model_options(parser)
    parser.add_argument("--runs", type=int, default=10, help="measured runs after one warm-up (default 10)")
    parser.add_argument(
        "--image", action="append", type=Path, default=None, help="an image to use (repeatable; default: examples)"
    )
    parser.add_argument("--worker", choices=("process", "thread"), default="process", help="where the model runs")
    parser.add_argument("--receipt", type=Path, default=None, help="also write the receipt as JSON to this file")
    parser.add_argument("--json", action="store_true", help="print the receipt as JSON instead of a table")


def _images(args: argparse.Namespace) -> list[Path]:
    from app.storage.paths import EXAMPLES

    return list(args.image) if args.image else sorted(EXAMPLES.glob("*.jpg"))


def _progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        filled = round(24 * done / total)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (24 - filled)}] {done}/{total}")
        if done == total:
            sys.stderr.write("\n")
    else:
        sys.stderr.write(f"run {done}/{total}\n")
    sys.stderr.flush()


def run(args: argparse.Namespace, out: TextIO) -> int:
    from app.frames.intake import ImageRejected, read_image_file
    from app.storage.profile_file import load_checklist
    from app.worker.blocking import BlockingWorker, WorkerUnavailable

    if args.runs < 1:
        print("error: --runs must be at least 1", file=sys.stderr)
        return EXIT_FAILED
    paths = _images(args)
    try:
        images = [(path.name, read_image_file(path)) for path in paths]
    except ImageRejected as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if not images:
        print("error: no image to measure with", file=sys.stderr)
        return EXIT_FAILED
    checklist = load_checklist(args.profile) if args.profile is not None else None  # checked before the model
    if checklist is not None and not checklist.is_single:
        from app.commands import bench_checklist

        try:
            figures = bench_checklist.measure(args, checklist, images, _progress)
        except WorkerUnavailable as exc:
            print(f"error: the model could not be loaded: {exc}", file=sys.stderr)
            return EXIT_SETUP
        written = _deliver(args, out, figures, bench_checklist.table(figures))
        return EXIT_OK if written and figures["rounds"] and not figures["failures"] else EXIT_FAILED
    started = time.perf_counter()
    results: list[AnalysisResult] = []
    walls: list[float] = []  # keyframe handed to the worker -> parsed answer back, in this process
    failures: list[str] = []
    with BlockingWorker(worker_spec(args), host_kind=args.worker) as worker:
        try:
            ready = worker.start()
        except WorkerUnavailable as exc:
            print(f"error: the model could not be loaded: {exc}", file=sys.stderr)
            return EXIT_SETUP
        load_s = time.perf_counter() - started
        after_load = memory_kib(worker.pid)
        for i in range(args.runs + 1):  # run 0 warms up caches and is not counted
            name, image = images[i % len(images)]
            handed = time.perf_counter()
            try:
                outcome = worker.analyze(image, name)
            except WorkerUnavailable as exc:
                print(f"error: {exc}", file=sys.stderr)
                return EXIT_SETUP
            if i == 0:
                continue
            if outcome.finished is not None:
                results.append(outcome.finished.answer)
                walls.append((time.perf_counter() - handed) * 1000)
            else:
                assert outcome.failed is not None
                failures.append(f"{name}: {outcome.failed.message}")
            _progress(i, args.runs)
        at_end = memory_kib(worker.pid)
    receipt = _receipt(args, ready, load_s, results, walls, failures, after_load, at_end, images)
    written = _deliver(args, out, receipt, _table(receipt))
    return EXIT_OK if written and results and not failures else EXIT_FAILED


def _deliver(args: argparse.Namespace, out: TextIO, receipt: dict[str, Any], table: str) -> bool:
    """Prints the receipt (a table, or JSON) and writes it to --receipt; False if that file cannot be written."""
    out.write(json.dumps(receipt, indent=2, ensure_ascii=False) + "\n" if args.json else table)
    if args.receipt is not None:
        try:  # after the figures are printed: a receipt file that cannot be written does not lose them
            args.receipt.write_text(json.dumps(receipt, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot write the receipt {args.receipt}: {exc.strerror or exc}", file=sys.stderr)
            return False
    return True


def _receipt(
    args: argparse.Namespace,
    ready: Any,
    load_s: float,
    results: list[AnalysisResult],
    walls: list[float],
    failures: list[str],
    after_load: dict[str, int] | None,
    at_end: dict[str, int] | None,
    images: list[tuple[str, Any]],
) -> dict[str, Any]:
    from app.core.figures import spread

    def ms(values: list[float]) -> dict[str, float | int] | None:
        return spread(values).to_dict() if values else None

    per_token = [
        r.timings.decode_ms / (r.timings.generated_tokens - 1) for r in results if r.timings.generated_tokens > 1
    ]
    return {
        "model": f"{ready.model_id}@{ready.model_revision}",
        "backend": ready.backend,
        "backend_note": ready.backend_note,
        "threads": ready.threads,  # what MNN was given: OMP_NUM_THREADS may cap the asked number
        "decoding": "free" if args.free else "constrained",
        "image_max_side": args.image_max_side,
        "images": sorted({f"{name} ({img.width}x{img.height})" for name, img in images}),
        "worker": args.worker,
        "runs": len(results) + len(failures),
        "warm_up_runs": 1,
        "load_s": round(load_s, 2),
        "model_load_ms": round(ready.load_ms, 1),
        "answer_ms": ms(walls),
        "model_call_ms": ms([r.timings.total_ms for r in results]),
        "first_token_ms": ms([r.timings.first_token_ms for r in results]),
        "vision_ms": ms([r.timings.vision_ms for r in results]),
        "prefill_ms": ms([r.timings.prefill_ms for r in results]),
        "decode_ms_per_token": ms(per_token),
        "prompt_tokens": ms([float(r.timings.prompt_tokens) for r in results]),
        "strict_valid": sum(r.answer.valid for r in results),
        "failures": failures,
        "memory_kib": {"after_load": after_load, "at_end": at_end},
        "mnn": package_version("MNN"),
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.release()}, {cpu_name()}",
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _table(r: dict[str, Any]) -> str:
    def spread_text(key: str, unit: str = "ms") -> str:
        s = r[key]
        return "—" if s is None else f"{s['median']} {unit} (min {s['min']}, max {s['max']}, n={s['n']})"

    memory = r["memory_kib"]
    peak = "not measured on this platform"
    if memory["at_end"] is not None:
        steady, top = memory["at_end"]["rss"], memory["at_end"]["peak"]
        peak = f"peak {top / 1024:.0f} MiB, steady {steady / 1024:.0f} MiB"
    answer = r["answer_ms"]
    side = r["image_max_side"]
    if side is not None and side > GOAL_SIDE:
        verdict = f"not judged at {side} px"
    else:
        verdict = "—" if answer is None else ("met" if answer["median"] <= GOAL_ANSWER_S * 1000 else "missed")
    rows = [
        ("model", r["model"], ""),
        ("where", f"{r['backend']} · {r['threads']} threads · {r['decoding']} · worker {r['worker']}", ""),
        ("images", ", ".join(r["images"]), ""),
        ("load", f"{r['load_s']} s to a ready worker (model load {r['model_load_ms']} ms)", ""),
        (
            "keyframe to parsed answer",
            spread_text("answer_ms"),
            f"goal ≤ {GOAL_ANSWER_S:g} s at {GOAL_SIDE} px on 2 cores: {verdict}",
        ),
        ("  p95", "—" if answer is None else f"{answer['p95']} ms", ""),
        ("  of which the model", spread_text("model_call_ms"), ""),
        ("first token", spread_text("first_token_ms"), ""),
        ("vision", spread_text("vision_ms"), ""),
        ("prefill", spread_text("prefill_ms"), ""),
        ("decode per token", spread_text("decode_ms_per_token"), ""),
        ("strict-valid answers", f"{r['strict_valid']} of {r['runs']}", f"goal {r['runs']} of {r['runs']}"),
        ("memory (model's process)", peak, ""),
        ("MNN / Python", f"{r['mnn']} / {r['python']}", ""),
        ("machine", r["machine"], ""),
    ]
    width = max(len(name) for name, _, _ in rows)
    lines = [f"{name:<{width}}  {value}" + (f"   [{goal}]" if goal else "") for name, value, goal in rows]
    lines += [f"failed: {f}" for f in r["failures"]]
    return "\n".join(lines) + "\n"
