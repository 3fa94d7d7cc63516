"""The practice app as trainees and examiners use it, in headless Chromium against the served app.

A fake camera plays generated demo scenes; a video file and stills go through
the file picker; an examiner confirms one answer and corrects another, and the
session file holds both. Screenshots of each state are saved for the README.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.session.store import load_session
from app.ui.shell.app_main import SESSIONS, SETTINGS
from tests.conditions import wait_for, wait_until
from tests.e2e.conftest import (
    AppServer,
    close_page,
    fake_camera_browser,
    go_to,
    node,
    open_app_page,
    shot,
    text_of,
    type_into,
    wait_on_page,
    wait_text,
    wait_until_loaded,
)
from tests.integration.conftest import held_out_scenes
from tests.integration.video import write_compression_video, write_hands_video, write_hands_y4m

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
DESTINATIONS = SETTINGS + 1  # Settings is the last of the navigation's destinations


def choose(page, label: str) -> None:
    """Tap a choice; a tap that lands while the screen re-lays itself out is tapped again, as a person would."""
    from playwright.sync_api import Error as PlaywrightError

    button = page.get_by_role("button", name=label, exact=True)
    for attempt in range(3):
        try:
            button.click(timeout=10_000)
            return
        except PlaywrightError:
            if attempt == 2:
                raise


def start_with_files(page, paths: list[Path]) -> None:
    with page.expect_file_chooser() as chooser:
        page.locator("[flt-semantics-identifier='start-stop']").click()
    chooser.value.set_files([str(p) for p in paths])


def open_menu_and_pick(page, identifier: str, option: str) -> None:
    """Open a menu and pick an option, as a person retries a tap that landed while the list scrolled."""
    choice = page.get_by_role("button", name=option, exact=True)
    for _ in range(3):
        before = choice.count()
        page.locator(f"[flt-semantics-identifier='{identifier}']").click()
        if wait_until(lambda before=before: choice.count() > before, timeout=5, interval=0.1):
            choice.last.click()
            return
        page.keyboard.press("Escape")  # a menu that did open elsewhere, or half-way: closed before the next tap
        time.sleep(0.5)
    raise AssertionError(f"the {identifier} menu never offered {option}")


def observations_over_time(page, seconds: float, until: list[str]) -> list[str]:
    """The answers the card showed, collapsed (NO, YES, NO…), until `until` is seen or time runs out."""
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and seen[: len(until)] != until:
        value = text_of(page, "observation").strip()
        if value in ("YES", "NO", "UNKNOWN") and (not seen or seen[-1] != value):
            seen.append(value)
        time.sleep(0.2)
    return seen


def sessions(data: Path) -> list[Path]:
    return sorted((data / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)


@pytest.fixture(scope="module")
def camera_browser(playwright_driver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Chromium whose fake camera plays hands off-centre (6 s), centred (6 s), off-centre (6 s)."""
    clip = tmp_path_factory.mktemp("camera") / "hands.y4m"
    assert write_hands_y4m(clip) == ["no", "yes", "no"]
    browser = fake_camera_browser(playwright_driver, clip)
    yield browser
    browser.close()


def test_a_still_image_gets_an_answer_in_words(page, tmp_path: Path) -> None:
    wait_text(page, "model-status", "Model ready")
    assert "trained on synthetic drawings only" in text_of(page, "demo-model-note")
    assert "Images stay on this device" in text_of(page, "privacy-notice")
    shot(page, "practice-ready")
    scenes = held_out_scenes(count_per_kind=1, seed=5)
    yes = tmp_path / "yes.jpg"
    yes.write_bytes(next(data for _, data, expected in scenes if expected == "yes"))
    choose(page, "Image")
    start_with_files(page, [yes])
    wait_text(page, "observation", "YES")
    assert "Waiting for examiner confirmation" in text_of(page, "review-state")
    taken = text_of(page, "taken-at")
    assert "yes.jpg" in taken and " s " not in taken, "a still by its name, with no made-up time"
    # Technical details exist but are closed: the raw JSON is not on the card.
    node(page, "result-card").wait_for(timeout=30_000)  # text_of reads "" for a missing card
    assert "hand_position_correct" not in text_of(page, "result-card")
    shot(page, "practice-answer")


