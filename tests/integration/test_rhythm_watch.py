"""The compression rhythm end to end on a generated video of known truth: `watch` prints it and logs it,
`sessions export` and `sessions report` give it back, with the claims the report must make."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

from demo_model.compressions import VideoSpec

from app.core.rhythm_figures import MEASURED_RATE_ERROR
from app.storage.locations import sessions_dir
from app.storage.paths import PROFILES
from tests.conditions import HANG_S
from tests.integration.video import write_compression_video

ROOT = Path(__file__).resolve().parents[2]
RATE, PAUSE_AT, PAUSE_S, SECONDS, FPS = 130, 9.0, 3.0, 22, 15


def write_video(path: Path) -> tuple[int, tuple[tuple[float, float], ...]]:
    """Compressions at RATE with one pause, as an MJPG file; (true count, true pauses)."""
    spec = VideoSpec(seconds=SECONDS, fps=FPS, rate_per_min=RATE, pauses=((PAUSE_AT, PAUSE_S),))
    video = write_compression_video(path, spec, seed=31)
    return len(video.truth.compression_times), video.truth.pauses


def run_app(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True, timeout=HANG_S
    )


def test_watch_prints_and_logs_the_rhythm_and_the_report_tells_it_with_its_limits(tmp_path: Path) -> None:
    path = tmp_path / "compressions.avi"
    true_count, true_pauses = write_video(path)
    proc = run_app("watch", str(path))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    samples = [line for line in lines if line["kind"] == "rhythm"]
    assert [line for line in lines if line["kind"] == "practice"], "keyframes are answered beside the rhythm"
    # About one a second of frames, and one at the last frame: never one per frame.
    assert SECONDS - 1 <= len(samples) <= SECONDS + 2
    last = samples[-1]
    assert last["t"] >= SECONDS - 0.1
    assert abs(last["median_rate_per_min"] - RATE) <= 3
    assert true_count - 3 <= last["count"] <= true_count  # the newest compression may not be counted yet
    (pause,) = [p for p in last["pauses"] if not p["ongoing"]]
    (true_start, true_length) = true_pauses[0]
    assert abs(pause["start_s"] - true_start) <= 1.0 and abs(pause["length_s"] - true_length) <= 1.0
    shown = [s["rate_per_min"] for s in samples if s["rate_per_min"] is not None]
    assert shown and all(abs(r - RATE) <= 8 for r in shown)
    in_pause = [s for s in samples if true_start + 2.5 <= s["t"] <= true_start + true_length]
    assert in_pause and all(s["rate_per_min"] is None for s in in_pause), "no rate while nothing moves"

    # Its own log, as watch names it (the storage folder is shared by every test of the run).
    (log,) = [Path(line.split(": ", 1)[1]) for line in proc.stderr.splitlines() if line.startswith("session log: ")]
    assert log.parent == sessions_dir()
    logged = [json.loads(line) for line in log.read_text().splitlines() if '"kind":"rhythm"' in line]
    assert logged == samples
    # Its first line says what it asked: the profile (and its file's hash), every question, the model.
    asked = json.loads(log.read_text().splitlines()[0])
    assert (asked["kind"], asked["profile_id"]) == ("asked", "hand_position")
    assert asked["profile_sha256"] == hashlib.sha256((PROFILES / "hand_position.json").read_bytes()).hexdigest()
    assert [(s["signal"], s["prompt"]) for s in asked["signals"]] == [
        ("hand_position_correct", "Is the hand position correct?")
    ]
    answered = next(line for line in lines if line["kind"] == "practice")
    assert (asked["model_id"], asked["model_revision"]) == (answered["model_id"], answered["model_revision"])
    practice = [json.loads(line) for line in log.read_text().splitlines() if '"kind":"practice"' in line]
    assert {p["source"] for p in practice} == {"compressions.avi"}

    rows = list(csv.DictReader(io.StringIO(run_app("sessions", "export", log.stem, "--format", "rhythm-csv").stdout)))
    assert [row["event_id"] for row in rows] == [s["event_id"] for s in samples]
    assert rows[-1]["compressions"] == str(last["count"]) and rows[-1]["pauses"] == "1"

    summary = run_app("sessions", "export", log.stem).stdout
    assert f"Compressions counted: {last['count']}" in summary
    assert f"Median rate: {last['median_rate_per_min']:.0f} per minute" in summary
    assert "Pauses (2 s or more without compressions): 1" in summary
    assert "Frame times guessed" not in summary  # the file's header gives its rate

    report_path = tmp_path / "report.html"
    made = run_app("sessions", "report", log.stem, "--out", str(report_path))
    assert made.returncode == 0, made.stderr
    report = report_path.read_text(encoding="utf-8")
    assert report.startswith("<!doctype html>") and report.rstrip().endswith("</html>")
    for claim in (
        "Practice feedback, not a medical assessment.",
        "Depth and recoil: not measured by the camera.",
        "Agreement with the examiner",
        "agreement, not accuracy",
        "Quoted as targets",
        "100–120 compressions per minute",
        f"Compressions counted: {last['count']}",
        "<td>Is the hand position correct?</td>",  # the question as the session asked it
        "compressions.avi",  # the source: the video watched
        f"median {MEASURED_RATE_ERROR.median_per_min:.1f} per minute, "
        f"95th percentile {MEASURED_RATE_ERROR.p95_per_min:.1f} per minute",
    ):
        assert claim in report, claim
    # Self-contained: nothing to fetch (the SVG namespace is a name, not a request), no picture of the trainee.
    lowered = report.lower()
    assert "src=" not in lowered and "<link" not in lowered and "url(" not in lowered and "<img" not in lowered
    assert "default-src 'none'" in report
    assert run_app("sessions", "report", log.stem).stdout == report  # the same page on standard output
