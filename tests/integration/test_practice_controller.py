"""The practice screen's controller on the real worker, without a browser: sources, sessions, reviews."""

from __future__ import annotations

import time
from pathlib import Path

from app.core.notice import Notice
from app.session.review import Verdict, record_review
from app.session.store import load_session
from app.storage.paths import EXAMPLES, PROFILES
from app.ui.practice.controller import PracticeController, PracticeState
from app.ui.words import notices_text
from app.ui.words.main import EN, ZH
from app.worker.messages import WorkerSpec
from tests.integration.conftest import wait
from tests.integration.video import write_hands_video


def said(notices: tuple[Notice, ...], table: dict[str, str] = EN) -> str:
    """A state's notices as a tab in that language shows them."""
    return notices_text(table, notices)


def test_video_stills_and_reviews_on_one_worker(tmp_path: Path) -> None:
    video = tmp_path / "hands.avi"
    write_hands_video(video, seconds_per_phase=2)
    seen: list[PracticeState] = []
    controller = PracticeController(WorkerSpec(), tmp_path / "sessions")
    controller.subscribe(seen.append)
    controller.start()
    try:
        ready = wait(controller, lambda s: s.worker_status == "ready")
        assert ready.demo_model and ready.question and ready.answer_values == ("yes", "no", "unknown")
        controller.set_interval(2)
        controller.start_video("hands.avi", video)
        wait(controller, lambda s: s.running)
        done = wait(controller, lambda s: not s.running)
        # The video's end is said, in both languages, or it would look like nothing happened.
        assert said(done.notice) == "The video ended: the session is saved. Review it in Sessions."
        assert said(done.notice, ZH) == "视频已结束：本次练习已保存。可在“记录”中复核。"
        answers = [e.event.observation for e in done.session.timeline]
        assert [a for i, a in enumerate(answers) if i == 0 or answers[i - 1] != a] == ["no", "yes", "no"]
        assert any(s.analysing_thumb for s in seen) and any(s.preview for s in seen)

        # After Stop the session stays on screen and its log takes the examiner's verdicts.
        first, second = (e.event.event_id for e in done.session.timeline[:2])
        assert controller.review([Verdict(first, None, "good")]) is None
        assert controller.review([Verdict(first, "no")]) == Notice(
            "review_refused_already_confirmed", (("answer", "no"), ("examiner", "")), error=True
        )
        assert controller.review([Verdict(second, "maybe")]) is not None  # not one of the profile's answers
        assert controller.review([Verdict(second, "unknown")]) is None
        log = tmp_path / "sessions" / f"{done.session_id}.jsonl"
        kinds = [e.kind for e in load_session(log).events]
        assert kinds.count("confirmed") == 1 and kinds.count("corrected") == 1
        # Another reviewer (the CLI, the Sessions screen) got to an answer first: refused, not doubled.
        last = done.session.timeline[-1].event.event_id
        assert last not in (first, second), "three answers"
        record_review(log, last, note="from the command line")
        refused = controller.review([Verdict(last, "yes")])
        assert refused is not None and refused.key == "review_refused_already_confirmed"
        assert [e.kind for e in load_session(log).events].count("confirmed") == 2
        assert controller.state.session.timeline[-1].review == "confirmed", "the screen shows the log"
        # Each answer keeps its source and its keyframe's thumbnail (a JPEG) beside the log.
        assert {e.event.source for e in done.session.timeline} == {"hands.avi"}
        assert not any(e.event.still for e in done.session.timeline)
        assert (controller.thumbnail(first) or b"")[:2] == b"\xff\xd8"

        # Stills: a bad file is that file's error; the others are answered in turn.
        good = sorted(EXAMPLES.glob("*.jpg"))[:2]
        controller.start_stills([(p.name, p.read_bytes()) for p in good] + [("junk.jpg", b"junk")], "stills")
        wait(controller, lambda s: s.running)
        stills = wait(controller, lambda s: not s.running)
        assert len(stills.session.timeline) == 2
        assert said(stills.error) == "junk.jpg: not a recognised image format"
        assert said(stills.error, ZH) == "junk.jpg：不是能识别的图片格式"  # every tab in its own language
        # Stills by their file names, marked as stills (their t is only their place in the list).
        assert [(e.event.source, e.event.still) for e in stills.session.timeline] == [(p.name, True) for p in good]
        assert all(controller.thumbnail(e.event.event_id) for e in stills.session.timeline)
        assert controller.thumbnail("../../etc/passwd") is None
        assert stills.session_id != done.session_id

        # A labels table picked with the images is left out in words, not called a damaged image.
        controller.start_stills([(good[0].name, good[0].read_bytes()), ("labels.csv", b"file,expected\n")], "two")
        wait(controller, lambda s: s.running)
        table = wait(controller, lambda s: not s.running)
        assert len(table.session.timeline) == 1 and not table.error, table.error
        assert said(table.notice) == "labels.csv: a table of labels is for the Testers screen; left out"

        # The question changes (another profile): the last session's answer leaves the card, which would
        # read it as an answer to the new question, and the news says where that session is kept.
        controller.apply_settings(WorkerSpec(profile=PROFILES / "cpr_checklist.json", checklists=True), 2)
        changed = wait(controller, lambda s: s.worker_status == "ready" and s.checklist is not None)
        assert changed.latest is None and changed.rhythm is None and changed.session_id == table.session_id
        assert said(changed.notice).startswith("The model or its questions changed: the last session")
    finally:
        controller.shutdown()