def test_a_video_session_then_the_examiner_confirms_and_corrects(page, app_server: AppServer, tmp_path: Path) -> None:
    video = tmp_path / "hands.avi"
    write_hands_video(video, seconds_per_phase=4)  # 12 s at real speed
    wait_text(page, "model-status", "Model ready")
    choose(page, "Video")
    choose(page, "2 s")
    start_with_files(page, [video])
    wait_text(page, "start-stop", "Stop")  # the new session runs: the previous answer is cleared
    assert observations_over_time(page, 40, ["NO", "YES", "NO"]) == ["NO", "YES", "NO"]
    wait_text(page, "start-stop", "Start", timeout=30)  # the video ended and the session closed
    shot(page, "practice-video")

    log = sessions(app_server.data)[-1]
    answers = [e for e in load_session(log).events if e.kind == "practice"]
    first, second = answers[0], answers[1]
    # Focus the field's own input (a click lands wherever Flutter has just scrolled to), then type.
    type_into(page, f"note-{first.event_id}", "hands fine")
    page.locator(f"[flt-semantics-identifier='confirm-{first.event_id}']").click()
    # The confirmed answer moves to "Reviewed" and the list below it shifts: wait for that first
    # (a tap during the move missed the menu once in CI).
    wait_text(page, "review-done-title", "(1)")
    time.sleep(0.5)
    wrong = "NO" if second.observation == "yes" else "YES"
    open_menu_and_pick(page, f"correct-{second.event_id}", wrong)
    # Picked, then saved: the note written after the pick goes with this correction.
    type_into(page, f"note-{second.event_id}", "hands off the sternum")
    page.locator(f"[flt-semantics-identifier='confirm-{second.event_id}']").click()  # "Save correction"
    assert wait_until(
        lambda: {"confirmed", "corrected"} <= {e.kind for e in load_session(log).events}, timeout=20, interval=0.2
    ), "the confirmation and the correction reached the log"
    events = {e.kind: e for e in load_session(log).events if e.kind in ("confirmed", "corrected")}
    assert events["confirmed"].target_id == first.event_id and events["confirmed"].note == "hands fine"
    assert events["corrected"].target_id == second.event_id and events["corrected"].note == "hands off the sternum"
    assert events["corrected"].observation == wrong.lower()
    # The correction is the verdict on screen, and the model's answer stays visible as the model's.
    model_said = "YES" if wrong == "NO" else "NO"
    wait_on_page(page, f"{wrong} (examiner; the model said {model_said})")
    shot(page, "practice-reviewed")
    go_to(page, "Sessions", f"session-row-{log.stem}")  # the rail (not the banner's "Review it in Sessions")
    page.locator(f"[flt-semantics-identifier='session-row-{log.stem}']").click()
    summary = wait_text(page, "sessions-summary", "1")
    assert summary
    shot(page, "sessions-open")
    # The session can be deleted from the screen, with its keyframe pictures, after a confirmation.
    node(page, "session-delete").click()
    node(page, "session-delete-yes").first.wait_for(timeout=10_000)
    node(page, "session-delete-yes").click()
    assert wait_until(lambda: not log.exists(), timeout=30), "the log is gone"
    # The log goes first, then its pictures' folder (app.session.store.delete_session): wait for both.
    assert wait_until(lambda: not log.with_suffix(".thumbs").exists(), timeout=30), "the keyframe pictures are gone"
    node(page, f"session-row-{log.stem}").wait_for(state="detached", timeout=30_000)


