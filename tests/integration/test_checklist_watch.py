"""A checklist through the live pipeline on the real demo model: `watch`, the session log, reviews, exports.

The gate here is the question the demo model knows (hand position), so which keyframes open it is known
from the video; the second signal is one it was not trained on, so only its handling is asserted.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.core.profile.task import ProfileError
from app.core.sampler import SamplerConfig
from app.core.session import PracticeEvent
from app.frames.intake import DecodedImage
from app.frames.video import iter_video_frames
from app.models.catalog import resolve_model
from app.pipeline.live import LivePipeline, PipelineUpdate
from app.session.store import SessionLog, load_session, read_thumbnail
from app.worker.messages import WorkerSpec
from app.worker.serve import build_analyzer
from tests.conditions import HANG_S
from tests.integration.video import write_hands_video

ROOT = Path(__file__).resolve().parents[2]
SIGNALS = ["hand_position_correct", "hands_stacked"]
# The fields of a one-signal practice record as every earlier version wrote them, in order.
PRACTICE_KEYS = [
    "event_id",
    "t",
    "wall_time",
    "keyframe_id",
    "signal",
    "observation",
    "parse_status",
    "parse_reason",
    "raw",
    "timings",
    "model_id",
    "model_revision",
    "backend",
    "model_score",
    "profile_id",
    "allowed_values",
    "source",
    "still",
    "kind",
]


def gated_checklist(folder: Path) -> Path:
    path = folder / "gated.json"
    words = {"zh": {"question": "？", "values": {"yes": "是", "no": "否", "unknown": "未知"}}}
    path.write_text(
        json.dumps(
            {
                "schema": 1,
                "id": "gated",
                "title": "Gated",
                "system": None,
                "max_new_tokens": 32,
                "gate": {"signal": "hand_position_correct", "open": "yes"},
                "signals": [
                    {"signal": "hands_stacked", "values": ["yes", "no", "unknown"], "prompt": "Stacked?"},
                    {
                        "signal": "hand_position_correct",
                        "values": ["yes", "no", "unknown"],
                        "prompt": "Is the hand position correct?",
                        "labels": words,
                    },
                ],
            }
        )
    )
    return path


def run_app(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True, timeout=HANG_S
    )


def test_watch_prints_one_line_per_keyframe_with_every_signal_and_the_gate(tmp_path: Path) -> None:
    video = tmp_path / "hands.avi"
    write_hands_video(video)
    proc = run_app("watch", str(video), "--interval", "3", "--profile", str(gated_checklist(tmp_path)))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    keyframes = [line for line in lines if line["kind"] == "checklist"]
    assert not [line for line in lines if line["kind"] == "practice"], "a checklist's answers come as one line"
    assert len(keyframes) >= 3  # one per phase at least: unchanged frames are skipped
    gate_answers = []
    for line in keyframes:
        # The file's order, each signal a strict practice record of the same keyframe.
        assert [s["signal"] for s in line["signals"]] == ["hands_stacked", "hand_position_correct"]
        assert {s["keyframe_id"] for s in line["signals"]} == {line["keyframe_id"]}
        assert all(s["kind"] == "practice" and s["allowed_values"] == ["yes", "no", "unknown"] for s in line["signals"])
        stacked, gate = line["signals"]
        assert gate["parse_status"] == "valid" and "gated_by" not in gate
        gate_answers.append(gate["observation"])
        if gate["observation"] == "yes":
            assert stacked["parse_status"] == "valid" and "gated_by" not in stacked
            assert stacked["observation"] in ("yes", "no")
        else:  # the gate stayed shut: not asked, unknown, and the line says why
            assert (stacked["observation"], stacked["parse_status"], stacked["parse_reason"]) == (
                "unknown",
                "not_asked",
                "not_visible",
            )
            assert stacked["gated_by"] == "hand_position_correct" and stacked["raw"] == ""
            assert stacked["timings"]["generated_tokens"] == 0
    assert [a for i, a in enumerate(gate_answers) if i == 0 or gate_answers[i - 1] != a] == ["no", "yes", "no"]

    # The session log holds one answer per signal and keyframe; each is reviewed on its own.
    session_id = json.loads(run_app("sessions", "list", "--json").stdout.splitlines()[0])["id"]
    summary = run_app("sessions", "export", session_id, "--format", "summary").stdout
    assert f"Keyframes analysed: {len(keyframes)} (a checklist of 2 signals)" in summary
    assert f"Pending examiner confirmation: {2 * len(keyframes)}" in summary
    opened = next(line for line in keyframes if line["signals"][1]["observation"] == "yes")
    stacked_id = opened["signals"][0]["event_id"]
    review = run_app("sessions", "review", session_id, stacked_id, "--correct", "no")
    assert review.returncode == 0, review.stderr
    rows = list(csv.DictReader(io.StringIO(run_app("sessions", "export", session_id, "--format", "csv").stdout)))
    assert len(rows) == 2 * len(keyframes)
    reviewed = {(r["event_id"], r["review"], r["verdict"]) for r in rows if r["review"] != "pending"}
    assert reviewed == {(stacked_id, "corrected", "no")}
    assert {r["signal"] for r in rows} == set(SIGNALS)


def test_a_one_signal_profile_keeps_todays_records(tmp_path: Path) -> None:
    video = tmp_path / "hands.avi"
    write_hands_video(video, seconds_per_phase=4)
    proc = run_app("watch", str(video), "--interval", "3")
    assert proc.returncode == 0, proc.stderr
    practice = [json.loads(line) for line in proc.stdout.splitlines() if '"kind": "practice"' in line]
    assert practice and all(list(record) == PRACTICE_KEYS for record in practice)


def test_the_pipeline_records_a_checklist_keyframe_at_once_and_replays_it(tmp_path: Path) -> None:
    video = tmp_path / "hands.avi"
    write_hands_video(video, seconds_per_phase=4)
    updates: list[PipelineUpdate] = []
    log_path = tmp_path / "session.jsonl"
    spec = WorkerSpec(profile=gated_checklist(tmp_path), checklists=True)
    with SessionLog(log_path) as log:
        pipeline = LivePipeline(spec, updates.append, sampler=SamplerConfig(interval_s=3), log=log, host_kind="thread")
        pipeline.start()
        try:
            assert pipeline.wait_ready(HANG_S), pipeline.failure
            for t, rgb in iter_video_frames(video):
                pipeline.offer_frame(t, DecodedImage(rgb, "video"))
                if pipeline.busy:
                    assert pipeline.wait_idle(HANG_S)
            pipeline.flush()
            assert pipeline.wait_idle(HANG_S)
        finally:
            pipeline.stop()
    answered = [u for u in updates if any(isinstance(e, PracticeEvent) for e in u.events)]
    assert answered
    for update in answered:
        # Both answers of a keyframe arrive in one update, already in the state it carries.
        assert [e.signal for e in update.events] == ["hands_stacked", "hand_position_correct"]
        assert update.event is update.events[-1]
        ids = {e.event_id for e in update.events}
        assert ids <= {entry.event.event_id for entry in update.state.timeline}
    state = pipeline.state
    assert state.keyframes_answered == len(answered) and len(state.timeline) == 2 * len(answered)
    assert all(e.routing.confidence == 0 and e.review == "pending" for e in state.timeline)
    assert load_session(log_path).state == state
    # Every answer has the keyframe's picture under its own id, as a review screen looks it up.
    pictures = {entry.event.event_id: read_thumbnail(log_path, entry.event.event_id) for entry in state.timeline}
    assert all(data and data.startswith(b"\xff\xd8") for data in pictures.values())
    # The copy an examiner enlarges is kept once per keyframe, under its first answer's id (the row's key),
    # at the keyframe's own size (256 px here: never scaled up), where the thumbnail is 160.
    for update in answered:
        first, second = (e.event_id for e in update.events)
        large = read_thumbnail(log_path, first, large=True)
        assert large is not None and read_thumbnail(log_path, second, large=True) is None
        assert cv2.imdecode(np.frombuffer(large, np.uint8), cv2.IMREAD_COLOR).shape == (256, 256, 3)
        small = pictures[first]
        assert small is not None and cv2.imdecode(np.frombuffer(small, np.uint8), cv2.IMREAD_COLOR).shape[:2] == (
            160,
            160,
        )


def test_one_signal_of_a_checklist_is_asked_alone_and_a_missing_one_named(tmp_path: Path) -> None:
    profile = gated_checklist(tmp_path)
    model = resolve_model(None)
    alone = build_analyzer(WorkerSpec(profile=profile, signal="hands_stacked"), model)
    try:
        assert alone.checklist is None and alone.profile.signal == "hands_stacked"
    finally:
        alone.close()
    with pytest.raises(ProfileError, match=r"gated\.json: no signal 'arms_straight'"):
        build_analyzer(WorkerSpec(profile=profile, signal="arms_straight"), model)


def test_a_profile_that_asks_for_a_smaller_image_gets_it_unless_the_user_chose(tmp_path: Path) -> None:
    data = json.loads(gated_checklist(tmp_path).read_text())
    small = tmp_path / "small.json"
    small.write_text(json.dumps({**data, "image_max_side": 96}))  # the demo model declares 128
    image = DecodedImage(np.full((480, 640, 3), 128, np.uint8), "frame")
    sides = {}
    for name, spec in {
        "default": WorkerSpec(profile=gated_checklist(tmp_path), checklists=True),
        "profile": WorkerSpec(profile=small, checklists=True),
        "user": WorkerSpec(profile=small, checklists=True, image_max_side=64),
    }.items():
        analyzer = build_analyzer(spec, resolve_model(None))
        try:
            sides[name] = analyzer.prepare(image).shape[:2]
            if name == "profile":  # and the model answers every signal on it
                result = analyzer.analyze_checklist(image, "frame", analyzer.checklist)
                assert len(result.results) == 2
        finally:
            analyzer.close()
    assert sides == {"default": (128, 128), "profile": (96, 96), "user": (64, 64)}
