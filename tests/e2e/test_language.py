"""Switched to 简体中文 at run time, no screen says an English word, and the choice survives a restart.

Every screen is read off the semantics tree (what a screen reader says), after a still image was
answered and reviewed so the result card, the timeline and the session have content. Names
(Keyframe, MNN, CPU…), commands and data (model ids, file names, numbers) are allowed
(tests/e2e/language.py). Screenshots of every screen in Chinese at 1280 and 390 px go to
docs/screenshots/zh-*.png for the README.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from app.ui.words import LANGUAGES
from tests.e2e.conftest import AppServer, close_page, go_to, node, open_app_page, shot, wait_on_page, wait_text
from tests.e2e.language import english_words, screen_text
from tests.e2e.test_practice import choose, start_with_files
from tests.integration.conftest import held_out_scenes

pytestmark = pytest.mark.browser
# Navigation label -> a node that is on that screen only.
SCREENS = {
    "练习": "start-stop",
    "记录": "sessions-refresh",
    "测试": "testers-pick-images",
    "模型": "storage-folder",
    "设置": "settings-threads",
}


def english_on_screen(page) -> list[str]:
    time.sleep(0.8)  # the screen's last update
    return english_words(screen_text(page), allowed=set(LANGUAGES.values()))  # "English" in the chooser


def test_switching_to_chinese_leaves_no_english_word_on_any_screen(browser, tmp_path: Path) -> None:
    scenes = held_out_scenes(count_per_kind=1, seed=61)
    image = tmp_path / "yes.jpg"
    image.write_bytes(next(data for _, data, expected in scenes if expected == "yes"))
    broken, table = tmp_path / "broken.jpg", tmp_path / "labels.csv"
    broken.write_bytes(b"not a picture")
    table.write_text("file,expected\n")
    data = tmp_path / "data"
    with AppServer(data) as server:
        page = open_app_page(browser, server.url)
        try:
            wait_text(page, "model-status", "Model ready")
            choose(page, "Image")
            start_with_files(page, [image])
            wait_text(page, "observation", "YES")
            # A session of two images: its source ("2 images" in the English log) in Chinese on Sessions.
            second = tmp_path / "again.jpg"
            other = held_out_scenes(count_per_kind=1, seed=62)  # another picture that also answers YES
            second.write_bytes(next(data for _, data, expected in other if expected == "yes"))
            choose(page, "Several images")
            start_with_files(page, [image, second])
            wait_on_page(page, "again.jpg · answered")
            go_to(page, "Settings", "settings-threads")
            node(page, "settings-language").get_by_role("button", name=LANGUAGES["zh"], exact=True).click()
            wait_text(page, "settings-backend-status", "正在使用的后端", timeout=30)
            found: dict[str, list[str]] = {}
            for label, target in SCREENS.items():
                go_to(page, label, target)
                if label == "练习":
                    wait_text(page, "observation", "是")  # the answer, in words, from the profile's labels
                    wait_text(page, "question", "手的位置正确吗")
                if label == "记录":
                    node(page, "sessions-refresh").click()
                    wait_on_page(page, "2 张图像")  # the sources in Chinese too
                found[label] = english_on_screen(page)
                shot(page, f"zh-{target}")  # and at 390 px when refreshing the README's pictures
            # What went wrong is said in Chinese too: a damaged image and a labels table among the files.
            go_to(page, "练习", "start-stop")
            choose(page, "多图")
            start_with_files(page, [broken, table])
            said = wait_text(page, "error", "不是能识别的图片格式", timeout=60)
            assert "broken.jpg：不是能识别的图片格式" in said, said
            found["practice-error"] = english_on_screen(page)
            shot(page, "zh-practice-error")
            node(page, "privacy-notice").click()
            node(page, "privacy-sheet").wait_for(timeout=10_000)
            found["privacy"] = english_on_screen(page)
            assert "哪些内容留在本设备" in screen_text(page)
            page.request_log.assert_local()
        finally:
            close_page(page)
    left = {screen: words for screen, words in found.items() if words}
    assert left == {}, json.dumps(left, ensure_ascii=False)

    with AppServer(data) as server:  # a restart: the app opens in Chinese
        page = open_app_page(browser, server.url)
        try:
            wait_text(page, "model-status", "模型已就绪")
            assert english_on_screen(page) == []
        finally:
            close_page(page)


def test_the_checker_sees_english_when_there_is_some(browser, app_url: str) -> None:
    """The same reading of the English app finds the English words, so an empty list above means something."""
    page = open_app_page(browser, app_url)
    try:
        wait_text(page, "model-status", "Model ready")
        words = english_on_screen(page)
        assert {"Practice", "Sessions", "Start", "Source"} <= set(words), words
    finally:
        close_page(page)