def test_a_playing_videos_preview_is_never_blank_after_its_first_frame(page, tmp_path: Path) -> None:
    import io

    from PIL import Image

    video = tmp_path / "hands.avi"
    write_hands_video(video, seconds_per_phase=5)  # 15 s at real speed
    wait_text(page, "model-status", "Model ready")
    choose(page, "Video")
    start_with_files(page, [video])
    wait_text(page, "start-stop", "Stop")
    preview = page.get_by_role("img", name="Preview of the source")
    preview.first.wait_for(timeout=20_000)
    box = preview.first.bounding_box()  # where the frames show: sampled from now on, seen or not
    assert box is not None
    top = {"x": box["x"], "y": box["y"], "width": box["width"], "height": box["height"] * 0.6}

    def blank() -> bool:
        """No frame in the panel: the preview's node is gone (the image is between two frames), or the
        panel shows its own dark colour and nothing else (the overlay aside)."""
        if not preview.count():
            return True
        picture = Image.open(io.BytesIO(page.screenshot(clip=top))).convert("L")
        low, high = picture.getextrema()
        return high - low < 24

    assert wait_until(lambda: not blank(), timeout=20), "the first frame shows"
    samples = []
    while text_of(page, "start-stop") == "Stop" and len(samples) < 40:
        samples.append(blank())
        time.sleep(0.3)
    # A screenshot takes longer on a busy machine: 10 samples were taken once beside other tests (16 s
    # of video). Six still catch a preview that blanks between frames (a quarter of the samples did).
    assert len(samples) >= 6, f"sampled while it played: {len(samples)}"
    assert sum(samples) == 0, f"{sum(samples)} of {len(samples)} samples were an empty panel"


def test_a_live_camera_session_follows_the_scene(camera_browser, app_server: AppServer) -> None:
    page = open_app_page(camera_browser, app_server.url, permissions=["camera"])
    try:
        wait_text(page, "model-status", "Model ready")
        choose(page, "Camera")
        choose(page, "2 s")
        page.locator("[flt-semantics-identifier='start-stop']").click()
        wait_text(page, "start-stop", "Stop")
        assert observations_over_time(page, 60, ["NO", "YES", "NO"]) == ["NO", "YES", "NO"]
        chart = text_of(page, "timeline-chart")
        shot(page, "practice-camera")
        page.locator("[flt-semantics-identifier='start-stop']").click()
        wait_text(page, "start-stop", "Start")
        assert "Timeline of" in chart and "Timeline of 0 " not in chart, chart
        page.request_log.assert_local()
    finally:
        close_page(page)
    records = [json.loads(line) for line in sessions(app_server.data)[-1].read_text().splitlines() if line.strip()]
    assert sum(r["kind"] == "practice" for r in records) >= 3


@pytest.mark.parametrize("width", [340, 456], ids=["4:3", "16:9"])
def test_a_webcams_wider_frame_is_answered_like_the_square_scene(playwright_driver, tmp_path: Path, width: int) -> None:
    """A webcam gives 4:3 or 16:9, the demo model sees squares: the scene between side bars must get
    the square scene's answers (hands off-centre NO, centred YES, off-centre NO)."""
    clip = tmp_path / "wide.y4m"
    assert write_hands_y4m(clip, seconds_per_phase=5, width=width) == ["no", "yes", "no"]
    browser = fake_camera_browser(playwright_driver, clip)
    try:
        with AppServer(tmp_path / "data") as app:
            page = open_app_page(browser, app.url, permissions=["camera"])
            start_camera(page, app.data)
            assert observations_over_time(page, 60, ["NO", "YES", "NO"]) == ["NO", "YES", "NO"]
    finally:
        browser.close()


def practice_answers(log: Path) -> int:
    return sum(e.kind == "practice" for e in load_session(log).events) if log.exists() else 0


def assert_answers_keep_coming(log: Path, why: str) -> None:
    """One more answer is saved within 30 s (a keyframe every 2 s, with room for a busy machine)."""
    n = practice_answers(log)
    assert wait_until(lambda: practice_answers(log) > n, timeout=30), why


def start_camera(page, data: Path, interval: str = "2 s") -> Path:
    """A camera session at `interval`, started; its log once the first event is written."""
    wait_text(page, "model-status", "Model ready")
    choose(page, "Camera")
    choose(page, interval)
    before = set(sessions(data))
    node(page, "start-stop").click()
    wait_text(page, "start-stop", "Stop")
    assert wait_until(lambda: set(sessions(data)) - before, timeout=30), "the session's log is written"
    return next(iter(set(sessions(data)) - before))


