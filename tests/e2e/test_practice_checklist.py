"""A checklist in the app: several questions per keyframe on the card, the gate's "not checked" state,
an examiner's "confirm all" and a correction per question, the export, at desktop and phone sizes.

The camera plays hands that are always in the picture, so the checklist whose gate must say NO there
asks the hand position first: a profile of the person's own, chosen in Settings as a person would.
The shipped checklist (hands in the picture first) runs on still images, one of them a chest with no
hands on it (`assets/examples/no_hands-1.jpg`, kept because the demo model closes the gate on it).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.session import PracticeEvent
from app.session.store import load_session
from app.storage.paths import EXAMPLES, PROFILES
from tests.conditions import wait_for, wait_until
from tests.e2e.conftest import (
    AppServer,
    close_page,
    fake_camera_browser,
    go_to,
    node,
    open_app_page,
    scroll_to,
    shot,
    text_of,
    type_into,
    wait_on_page,
    wait_text,
)
from tests.e2e.test_practice import PHONE, choose, open_menu_and_pick, practice_answers, sessions, start_camera
from tests.e2e.test_settings_screen import wait_file
from tests.integration.video import write_compression_video, write_hands_y4m

pytestmark = pytest.mark.browser
GATED = "hand_position_first"


def gated_checklist() -> dict:
    """The shipped checklist with the question the demo model learnt as its gate."""
    shipped = json.loads((PROFILES / "cpr_checklist.json").read_text(encoding="utf-8"))
    return shipped | {
        "id": GATED,
        "title": "Hand position first",
        "labels": {"zh": {"title": "先看手的位置"}},
        "gate": {"signal": "hand_position_correct", "open": "yes"},
    }


@pytest.fixture(scope="module")
def camera(playwright_driver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Chromium whose fake camera plays hands off-centre (6 s), centred (6 s), off-centre (6 s)."""
    clip = tmp_path_factory.mktemp("camera") / "hands.y4m"
    assert write_hands_y4m(clip) == ["no", "yes", "no"]
    browser = fake_camera_browser(playwright_driver, clip)
    yield browser
    browser.close()


def keyframes(log: Path) -> dict[str, dict[str, PracticeEvent]]:
    """The session's answers: keyframe id -> signal -> event."""
    out: dict[str, dict[str, PracticeEvent]] = {}
    for event in load_session(log).events:
        if isinstance(event, PracticeEvent):
            out.setdefault(event.keyframe_id, {})[event.signal] = event
    return out


