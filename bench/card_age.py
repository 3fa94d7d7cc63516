"""How old the answers on the card get at a model's own speed: `watch --realtime` (the live session's
sampler, worker and checklist, a video played at its own speed) on generated compressions, and from its
output, for every answered keyframe, how old its answer was, counted from its picture, when the next
one replaced it: the age a trainee sees on the card just before it changes.

    .venv/bin/python -m bench.card_age [--model DIR_OR_ID] [--profile CHECKLIST] [--interval 3]
        [--seconds 40] [--open-gate] [--image-max-side N] [--receipt FILE]

``--open-gate`` asks a copy of the profile without its gate, so that a model whose gate stays shut (the
random-weight real-size stand-in answers "unknown") still pays for every signal on every keyframe. The
age includes the sampler's wait for the sharpest frame of each interval (up to one interval), the
model's time, and keyframes skipped: superseded while the model was busy, or unchanged (a still scene,
re-asked by the third interval at the latest; someone compressing is never unchanged).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import cv2

from app.core.figures import spread
from app.storage.paths import PROFILES
from bench._frames import write_mjpg
from bench._report import (
    Row,
    add_image_side_option,
    add_model_options,
    add_receipt_option,
    report,
    run_benchmark,
    spread_text,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # the scene generator is not part of the app
from demo_model.compressions import VideoSpec, make_video

FPS = 15
GOAL_INTERVALS = 2.0  # issue 40: the card's oldest answer at most two intervals old


def write_compressions(path: Path, seconds: float) -> None:
    video = make_video(VideoSpec(seconds=seconds, fps=FPS, rate_per_min=110), 11)
    bgr = [cv2.cvtColor(f, cv2.COLOR_RGB2BGR if f.ndim == 3 else cv2.COLOR_GRAY2BGR) for f in video.frames]
    write_mjpg(path, bgr, FPS)


def without_gate(profile: Path, folder: Path) -> Path:
    data = json.loads(profile.read_text())
    data.pop("gate", None)
    copy = folder / profile.name
    copy.write_text(json.dumps(data))
    return copy


def ages(lines: list[dict[str, object]], started: float) -> tuple[list[float], list[float], int]:
    """(each answer's age when replaced, each keyframe's picture-to-answer time, signals asked per keyframe)."""
    answered = []
    asked = 0
    for line in lines:
        if line.get("kind") != "checklist":
            continue
        signals = line["signals"]
        assert isinstance(signals, list)
        arrived = max(float(s["wall_time"]) for s in signals) - started
        answered.append((float(str(line["t"])), arrived))
        asked = max(asked, sum(1 for s in signals if s["parse_status"] != "not_asked"))
    replaced = [next_arrived - t for (t, _), (_, next_arrived) in zip(answered, answered[1:], strict=False)]
    return replaced, [arrived - t for t, arrived in answered], asked


def main() -> int:
    parser = argparse.ArgumentParser()
    add_model_options(parser, profile_default=PROFILES / "cpr_checklist.json")
    parser.add_argument("--interval", type=float, default=3.0, help="seconds between keyframes, 2-5 (default 3)")
    parser.add_argument("--seconds", type=float, default=40.0, help="length of the video (default 40)")
    parser.add_argument("--open-gate", action="store_true", help="ask every signal: drop the profile's gate")
    add_image_side_option(parser)
    add_receipt_option(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        video = folder / "compressions.avi"
        write_compressions(video, args.seconds)
        profile = without_gate(args.profile, folder) if args.open_gate else args.profile
        command = [sys.executable, "-m", "app", "watch", "--realtime", "--interval", f"{args.interval:g}"]
        command += ["--profile", str(profile)] + (["--model", args.model] if args.model else [])
        if args.image_max_side:
            command += ["--image-max-side", str(args.image_max_side)]
        ran = subprocess.run([*command, str(video)], capture_output=True, text=True, check=False)
        if ran.returncode != 0:
            print(ran.stderr[-2000:], file=sys.stderr)
            return ran.returncode
    lines = [json.loads(text) for text in ran.stdout.splitlines() if text.strip()]
    # The session's clock starts with its first line on the video's first frame (the rhythm's t = 0).
    started = min(float(line["wall_time"]) for line in lines if line.get("kind") == "rhythm")
    replaced, latency, asked = ages(lines, started)
    if not latency:
        print(f"error: no checklist answers in watch's output: is {args.profile} a checklist?", file=sys.stderr)
        return 2
    reasons = Counter(str(line.get("reason")) for line in lines if line.get("kind") == "skipped")
    why = ", ".join(f"{reason} {n}" for reason, n in sorted(reasons.items())) or "none"
    oldest = max(replaced) if replaced else float("nan")
    goal = GOAL_INTERVALS * args.interval
    rows = [
        Row("keyframes answered / skipped", f"{len(latency)} / {sum(reasons.values())} in {args.seconds:g} s"),
        Row("  skipped as", why),
        Row("signals asked per keyframe", str(asked)),
        Row("picture to answer", spread_text(spread(latency), "s")),
        Row("answer's age when replaced", spread_text(spread(replaced), "s") if replaced else "none"),
        Row("  oldest", f"{oldest:.2f} s", f"<= {goal:g} s (two intervals)", oldest <= goal),
    ]
    title = f"Card age: {args.model or 'demo'}, {args.profile.name}, watch --realtime --interval {args.interval:g}"
    notes = ["ran: " + " ".join(command[1:]) + " VIDEO (110 compressions a minute, generated)"]
    return report(sys.stdout, title, rows, args.receipt, notes)


if __name__ == "__main__":
    run_benchmark(main)
