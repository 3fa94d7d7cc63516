"""Trainees told apart: names given at Start in Practice (and later in Sessions), the examiner's name on
each verdict, Sessions narrowed to one trainee with their progress session by session; at 1280x800 and
at 390x844."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.session.store import load_session
from tests.conditions import wait_for, wait_until
from tests.e2e.conftest import (
    AppServer,
    close_page,
    go_to,
    node,
    open_app_page,
    shot,
    text_of,
    type_into,
    wait_on_page,
    wait_text,
)
from tests.e2e.test_practice import PHONE, choose, open_menu_and_pick, sessions, start_with_files
from tests.integration.video import write_compression_video

pytestmark = pytest.mark.browser


def give_names(page, trainee: str, examiner: str) -> None:
    node(page, "practice-names-edit").click()
    node(page, "trainee-name").first.wait_for(timeout=30_000)
    type_into(page, "trainee-name", trainee)
    type_into(page, "examiner-name", examiner)
    node(page, "names-save").click()
    node(page, "trainee-name").first.wait_for(state="detached", timeout=30_000)
    wait_text(page, "practice-names", f"Trainee: {trainee}")


def practise(page, app: AppServer, video: Path) -> Path:
    """One video session to its end; its log."""
    before = set(sessions(app.data))
    start_with_files(page, [video])
    assert wait_until(lambda: set(sessions(app.data)) - before, timeout=30), "a session"
    wait_text(page, "start-stop", "Stop")
    wait_text(page, "start-stop", "Start", timeout=90)  # the video ended and the session closed
    return next(iter(set(sessions(app.data)) - before))


def test_names_at_start_tell_trainees_apart_and_sessions_shows_one_trainees_progress(
    browser,
    tmp_path: Path,
) -> None:
    from demo_model.compressions import VideoSpec

    slow, good = tmp_path / "slow.avi", tmp_path / "good.avi"
    write_compression_video(slow, VideoSpec(seconds=8, fps=15, rate_per_min=90), seed=5)
    write_compression_video(good, VideoSpec(seconds=8, fps=15, rate_per_min=110), seed=6)
    with AppServer(tmp_path / "data") as app:
        page = open_app_page(browser, app.url)
        try:
            wait_text(page, "model-status", "Model ready")
            choose(page, "Video")
            give_names(page, "Ana Lima", "Dr Bea")
            first = practise(page, app, slow)
            shot(page, "practice-names", other_size=False)
            second = practise(page, app, good)  # the names stay for the next session
            give_names(page, "Ben", "Dr Bea")
            third = practise(page, app, good)
            named = {p: (load_session(p).state.trainee, load_session(p).state.examiner) for p in (first, second, third)}
            assert named == {first: ("Ana Lima", "Dr Bea"), second: ("Ana Lima", "Dr Bea"), third: ("Ben", "Dr Bea")}
            # The examiner's name goes on a verdict given in Practice.
            answer = next(e for e in load_session(third).events if e.kind == "practice")
            node(page, f"confirm-{answer.event_id}").click()
            assert wait_until(lambda: any(e.kind == "confirmed" for e in load_session(third).events), timeout=30), (
                "the confirmation reached the log"
            )
            confirmed = next(e for e in load_session(third).events if e.kind == "confirmed")
            assert confirmed.examiner == "Dr Bea"

            # Sessions: Ben's session renamed to Ana (typed another way), then the list narrowed to Ana.
            go_to(page, "Sessions", f"session-row-{third.stem}")
            node(page, f"session-row-{third.stem}").click()
            wait_text(page, "session-names", "Trainee: Ben")
            node(page, "session-names-edit").click()
            node(page, "trainee-name").first.wait_for(timeout=30_000)
            type_into(page, "trainee-name", "ana  lima")
            node(page, "names-save").click()
            wait_text(page, "session-names", "Trainee: ana lima")
            assert load_session(third).state.trainee == "ana lima"
            node(page, "sessions-back").click()
            open_menu_and_pick(page, "trainee-filter", "Ana Lima")
            wait_text(page, "progress-title", "Progress of Ana Lima: 3 sessions")
            # The rows come after the title: read until the three sessions' rates are there, oldest first
            # (the slow video at 90/min reads 89-90 over its 8 s).
            said = wait_for(
                lambda: text_of(page, "progress"),
                lambda s: len(re.findall(r"median \d+/min", s)) == 3,
                30,
                "each session's median rate in the progress",
            )
            medians = [int(m) for m in re.findall(r"median (\d+)/min", said)]
            assert 88 <= medians[0] <= 92 and all(108 <= m <= 112 for m in medians[1:]), f"oldest first: {said}"
            for log in (first, second, third):
                node(page, f"session-row-{log.stem}").first.wait_for(timeout=30_000)
            shot(page, "sessions-progress", other_size=False)
        finally:
            close_page(page)

        page = open_app_page(browser, app.url, viewport=PHONE)
        try:
            wait_text(page, "model-status", "Model ready")
            go_to(page, "Sessions", "trainee-filter")
            open_menu_and_pick(page, "trainee-filter", "Ana Lima")
            wait_text(page, "progress-title", "Progress of Ana Lima: 3 sessions")
            box = node(page, "progress").first.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
            wait_on_page(page, "% YES")
            shot(page, "sessions-progress", other_size=False)
            assert "Trainee: Ana Lima" in text_of(page, f"session-row-{first.stem}")
        finally:
            close_page(page)
