"""A video whose header gives an absurd frame rate: the frames' own container times are used where
they exist; where they do not, the rate is a guess and every view of the rhythm says so."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import cv2
from demo_model.compressions import VideoSpec, make_video

from tests.conditions import HANG_S
from tests.faults.corpus import with_default_duration, with_frame_rate

ROOT = Path(__file__).resolve().parents[2]
RATE, FPS, SECONDS = 110, 25, 20
GUESSED = "Frame times guessed"


def write_compressions(path: Path) -> None:
    """Compressions at RATE filmed at FPS; the container follows the suffix (.avi, .mkv), MJPEG frames."""
    video = make_video(VideoSpec(seconds=SECONDS, fps=FPS, rate_per_min=RATE), seed=7)
    height, width = video.frames[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, (width, height))
    assert writer.isOpened(), f"OpenCV cannot write {path.suffix}"
    for frame in video.frames:
        writer.write(cv2.cvtColor(frame, cv2.COLOR_RGB2BGR))
    writer.release()


def watch(path: Path) -> tuple[list[dict[str, object]], str, str]:
    """`watch` on the video: its rhythm samples, its stderr, and the session's name."""
    proc = subprocess.run(
        [sys.executable, "-m", "app", "watch", str(path)], cwd=ROOT, capture_output=True, text=True, timeout=HANG_S
    )
    assert proc.returncode == 0, proc.stderr
    samples = [line for line in map(json.loads, proc.stdout.splitlines()) if line["kind"] == "rhythm"]
    (log,) = [line.split(": ", 1)[1] for line in proc.stderr.splitlines() if line.startswith("session log: ")]
    return samples, proc.stderr, Path(log).stem


def sessions(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "app", "sessions", *args], cwd=ROOT, capture_output=True, text=True, timeout=HANG_S
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_header_rate_that_is_absurd_gives_way_to_the_frames_own_times(tmp_path: Path) -> None:
    """Read at an assumed 30 fps, compressions at 110/min filmed at 25 fps measured 132/min."""
    path = tmp_path / "lying.mkv"
    write_compressions(tmp_path / "honest.mkv")
    path.write_bytes(with_default_duration((tmp_path / "honest.mkv").read_bytes(), 1))  # 1 ns a frame
    samples, stderr, _ = watch(path)
    assert "the frames' own times are used (25 fps)" in stderr, stderr
    last = samples[-1]
    assert abs(last["median_rate_per_min"] - RATE) <= 3, last  # type: ignore[operator]
    assert abs(last["frame_rate"] - FPS) <= 0.5, last  # type: ignore[operator]
    assert not any(sample.get("frame_times_guessed") for sample in samples)


def test_a_rate_that_can_only_be_guessed_is_said_beside_the_rhythm_everywhere(tmp_path: Path) -> None:
    """An AVI times its frames by its header's rate: when that is refused there is nothing else."""
    write_compressions(tmp_path / "honest.avi")
    path = tmp_path / "lying.avi"
    path.write_bytes(with_frame_rate((tmp_path / "honest.avi").read_bytes(), 100_000, 1))
    samples, stderr, name = watch(path)
    assert "timestamps assume 30 fps" in stderr, stderr
    assert samples and all(sample["frame_times_guessed"] is True for sample in samples)

    said = "so 30 frames a second were assumed; every rate, pause and time here scales with that guess."
    summary = sessions("export", name)
    assert f"{GUESSED}: the video gives no usable frame rate" in summary and said in summary, summary
    report = sessions("report", name)
    assert GUESSED in report and said in report
    rows = list(csv.DictReader(io.StringIO(sessions("export", name, "--format", "rhythm-csv"))))
    assert rows and {row["frame_times"] for row in rows} == {"guessed"}