def test_a_camera_session_keeps_going_on_other_screens_and_back(camera_browser, app_server: AppServer) -> None:
    page = open_app_page(camera_browser, app_server.url, permissions=["camera"])
    try:
        log = start_camera(page, app_server.data)
        assert wait_until(lambda: practice_answers(log) >= 1, timeout=30), "a first answer"
        for label, target in (
            ("Settings", "settings-threads"),
            ("Sessions", "sessions-refresh"),
            ("Practice", "start-stop"),
        ):
            go_to(page, label, target)
            assert_answers_keep_coming(log, f"answers keep coming on {label}")
        # A phone turned on its side, a window made narrow: the layout changes, the camera keeps going.
        for size in (PHONE, {"width": 1280, "height": 800}):
            page.set_viewport_size(size)
            assert_answers_keep_coming(log, f"answers keep coming at {size}")
            assert text_of(page, "error") == "", text_of(page, "error")
        assert text_of(page, "start-stop") == "Stop", "the session still runs"
        assert text_of(page, "error") == ""
        node(page, "start-stop").click()
        wait_text(page, "start-stop", "Start")
        page.request_log.assert_local()
    finally:
        close_page(page)
    assert "not registered" not in (app_server.data / "app.log").read_text(errors="replace")


def test_what_is_judged_is_the_camera_picture_as_the_trainee_sees_it(playwright_driver, tmp_path: Path) -> None:
    """The browser's camera preview is mirrored, as a mirror is; the analysed keyframe must be the
    same way round, or left and right swap between what the trainee sees and what is judged."""
    import io

    import cv2
    import numpy as np
    from PIL import Image

    rgb = np.zeros((256, 256, 3), np.uint8)
    rgb[:, :128] = 230  # the scene: bright on its left
    clip = tmp_path / "left-bright.y4m"
    with open(clip, "wb") as fh:
        fh.write(b"YUV4MPEG2 W256 H256 F10:1 Ip A1:1 C420jpeg\n")
        fh.write((b"FRAME\n" + cv2.cvtColor(rgb, cv2.COLOR_RGB2YUV_I420).tobytes()) * 50)
    browser = fake_camera_browser(playwright_driver, clip)

    def bright_side(grey: np.ndarray) -> str:
        third = grey.shape[1] // 3
        return "left" if grey[:, :third].mean() > grey[:, -third:].mean() else "right"

    try:
        with AppServer(tmp_path / "data") as app:
            page = open_app_page(browser, app.url, permissions=["camera"])
            wait_text(page, "model-status", "Model ready")
            choose(page, "Camera")
            node(page, "start-stop").click()
            wait_text(page, "start-stop", "Stop")
            thumbs = app.data / "sessions"
            assert wait_until(lambda: list(thumbs.glob("*.thumbs/*.jpg")), timeout=30), "an answer and its keyframe"
            card, source = node(page, "result-card").bounding_box(), node(page, "source").bounding_box()
            assert card is not None and source is not None
            stage = {"x": source["x"], "y": card["y"], "width": card["x"] - 20 - source["x"], "height": 300}
            preview = np.asarray(Image.open(io.BytesIO(page.screenshot(clip=stage))).convert("L"), dtype=float)
            judged = np.asarray(Image.open(next(thumbs.glob("*.thumbs/*.jpg"))).convert("L"), dtype=float)
            assert bright_side(preview) == "right", "the preview is mirrored, as the trainee expects"
            assert bright_side(judged) == bright_side(preview), "the analysed keyframe is the same way round"
    finally:
        browser.close()


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["wide", "phone"])
def test_a_denied_camera_says_so_and_offers_the_other_sources(browser, app_server: AppServer, viewport) -> None:
    page = open_app_page(browser, app_server.url, viewport=viewport, permissions=[])  # no fake device, no permission
    try:
        wait_text(page, "model-status", "Model ready")
        choose(page, "Camera")
        page.locator("[flt-semantics-identifier='start-stop']").click()
        assert "camera is not available" in wait_text(page, "error", "camera is not available")
        shot(page, "practice-camera-denied")
    finally:
        close_page(page)


