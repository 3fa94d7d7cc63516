"""The Settings screen in headless Chromium against the served app: changes survive a restart of
the app, the language switches the screen to 简体中文, and a damaged settings file is said on screen.
Screenshots of each state are saved for the README."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from app.ui.words import LANGUAGES
from tests.conditions import wait_for
from tests.e2e.conftest import AppServer, close_page, go_to, node, open_app_page, shot, text_of, wait_on_page, wait_text

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}


def wait_file(path: Path, done, timeout: float = 20) -> dict:
    def read() -> dict:
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return {}

    return wait_for(read, done, timeout, f"{path} with the expected settings")


def pick(page, identifier: str, option: str) -> None:
    node(page, identifier).get_by_role("button", name=option, exact=True).click()


def test_settings_survive_a_restart_and_switch_the_language(browser, tmp_path: Path) -> None:
    data = tmp_path / "data"
    settings_file = data / "settings.json"
    with AppServer(data) as server:
        page = open_app_page(browser, server.url)
        try:
            wait_text(page, "model-status", "Model ready")
            go_to(page, "Settings", "settings-threads")
            wait_text(page, "settings-backend-status", "Backend in use: CPU")
            assert node(page, "settings-problem").count() == 0 or not node(page, "settings-problem").is_visible()
            # Threads go up to this machine's cores (the help says how many): down is always possible.
            wait_on_page(page, f"this machine has {os.cpu_count()} cores")
            node(page, "settings-threads-fewer").click()
            wait_text(page, "settings-threads", "1")
            pick(page, "settings-interval", "5 s")
            wait_file(settings_file, lambda d: d.get("threads") == 1 and d.get("interval_s") == 5)
            # The worker was reloaded with 1 thread and says which backend it uses.
            wait_text(page, "settings-backend-status", "Backend in use: CPU", timeout=90)
            shot(page, "settings")
            pick(page, "settings-language", LANGUAGES["zh"])
            wait_text(page, "settings-backend-status", "正在使用的后端：CPU", timeout=30)
            wait_file(settings_file, lambda d: d.get("language") == "zh")
            shot(page, "settings-zh")
            page.request_log.assert_local()
        finally:
            close_page(page)

    with AppServer(data) as server:  # the same data folder: a restart of the app
        page = open_app_page(browser, server.url, viewport=PHONE)
        try:
            go_to(page, "设置", "settings-threads")
            wait_text(page, "settings-threads", "1")
            wait_text(page, "settings-backend-status", "正在使用的后端：CPU", timeout=90)
            shot(page, "settings-zh")
            page.request_log.assert_local()
        finally:
            close_page(page)
    saved = json.loads(settings_file.read_text())
    assert (saved["threads"], saved["interval_s"], saved["language"]) == (1, 5, "zh")


def scroll_to(page, identifier: str) -> None:
    """Scroll the settings with the mouse wheel until `identifier` is on screen (Flutter scrolls its canvas)."""
    viewport = page.viewport_size
    page.mouse.move(viewport["width"] / 2, viewport["height"] / 2)
    last = None
    for _ in range(20):
        box = node(page, identifier).bounding_box() if node(page, identifier).count() else None
        if box is not None and 0 <= box["y"] and box["y"] + box["height"] <= viewport["height"]:
            if box == last:  # the end of the scroll, or it is where it stays
                return
            last = box
        page.mouse.wheel(0, 300)
        time.sleep(0.3)
    raise AssertionError(f"{identifier!r} never scrolled into view")


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["wide", "phone"])
def test_a_damaged_settings_file_is_said_on_screen_and_kept(browser, tmp_path: Path, viewport) -> None:
    data = tmp_path / "data"
    data.mkdir()
    damaged = '{"threads": 4, "interval_s": 9}'
    (data / "settings.json").write_text(damaged)
    with AppServer(data) as server:
        page = open_app_page(browser, server.url, viewport=viewport)
        try:
            go_to(page, "Settings", "settings-threads")
            said = wait_text(page, "settings-problem", "could not be used")
            assert "interval_s must be a whole number of seconds from 2 to 5" in said
            assert "settings.json.bad" in said
            wait_text(page, "settings-threads", "2")  # the defaults are in use
            shot(page, "settings-problem")
            # A change is saved to a new file; the damaged one stays as it was.
            node(page, "settings-threads-fewer").click()
            wait_file(data / "settings.json", lambda d: d.get("threads") == 1)
            assert (data / "settings.json.bad").read_text() == damaged
            # Reset asks first.
            scroll_to(page, "settings-reset")
            node(page, "settings-reset").click()
            wait_text(page, "settings-reset-confirm", "go back to their defaults")
            shot(page, "settings-reset")
            node(page, "settings-reset-yes").click()
            wait_file(data / "settings.json", lambda d: d.get("threads") == 2)
            page.request_log.assert_local()
        finally:
            close_page(page)
    assert (data / "settings.json.bad").read_text() == damaged


def test_a_profile_chosen_in_settings_is_asked_and_its_score_cut_applied(browser, tmp_path: Path) -> None:
    """A profile of the person's own (a score cut as Testers will save it) is offered beside the shipped
    ones, chosen from the menu, saved, asked by the reloaded worker: an answer scoring below its cut is
    shown as unknown, withheld for its low score."""
    from app.storage.paths import EXAMPLES, PROFILES
    from tests.e2e.test_practice import choose, open_menu_and_pick, start_with_files

    data = tmp_path / "data"
    own = data / "profiles"
    own.mkdir(parents=True)
    profile = json.loads((PROFILES / "hand_position.json").read_text(encoding="utf-8"))
    # The demo model scores its answers 0.9995-0.9999: this cut withholds every one.
    strict = profile | {"id": "strict_cut", "title": "Hand position, strict cut", "min_score": 0.999999}
    (own / "strict_cut.json").write_text(json.dumps(strict), encoding="utf-8")
    with AppServer(data) as server:
        page = open_app_page(browser, server.url)
        try:
            wait_text(page, "model-status", "Model ready")
            go_to(page, "Settings", "settings-profile")
            open_menu_and_pick(page, "settings-profile", "Hand position, strict cut (strict_cut.json)")
            wait_file(data / "settings.json", lambda d: d.get("profile") == str(own / "strict_cut.json"))
            shot(page, "settings-profile")
            go_to(page, "Practice", "start-stop")
            choose(page, "Image")
            start_with_files(page, [EXAMPLES / "correct-1.jpg"])
            said = wait_text(
                page, "parse-status", "withheld: the model's score was below the profile's cut", timeout=90
            )
            assert "UNKNOWN" in text_of(page, "observation"), said
            shot(page, "practice-score-cut")
            page.request_log.assert_local()
        finally:
            close_page(page)


def test_questions_written_for_another_model_are_said_on_practice_and_in_settings(browser, tmp_path: Path) -> None:
    """The instruct checklist asked of the demo model: both screens say whom it was written for."""
    from app.storage.paths import PROFILES

    data = tmp_path / "data"
    data.mkdir()
    with AppServer(data, "--profile", str(PROFILES / "cpr_checklist_instruct.json")) as server:
        page = open_app_page(browser, server.url)
        try:
            wait_text(page, "model-status", "Model ready")
            said = wait_text(page, "written-for", "written for qwen3-vl-2b-instruct-mnn")
            assert "(keyframe-demo-cpr)" in said
            shot(page, "practice-written-for")
            go_to(page, "Settings", "settings-profile")
            said = wait_text(page, "settings-profile-fit", "Written for qwen3-vl-2b-instruct-mnn")
            assert "(keyframe-demo-cpr)" in said
            shot(page, "settings-profile-fit")
        finally:
            close_page(page)
