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
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS, AppServer, node, open_app_page, shot, text_of, wait_text
from tests.e2e.test_practice import start_camera
from tests.integration.video import write_frames_y4m

pytestmark = pytest.mark.browser

# Rates and a pause, as a trainee changes pace: (start_s, rate per minute); None is a pause.
SEGMENTS = ((0.0, 100.0), (12.0, 130.0), (20.0, None), (24.0, 112.0))
LENGTH_S = 40.0
FPS = 30
SETTLE_S = 6.0  # the estimator's window: a rate is judged on frames of one pace from then on
TOLERANCE_PER_MIN = 3.0


def _compressions(path: Path) -> list[float]:
    """The segments as one 30 fps .y4m (Chromium loops it); returns the times of the true compressions."""
    from demo_model.compressions import VideoSpec, make_video

    # Two generated videos of one scene, joined where the hands rest at the top (the end of the pause).
    first = make_video(VideoSpec(seconds=24, fps=FPS, rate_per_min=100, rate_change=(12, 130), pauses=((20, 4),)), 11)
    second = make_video(VideoSpec(seconds=LENGTH_S - 24, fps=FPS, rate_per_min=112), 11)
    write_frames_y4m(path, [*first.frames, *second.frames], FPS)
    return [*first.truth.compression_times, *(24 + t for t in second.truth.compression_times)]


def _still(path: Path) -> None:
    from demo_model.compressions import VideoSpec, make_video

    write_frames_y4m(path, list(make_video(VideoSpec(seconds=8, fps=FPS, rate_per_min=None), 11).frames), FPS)


def _launch(playwright_driver, clip: Path):  # noqa: ANN001, ANN202
    args = [
        *CHROMIUM_ARGS,
        "--use-fake-device-for-media-stream",
        "--use-fake-ui-for-media-stream",
        f"--use-file-for-fake-video-capture={clip}",
    ]
    return playwright_driver.chromium.launch(executable_path=CHROMIUM, args=args)


@pytest.fixture(scope="module")
def compressions_browser(
    playwright_driver, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[object, list[float]]]:  # noqa: ANN001
    clip = tmp_path_factory.mktemp("camera-rhythm") / "compressions.y4m"
    truth = _compressions(clip)
    browser = _launch(playwright_driver, clip)
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


def test_the_live_camera_shows_each_rate_the_count_and_the_pause(compressions_browser, app_server: AppServer) -> None:  # noqa: ANN001
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
        page.context.close()
    samples = _samples(log)
    frame_rates = [s.frame_rate for s in samples if s.frame_rate is not None]
    assert frame_rates and min(frame_rates[1:] or frame_rates) >= 15, (
        f"frames a second reaching the meter: {frame_rates}"
    )
    assert "frames a second" in words, words
    # Where the session clock sits on the clip's: the camera opened just before the session began.
    judged = []
    for sample in samples:
        start = max((s for s, _ in SEGMENTS if s <= sample.t % LENGTH_S), default=0.0)
        rate = _true_rate(sample.t)
        if sample.t % LENGTH_S - start < SETTLE_S or sample.t > LENGTH_S:
            continue
        if rate is None:
            if sample.t % LENGTH_S - 20.0 >= 2.5:  # a pause shows as no rate once it has lasted pause_s
                assert sample.rate_per_min is None, (sample.t, sample.rate_per_min)
            continue
        assert sample.rate_per_min is not None, f"no rate at {sample.t:.1f} s while compressing at {rate}"
        judged.append((sample.t, rate, sample.rate_per_min))
    errors = [abs(shown - rate) for _, rate, shown in judged]
    print(
        f"live camera rhythm: {len(judged)} samples judged, median error {np.median(errors):.2f}/min, "
        f"largest {max(errors):.2f}/min; frames a second {np.median(frame_rates):.1f} (median)"
    )
    assert judged and max(errors) <= TOLERANCE_PER_MIN, judged
    assert {rate for _, rate, _ in judged} == {100.0, 130.0, 112.0}
    # The count up to the clip's end, against the compressions the clip holds by then.
    at_end = max((s for s in samples if s.t <= LENGTH_S), key=lambda s: s.t)
    expected = sum(t <= at_end.t - 0.6 for t in truth)  # the newest ~0.6 s are not counted yet
    assert abs(at_end.count - expected) <= 0.05 * expected, (at_end.count, expected)
    pauses = [p for p in at_end.pauses if 19.0 <= p.start_s <= 22.0]
    assert pauses and 3.0 <= pauses[0].length_s <= 5.0, at_end.pauses
    assert said.endswith("/min"), said


def test_a_still_camera_shows_no_rate_and_says_how_many_frames_it_gives(
    playwright_driver, app_server: AppServer, tmp_path: Path
) -> None:  # noqa: ANN001
    clip = tmp_path / "still.y4m"
    _still(clip)
    browser = _launch(playwright_driver, clip)
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
        page.context.close()
    finally:
        browser.close()
    assert all(s.rate_per_min is None and s.count == 0 for s in _samples(log))
    assert np.median([s.frame_rate for s in _samples(log) if s.frame_rate]) >= 15