def test_a_folder_sessions_review_list_shows_each_keyframe_and_its_file(
    page,
    app_server: AppServer,
    tmp_path: Path,
) -> None:
    scenes = held_out_scenes(count_per_kind=1, seed=12)[:3]
    files = []
    for i, (_, data, _) in enumerate(scenes):
        files.append(tmp_path / f"trainee-{i}.jpg")
        files[-1].write_bytes(data)
    wait_text(page, "model-status", "Model ready")
    before = set(sessions(app_server.data))
    choose(page, "Several images")
    start_with_files(page, files)
    assert wait_until(lambda: set(sessions(app_server.data)) - before, timeout=30)
    log = next(iter(set(sessions(app_server.data)) - before))
    assert wait_until(lambda: practice_answers(log) == 3, timeout=60), "three answers"
    wait_text(page, "start-stop", "Start")
    for event in (e for e in load_session(log).events if e.kind == "practice"):
        node(page, f"thumb-{event.event_id}").first.wait_for(timeout=30_000)  # what was judged
        wait_on_page(page, f"{event.source} · answered")  # its file's name, and no made-up time
    # At 1280×800 the examiner's list sits under the card, compact, and the timeline is in view too.
    fold = page.viewport_size["height"]
    title, chart = node(page, "review-pending-title").bounding_box(), node(page, "timeline-chart").bounding_box()
    assert title is not None and title["y"] < fold / 2, f"the examiner's list starts at {title}"
    assert chart is not None and chart["y"] + chart["height"] / 2 < fold, f"the timeline is at {chart}"
    rows = [node(page, f"review-{e.event_id}").bounding_box() for e in load_session(log).events if e.kind == "practice"]
    assert all(r is not None and r["height"] < 130 for r in rows), f"pending items: {rows}"
    assert sum(r["y"] + r["height"] < fold for r in rows) >= 2, "two pending answers in view without scrolling"
    shot(page, "practice-folder-review")


def test_a_file_over_the_limit_is_refused_before_decoding(page, tmp_path: Path) -> None:
    wait_text(page, "model-status", "Model ready")
    image = tmp_path / "yes.jpg"
    image.write_bytes(next(data for _, data, expected in held_out_scenes(1, seed=8) if expected == "yes"))
    choose(page, "Image")
    start_with_files(page, [image])
    wait_text(page, "observation", "YES")
    big = tmp_path / "huge.jpg"
    with open(big, "wb") as fh:
        fh.truncate(65 * 2**20)  # over the 64 MB image limit
    start_with_files(page, [big])
    assert "huge.jpg is 65 MB, over the limit of 64 MB" in wait_text(page, "error", "limit")
    # A clean card beside the error: the last answer would read as the answer to the refused file.
    assert "No answer yet" in wait_text(page, "observation", "No answer yet")
    shot(page, "practice-too-large")


def test_a_missing_model_is_a_sentence_and_a_way_out(browser, tmp_path: Path) -> None:
    from app.models.catalog import DEFAULT_MODEL_ID

    empty = tmp_path / "no-model"
    empty.mkdir()
    image = tmp_path / "yes.jpg"
    image.write_bytes(next(data for _, data, expected in held_out_scenes(1, seed=8) if expected == "yes"))
    with AppServer(tmp_path / "data", "--model", str(empty)) as app:
        for viewport in (PHONE, None):
            page = open_app_page(browser, app.url, viewport=viewport)
            try:
                status = wait_text(page, "model-status", "cannot be used")
                # Named, in words, with no class name or placeholder, and a folder is not told to download.
                assert "no-model" in status and "config.json" in status, status
                assert "ModelNotVerified" not in status and "MODEL_ID" not in status, status
                assert "This folder is not a model" in status, status
                # What went wrong and the way out are on screen without scrolling, at both sizes.
                bottom = (viewport or {"height": 800})["height"] - (80 if viewport else 0)
                for what in ("model-status", "open-models"):
                    box = node(page, what).bounding_box()
                    assert box is not None and box["y"] + box["height"] <= bottom, f"{what} at {box}"
                shot(page, "practice-model-missing")
                if viewport is not None:
                    continue
                # The way out: Models, "Use this model" on the demo, and Practice works at once.
                node(page, "open-models").click()
                node(page, f"model-use-{DEFAULT_MODEL_ID}").first.wait_for(timeout=30_000)
                node(page, f"model-use-{DEFAULT_MODEL_ID}").first.click()
                go_to(page, "Practice", "start-stop")
                wait_text(page, "model-status", "Model ready", timeout=90)
                choose(page, "Image")
                start_with_files(page, [image])
                wait_text(page, "observation", "YES")
                page.reload()  # and it stays so
                wait_until_loaded(page)
                wait_text(page, "model-status", "Model ready", timeout=90)
            finally:
                close_page(page)


