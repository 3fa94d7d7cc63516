"""Sessions on one worker: the model loads once; a stopped session's last answer never leaks into the next."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from app.core.sampler import SamplerConfig
from app.core.session import KeyframeSkipped, PracticeEvent, RhythmSample, SessionAsked, SkipReason
from app.frames.intake import decode_image_bytes
from app.pipeline.live import LivePipeline, PipelineUpdate
from app.session.store import SessionLog, load_session
from app.worker.messages import WorkerSpec
from app.worker.serve import TEST_PACE_ENV
from tests.conditions import SETTLE_S
from tests.integration.conftest import held_out_scenes


def test_a_new_session_waits_behind_the_stopped_ones_keyframe_and_keeps_its_own_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    picked = held_out_scenes(count_per_kind=1, seed=81)
    yes = decode_image_bytes(next(d for _, d, e in picked if e == "yes"))
    no = decode_image_bytes(next(d for _, d, e in picked if e == "no"))
    updates: list[PipelineUpdate] = []
    monkeypatch.setenv(TEST_PACE_ENV, "300")  # each step holds the GIL 300 ms in the worker
    pipeline = LivePipeline(WorkerSpec(), updates.append, host_kind="process")
    pipeline.start()
    try:
        assert pipeline.wait_ready(60)
        pid = pipeline.worker_pid
        first = SessionLog(tmp_path / "first.jsonl")
        pipeline.begin_session(first, SamplerConfig(interval_s=2))
        pipeline.offer_frame(0.0, yes)
        pipeline.offer_frame(2.0, no)  # kf-00001 (yes) in flight
        pipeline.offer_frame(4.0, yes)  # kf-00002 (no) waiting
        assert pipeline.busy
        pipeline.end_session()  # stopped mid-answer
        first.close()

        second = SessionLog(tmp_path / "second.jsonl")
        pipeline.begin_session(second, SamplerConfig(interval_s=2))
        pipeline.offer_frame(0.0, no)
        pipeline.flush()  # the new kf-00001 (no) waits behind the old one still in the worker
        assert pipeline.wait_idle(SETTLE_S)
        second.close()
        time.sleep(0.2)
        assert pipeline.worker_pid == pid, "one worker, one model load for both sessions"
    finally:
        pipeline.stop()
    # The keyframes' events after each session's first line, what it asked (each log also holds its rhythm
    # samples, one per second of frames).
    first_events = load_session(tmp_path / "first.jsonl").events
    second_events = load_session(tmp_path / "second.jsonl").events
    assert isinstance(first_events[0], SessionAsked) and isinstance(second_events[0], SessionAsked)
    old = [e for e in first_events[1:] if not isinstance(e, RhythmSample)]
    # Every keyframe selected is accounted for: the cancelled one as stopped, the waiting one as superseded.
    assert [(type(e), e.keyframe_id, getattr(e, "reason", None)) for e in old] == [
        (KeyframeSkipped, "kf-00001", SkipReason.STOPPED),
        (KeyframeSkipped, "kf-00002", SkipReason.SUPERSEDED),
    ]
    new = [e for e in second_events[1:] if not isinstance(e, RhythmSample)]
    assert [(type(e), e.keyframe_id, getattr(e, "observation", None)) for e in new] == [
        (PracticeEvent, "kf-00001", "no")
    ]
    assert [e.event.observation for e in pipeline.state.timeline] == ["no"]
