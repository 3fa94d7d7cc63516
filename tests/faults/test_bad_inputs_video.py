"""Bad-input corpus, videos: a clean VideoError, or every good frame used and every
damaged one counted; never another exception, never a hang."""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

from app.frames.video import VideoError, VideoFrames
from tests.faults.corpus import (
    cut_frame,
    flip,
    index_of,
    run_bounded,
    save,
    smash_frames,
    with_frame_rate,
    write_mjpg,
)

PER_CASE_S = 20.0


@dataclass(frozen=True)
class VideoCase:
    name: str
    path: Path
    error: str | None = None  # a VideoError message must contain this
    min_frames: int = 0
    damaged: tuple[int, int] = (0, 0)  # inclusive range of the damaged count
    exact_times: bool = False  # every frame's timestamp matches the index drawn into it


def _cases(root: Path) -> list[VideoCase]:
    good = write_mjpg(root / "source.avi").read_bytes()  # 152 frames, 25 fps
    cases: list[VideoCase] = []

    def add(name: str, data: bytes | None, **expect: object) -> None:
        path = root / name
        if data is not None:
            path.write_bytes(data)
        cases.append(VideoCase(name, path, **expect))  # type: ignore[arg-type]

    add("good.avi", good, min_frames=152, exact_times=True)
    add("one-damaged.avi", smash_frames(good, 70, 1), min_frames=151, damaged=(1, 1), exact_times=True)
    add("five-damaged.avi", smash_frames(good, 40, 5), min_frames=147, damaged=(5, 5), exact_times=True)
    add("two-holes.avi", smash_frames(smash_frames(good, 20, 3), 100, 7), min_frames=142, damaged=(10, 10))
    add("first-damaged.avi", smash_frames(good, 0, 2), min_frames=150, damaged=(2, 2), exact_times=True)
    add("last-damaged.avi", smash_frames(good, 148, 3), min_frames=149, damaged=(3, 3), exact_times=True)
    add("all-damaged.avi", smash_frames(good, 0, 151), error="no frame could be decoded")
    add("cut-frame.avi", cut_frame(good, 75), min_frames=148, damaged=(0, 3))
    add("flipped-middle.avi", flip(good, len(good) // 2, 3000), min_frames=145, damaged=(0, 5))
    add("truncated-half.avi", good[: len(good) // 2], min_frames=60)
    add("truncated-header.avi", good[:2048], error="")
    add("slow-header.avi", with_frame_rate(good, 1, 100_000), min_frames=152)
    add("fast-header.avi", with_frame_rate(good, 100_000, 1), min_frames=152)
    add("zero-bytes.avi", b"", error="empty")
    add("garbage.avi", os.urandom(20_000), error="")
    # Seeded random bytes that FFmpeg reads as a raw H.263 stream of one black frame (1 file in ~4,000).
    add("black-h263.avi", random.Random(55849).randbytes(20_000), error="no picture")
    add("text.avi", b"not a video\n" * 100, error="")
    add("still-jpeg.avi", save(Image.new("RGB", (64, 48), "red"), "JPEG"), error="")  # or 1 frame
    add("1x1.avi", write_mjpg(root / "1x1-src.avi", frames=3, w=1, h=1).read_bytes(), error="smaller than 16 px")
    add("8x8.avi", write_mjpg(root / "8x8-src.avi", frames=3, w=8, h=8).read_bytes(), error="smaller than 16 px")
    add("16x16.avi", write_mjpg(root / "16-src.avi", frames=3, w=16, h=16).read_bytes(), min_frames=3)
    (root / "folder.avi").mkdir()
    add("folder.avi", None, error="not a regular file")
    os.mkfifo(root / "fifo.avi")
    add("fifo.avi", None, error="not a regular file")
    (root / "loop.avi").symlink_to("loop.avi")
    add("loop.avi", None, error="cannot open")
    add("missing.avi", None, error="cannot open")
    return cases


def _judge(case: VideoCase) -> str | None:
    def run() -> tuple[VideoFrames, list]:  # type: ignore[type-arg]
        video = VideoFrames(case.path)
        return video, list(video)

    try:
        video, frames = run_bounded(run, PER_CASE_S)
    except VideoError as exc:
        if case.error is None:
            return f"VideoError {exc}"
        if case.name == "still-jpeg.avi" or case.error in str(exc):
            return None
        return f"VideoError {exc!r}, expected one saying {case.error!r}"
    except AssertionError as exc:
        return str(exc)
    except Exception as exc:
        return f"raised {type(exc).__name__}: {exc}"
    if case.error is not None:
        return (
            None if case.name == "still-jpeg.avi" and len(frames) <= 1 else f"{len(frames)} frames, expected an error"
        )
    stats = video.stats
    if stats.frames != len(frames) or len(frames) < case.min_frames:
        return f"{len(frames)} frames (stats {stats.frames}), expected at least {case.min_frames}"
    if not case.damaged[0] <= stats.damaged <= case.damaged[1]:
        return f"{stats.damaged} damaged, expected {case.damaged}"
    times = [t for t, _ in frames]
    if any(b <= a for a, b in zip(times, times[1:], strict=False)) or times[0] < 0:
        return "timestamps are not strictly increasing from 0"
    if max(b - a for a, b in zip(times, times[1:], strict=False)) > 1.0:
        return "a gap of more than 1 s between frames"
    if case.exact_times and any(index_of(rgb) != round(t * stats.fps) % 50 for t, rgb in frames):
        return "a timestamp does not match its frame"
    return None


def test_video_corpus(tmp_path: Path) -> None:
    start = time.perf_counter()
    cases = _cases(tmp_path)
    problems = {case.name: p for case in cases if (p := _judge(case)) is not None}
    assert not problems, "\n".join(f"{name}: {p}" for name, p in problems.items())
    assert len(cases) >= 20
    print(f"{len(cases)} video cases in {time.perf_counter() - start:.2f} s")


def test_non_utf8_video_name_is_a_clean_error_or_read(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/vid\xff.avi"
    write_mjpg(tmp_path / "src.avi", frames=5)
    os.rename(tmp_path / "src.avi", raw)
    try:
        frames = run_bounded(lambda: list(VideoFrames(os.fsdecode(raw))), PER_CASE_S)
        assert len(frames) == 5
    except VideoError as exc:
        assert "\\xff" in str(exc)
        str(exc).encode("utf-8")


@pytest.mark.parametrize("stop_after", [0, 3])
def test_closing_early_releases_the_file(tmp_path: Path, stop_after: int) -> None:
    path = write_mjpg(tmp_path / "v.avi", frames=20)
    with VideoFrames(path) as video:
        for i, _ in enumerate(video):
            if i >= stop_after:
                break
    assert video.stats.frames == stop_after + 1
