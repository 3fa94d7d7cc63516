"""Keyframe's defaults vs MNN's defaults on a 1080p frame: time to a result and strict validity.

Keyframe: the app's Analyzer as it ships (the backend's image cap, constrained decoding), timed
around `analyze()`, which includes its own resize of the full frame.
MNN: a bare MNN.llm from the model's config.json as is, handed the full 1920x1080 frame and
generating freely, timed from the frame (its conversion to an MNN image) to `response()`'s text.
Each reads the prompt the profile gives its kind of decoding (the same text unless the profile has
a shorter constrained one), templated by the app's code; both run in this process and alternate
frame by frame so they see the same machine load. Both answers go through the strict parser.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.figures import spread
from app.core.parser import parse_answer
from app.core.profile.task import TaskProfile
from app.engine.stdio import claim_stdout
from app.frames.intake import DecodedImage, decode_image_bytes, resize_exact
from app.models.catalog import resolve_model
from app.worker.analyzer import Analyzer
from app.worker.messages import WorkerSpec
from app.worker.serve import build_analyzer
from bench._bare_mnn import BareMnn
from bench._report import (
    Row,
    add_model_options,
    add_receipt_option,
    add_rounds_options,
    check_rounds,
    report,
    run_benchmark,
    spread_text,
)
from bench._scenes import scenes

FRAME_WIDTH, FRAME_HEIGHT = 1920, 1080


@dataclass(frozen=True)
class Run:
    ms: float
    valid: bool  # the strict parser accepted it
    right: bool  # it is the scene's expected answer


@dataclass(frozen=True)
class Frame:
    image: DecodedImage
    expected: str


def frames(count: int) -> list[Frame]:
    """`count` held-out scenes upscaled (stretched) to 1080p, as a camera would hand them over.

    A square model squashes them back (the demo model sees its 128x128 either way)."""
    per_kind = -(-count // 5)  # five scene kinds
    out = []
    for _, data, expected in scenes(per_kind)[:count]:
        rgb = resize_exact(decode_image_bytes(data).rgb, FRAME_HEIGHT, FRAME_WIDTH)
        out.append(Frame(DecodedImage(rgb, "JPEG"), expected))
    return out


def keyframe_run(analyzer: Analyzer, frame: Frame) -> Run:
    start = time.perf_counter()
    result = analyzer.analyze(frame.image, "bench")
    ms = (time.perf_counter() - start) * 1000.0
    return Run(ms, result.answer.valid, result.observation == frame.expected)


def mnn_run(bare: BareMnn, text: str, profile: TaskProfile, frame: Frame) -> tuple[Run, float]:
    """The run and the megapixels MNN's vision encoder saw."""
    start = time.perf_counter()
    got = bare.answer(bare.image(frame.image.rgb), text, profile.max_new_tokens)
    ms = (time.perf_counter() - start) * 1000.0
    parsed = parse_answer(got.text, profile, got.finish)
    return Run(ms, parsed.valid, parsed.valid and parsed.observation == frame.expected), got.pixels_mp


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    add_model_options(parser)
    add_rounds_options(parser)
    add_receipt_option(parser)
    args = parser.parse_args(argv)
    check_rounds(parser, args)
    out = claim_stdout()  # MNN prints on fd 1; the table owns stdout
    spec = WorkerSpec(model=args.model, profile=args.profile)
    analyzer = build_analyzer(spec, resolve_model(spec.model))  # the app's defaults
    analyzer.load()
    profile = analyzer.profile
    bare = BareMnn(analyzer.folder.config_path)  # MNN's defaults: the model's config.json as is
    prompt, system = profile.ask(False)
    text = bare.text(prompt, system, analyzer.folder.use_template)
    shots = frames(args.images)
    keyframe_run(analyzer, shots[0])  # warm-up, not counted
    mnn_run(bare, text, profile, shots[0])
    ours: list[Run] = []
    theirs: list[Run] = []
    pixels: list[float] = []
    for r in range(args.rounds):
        for i, frame in enumerate(shots):
            if (r * len(shots) + i) % 2:  # alternate which goes first
                run, mp = mnn_run(bare, text, profile, frame)
                ours.append(keyframe_run(analyzer, frame))
            else:
                ours.append(keyframe_run(analyzer, frame))
                run, mp = mnn_run(bare, text, profile, frame)
            theirs.append(run)
            pixels.append(mp)
    n = len(ours)
    ratio = spread([a.ms / b.ms for a, b in zip(ours, theirs, strict=True)]).median
    height, width = analyzer.prepare(shots[0].image).shape[:2]
    rows = [
        Row(
            "time to a result: Keyframe / MNN defaults", f"{ratio:.2g}x", "< 1 (Keyframe's defaults faster)", ratio < 1
        ),
        Row(f"Keyframe: {width}x{height}, constrained", spread_text(spread([a.ms for a in ours]))),
        Row(f"MNN: {FRAME_WIDTH}x{FRAME_HEIGHT} as is, free", spread_text(spread([b.ms for b in theirs]))),
        Row(
            "strict-valid, Keyframe defaults",
            f"{sum(a.valid for a in ours)} of {n}",
            f"{n} of {n}",
            all(a.valid for a in ours),
        ),
        Row("strict-valid, MNN defaults", f"{sum(b.valid for b in theirs)} of {n}"),
        Row("expected answer, Keyframe / MNN", f"{sum(a.right for a in ours)} / {sum(b.right for b in theirs)} of {n}"),
    ]
    seen = [p for p in pixels if p == p]  # nan: MNN's response() raised, so it could not say
    notes = [
        f"model {analyzer.model.id}, profile {profile.id}, {len(shots)} frames x {args.rounds} rounds, "
        "one warm-up not counted",
        "ratio: median of the per-frame ratios (each pair ran back to back, so it shares the machine's load)",
        (f"MNN's vision encoder saw {spread(seen).median:.3f} MP of each 2.074 MP frame" if seen else "")
        + (f" (the model declares image_size {analyzer.folder.image_size})" if analyzer.folder.image_size else ""),
        "expected answers mean something on a trained model only",
    ]
    if len(seen) < len(pixels):
        notes.append(
            f"MNN's response() raised on {len(pixels) - len(seen)} of {n} (generated text not valid UTF-8): "
            "counted as invalid answers, the model loaded afresh after each"
        )
    if profile.ask(True) != profile.ask(False):
        notes.append("Keyframe reads the profile's shorter constrained prompt, MNN its free-generation one")
    return report(out, "defaults: Keyframe's vs MNN's on a 1080p frame", rows, args.receipt, notes)


if __name__ == "__main__":
    run_benchmark(main)