def test_an_unreadable_video_is_a_sentence_not_a_session(tmp_path: Path) -> None:
    controller = PracticeController(WorkerSpec(), tmp_path / "sessions")
    bad = tmp_path / "notes.mp4"
    bad.write_text("not a video")
    controller.start_video("notes.mp4", bad)
    assert not controller.state.running
    assert said(controller.state.error) == "notes.mp4: not a video this app can read"
    assert not (tmp_path / "sessions").exists() or not list((tmp_path / "sessions").iterdir())


def test_a_computer_without_a_camera_says_so(tmp_path: Path) -> None:
    """The OpenCV camera of packaged desktop apps: no device here, so the session ends with a sentence."""
    controller = PracticeController(WorkerSpec(), tmp_path / "sessions")
    controller.start()
    try:
        wait(controller, lambda s: s.worker_status == "ready")
        controller.start_opencv_camera(index=97)
        state = wait(controller, lambda s: not s.running and s.error)
        assert said(state.error).startswith("The camera is not available (absent, or permission denied).")
    finally:
        controller.shutdown()


def test_going_to_the_background_on_a_phone_stops_and_saves_the_session(tmp_path: Path) -> None:
    from app.worker.hosts import pauses_in_background

    assert pauses_in_background("ios", web=False) and pauses_in_background("android", web=False)
    assert not pauses_in_background("android", web=True)  # a phone's browser: the model runs on the server
    assert not pauses_in_background("macos", web=False) and not pauses_in_background("", web=False)

    video = tmp_path / "hands.avi"
    write_hands_video(video, seconds_per_phase=4)
    controller = PracticeController(WorkerSpec(), tmp_path / "sessions")
    controller.start()
    try:
        wait(controller, lambda s: s.worker_status == "ready")
        assert not controller.pause_for_background()  # nothing running: nothing to say
        controller.set_interval(2)
        controller.start_video("hands.avi", video)
        wait(controller, lambda s: s.running and len(s.session.timeline) >= 1)
        assert controller.pause_for_background()
        state = controller.state
        assert not state.running and state.analysing is None
        assert said(state.notice, ZH) == "应用转到后台时练习已停止并已保存。请重新开始以继续。"
        answered = len(state.session.timeline)
        log = tmp_path / "sessions" / f"{state.session_id}.jsonl"
        assert len([e for e in load_session(log).events if e.kind == "practice"]) >= answered >= 1  # saved
        time.sleep(2.5)  # longer than the 2 s interval: no keyframe is analysed after the pause
        assert len(controller.state.session.timeline) == answered
    finally:
        controller.shutdown()


def test_an_uploaded_video_copy_is_removed_when_its_session_ends(tmp_path: Path) -> None:
    upload = tmp_path / "uploads" / "abc123"
    upload.mkdir(parents=True)
    video = upload / "hands.avi"
    write_hands_video(video, seconds_per_phase=2)
    controller = PracticeController(WorkerSpec(), tmp_path / "sessions")
    controller.start()
    try:
        wait(controller, lambda s: s.worker_status == "ready")
        controller.start_video("hands.avi", video, discard=upload)
        assert controller.playing_upload == upload and video.exists()
        controller.stop_session()  # however it ends (Stop here, another tab, the video's end)
        assert not upload.exists() and controller.playing_upload is None
        # An unreadable upload is removed at once, and named by its file name, not the cache's path.
        bad = tmp_path / "uploads" / "def456"
        bad.mkdir()
        (bad / "notes.mp4").write_text("not a video")
        controller.start_video("notes.mp4", bad / "notes.mp4", discard=bad)
        assert not bad.exists() and said(controller.state.error) == "notes.mp4: not a video this app can read"
    finally:
        controller.shutdown()
