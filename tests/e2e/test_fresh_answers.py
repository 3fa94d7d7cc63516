"""Answers that are never stale (issue 35): a camera scene that does not change is still answered again
after two "unchanged" keyframes, the live timeline counts the skipped ones as the log does, and the
card says how old its answer is, dimmed while a newer keyframe is analysed."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.session import KeyframeSkipped, PracticeEvent, SkipReason
from app.session.store import load_session
from app.worker.serve import TEST_PACE_ENV
from tests.conditions import wait_for
from tests.e2e.conftest import (
    SHOTS,
    AppServer,
    close_page,
    fake_camera_browser,
    node,
    open_app_page,
    text_of,
    wait_text,
)
from tests.e2e.test_practice import start_camera
from tests.integration.video import hands_phases, write_y4m

pytestmark = pytest.mark.browser
PACE_MS = 300  # per phase and token of the worker's model
MAX_UNCHANGED = 2  # app.core.sampler.SamplerConfig.max_unchanged: then a keyframe is answered whatever


@pytest.fixture(scope="module")
def still_camera_browser(playwright_driver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Chromium whose fake camera shows one scene (hands centred) for its whole length, looped."""
    clip = tmp_path_factory.mktemp("camera") / "still.y4m"
    scene, _ = hands_phases()[1]
    write_y4m(clip, [scene], seconds_per_phase=30)
    browser = fake_camera_browser(playwright_driver, clip)
    yield browser
    browser.close()


def keyframes(log: Path) -> list[str]:
    """The session's keyframes in frame-time order: "answered", "unchanged", "superseded" or "failed"."""
    events = [e for e in load_session(log).events if e.kind in ("practice", "skipped", "failed")]
    kinds = []
    for e in sorted(events, key=lambda e: e.t):
        if isinstance(e, PracticeEvent):
            kinds.append("answered")
        elif isinstance(e, KeyframeSkipped):
            kinds.append("unchanged" if e.reason is SkipReason.UNCHANGED else "superseded")
        else:
            kinds.append("failed")
    return kinds


def longest_unchanged_run(kinds: list[str]) -> int:
    runs = re.findall(r"(?:unchanged,)+", ",".join(kinds) + ",")
    return max((r.count("unchanged") for r in runs), default=0)


def answered_after_unchanged(kinds: list[str]) -> bool:
    """Two unchanged keyframes in a row, then an answered one."""
    return "unchanged,unchanged,answered" in ",".join(kinds)


def shot_while(page, name: str, identifier: str, said: str, tries: int = 3) -> Path:
    """Waits until `identifier` says `said` (failing if it never does), and takes the page's picture then:
    for a state that lasts a second or two (conftest's `shot` settles the page first, and the state is
    gone by then). The picture is kept from the first try whose text still said it after the shot; on a
    busy machine none may, and the last one is kept, said so in the output: the test is on the text."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}-{page.viewport_size['width']}.png"
    for attempt in range(tries):
        wait_text(page, identifier, said, timeout=90)
        path.write_bytes(page.screenshot())
        if said in text_of(page, identifier):
            return path
        if attempt < tries - 1:
            wait_for(lambda: text_of(page, identifier), lambda seen: said not in seen, 60, f"{identifier!r} moved on")
    print(f"{path}: {identifier!r} had moved on from {said!r} by the end of the screenshot")
    return path


def skipped_in_log(log: Path) -> int:
    return sum(e.kind == "skipped" for e in load_session(log).events)


def test_an_unchanged_scene_is_answered_again_and_the_card_says_how_old_its_answer_is(
    still_camera_browser,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The demo model answers in ~15 ms, too fast for an older answer ever to be seen dimmed: paced (the
    # worker's test-only knob) to one to two seconds an answer, as a real-size model on a phone.
    monkeypatch.setenv(TEST_PACE_ENV, str(PACE_MS))
    with AppServer(tmp_path / "data") as app:
        page = open_app_page(still_camera_browser, app.url, permissions=["camera"])
        try:
            check_a_session(page, start_camera(page, app.data, "2 s"))
        finally:
            close_page(page)


def check_a_session(page, log: Path) -> None:
    """A paced camera session showing one scene: what its log, the card and the live timeline say."""
    # Within the first ~30 s of frame time: answered, two keyframes skipped as unchanged, answered again.
    kinds = wait_for(lambda: keyframes(log), answered_after_unchanged, 90, "an answer after two unchanged")
    events = sorted((e for e in load_session(log).events if e.kind in ("practice", "skipped")), key=lambda e: e.t)
    again = next(
        e.t
        for i, e in enumerate(events)
        if i >= 2 and e.kind == "practice" and [x.kind for x in events[i - 2 : i]] == ["skipped", "skipped"]
    )
    assert again < 30, f"answered again at {again:.1f} s: {kinds}"
    # The card's age is refreshed on the page's ticker: it says seconds, not a frozen "just now".
    age = wait_text(page, "answer-age", " s ago", timeout=60)
    assert re.fullmatch(r"answered \d+ s ago( · an older answer: the next keyframe is being analysed)?", age), age
    # While the next keyframe after two skips is analysed, the shown answer is older than 2 s: dimmed.
    shot_while(page, "practice-older-answer", "answer-age", "an older answer")
    # The live timeline counts the skipped keyframes as the log does (both read until they agree).
    said = wait_for(
        lambda: (skipped_in_log(log), text_of(page, "timeline-chart")),
        lambda seen: seen[0] >= MAX_UNCHANGED and f"; {seen[0]} skipped, " in seen[1],
        60,
        "the live timeline's skipped count equal to the log's",
        interval=0.3,
    )
    assert "Timeline of" in said[1], said
    node(page, "start-stop").click()
    wait_text(page, "start-stop", "Start")
    # The session ended: its whole log keeps the rule, and the card shows no age that would stand still.
    kinds = keyframes(log)
    assert longest_unchanged_run(kinds) <= MAX_UNCHANGED, kinds
    assert wait_for(lambda: text_of(page, "answer-age"), lambda s: s == "", 30, "no age once ended") == ""
    final = skipped_in_log(log)
    wait_text(page, "timeline-chart", f"; {final} skipped, ", timeout=30)
    page.request_log.assert_local()