def test_phone_layout_puts_the_answer_under_the_preview(browser, app_server: AppServer, tmp_path: Path) -> None:
    page = open_app_page(browser, app_server.url, viewport=PHONE)
    try:
        wait_text(page, "model-status", "Model ready")
        card = page.locator("[flt-semantics-identifier='result-card']").bounding_box()
        assert card is not None and card["y"] < PHONE["height"], "the answer is visible without scrolling"
        shot(page, "practice-ready")
        image = tmp_path / "yes.jpg"
        image.write_bytes(next(data for _, data, expected in held_out_scenes(1, seed=8) if expected == "yes"))
        choose(page, "Image")
        start_with_files(page, [image])
        wait_text(page, "observation", "YES")
        card = node(page, "result-card").bounding_box()
        bar = 80  # the navigation bar at the bottom
        assert card is not None and card["y"] + card["height"] <= PHONE["height"] - bar, f"the whole card: {card}"
        shot(page, "practice-answer")
        # The pending answer's actions wrap within the phone's width.
        note = page.locator("[flt-semantics-identifier^='note-']").first
        page.mouse.move(PHONE["width"] / 2, PHONE["height"] / 2)
        page.mouse.wheel(0, 1500)  # Flutter scrolls its canvas on a wheel, not on DOM scrolling
        assert wait_until(lambda: (note.bounding_box() or {"y": 1e9})["y"] < PHONE["height"] - bar, timeout=10)
        box = note.bounding_box()
        assert box is not None and box["x"] + box["width"] <= PHONE["width"] and box["width"] > 200, box
        time.sleep(1)  # semantics move before the canvas paints the scrolled frame
        shot(page, "practice-review")
        # A tap on the navigation bar's Sessions destination (the bar exposes no semantics node here).
        page.mouse.click(PHONE["width"] * (SESSIONS + 0.5) / DESTINATIONS, PHONE["height"] - 40)
        page.locator("[flt-semantics-identifier='sessions-refresh']").wait_for(timeout=10_000)
        time.sleep(1)
        shot(page, "sessions")
    finally:
        close_page(page)


@pytest.fixture(autouse=True)
def _no_real_storage(monkeypatch: pytest.MonkeyPatch) -> None:
    assert os.environ.get("FLET_APP_STORAGE_DATA"), "tests never touch the user's data folder"


def test_a_second_tab_shares_the_worker_and_sees_the_same_session(
    browser, app_server: AppServer, tmp_path: Path
) -> None:
    first = open_app_page(browser, app_server.url)
    second = open_app_page(browser, app_server.url)
    try:
        wait_text(first, "model-status", "Model ready")
        wait_text(second, "model-status", "Model ready")
        workers_before = worker_pids(app_server)
        no = tmp_path / "no.jpg"
        no.write_bytes(next(data for _, data, expected in held_out_scenes(1, seed=6) if expected == "no"))
        choose(first, "Image")
        start_with_files(first, [no])
        wait_text(first, "observation", "NO")
        wait_text(second, "observation", "NO")  # the other tab shows the same answer, from the same session
        assert worker_pids(app_server) == workers_before and len(workers_before) == 1, "one model load per app"
        first.request_log.assert_local()
        second.request_log.assert_local()
    finally:
        close_page(first)
        close_page(second)


def worker_pids(app: AppServer) -> set[int]:
    """The app's model workers: its spawned children (the resource tracker is not one)."""
    from tests.faults.procs import children, workers

    return workers(children(app.pid))


