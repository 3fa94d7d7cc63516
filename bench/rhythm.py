"""The compression-rhythm estimator on held-out generated videos of compressions at known rates.

Every frame goes through `MotionMeter` and `RhythmEstimator` as the app will run them. The videos
(`tools/demo_model/compressions.py`) are drawn from the FIXED seed `SEED`, chosen before any score
was seen and never used to tune the estimator (tuning uses `--dev`, the same generator at another
seed; the unit tests use others again): rates 60–160 per
minute, duty 0.4–0.6, depth 2.5–5 % of the frame height, 15/24/30 fps, 4:3 or 16:9 letterboxed or
cropped, JPEG, noise, some with a pause, a rate change, camera shake or lighting flicker; then the
negatives, which must show no rate: a still scene, shaking only, flicker only, hands resting.

Rate error compares the rate shown at each frame with the true mean rate over the estimator's
window (the compressing frames of the last `window_s`), wherever a rate is shown. Pauses are the
final snapshot's against the truth's (all are >= 2 s); a found pause overlaps a true one.
Synthetic videos are not a manikin with sensors: the figures say the estimator reads this drawing.

    .venv/bin/python -m bench.rhythm [--videos 24] [--negatives 2] [--seconds 20] [--dev]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from app.core.figures import spread
from app.core.rhythm import RhythmConfig, RhythmEstimator
from app.engine.stdio import claim_stdout
from app.frames.motion import MotionMeter
from bench._report import Row, add_receipt_option, report, run_benchmark, spread_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # the scene generator is not part of the app
from demo_model.compressions import NEGATIVES, CompressionVideo, VideoSpec, make_video, negative_spec

SEED = 20261201  # the held-out set; fixed before scoring
DEV_SEED = 7  # the development set: tune on this one, never on SEED
NOTES = (
    "Shows: the estimator reads rate, pauses and CCF of generated drawings of compressions (hands and chest "
    "moving at known rates, with shake, flicker, noise, JPEG) it was not tuned on (tuned with --dev).",
    "Does not show: accuracy on real trainees, clothing, camera angles or against a manikin with sensors "
    "(published camera-only methods: about 2.7 per minute); depth and recoil are not measured at all.",
)
MEDIAN_GOAL = 3.0  # per minute
P95_GOAL = 8.0
PAUSE_TIMING_GOAL = 0.5  # seconds, start and length


@dataclass(frozen=True)
class Scored:
    name: str
    errors: tuple[float, ...]  # |shown - true window rate| per frame a rate was shown
    shown_while_compressing: float  # share of compressing frames with a rate shown
    shown_settled: float  # the same, counting only frames SETTLE_S or more into a run of compressions
    shown_any: bool
    true_pauses: tuple[tuple[float, float], ...]
    found_pauses: tuple[tuple[float, float], ...]
    ccf_error: float | None
    count: int  # compressions counted at the end
    true_count: int  # compressions whose bottom came COUNT_LAG_S or more before the end

    @property
    def count_error(self) -> float | None:
        """Relative count error, None without compressions."""
        return abs(self.count - self.true_count) / self.true_count if self.true_count else None


SETTLE_S = 5.0  # a rate is expected from this long into each run of compressions (the window fills)
COUNT_LAG_S = 1.0  # the newest compressions are not counted yet (centred filters): not expected either


def held_out(videos: int, negatives: int, seconds: float, seed: int = SEED) -> list[tuple[str, VideoSpec, int]]:
    """(name, VideoSpec, seed) of the held-out set (or, with DEV_SEED, the development set), the same on every run."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, VideoSpec, int]] = []
    for i in range(videos):
        rate = float(rng.uniform(60, 160))
        framing = {"aspect": str(rng.choice(["4:3", "16:9"])), "fit": str(rng.choice(["letterbox", "crop"]))}
        fps = float(rng.choice([15, 24, 30]))
        pauses = ((float(rng.uniform(0.3, 0.55) * seconds), float(rng.uniform(2, 5))),) if rng.random() < 0.4 else ()
        change = None
        if rng.random() < 0.3:
            new = float(np.clip(rate + rng.choice([-1, 1]) * rng.uniform(10, 30), 60, 160))
            change = (float(rng.uniform(0.4, 0.6) * seconds), new)
        shake = float(rng.uniform(0.2, 1.0)) if rng.random() < 0.3 else 0.0
        flicker = float(rng.uniform(0.01, 0.05)) if rng.random() < 0.3 else 0.0
        spec = VideoSpec(
            seconds=seconds,
            fps=fps,
            rate_per_min=rate,
            duty=float(rng.uniform(0.4, 0.6)),
            amplitude=float(rng.uniform(0.025, 0.05)),
            pauses=pauses,
            rate_change=change,
            shake_px=shake,
            noise=float(rng.uniform(1, 4)),
            flicker=flicker,
            flicker_hz=float(rng.choice([100.0, 120.0, 0.7])),
            jpeg_quality=int(rng.integers(40, 96)),
            **framing,  # type: ignore[arg-type]
        )
        tags = [f"{rate:.0f}/min", f"{fps:.0f}fps", spec.aspect, spec.fit]
        if pauses:
            tags.append(f"pause {pauses[0][1]:.1f}s")
        if change:
            tags.append(f"->{change[1]:.0f}/min")
        if shake:
            tags.append(f"shake {shake:.1f}px")
        if flicker:
            tags.append(f"flicker {flicker:.0%}@{spec.flicker_hz:g}Hz")
        out.append((f"v{i:02d} " + " ".join(tags), spec, int(rng.integers(2**31))))
    for kind in NEGATIVES:
        for j in range(negatives):
            aspect = str(rng.choice(["4:3", "16:9"]))
            out.append((f"{kind} {j + 1}", negative_spec(kind, seconds, 30.0, aspect=aspect), int(rng.integers(2**31))))
    return out


