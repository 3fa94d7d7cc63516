"""The examiner taps a keyframe's thumbnail and sees what was judged, large, with where and when it was
taken: in Practice while the session is on screen and in Sessions afterwards, at 1280x800 and 390x844."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from app.session.store import load_session
from tests.conditions import wait_until
from tests.e2e.conftest import AppServer, close_page, go_to, node, open_app_page, shot, text_of, wait_text
from tests.e2e.test_practice import PHONE, choose, practice_answers, sessions, start_with_files
from tests.integration.video import write_hands_video

pytestmark = pytest.mark.browser


def enlarge(page, event_id: str) -> dict:
    """Tap the thumbnail of the row `event_id`; the dialog's picture box once it shows."""
    node(page, f"thumb-{event_id}").first.click()
    node(page, "keyframe-image").first.wait_for(timeout=30_000)
    box = node(page, "keyframe-image").first.bounding_box()
    assert box is not None
    return box


def close(page) -> None:
    node(page, "keyframe-close").first.click()
    node(page, "keyframe-large").first.wait_for(state="detached", timeout=30_000)


def test_a_tapped_thumbnail_shows_the_judged_keyframe_large_in_practice_and_in_sessions(
    browser,
    app_server: AppServer,
    tmp_path: Path,
) -> None:
    video = tmp_path / "hands.avi"
    write_hands_video(video, seconds_per_phase=3, size=720)  # 9 s at real speed
    page = open_app_page(browser, app_server.url)
    try:
        wait_text(page, "model-status", "Model ready")
        before = set(sessions(app_server.data))
        choose(page, "Video")
        choose(page, "2 s")
        start_with_files(page, [video])
        assert wait_until(lambda: set(sessions(app_server.data)) - before, timeout=30), "a session"
        log = next(iter(set(sessions(app_server.data)) - before))
        assert wait_until(lambda: practice_answers(log) >= 2, timeout=60), "two answers"
        wait_text(page, "start-stop", "Start", timeout=60)
        answers = [e for e in load_session(log).events if e.kind == "practice"]
        second = answers[1]
        # What is on disk: the keyframe at review size beside the session (720 px here: never scaled up).
        copy = log.with_suffix(".thumbs") / f"{second.event_id}.large.jpg"
        picture = cv2.imdecode(np.frombuffer(copy.read_bytes(), np.uint8), cv2.IMREAD_COLOR)
        assert picture.shape == (720, 720, 3)

        box = enlarge(page, second.event_id)
        assert box["width"] >= 480 and box["height"] >= 480, f"large on a laptop: {box}"
        caption = node(page, "keyframe-when").first.bounding_box()
        assert caption is not None and caption["y"] + caption["height"] <= 800, f"the caption in view too: {caption}"
        said = text_of(page, "keyframe-when")
        assert f"hands.avi, at {second.t:.1f} s" in said, said  # the time in the video
        assert "Is the hand position correct? — " in text_of(page, "keyframe-answers"), "the answer beside it"
        shot(page, "keyframe-large-practice", other_size=False)
        close(page)
    finally:
        close_page(page)

    # A phone, afterwards, in Sessions: the same keyframe, as wide as the screen allows and all on it.
    page = open_app_page(browser, app_server.url, viewport=PHONE)
    try:
        wait_text(page, "model-status", "Model ready")
        go_to(page, "Sessions", f"session-row-{log.stem}")
        node(page, f"session-row-{log.stem}").click()
        box = enlarge(page, second.event_id)
        assert 200 <= box["width"] and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        closing = node(page, "keyframe-close").first.bounding_box()
        assert closing is not None and closing["y"] + closing["height"] <= PHONE["height"], closing
        assert f"{second.t:.1f} s" in text_of(page, "keyframe-when")
        shot(page, "keyframe-large-sessions", other_size=False)
        close(page)
    finally:
        close_page(page)
