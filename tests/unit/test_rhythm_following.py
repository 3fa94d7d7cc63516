"""The rhythm follows the region that compresses, wherever it is and whatever its size, and nothing that
moves without compressing: small generated frames (160x120, the size a live camera's page sends)
through `MotionMeter`, then signals straight into `RhythmEstimator`."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from app.core.rhythm import RhythmEstimator
from app.frames.motion import MotionMeter


def regular(seconds: float, fps: float = 30) -> np.ndarray:
    return np.arange(0, seconds, 1 / fps)


def textured(seed: int = 1) -> np.ndarray:
    """A busy room: blurred noise, as a cluttered background looks at 160x120."""
    rng = np.random.default_rng(seed)
    noise = rng.uniform(40, 200, (120, 160)).astype(np.float32)
    return np.repeat(cv2.GaussianBlur(noise, (0, 0), 1.0)[..., None], 3, axis=2)


def noisy(frame: np.ndarray, rng: np.random.Generator, sigma: float) -> np.ndarray:
    return np.clip(frame + sigma * rng.standard_normal(frame.shape, dtype=np.float32), 0, 255).astype(np.uint8)


def run(frames: list[np.ndarray], times: np.ndarray) -> RhythmEstimator:
    meter, est = MotionMeter(), RhythmEstimator()
    for t, frame in zip(times, frames, strict=True):
        est.follow(float(t), meter.measure(frame))
    return est


def ellipse(
    frame: np.ndarray, x: float, y: float, ax: float, ay: float, colour: tuple[int, int, int], top: bool = False
) -> None:
    """An ellipse at a sub-pixel place and size (1/16 px), as a camera sees a smooth movement."""
    f = 16
    centre, axes = (round(x * f), round(y * f)), (round(ax * f), round(ay * f))
    cv2.ellipse(frame, centre, axes, 0, 180 if top else 0, 360, colour, -1, cv2.LINE_AA, shift=4)


def person(scene: np.ndarray, x: int, y: float, size: float, rng: np.random.Generator) -> np.ndarray:
    """A small bright figure (head over shoulders) drawn at (x, y), `size` pixels tall, over `scene`, with noise."""
    frame = scene.copy()
    h = size
    ellipse(frame, x, y + 0.25 * h, 0.12 * h, 0.14 * h, (230, 200, 170))
    ellipse(frame, x, y + 0.65 * h, 0.3 * h, 0.3 * h, (40, 60, 160), top=True)
    return noisy(frame, rng, 3)


def test_a_small_far_trainee_in_a_corner_of_a_busy_picture_gives_the_rate() -> None:
    """A figure a fifth of the picture's height, near a corner, moving down 1.5 px (of 120) at 110 a minute:
    the whole picture's movement is mostly still background and noise; its region's is the compressions."""
    rng, scene, times = np.random.default_rng(2), textured(), regular(16)
    frames = [person(scene, 30, 75 + 0.75 * (1 - np.cos(2 * np.pi * 110 / 60 * t)), 25, rng) for t in times]
    r = run(frames, times).snapshot()
    assert r.rate_per_min is not None and abs(r.rate_per_min - 110) <= 3
    expected = (16 - 1) * 110 / 60
    assert abs(r.count - expected) <= 0.1 * expected


def test_a_trainee_seen_from_above_grows_and_shrinks_with_each_compression() -> None:
    """From above, a compression takes the head and shoulders 4 % nearer and back: no part moves up or
    down as a whole, the region grows and shrinks, at 120 a minute."""
    rng, scene, times = np.random.default_rng(3), textured(4), regular(16)
    frames = []
    for t in times:
        s = 1 + 0.02 * (1 - np.cos(2 * np.pi * 120 / 60 * t))
        frame = scene.copy()
        ellipse(frame, 80, 60, 20 * s, 14 * s, (40, 60, 160))
        ellipse(frame, 80, 60, 8 * s, 9 * s, (90, 60, 40))
        frames.append(noisy(frame, rng, 2))
    r = run(frames, times).snapshot()
    assert r.rate_per_min is not None and abs(r.rate_per_min - 120) <= 3


@pytest.mark.parametrize("hz", [1.8, 2.0, 2.2])
def test_a_hand_waving_sideways_above_the_chest_gives_no_rate_and_counts_nothing(hz: float) -> None:
    rng, scene, times = np.random.default_rng(5), textured(6), regular(20)
    frames = []
    for t in times:
        frame = scene.copy()
        x = 80 + 12 * np.sin(2 * np.pi * hz * t)
        ellipse(frame, x, 45, 6, 8, (230, 200, 170))
        frames.append(noisy(frame, rng, 2))
    r = run(frames, times).snapshot()
    assert r.rate_per_min is None and r.count == 0


def test_the_same_block_pushing_down_and_up_at_2_hz_is_compressions() -> None:
    """The counterpart of the wave: the same movement, vertical, is read (the wave is refused for its direction)."""
    rng, scene, times = np.random.default_rng(5), textured(6), regular(20)
    frames = []
    for t in times:
        frame = scene.copy()
        ellipse(frame, 80, 45 + 2 * np.sin(2 * np.pi * 2.0 * t), 6, 8, (230, 200, 170))
        frames.append(noisy(frame, rng, 2))
    r = run(frames, times).snapshot()
    assert r.rate_per_min is not None and abs(r.rate_per_min - 120) <= 3


@pytest.mark.parametrize(("growth", "counted"), [(2.7, True), (0.0, False)])
def test_seen_from_above_a_head_moving_along_the_picture_as_it_comes_nearer_is_compressions(
    growth: float, counted: bool
) -> None:
    """From above, each compression brings the head and shoulders nearer (a growth) and moves the head
    along the picture: a region pushes 3.0, grows 2.7 and its surroundings swing sideways 4.3 at 110 a
    minute (as measured on a generated top-down view). Sideways 1.43 times the push alone was refused as
    a wave, and 59 of 83 compressions were lost; with the growth it comes nearer too, which a wave does
    not. The same sideways swing with no growth is still refused."""
    rng, times = np.random.default_rng(9), regular(20)
    stroke = 1 - np.cos(2 * np.pi * 110 / 60 * times)
    pushes = np.stack([3.0 * stroke] * 4 + [growth * stroke] * 4, axis=1) / 2
    sideways = np.stack([4.3 * stroke] * 4, axis=1) / 2
    est = RhythmEstimator()
    steps = zip(
        np.diff(pushes, axis=0, prepend=pushes[:1]), np.diff(sideways, axis=0, prepend=sideways[:1]), strict=True
    )
    for t, (push, side) in zip(times, steps, strict=True):
        est.update(float(t), push + rng.normal(0, 0.02, 8), False, side + rng.normal(0, 0.02, 4))
    r = est.snapshot()
    if counted:
        assert r.rate_per_min is not None and abs(r.rate_per_min - 110) <= 3
        assert abs(r.count - 19 * 110 / 60) <= 0.1 * 19 * 110 / 60
    else:
        assert r.rate_per_min is None and r.count == 0


def feed(position: np.ndarray, times: np.ndarray) -> RhythmEstimator:
    est = RhythmEstimator()
    for t, step in zip(times, np.diff(position, prepend=position[0]), strict=True):
        est.update(float(t), float(step))
    return est


def test_a_moment_of_periodic_gesturing_is_not_a_rate() -> None:
    """Three strokes of a gesture at 100 a minute in the middle of irregular movement: periodic for a moment,
    never for the second in a row a rate needs."""
    rng = np.random.default_rng(8)
    times = regular(20)
    knots = np.cumsum(rng.normal(0, 0.6, 60))
    position = np.interp(times, np.arange(60) / 3, knots)
    burst = (times >= 8) & (times < 9.8)
    position = position + np.where(burst, 1.5 * (1 - np.cos(2 * np.pi * 100 / 60 * (times - 8))), 0.0)
    r = feed(position, times).snapshot()
    assert r.rate_per_min is None and r.count == 0


def test_a_pause_once_shown_is_kept_when_a_movement_inside_it_is_found_later() -> None:
    """Compressions at 100 a minute to 10 s, a 4 s pause in which the hands go back to the chest with one
    large movement at 12.5 s, then compressions again. The live view showed the pause by 12.2 s: the late
    movement must not be counted into it (the count jumped and the pause vanished before)."""
    times = regular(24)
    period = 0.6

    def strokes(t: np.ndarray) -> np.ndarray:
        return 1.5 * (1 - np.cos(2 * np.pi * t / period))

    position = np.where(times < 10.2, strokes(times), 0.0)
    position = np.where(times >= 14.2, strokes(times - 14.2), position)
    position = position + np.where((times >= 12.2) & (times < 12.8), 3.0 * np.sin(np.pi * (times - 12.2) / 0.6), 0.0)
    est = RhythmEstimator()
    shown_at = None
    for t, step in zip(times, np.diff(position, prepend=position[0]), strict=True):
        est.update(float(t), float(step))
        r = est.snapshot()
        if shown_at is None and r.pauses and r.pauses[-1].ongoing:
            shown_at = t
    r = est.snapshot()
    assert shown_at is not None and shown_at < 13.0
    assert len(r.pauses) == 1 and not r.pauses[0].ongoing
    assert abs(r.pauses[0].start_s - 10.2) <= 0.5 and r.pauses[0].length_s >= 2.0
    assert abs(r.count - (17 + 16)) <= 2  # 17 strokes before the pause, ~16 counted after it by 23 s


@pytest.mark.parametrize("periodic", [1, 3, 4, 8])
def test_a_rate_needs_several_regions_moving_at_its_period(periodic: int) -> None:
    """Compressions move arms, shoulders and head together, seen in several overlapping regions; a talking
    person's gesture is periodic in one. Twelve channels of independent random movement, `periodic` of
    them also pushing at 110 a minute: a rate (within 3/min) from four such channels, none from fewer."""
    rng = np.random.default_rng(periodic)
    times = regular(16)
    wander = np.stack([np.interp(times, np.arange(48) / 3, np.cumsum(rng.normal(0, 0.4, 48))) for _ in range(12)], 1)
    strokes = 1.5 * (1 - np.cos(2 * np.pi * 110 / 60 * times))
    position = wander + np.where(np.arange(12) < periodic, 1.0, 0.0) * strokes[:, None]
    est = RhythmEstimator()
    for t, step in zip(times, np.diff(position, axis=0, prepend=position[:1]), strict=True):
        est.update(float(t), step)
    r = est.snapshot()
    if periodic >= 4:
        assert r.rate_per_min is not None and abs(r.rate_per_min - 110) <= 3 and r.count > 0
    else:
        assert r.rate_per_min is None and r.count == 0
