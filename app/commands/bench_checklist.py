"""`bench --profile CHECKLIST`: N signals from one image encode against one signal, in the same run.

Two workers run where the app runs them: one answers the whole checklist (its image encoded once),
the other its first-asked signal alone with the whole prompt, as a one-signal profile is asked. Their
keyframes alternate, so both see the same load; the ratio is taken per round (same image, moments
apart), then its median. The checklist's first answer carries the image (vision encode and prefill);
each later signal costs its own question's prefill and picks, reported apart.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from typing import Any

from app.commands.common import worker_spec
from app.commands.machine import cpu_name, package_version
from app.core.figures import spread
from app.core.generation import FinishReason
from app.core.profile.checklist import Checklist
from app.core.results import AnalysisResult, ChecklistResult
from app.frames.intake import DecodedImage
from app.worker.blocking import BlockingWorker

GOAL_RATIO = 1.6  # 4 signals at most this times one (issue's goal; moonshot 1.4)


def measure(
    args: argparse.Namespace, checklist: Checklist, images: list[tuple[str, DecodedImage]], progress: Any
) -> dict[str, Any]:
    """The receipt's figures; WorkerUnavailable when a worker cannot load."""
    alone = checklist.ordered()[0].signal
    spec = worker_spec(args)
    several: list[ChecklistResult] = []
    singles: list[AnalysisResult] = []
    walls: dict[str, list[float]] = {"checklist": [], "one": []}
    ratios: list[float] = []  # per round where both answered: same image, moments apart
    failures: list[str] = []
    with (
        BlockingWorker(replace(spec, checklists=True), host_kind=args.worker) as all_worker,
        BlockingWorker(replace(spec, signal=alone), host_kind=args.worker) as one_worker,
    ):
        ready = all_worker.start()
        one_worker.start()
        for i in range(args.runs + 1):  # round 0 warms both up and is not counted
            name, image = images[i % len(images)]
            took: dict[str, float] = {}
            for key, worker in (("checklist", all_worker), ("one", one_worker)):
                handed = time.perf_counter()
                outcome = worker.analyze(image, name)
                if outcome.finished is None:
                    assert outcome.failed is not None
                    failures.append(f"{name} ({key}): {outcome.failed.message}")
                    continue
                took[key] = (time.perf_counter() - handed) * 1000
                result = outcome.finished.result
                if i and isinstance(result, ChecklistResult):
                    several.append(result)
                elif i and isinstance(result, AnalysisResult):
                    singles.append(result)
            if i == 0:
                continue
            for key, value in took.items():
                walls[key].append(value)
            if len(took) == 2:
                ratios.append(took["checklist"] / took["one"])
            progress(i, args.runs)
    return _figures(args, checklist, alone, ready, several, singles, walls, ratios, failures, images)


def _figures(
    args: argparse.Namespace,
    checklist: Checklist,
    alone: str,
    ready: Any,
    several: list[ChecklistResult],
    singles: list[AnalysisResult],
    walls: dict[str, list[float]],
    ratios: list[float],
    failures: list[str],
    images: list[tuple[str, DecodedImage]],
) -> dict[str, Any]:
    def ms(values: list[float]) -> dict[str, float | int] | None:
        return spread(values).to_dict() if values else None

    asked = [[r for r in c.results if r.finish is not FinishReason.NOT_ASKED] for c in several]
    first = [r for rs in asked for r in rs if r.signal == alone]
    extra = [r.timings.total_ms for rs in asked for r in rs if r.signal != alone]
    return {
        "model": f"{ready.model_id}@{ready.model_revision}",
        "profile": checklist.id,
        "signals": [spec.signal for spec in checklist.ordered()],
        "gate": checklist.gate,
        "alone": alone,
        "backend": ready.backend,
        "threads": ready.threads,  # what MNN was given: OMP_NUM_THREADS may cap the asked number
        "worker": args.worker,
        "images": sorted({f"{name} ({img.width}x{img.height})" for name, img in images}),
        "rounds": len(walls["one"]),
        "warm_up_rounds": 1,
        "one_signal_ms": ms(walls["one"]),
        "checklist_ms": ms(walls["checklist"]),
        "ratio": spread(ratios).to_dict(3) if ratios else None,
        "signals_asked": ms([float(len(rs)) for rs in asked]),
        "image_vision_ms": ms([r.timings.vision_ms for r in first]),
        "first_signal_ms": ms([r.timings.total_ms for r in first]),
        "each_extra_signal_ms": ms(extra),
        "one_signal_vision_ms": ms([r.timings.vision_ms for r in singles]),
        "strict_valid": sum(r.answer.valid for rs in asked for r in rs) + sum(r.answer.valid for r in singles),
        "answers": sum(len(rs) for rs in asked) + len(singles),
        "failures": failures,
        "goal": f"{len(checklist.signals)} signals <= {GOAL_RATIO:g} x one (the goal is set for 4)",
        "mnn": package_version("MNN"),
        "machine": cpu_name(),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def table(r: dict[str, Any]) -> str:
    def text(key: str, unit: str = "ms") -> str:
        s = r[key]
        return "—" if s is None else f"{s['median']} {unit} (min {s['min']}, max {s['max']}, n={s['n']})"

    gate = f", gate {r['gate']} (a closed gate asks fewer)" if r["gate"] else ""
    rows = [
        ("model", r["model"]),
        ("checklist", f"{r['profile']}: {', '.join(r['signals'])}{gate}"),
        ("where", f"{r['backend']} · {r['threads']} threads · worker {r['worker']}"),
        ("images", ", ".join(r["images"])),
        (f"one signal ({r['alone']}) alone", text("one_signal_ms")),
        ("the checklist, one encode", text("checklist_ms")),
        ("checklist ÷ one, per round", text("ratio", "×") + f"   [goal: {r['goal']}]"),
        ("signals asked per keyframe", text("signals_asked", "")),
        ("  image: vision encode", text("image_vision_ms")),
        ("  first signal (with the image)", text("first_signal_ms")),
        ("  each extra signal", text("each_extra_signal_ms")),
        ("strict-valid answers", f"{r['strict_valid']} of {r['answers']}"),
        ("MNN / machine", f"{r['mnn']} / {r['machine']}"),
    ]
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {value}" for name, value in rows] + [f"failed: {f}" for f in r["failures"]]
    return "\n".join(lines) + "\n"
