"""The live camera's compression rhythm, in Chromium with a fake camera playing generated compressions
at 30 frames a second: the rate at three rates and a pause, the count, the frame rate it came from,
and "—" for a still scene. The camera's keyframe pictures (`take_picture`) come ~2.5 a second; the
rhythm comes from the page's own motion frames (`assets/camera-motion.js`) at the camera's rate.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from app.core.session import RhythmSample
from app.session.store import load_session
from tests.conditions import wait_for
from tests.e2e.conftest import AppServer, close_page, fake_camera_browser, node, open_app_page, shot, text_of, wait_text
from tests.e2e.test_practice import start_camera

pytestmark = pytest.mark.browser

# Rates and a pause, as a trainee changes pace: (start_s, rate per minute); None is a pause.
SEGMENTS = ((0.0, 100.0), (12.0, 130.0), (20.0, None), (24.0, 112.0))
LENGTH_S = 40.0
FPS = 30
SETTLE_S = 6.0  # the estimator's window: a rate is judged on frames of one pace from then on
TOLERANCE_PER_MIN = 3.0


def _compressions(path: Path) -> list[float]:
    """The segments as one 30 fps .y4m (Chromium loops it); returns the times of the true compressions."""
    from demo_model.compressions import VideoSpec, make_video, write_y4m

    # Two generated videos of one scene, joined where the hands rest at the top (the end of the pause).
    first = make_video(VideoSpec(seconds=24, fps=FPS, rate_per_min=100, rate_change=(12, 130), pauses=((20, 4),)), 11)
    second = make_video(VideoSpec(seconds=LENGTH_S - 24, fps=FPS, rate_per_min=112), 11)
    write_y4m(path, [*first.frames, *second.frames], FPS)
    return [*first.truth.compression_times, *(24 + t for t in second.truth.compression_times)]


def _still(path: Path) -> None:
    from demo_model.compressions import VideoSpec, make_video, write_y4m

    write_y4m(path, list(make_video(VideoSpec(seconds=8, fps=FPS, rate_per_min=None), 11).frames), FPS)


@pytest.fixture(scope="module")
def compressions_browser(
    playwright_driver, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[object, list[float]]]:
    clip = tmp_path_factory.mktemp("camera-rhythm") / "compressions.y4m"
    truth = _compressions(clip)
    browser = fake_camera_browser(playwright_driver, clip)
    yield browser, truth
    browser.close()


def _samples(log: Path) -> list[RhythmSample]:
    return [e for e in load_session(log).events if isinstance(e, RhythmSample)]


def _true_rate(t: float) -> float | None:
    """The rate being compressed at `t` of the clip (None in the pause)."""
    rate = None
    for start, value in SEGMENTS:
        if t % LENGTH_S >= start:
            rate = value
    return rate


def test_the_live_camera_shows_each_rate_the_count_and_the_pause(compressions_browser, app_server: AppServer) -> None:
    browser, truth = compressions_browser
    page = open_app_page(browser, app_server.url, permissions=["camera"])
    try:
        log = start_camera(page, app_server.data, interval="3 s")
        # A whole loop of the clip and the start of the next: every segment, judged from the session's log.
        wait_for(lambda: _samples(log), lambda s: bool(s) and s[-1].t >= LENGTH_S + 2, 180, "42 s of rhythm samples")
        said = text_of(page, "rate")
        words = text_of(page, "rate-details")
        shot(page, "practice-camera-rate")
        node(page, "start-stop").click()
        wait_text(page, "start-stop", "Start")
        page.request_log.assert_local()
    finally:
        close_page(page)
    samples = _samples(log)
    # The camera starts slowly while the page is busy: judged once its first window has passed.
    frame_rates = [s.frame_rate for s in samples if s.frame_rate is not None and s.t >= samples[0].t + SETTLE_S]
    assert frame_rates and min(frame_rates) >= 15, f"frames a second reaching the meter: {frame_rates}"
    assert "frames a second" in words, words
    # The clip's pause, as found: its length, and no other pause in the clip's first loop.
    gap = int(np.argmax(np.diff(truth)))  # the clip's pause follows compression `gap`
    stroke_end = 0.5 * 60 / 130  # a pause starts at a stroke's end, half a period after its bottom
    true_start, true_length = truth[gap] + stroke_end, truth[gap + 1] - truth[gap] - 2 * stroke_end
    at_end = max((s for s in samples if s.t <= LENGTH_S), key=lambda s: s.t)
    pause = min(at_end.pauses, key=lambda p: abs(p.length_s - true_length), default=None)
    assert pause is not None and abs(pause.length_s - true_length) <= 0.5, (true_length, at_end.pauses)
    assert len([p for p in at_end.pauses if not p.ongoing]) == 1, f"invented pauses: {at_end.pauses}"
    # The camera starts a moment before or after the session clock, by an amount no one controls: the
    # samples are put on the clip's clock by the pause found (its start is right within ~0.2 s).
    offset = true_start - pause.start_s
    # The count when that pause shows, against the compressions before it on the clip's own clock: at most
    # those after the camera's first frame (the first sample is said on it), at least those after its frames
    # came at 15 a second or more. On a busy machine the fake camera starts with a few pictures a second for
    # a second or two (6 a second over its first 1.8 s in one run), and strokes between those are not seen.
    at_pause = next(s for s in samples if any(p.ongoing and abs(p.start_s - pause.start_s) < 0.5 for p in s.pauses))
    steady = next(s for s in samples if s.frame_rate is not None and s.frame_rate >= 15)
    after_first = sum(samples[0].t + offset < t for t in truth[: gap + 1])
    after_steady = sum(steady.t + offset < t for t in truth[: gap + 1])
    assert 0.95 * after_steady <= at_pause.count <= 1.05 * after_first, (
        at_pause.count,
        (after_steady, after_first),
        (samples[0].t + offset, steady.t + offset),
    )
    judged: dict[float, list[float]] = {}
    for sample in samples:
        t = sample.t + offset
        if not 0 <= t < LENGTH_S:
            continue
        start = max(s for s, _ in SEGMENTS if s <= t)
        end = min((s for s, _ in SEGMENTS if s > t), default=LENGTH_S)
        rate = _true_rate(t)
        if t - start < SETTLE_S + 0.3 or end - t < 0.3:
            continue  # the window holds one pace only from SETTLE_S after it starts
        if rate is None:
            assert sample.rate_per_min is None, (sample.t, sample.rate_per_min)
            continue
        assert sample.rate_per_min is not None, f"no rate at {t:.1f} s of the clip while compressing at {rate}"
        judged.setdefault(rate, []).append(sample.rate_per_min)
    shown = {rate: float(np.median(rates)) for rate, rates in judged.items()}
    print(
        f"live camera rhythm: {sum(map(len, judged.values()))} samples judged, median rate per pace {shown}; "
        f"frames a second {np.median(frame_rates):.1f} (median); session clock {-offset:+.2f} s from the clip's"
    )
    assert set(shown) == {100.0, 130.0, 112.0}
    assert all(abs(median - rate) <= TOLERANCE_PER_MIN for rate, median in shown.items()), judged
    assert said.endswith("/min"), said


def test_a_still_camera_shows_no_rate_and_says_how_many_frames_it_gives(
    playwright_driver, app_server: AppServer, tmp_path: Path
) -> None:
    clip = tmp_path / "still.y4m"
    _still(clip)
    browser = fake_camera_browser(playwright_driver, clip)
    try:
        page = open_app_page(browser, app_server.url, permissions=["camera"])
        log = start_camera(page, app_server.data, interval="3 s")
        wait_for(lambda: _samples(log), lambda s: bool(s) and s[-1].t >= 8, 120, "8 s of rhythm samples")
        assert text_of(page, "rate") == "—"
        details = wait_for(
            lambda: text_of(page, "rate-details"),
            lambda d: "frames a second" in d and "— frames" not in d,
            30,
            "the frame rate",
        )
        fps = float(details.rsplit("·", 1)[1].split()[0])
        assert fps >= 15, details
        assert "no steady compressions seen" in text_of(page, "rate-words")
        node(page, "start-stop").click()
        wait_text(page, "start-stop", "Start")
        page.request_log.assert_local()
        close_page(page)
    finally:
        browser.close()
    assert all(s.rate_per_min is None and s.count == 0 for s in _samples(log))
    assert np.median([s.frame_rate for s in _samples(log) if s.frame_rate]) >= 15