def test_the_first_answer_comes_at_once_and_a_new_session_starts_from_a_clean_card(
    camera_browser,
    app_server: AppServer,
) -> None:
    page = open_app_page(camera_browser, app_server.url, permissions=["camera"])
    try:
        wait_text(page, "model-status", "Model ready")
        log = start_camera(page, app_server.data, "3 s")
        started = time.monotonic()
        observations_over_time(page, 30, ["NO"])
        first_after = time.monotonic() - started
        # The first usable picture is the first keyframe, taken at once (it waited a whole interval:
        # t = 3.0 s at 3 s, answered 4.6 s after Start). Judged by the session's own clock against its
        # first frame (the first rhythm sample is said at the first frame), not against Start: a busy
        # machine starts the camera late (t = 1.06 s for the first frame once), which is not the sampler
        # waiting. The wall-clock figure (about 1 s here) is printed. The bound is under the 3 s interval
        # the old sampler waited, not a speed: the first picture's round trip took 1.22 s on a busy machine.
        events = load_session(log).events
        first = next(e for e in events if e.kind == "practice")
        first_frame = min(e.t for e in events if e.kind == "rhythm")
        print(
            f"first answer on screen {first_after:.1f} s after Stop showed; first frame at t = {first_frame:.2f} s, "
            f"its keyframe at t = {first.t:.2f} s"
        )
        waited = first.t - first_frame
        assert waited < 2.0, f"the first keyframe waited {waited:.2f} s after the first frame (t = {first_frame:.2f} s)"
        node(page, "start-stop").click()
        wait_text(page, "start-stop", "Start")
        assert text_of(page, "observation") == "NO", "after Stop the session's last answer stays"
        # Start again: the previous answer is gone at once, not when the new session's first comes.
        node(page, "start-stop").click()
        deadline = time.monotonic() + 10
        seen = []
        while time.monotonic() < deadline and text_of(page, "start-stop") != "Stop":
            seen.append(text_of(page, "observation"))
            time.sleep(0.05)
        assert "NO" not in seen[1:], f"the old answer showed after Start: {seen}"
        node(page, "start-stop").click()
        wait_text(page, "start-stop", "Start")
    finally:
        close_page(page)
    # A tab opened after the session ended shows neither its answer nor its last frame.
    fresh = open_app_page(camera_browser, app_server.url, permissions=["camera"])
    try:
        wait_text(fresh, "model-status", "Model ready")
        assert text_of(fresh, "observation") == "No answer yet"
        shot(fresh, "practice-new-tab")
    finally:
        close_page(fresh)


def test_a_second_tab_sees_the_camera_session_and_a_reload_ends_it_in_words(
    camera_browser,
    app_server: AppServer,
) -> None:
    owner = open_app_page(camera_browser, app_server.url, permissions=["camera"])
    other = open_app_page(camera_browser, app_server.url, permissions=["camera"])
    try:
        log = start_camera(owner, app_server.data)
        observations_over_time(owner, 30, ["NO"])
        # The other tab follows the session and says where the camera is.
        assert "camera is in another tab" in wait_text(other, "activity", "camera is in another tab")
        wait_text(other, "observation", "NO")
        shot(other, "practice-camera-other-tab")
        owner.reload()
        wait_until_loaded(owner)
        for tab in (other, owner):
            assert "tab with the camera was reloaded" in wait_text(tab, "notice", "tab with the camera", timeout=30)
            wait_text(tab, "start-stop", "Start")
        for tab in (other, owner):  # no last answer left looking current: the card says the session ended
            assert text_of(tab, "observation") == "Session ended"
            waiting = text_of(tab, "ended-pending")  # singular for one answer, as the screen shows it
            assert re.fullmatch(r"(1 answer of it waits|\d+ answers of it wait) for the examiner\.", waiting), waiting
        shot(other, "practice-camera-tab-gone")
        # The way to the answers still waiting: Sessions, with that session open.
        node(owner, "review-in-sessions").click()
        wait_text(owner, "sessions-summary", "waiting for the examiner")
    finally:
        close_page(owner)
        close_page(other)
    assert practice_answers(log) >= 1, "the session was saved"


def set_tab_hidden(page, hidden: bool) -> None:
    """The tab goes behind another one (or comes back): the browser's visibility change, which Flutter
    turns into a lifecycle event for the app (headless Chromium never hides a tab by itself)."""
    page.evaluate(
        """(hidden) => {
            const state = hidden ? 'hidden' : 'visible';
            Object.defineProperty(document, 'visibilityState', {value: state, configurable: true});
            Object.defineProperty(document, 'hidden', {value: hidden, configurable: true});
            document.dispatchEvent(new Event('visibilitychange'));
        }""",
        hidden,
    )


def terminal_lines(data: Path) -> list[str]:
    """What the app printed besides its own "open http://…" line."""
    terminal = (data / "app.log").read_text(errors="replace").splitlines()
    return [line for line in terminal if line.strip() and not line.startswith("open http://127.0.0.1:")]