@pytest.mark.parametrize("viewport", [None, PHONE], ids=["desktop", "phone"])
def test_a_checklist_camera_session_the_gate_confirm_all_and_a_correction_in_the_export(
    camera,
    tmp_path: Path,
    viewport: dict | None,
) -> None:
    data = tmp_path / "data"
    (data / "profiles").mkdir(parents=True)
    own = data / "profiles" / f"{GATED}.json"
    own.write_text(json.dumps(gated_checklist()), encoding="utf-8")
    # On a desktop the checklist is chosen in Settings; on a phone it is given on the command line.
    with AppServer(data, *(("--profile", str(own)) if viewport else ())) as server:
        page = open_app_page(camera, server.url, viewport=viewport, permissions=["camera"])
        try:
            wait_text(page, "model-status", "Model ready")
            if not viewport:
                go_to(page, "Settings", "settings-profile")
                open_menu_and_pick(
                    page, "settings-profile", f"Hand position first ({GATED}.json): a checklist of 3 questions"
                )
                wait_file(data / "settings.json", lambda d: d.get("profile", "").endswith(f"{GATED}.json"))
                go_to(page, "Practice", "start-stop")
            wait_text(page, "question", "Hand position first")  # the reloaded worker asks the checklist
            log = start_camera(page, data)
            # Off-centre first: the gate says NO and the other questions are not checked, in words.
            wait_text(page, "check-hand_position_correct", "NO", timeout=60)
            for signal in ("hands_visible", "hands_stacked"):
                wait_text(page, f"check-{signal}", "NOT CHECKED")
                wait_text(page, f"check-note-{signal}", "not checked: Hands on the lower half of the sternum — NO")
            shot(page, "checklist-gate-closed")
            # Centred: the gate opens and every question has an answer of its own.
            wait_text(page, "check-hand_position_correct", "YES", timeout=60)
            for signal in ("hands_visible", "hands_stacked"):
                assert wait_until(
                    lambda signal=signal: text_of(page, f"check-{signal}") in ("YES", "NO", "UNKNOWN"),
                    timeout=30,
                    interval=0.2,
                ), text_of(page, f"check-{signal}")
            shot(page, "checklist-card")
            node(page, "start-stop").click()
            wait_text(page, "start-stop", "Start")

            answered = keyframes(log)
            assert answered and all(len(signals) == 3 for signals in answered.values())  # one line per signal
            closed = next(k for k, s in answered.items() if s["hand_position_correct"].observation == "no")
            opened = next(k for k, s in answered.items() if s["hand_position_correct"].observation == "yes")
            for signal in ("hands_visible", "hands_stacked"):  # the gate left them unasked, at no cost
                event = answered[closed][signal]
                assert (event.parse_status, event.parse_reason, event.gated_by) == (
                    "not_asked",
                    "not_visible",
                    "hand_position_correct",
                )
            # The examiner: "confirm all" for the closed-gate keyframe, one tap (its note: test_review_list) ...
            first = next(iter(answered[closed].values())).event_id  # a keyframe's row is named by its first answer
            node(page, f"confirm-all-{first}").first.wait_for(timeout=30_000)
            node(page, f"confirm-all-{first}").click()
            targets = {e.event_id for e in answered[closed].values()}
            assert wait_until(
                lambda: {e.target_id for e in load_session(log).events if e.kind == "confirmed"} == targets,
                timeout=30,
                interval=0.2,
            ), "three confirmations, one per question of that keyframe"
            # ... and one question of an open-gate keyframe corrected, to that question's answers only.
            stacked = answered[opened]["hands_stacked"]
            wrong = "NO" if stacked.observation == "yes" else "YES"
            scroll_to(page, f"correct-{stacked.event_id}")
            open_menu_and_pick(page, f"correct-{stacked.event_id}", wrong)
            # The note written after the pick is that correction's; "Confirm all" saves every line's verdict.
            type_into(page, f"note-{stacked.event_id}", "one hand beside the other")
            node(page, f"confirm-all-{next(iter(answered[opened].values())).event_id}").click()
            assert wait_until(
                lambda: any(
                    e.kind == "corrected" and e.target_id == stacked.event_id for e in load_session(log).events
                ),
                timeout=30,
            ), "the correction reached the log"
            wait_on_page(page, f"{wrong} (examiner; the model said {stacked.observation.upper()})")
            shot(page, "checklist-reviewed")

            # Sessions: the summary per question, and the export says the examiner's verdicts.
            go_to(page, "Sessions", "sessions-refresh")
            node(page, f"session-row-{log.stem}").click()
            summary = wait_text(page, "sessions-summary", "Agreement with the examiner")
            shot(page, "checklist-session")
            with page.expect_download() as download:
                node(page, "export-csv").click()
            rows = list(csv.DictReader(io.StringIO(Path(download.value.path()).read_text(encoding="utf-8"))))
            by_id = {row["event_id"]: row for row in rows}
            assert by_id[stacked.event_id]["verdict"] == wrong.lower()
            assert by_id[stacked.event_id]["review"] == "corrected"
            corrected = [e for e in load_session(log).events if e.kind == "corrected"]
            assert [(e.target_id, e.note) for e in corrected] == [(stacked.event_id, "one hand beside the other")]
            assert all(e.note == "" for e in load_session(log).events if e.kind == "confirmed")
            for event in answered[closed].values():
                assert by_id[event.event_id]["review"] == "confirmed"
            assert len(rows) == 3 * len(answered), summary
            page.request_log.assert_local()
        finally:
            close_page(page)