def score(name: str, spec: VideoSpec, seed: int, config: RhythmConfig) -> Scored:
    return score_video(name, make_video(spec, seed), config)


def score_video(name: str, video: CompressionVideo, config: RhythmConfig) -> Scored:
    """Every frame through `MotionMeter` and `RhythmEstimator` as the app runs them, judged against the truth."""
    meter, estimator = MotionMeter(), RhythmEstimator(config)
    truth = video.truth
    errors: list[float] = []
    shown = np.zeros(len(video.times), dtype=bool)
    for i, (t, frame) in enumerate(zip(video.times, video.frames, strict=True)):
        estimator.follow(float(t), meter.measure(frame))
        rate = estimator.snapshot().rate_per_min
        if rate is None:
            continue
        shown[i] = True
        expected = truth.window_rate(video.times, float(t), config.window_s)
        if expected is not None:
            errors.append(abs(rate - expected))
    final = estimator.snapshot()
    compressing = truth.compressing
    settled = compressing & (_time_into_run(video.times, compressing) >= SETTLE_S)
    end = float(video.times[-1])
    return Scored(
        name=name,
        errors=tuple(errors),
        shown_while_compressing=float(shown[compressing].mean()) if compressing.any() else 0.0,
        shown_settled=float(shown[settled].mean()) if settled.any() else 1.0,
        shown_any=bool(shown.any()),
        # A pause the video's end cut short of `pause_s` is not one yet: nothing could have said it was.
        true_pauses=tuple(p for p in truth.pauses if p[1] >= config.pause_s or p[0] + p[1] < end - 0.05),
        found_pauses=tuple((p.start_s, p.length_s) for p in final.pauses),
        ccf_error=None if final.compression_fraction is None else abs(final.compression_fraction - truth.ccf),
        count=final.count,
        true_count=sum(t <= end - COUNT_LAG_S for t in truth.compression_times),
    )


def _time_into_run(times: np.ndarray, compressing: np.ndarray) -> np.ndarray:
    """Per frame: seconds since the run of compressions it belongs to began (0 where not compressing)."""
    out = np.zeros(len(times))
    start = None
    for i, (t, on) in enumerate(zip(times, compressing, strict=True)):
        start = (start if start is not None else float(t)) if on else None
        out[i] = float(t) - start if start is not None else 0.0
    return out


def overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[0] + b[1] and b[0] < a[0] + a[1]


def invented(s: Scored) -> int:
    """Pauses found that overlap no true one."""
    return sum(not any(overlaps(f, t) for t in s.true_pauses) for f in s.found_pauses)


