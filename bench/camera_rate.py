"""The live camera's rhythm, end to end: the app served on 127.0.0.1, Debian Chromium's fake camera
playing generated compressions at 30 frames a second, a camera session started on Practice.

What reaches the motion meter (frames a second, from the session's rhythm samples), and what the
rhythm makes of it against the clip's truth: rate error once each pace has filled the estimator's
window, the first rate after compressions start, the count, the pause. Also the server's own cost
per motion frame (motion feature of the page's grey copy + estimator update), timed in process.
The clip's seed is not the browser test's (tests/e2e/test_camera_rhythm.py, seed 11).

    .venv/bin/python -m bench.camera_rate [--height 480] [--receipt F]

Needs Debian's chromium and Playwright (scripts/test.sh installs both).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from app.core.figures import spread
from app.core.rhythm import RhythmEstimator
from app.core.session import RhythmSample
from app.engine.stdio import claim_stdout
from app.frames.motion import MotionMeter
from app.session.store import load_session
from bench._report import Row, add_receipt_option, report, run_benchmark, spread_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # the scene generator is not part of the app
from demo_model.compressions import VideoSpec, make_video, write_y4m

SEED = 2027
FPS = 30
CHANGE_S, PAUSE_S, PAUSE_LEN_S, SPLIT_S, LENGTH_S = 12.0, 20.0, 4.0, 24.0, 40.0
RATES = (100.0, 130.0, 112.0)  # before the change, after it, after the pause
SETTLE_S = 6.0  # the estimator's window
GOALS = {"fps": 15.0, "median": 3.0, "first": 6.0, "count": 0.05, "pause": 0.5, "cost_ms": 2.0}
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def clip(path: Path, height: int) -> tuple[list[float], tuple[float, float], list[np.ndarray]]:
    """Three paces and a pause as one .y4m (two generated videos of one scene, joined at the pause's
    end, where the hands rest at the top); the true compression times, the pause as it happened
    (start, length) and a few frames for timing."""
    first = make_video(
        VideoSpec(
            seconds=SPLIT_S,
            fps=FPS,
            rate_per_min=RATES[0],
            rate_change=(CHANGE_S, RATES[1]),
            pauses=((PAUSE_S, PAUSE_LEN_S),),
            height=height,
        ),
        SEED,
    )
    second = make_video(VideoSpec(seconds=LENGTH_S - SPLIT_S, fps=FPS, rate_per_min=RATES[2], height=height), SEED)
    write_y4m(path, [*first.frames, *second.frames], FPS)
    truth = [*first.truth.compression_times, *(SPLIT_S + t for t in second.truth.compression_times)]
    return truth, first.truth.pauses[0], list(first.frames[:90])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_session(video: Path, data: Path, seconds: float) -> Path:
    """A camera session of `seconds` in Chromium on the served app; its session log."""
    from playwright.sync_api import sync_playwright

    port = _free_port()
    env = {**os.environ, "FLET_SERVER_PORT": str(port), "FLET_APP_STORAGE_DATA": str(data)}
    env.pop("DISPLAY", None)
    with open(data / "app.log", "ab") as log:
        app = subprocess.Popen(
            [sys.executable, "-m", "app", "ui", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        with sync_playwright() as pw:
            args = [
                "--no-sandbox",
                "--disable-gpu",
                "--use-fake-device-for-media-stream",
                "--use-fake-ui-for-media-stream",
                f"--use-file-for-fake-video-capture={video}",
            ]
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=args)
            page = browser.new_context(permissions=["camera"], viewport={"width": 1280, "height": 800}).new_page()
            for _ in range(120):
                try:
                    page.goto(f"http://127.0.0.1:{port}/")
                    break
                except Exception:  # the server is still starting
                    time.sleep(0.5)
            page.wait_for_function("() => !document.getElementById('loading')", timeout=180_000)
            page.locator("flt-semantics-placeholder").dispatch_event("click")
            ready = page.locator("[flt-semantics-identifier='model-status']")
            ready.filter(has_text="Model ready").wait_for(timeout=180_000)
            page.get_by_role("button", name="Camera", exact=True).click()
            page.locator("[flt-semantics-identifier='start-stop']").click()
            page.locator("[flt-semantics-identifier='start-stop']").filter(has_text="Stop").wait_for(timeout=60_000)
            time.sleep(seconds)  # a benchmark runs for a set time; tests wait on conditions
            page.locator("[flt-semantics-identifier='start-stop']").click()
            page.locator("[flt-semantics-identifier='start-stop']").filter(has_text="Start").wait_for(timeout=60_000)
            browser.close()
    finally:
        os.killpg(app.pid, signal.SIGTERM)
        app.wait(timeout=30)
    logs = sorted((data / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    if not logs:
        raise RuntimeError(f"no session was written; the app's log: {data / 'app.log'}")
    return logs[-1]


def true_rate(t: float) -> float | None:
    if t < CHANGE_S:
        return RATES[0]
    if t < PAUSE_S:
        return RATES[1]
    return None if t < SPLIT_S else RATES[2]


def judged(samples: list[RhythmSample], offset: float) -> list[float]:
    """Rate errors of the samples taken once a pace has filled the window, on the clip's clock (session
    time + `offset`), in the first loop of the clip; a sample with no rate there counts as missing."""
    errors = []
    for s in samples:
        t = s.t + offset
        bounds = (0.0, CHANGE_S, PAUSE_S, SPLIT_S, LENGTH_S)
        start = max(x for x in bounds if x <= t) if 0 <= t < LENGTH_S else None
        end = min((x for x in bounds if x > t), default=LENGTH_S)
        rate = true_rate(t)
        if start is None or rate is None or t - start < SETTLE_S + 0.3 or end - t < 0.3:
            continue
        errors.append(float("inf") if s.rate_per_min is None else abs(s.rate_per_min - rate))
    return errors


def cost_per_frame(frames: list[np.ndarray]) -> list[float]:
    """The server's work per motion frame: the page's ~160-wide grey copy measured, the estimator fed."""
    import cv2

    greys = [cv2.resize(cv2.cvtColor(f, cv2.COLOR_RGB2GRAY), (160, 120), interpolation=cv2.INTER_AREA) for f in frames]
    meter, estimator = MotionMeter(), RhythmEstimator()
    meter.measure_grey(greys[0])
    out = []
    for i in range(600):
        started = time.perf_counter()
        feature = meter.measure_grey(greys[i % len(greys)])
        estimator.follow(i / FPS, feature)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--height", type=int, default=480, help="the fake camera's frame height (default 480: 640x480)")
    parser.add_argument("--keep", type=Path, default=None, help="copy the session's log (JSONL) to this file")
    add_receipt_option(parser)
    args = parser.parse_args()
    if args.height < 120 or args.height % 2:
        parser.error("--height must be even and at least 120")
    out = claim_stdout()
    if not Path(CHROMIUM).exists():
        print("error: Debian's chromium is not installed (scripts/test.sh installs it)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="keyframe-camera-rate-") as tmp:
        video = Path(tmp) / "compressions.y4m"
        truth, (pause_start, pause_length), sample_frames = clip(video, args.height)
        data = Path(tmp) / "data"
        data.mkdir()
        log = run_session(video, data, LENGTH_S + 4)
        samples = [e for e in load_session(log).events if isinstance(e, RhythmSample)]
        if args.keep:
            shutil.copyfile(log, args.keep)
    fps = [s.frame_rate for s in samples if s.frame_rate is not None and s.t >= 3]
    first = next((s.t for s in samples if s.rate_per_min is not None), None)
    at_end = max((s for s in samples if s.t <= LENGTH_S), key=lambda s: s.t)
    pause = min(at_end.pauses, key=lambda p: abs(p.length_s - pause_length), default=None)
    invented = len([p for p in at_end.pauses if not p.ongoing]) - (pause is not None)
    # The count once that pause shows, against the compressions before it: both on the clip's own
    # clock, so when the camera started against the session (an unknown offset) does not enter it.
    at_pause = next(
        (s for s in samples if pause and any(p.ongoing and abs(p.start_s - pause.start_s) < 0.5 for p in s.pauses)),
        None,
    )
    # The camera starts a moment before or after the session clock, by an amount no one controls: the
    # samples are put on the clip's clock by the pause found (without one, by none, and the errors say so).
    offset = 0.0 if pause is None else pause_start - pause.start_s
    # Compressions from the first frame the meter saw (the first sample is said on it) to the pause: one
    # whose bottom came before the camera's first frame cannot be counted (the browser test judges so too).
    expected = sum(samples[0].t + offset < t < pause_start for t in truth)
    counted = 0 if at_pause is None else at_pause.count
    count_error = abs(counted - expected) / expected
    errors = judged(samples, offset)
    first = None if first is None else first + offset  # compressions start at the clip's 0
    shown = [e for e in errors if e != float("inf")]
    cost = spread(cost_per_frame(sample_frames))
    width = round(args.height * 4 / 3)
    rows = [
        Row(
            "clip",
            f"{width}x{args.height} at {FPS} fps: 100/min, 130/min at 12 s, a 4 s pause at 20 s, 112/min; seed {SEED}",
        ),
        Row(
            "frames a second reaching the motion meter",
            spread_text(spread(fps), "/s", 1) if fps else "none",
            f">= {GOALS['fps']:g} (median)",
            bool(fps) and float(np.median(fps)) >= GOALS["fps"],
        ),
        Row(
            "rate error, each pace after 6 s",
            f"{spread_text(spread(shown), '/min')}; no rate in {len(errors) - len(shown)}" if shown else "no rate",
            f"median <= {GOALS['median']:g}/min",
            bool(shown) and float(np.median(errors)) <= GOALS["median"],
        ),
        Row(
            "first rate after compressions start",
            "never" if first is None else f"{first:.1f} s",
            f"<= {GOALS['first']:g} s",
            first is not None and first <= GOALS["first"],
        ),
        Row(
            "count before the pause",
            f"{counted} of {expected} ({100 * count_error:.1f} % off)",
            f"within {100 * GOALS['count']:g} %",
            count_error <= GOALS["count"],
        ),
        Row(
            f"the 4 s pause: length error ({invented} other pauses found)",
            "not found"
            if pause is None
            else f"{abs(pause.length_s - pause_length):.2f} s (found {pause.length_s:.2f} s)",
            f"<= {GOALS['pause']:g} s",
            pause is not None and abs(pause.length_s - pause_length) <= GOALS["pause"] and invented == 0,
        ),
        Row(
            "  the session clock against the clip's (camera start)",
            f"{-offset:+.2f} s (the samples are judged on the clip's clock)",
        ),
        Row(
            "server's cost per motion frame (160x120 grey)",
            spread_text(cost),
            f"<= {GOALS['cost_ms']:g} ms (median)",
            cost.median <= GOALS["cost_ms"],
        ),
    ]
    notes = ["rhythm samples: about one a second of the session, each with the window's frame rate"]
    return report(out, "Live camera rhythm (Chromium fake camera)", rows, args.receipt, notes)


if __name__ == "__main__":
    run_benchmark(main)