def test_the_shipped_checklist_on_a_phone_keeps_every_line_in_view(browser, tmp_path: Path) -> None:
    """At 390×844, while a session runs, every line of the card is on screen; the last image's gate
    said NO, so its other lines say they were not checked. "Confirm all" works at this size too."""
    data = tmp_path / "data"
    with AppServer(data, "--profile", str(PROFILES / "cpr_checklist.json")) as server:
        page = open_app_page(browser, server.url, viewport=PHONE)
        try:
            wait_text(page, "model-status", "Model ready")
            choose(page, "Several images")
            before = set(sessions(data))
            with page.expect_file_chooser() as chooser:
                node(page, "start-stop").click()
            # no_hands-1: nobody's hands on the chest, and the demo model says so (its answers are fixed).
            chooser.value.set_files([str(EXAMPLES / "correct-1.jpg"), str(EXAMPLES / "no_hands-1.jpg")])
            wait_text(page, "check-hands_visible", "NO", timeout=90)
            for signal in ("hand_position_correct", "hands_stacked"):
                wait_text(page, f"check-{signal}", "NOT CHECKED")
            bottom_bar = PHONE["height"] - 80
            for signal in ("hands_visible", "hand_position_correct", "hands_stacked"):
                box = node(page, f"check-{signal}").first.bounding_box()
                assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= bottom_bar, (signal, box)
            shot(page, "checklist-phone")
            wait_text(page, "start-stop", "Start", timeout=90)
            log = next(iter(set(sessions(data)) - before))
            assert wait_until(lambda: practice_answers(log) == 6, timeout=30), "two images × three questions"
            answered = keyframes(log)
            oldest = min(answered.values(), key=lambda signals: signals["hands_visible"].t)
            first = next(iter(oldest.values())).event_id  # a keyframe's row is named by its first answer
            button = node(page, f"confirm-all-{first}")
            button.first.scroll_into_view_if_needed()
            button.click()
            assert wait_until(
                lambda: sum(e.kind == "confirmed" for e in load_session(log).events) == 3, timeout=30, interval=0.2
            ), "confirm all on a phone: the three answers of that keyframe"
            wait_on_page(page, "All 3 answers reviewed")
            shot(page, "checklist-phone-reviewed")
            page.request_log.assert_local()
        finally:
            close_page(page)


def test_a_checklist_video_session_on_a_phone_keeps_the_rate_and_every_line_in_view(
    browser,
    tmp_path: Path,
) -> None:
    """At 390×844 a video of compressions asked the checklist: the rate panel and every line of the card
    are on screen together while it plays (the rate panel once pushed the last line below the fold), and
    every source choice is whole on screen."""
    from demo_model.compressions import VideoSpec

    video = tmp_path / "compressions.avi"
    write_compression_video(video, VideoSpec(seconds=24, fps=15, rate_per_min=110), seed=5)
    with AppServer(tmp_path / "data", "--profile", str(PROFILES / "cpr_checklist.json")) as server:
        page = open_app_page(browser, server.url, viewport=PHONE)
        try:
            wait_text(page, "model-status", "Model ready")
            for label in ("Camera", "Video", "Image", "Several images"):
                box = page.get_by_role("button", name=label, exact=True).first.bounding_box()
                assert box is not None and 0 <= box["x"] and box["x"] + box["width"] <= PHONE["width"], (label, box)
            choose(page, "Video")
            # A person scrolls down to Start, below the card on a phone (a click does too when Start is below
            # the fold: seen at a load of ~10); the session brings the preview, the rate and the card back.
            top = node(page, "start-stop").first.bounding_box()["y"]
            page.mouse.move(PHONE["width"] / 2, PHONE["height"] / 2)
            page.mouse.wheel(0, 2000)
            wait_for(
                lambda: node(page, "start-stop").first.bounding_box()["y"], lambda y: y < top, 10, "Start scrolled up"
            )
            with page.expect_file_chooser() as chooser:
                node(page, "start-stop").click()
            chooser.value.set_files([str(video)])
            wait_for(lambda: text_of(page, "rate"), lambda r: r.endswith("/min"), 60, "a rate on screen", interval=0.2)
            for signal in ("hands_visible", "hand_position_correct", "hands_stacked"):
                wait_for(lambda s=signal: text_of(page, f"check-{s}"), bool, 60, f"the {signal} line answered")
            shot(page, "checklist-video-phone", other_size=False)
            bottom_bar = PHONE["height"] - 80
            # Whole, not clipped: Flutter clips a node's box to what is painted on screen.
            for what in ("rate", "check-hands_visible", "check-hand_position_correct", "check-hands_stacked"):
                box = node(page, what).first.bounding_box()
                assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= bottom_bar, (what, box)
                assert box["height"] >= 28, (what, box)
        finally:
            close_page(page)