def pause_rows(scored: Sequence[Scored]) -> list[Row]:
    hits = misses = false_alarms = 0
    start_err: list[float] = []
    length_err: list[float] = []
    for s in scored:
        for true in s.true_pauses:
            found = [f for f in s.found_pauses if overlaps(f, true)]
            if found:
                hits += 1
                start_err.append(abs(found[0][0] - true[0]))
                length_err.append(abs(found[0][1] - true[1]))
            else:
                misses += 1
        false_alarms += invented(s)
    worst = max(start_err + length_err, default=0.0)
    timing = (
        f"start {spread_text(spread(start_err), 's')}; length {spread_text(spread(length_err), 's')}"
        if start_err
        else "none found"
    )
    counts = f"{hits} / {misses} / {false_alarms}"
    timed = bool(start_err) and worst <= PAUSE_TIMING_GOAL
    return [
        Row("pauses found / missed / false alarms", counts, "all found, none false", misses == 0 and false_alarms == 0),
        Row("  timing error (found pauses)", timing, f"<= {PAUSE_TIMING_GOAL:g} s", timed),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--videos", type=int, default=24, help="compression videos (default 24)")
    parser.add_argument("--negatives", type=int, default=2, help="videos of each negative kind (default 2)")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each video (default 20)")
    parser.add_argument(
        "--dev", action="store_true", help=f"the development set (seed {DEV_SEED}) for tuning, not the held-out one"
    )
    add_receipt_option(parser)
    args = parser.parse_args()
    if args.videos < 1 or args.negatives < 0 or args.seconds < 8:
        parser.error("--videos must be at least 1, --negatives at least 0, --seconds at least 8")
    out = claim_stdout()
    config = RhythmConfig()
    seed = DEV_SEED if args.dev else SEED
    videos = held_out(args.videos, args.negatives, args.seconds, seed)
    scored = [score(name, spec, seed, config) for name, spec, seed in videos]
    positive = [s for s, (_, spec, _) in zip(scored, videos, strict=True) if spec.rate_per_min is not None]
    negative = [s for s in scored if s not in positive]

    rows = [
        Row(
            "videos",
            f"{len(positive)} with compressions + {len(negative)} negatives, {args.seconds:g} s each, seed {seed}",
        )
    ]
    for s in positive:
        err = f"error median {np.median(s.errors):.2f}, max {max(s.errors):.2f}/min" if s.errors else "no rate shown"
        ccf = "—" if s.ccf_error is None else f"{s.ccf_error:.3f}"
        pauses = (
            f"; pauses true {len(s.true_pauses)}, found {len(s.found_pauses)}"
            if s.true_pauses or s.found_pauses
            else ""
        )
        rows.append(Row(f"  {s.name}", f"{err}; shown {s.shown_while_compressing:.0%}; CCF err {ccf}{pauses}"))
    errors = [e for s in positive for e in s.errors]
    if errors:
        all_err = spread(errors)
        rows += [
            Row("rate error, per minute", spread_text(all_err, "/min")),
            Row("  median", f"{all_err.median:.2f}/min", f"<= {MEDIAN_GOAL:g}", all_err.median <= MEDIAN_GOAL),
            Row("  p95", f"{all_err.p95:.2f}/min", f"<= {P95_GOAL:g}", all_err.p95 <= P95_GOAL),
        ]
    else:
        rows.append(Row("rate error, per minute", "no rate shown on any video", f"median <= {MEDIAN_GOAL:g}", False))
    shares = [s.shown_while_compressing for s in positive]
    rows.append(
        Row("rate shown while compressing", f"{np.mean(shares):.0%} of compressing frames (min {min(shares):.0%})")
    )
    rows += pause_rows(positive)
    ccf_errors = [s.ccf_error for s in positive if s.ccf_error is not None]
    if ccf_errors:
        rows.append(
            Row("CCF error", f"median {np.median(ccf_errors):.3f}, max {max(ccf_errors):.3f} (n={len(ccf_errors)})")
        )
    for s in negative:
        rows.append(
            Row(f"negative: {s.name}", "a rate was shown" if s.shown_any else "no rate", "no rate", not s.shown_any)
        )
    kind = "development" if args.dev else "held-out"
    return report(out, f"Compression rhythm on {len(scored)} {kind} generated videos", rows, args.receipt, NOTES)


if __name__ == "__main__":
    run_benchmark(main)
