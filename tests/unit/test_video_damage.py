"""Damaged frames are skipped and counted, tiny videos refused, lying
frame rates never make a realtime player sleep without bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.frames.video import VideoError, iter_video_frames
from tests.faults.corpus import index_of, smash_frames, with_default_duration, with_frame_rate, write_mjpg


def test_damaged_frames_are_skipped_counted_and_the_rest_used(tmp_path: Path) -> None:
    from app.frames.video import VideoFrames

    good = write_mjpg(tmp_path / "good.avi").read_bytes()
    damaged = tmp_path / "damaged.avi"
    damaged.write_bytes(smash_frames(good, 40, 5))
    assert len(list(iter_video_frames(damaged))) == 147  # stopped at frame 40 before the fix
    video = VideoFrames(damaged)
    frames = list(video)
    assert video.stats.frames == 147 and video.stats.damaged == 5 and video.stats.stopped is None
    assert "5 damaged frame(s) skipped; 147 frame(s) used" in video.stats.summary()
    for t, rgb in frames:  # the frames after the hole keep their own timestamps
        assert index_of(rgb) == round(t * 25) % 50


def test_tiny_videos_are_refused(tmp_path: Path) -> None:
    for side in (1, 8):
        path = write_mjpg(tmp_path / f"{side}.avi", frames=3, w=side, h=side)
        with pytest.raises(VideoError, match="smaller than 16 px"):
            list(iter_video_frames(path))


@pytest.mark.parametrize(("rate", "scale"), [(1, 100_000), (100_000, 1)])
def test_absurd_frame_rates_are_replaced_and_said(tmp_path: Path, rate: int, scale: int) -> None:
    from app.frames.video import ASSUMED_FPS, VideoFrames

    path = tmp_path / "lying.avi"
    path.write_bytes(with_frame_rate(write_mjpg(tmp_path / "good.avi", frames=10).read_bytes(), rate, scale))
    video = VideoFrames(path)
    times = [t for t, _ in video]
    assert video.stats.fps == ASSUMED_FPS and "timestamps assume 30 fps" in video.stats.summary()[0]
    assert times == pytest.approx([i / ASSUMED_FPS for i in range(10)])
    assert video.stats.clock == "guessed"  # an AVI's frames are timed by that same header: nothing else to go by


@pytest.mark.parametrize("nanoseconds", [1, 2**32 - 1])
def test_an_absurd_header_rate_gives_way_to_the_frames_own_times(tmp_path: Path, nanoseconds: int) -> None:
    """Matroska times each block itself: its header's absurd rate (30000 or 0.23 fps) is not needed."""
    from app.frames.video import VideoFrames

    path = tmp_path / "lying.mkv"
    path.write_bytes(with_default_duration(write_mjpg(tmp_path / "good.mkv", frames=20).read_bytes(), nanoseconds))
    video = VideoFrames(path)
    times = [t for t, _ in video]
    assert video.stats.clock == "timestamps" and video.stats.fps == pytest.approx(25)
    assert times == pytest.approx([i / 25 for i in range(20)])
    assert video.stats.summary() == [
        f"the file's header gives {video.stats.declared_fps:g} fps; the frames' own times are used (25 fps)"
    ]


def test_realtime_clock_never_waits_longer_than_the_gap() -> None:
    from app.frames.video import MAX_REALTIME_GAP_S, RealtimeClock

    now = [0.0]
    clock = RealtimeClock(now=lambda: now[0])
    assert clock.delay(0.0) == 0.0
    assert clock.delay(0.5) == pytest.approx(0.5)
    assert clock.delay(100_000.0) == MAX_REALTIME_GAP_S  # a hole or a lying header
    now[0] += MAX_REALTIME_GAP_S
    assert clock.delay(100_000.04) == pytest.approx(0.04)  # the clock moved on: no stall per frame


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    from tests.faults.corpus import run_bounded

    fifo = tmp_path / "pipe.avi"
    os.mkfifo(fifo)
    with pytest.raises(VideoError, match="not a regular file"):
        run_bounded(lambda: list(iter_video_frames(fifo)), 5)
