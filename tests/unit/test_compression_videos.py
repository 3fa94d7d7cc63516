"""The generated compression videos (tools/demo_model/compressions.py): their ground truth, and the
rhythm estimator reading a clean one. Seeds here are not the benchmark's held-out `bench.rhythm.SEED`."""

from __future__ import annotations

import numpy as np
import pytest
from demo_model.compressions import NEGATIVES, VideoSpec, make_video, negative_spec

from app.core.rhythm import RhythmEstimator
from app.frames.motion import MotionMeter


def test_frames_times_and_compression_times_at_the_asked_rate() -> None:
    video = make_video(VideoSpec(seconds=6, fps=15, rate_per_min=120, duty=0.5), seed=11)
    assert len(video.frames) == len(video.times) == 90
    assert np.allclose(np.diff(video.times), 1 / 15)
    bottoms = np.array(video.truth.compression_times)
    assert len(bottoms) == 12  # 2 a second, the first bottom at a quarter period
    assert abs(bottoms[0] - 0.25) < 0.01 and np.allclose(np.diff(bottoms), 0.5, atol=0.002)
    assert video.truth.pauses == () and video.truth.ccf == 1.0
    assert np.nanmax(video.truth.rates) == np.nanmin(video.truth.rates) == 120


def test_a_pause_starts_at_the_end_of_a_stroke_and_lasts_as_asked() -> None:
    video = make_video(VideoSpec(seconds=10, fps=10, rate_per_min=100, pauses=((4.1, 2.5),)), seed=12)
    [(start, length)] = video.truth.pauses
    assert abs(start - 4.2) < 0.01 and length == 2.5  # 100/min: strokes end every 0.6 s
    bottoms = np.array(video.truth.compression_times)
    assert not ((bottoms > start) & (bottoms < start + length)).any()
    assert abs(video.truth.ccf - 7.5 / 10) < 0.01
    still = (video.times >= start + 0.05) & (video.times < start + length)
    assert not video.truth.compressing[still].any() and (video.truth.depth_px[still] == 0).all()


def test_a_rate_change_and_the_window_rate() -> None:
    video = make_video(VideoSpec(seconds=12, fps=10, rate_per_min=90, rate_change=(6.0, 150)), seed=13)
    gaps = np.diff(video.truth.compression_times)
    assert np.allclose(gaps[:5], 60 / 90, atol=0.002) and np.allclose(gaps[-5:], 60 / 150, atol=0.002)
    assert video.truth.window_rate(video.times, 5.9, 6.0) == pytest.approx(90)
    assert video.truth.window_rate(video.times, 9.0, 6.0) == pytest.approx((90 * 30 + 150 * 31) / 61, abs=1)


def _vertical_shift(a: np.ndarray, b: np.ndarray, max_shift: int) -> int:
    """The integer shift of b against a (rows, + = down) that matches best."""
    errs = [np.abs(a[max_shift : len(a) - max_shift] - b[max_shift + s : len(b) - max_shift + s]).mean()
            for s in range(-max_shift, max_shift + 1)]  # fmt: skip
    return int(np.argmin(errs)) - max_shift


def test_the_hands_move_down_by_the_amplitude_and_back() -> None:
    spec = VideoSpec(seconds=2, fps=30, rate_per_min=60, amplitude=0.04, noise=0, jpeg_quality=None)
    video = make_video(spec, seed=14)
    hx, hy = (round(v) for v in video.truth.hands_xy)
    grey = [f.astype(np.float32).mean(axis=2)[hy - 30 : hy + 30, hx - 12 : hx + 12] for f in video.frames]
    bottom = int(np.argmax(video.truth.depth_px))
    assert video.truth.depth_px[bottom] == pytest.approx(0.04 * 240, abs=0.1)  # 15 fps: the bottom is a frame
    assert abs(_vertical_shift(grey[0], grey[bottom], 14) - 0.04 * 240) <= 1
    assert _vertical_shift(grey[0], grey[-1], 14) in (-1, 0, 1)  # back at the top after one period
    # Away from the hands nothing moves.
    assert np.array_equal(video.frames[0][:, :40], video.frames[bottom][:, :40])


@pytest.mark.parametrize(
    ("aspect", "fit", "shape"),
    [("4:3", "letterbox", (240, 320, 3)), ("16:9", "crop", (240, 427, 3)), ("1:1", "letterbox", (240, 240, 3))],
)
def test_framing_sizes_keep_the_hands_in_the_picture(aspect: str, fit: str, shape: tuple[int, int, int]) -> None:
    video = make_video(VideoSpec(seconds=1, fps=5, aspect=aspect, fit=fit), seed=15)
    assert all(f.shape == shape and f.dtype == np.uint8 for f in video.frames)
    x, y = video.truth.hands_xy
    assert 0 < x < shape[1] and 0 < y < shape[0] - 0.05 * shape[0]


@pytest.mark.parametrize("kind", NEGATIVES)
def test_negative_videos_have_no_compressions(kind: str) -> None:
    video = make_video(negative_spec(kind, seconds=2, fps=10), seed=16)
    assert video.truth.compression_times == () and video.truth.ccf == 0.0
    assert not video.truth.compressing.any() and len(video.frames) == 20


def test_bad_specs_are_refused() -> None:
    with pytest.raises(ValueError):
        VideoSpec(aspect="3:2")
    with pytest.raises(ValueError):
        negative_spec("dancing")


def test_the_estimator_reads_a_clean_110_per_minute_video_within_3() -> None:
    video = make_video(VideoSpec(seconds=12, fps=30, rate_per_min=110), seed=17)
    meter, estimator = MotionMeter(), RhythmEstimator()
    for t, frame in zip(video.times, video.frames, strict=True):
        feature = meter.measure(frame)
        estimator.follow(float(t), feature)
    r = estimator.snapshot()
    assert r.rate_per_min is not None and abs(r.rate_per_min - 110) <= 3
    assert r.pauses == ()