def test_a_camera_session_goes_on_behind_another_tab_and_the_terminal_stays_quiet(
    camera_browser,
    tmp_path: Path,
) -> None:
    """In a browser the model runs on the computer, not in the tab: a tab sent behind another one
    keeps its session (a phone app pauses instead), and its lifecycle events print nothing."""
    with AppServer(tmp_path / "data") as app:
        page = open_app_page(camera_browser, app.url, permissions=["camera"])
        try:
            log = start_camera(page, app.data)
            assert wait_until(lambda: practice_answers(log) >= 1, timeout=30), "a first answer"
            for hidden in (True, False, True):
                set_tab_hidden(page, hidden)
                assert_answers_keep_coming(log, f"answers keep coming, hidden={hidden}")
            assert text_of(page, "start-stop") == "Stop", "the session still runs"
            assert text_of(page, "notice") == "" and text_of(page, "error") == ""
        finally:
            close_page(page)  # closed while hidden, as a person closes a tab they are not looking at
    said = terminal_lines(tmp_path / "data")
    assert said in ([], ["terminated"]), "\n".join(said)


def test_normal_use_gets_no_error_response_and_leaves_the_terminal_quiet(fresh_browser, tmp_path: Path) -> None:
    """A page load and an answered image: no 4xx/5xx for any request of the page, no console error,
    and nothing in the terminal but the app's own line (no traceback, no MNN banner)."""
    image = tmp_path / "yes.jpg"
    image.write_bytes(next(data for _, data, expected in held_out_scenes(1, seed=8) if expected == "yes"))
    with AppServer(tmp_path / "data") as app:
        context = fresh_browser.new_context(viewport={"width": 1280, "height": 800})
        failed: list[str] = []
        errors: list[str] = []
        context.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        try:
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(app.url)
            wait_until_loaded(page)
            wait_text(page, "model-status", "Model ready")
            choose(page, "Image")
            start_with_files(page, [image])
            wait_text(page, "observation", "YES")
        finally:
            context.close()
    assert failed == [] and errors == [], (failed, errors)
    said = terminal_lines(tmp_path / "data")
    assert said in ([], ["terminated"]), "\n".join(said)  # the whole traceback, when there is one


def test_a_compression_video_shows_its_rate_against_the_target(page, tmp_path: Path) -> None:
    """A generated video of compressions at 110 a minute played as a practice session: the rate panel
    reads it, in words against the target, and says depth and recoil are not measured."""
    from demo_model.compressions import VideoSpec

    path = tmp_path / "compressions.avi"
    write_compression_video(path, VideoSpec(seconds=16, fps=15, rate_per_min=110), seed=5)
    wait_text(page, "model-status", "Model ready")
    choose(page, "Video")
    start_with_files(page, [path])
    said = wait_for(lambda: text_of(page, "rate"), lambda r: r.endswith("/min"), 60, "a rate on screen", interval=0.2)
    assert 105 <= int(said.removesuffix("/min")) <= 115, said
    assert "100–120 per minute" in text_of(page, "rate-words")
    wait_on_page(page, "Depth and recoil are not measured by the camera")
    # The timeline's rate lane follows the session as it goes, its words the same figures.
    wait_text(page, "timeline-chart-rhythm", "Compression rate: median")
    shot(page, "practice-rate")


def test_the_example_pictures_are_one_tap_away_for_a_demo(browser, tmp_path: Path) -> None:
    """No file at hand: "Try the example pictures" runs the pictures shipped with the app as a session.
    Its own server: the shared one may still be running another test's session, which disables it."""
    from app.storage.paths import EXAMPLES

    shipped = sorted(p.name for p in EXAMPLES.glob("*.jpg"))
    with AppServer(tmp_path / "data") as app:
        page = open_app_page(browser, app.url)
        try:
            wait_text(page, "model-status", "Model ready")
            node(page, "try-examples").click()
            assert wait_until(lambda: sessions(app.data), timeout=30), "a session"
            log = sessions(app.data)[-1]

            def answered() -> list[str]:
                return sorted({e.source for e in load_session(log).events if e.kind == "practice"})

            assert wait_until(lambda: answered() == shipped, timeout=120), f"every picture answered: {answered()}"
            wait_text(page, "start-stop", "Start", timeout=60)  # and the session closed
            wait_on_page(page, f"{shipped[-1]} · answered")
            shot(page, "practice-examples")
        finally:
            close_page(page)
