"""The live pipeline on the real demo model: video in, ordered practice events out."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.core.sampler import SamplerConfig
from app.core.session import KeyframeFailed, PracticeEvent
from app.frames.intake import DecodedImage
from app.frames.video import iter_video_frames
from app.pipeline.live import LivePipeline, PipelineUpdate
from app.session.store import SessionLog, load_session
from app.worker.messages import Analyze, Finished, JobFailed, Ready, Token, WorkerRestarted, WorkerSpec
from app.worker.process_host import ProcessWorkerHost
from app.worker.serve import TEST_PACE_ENV
from tests.conditions import SETTLE_S, wait_for, wait_until
from tests.integration.conftest import held_out_scenes
from tests.integration.video import write_hands_video

ROOT = Path(__file__).resolve().parents[2]


def practice_answers(events: list[dict]) -> list[tuple[float, str]]:
    return [(e["t"], e["observation"]) for e in events if e["kind"] == "practice"]


def collapse(values: list[str]) -> list[str]:
    return [v for i, v in enumerate(values) if i == 0 or values[i - 1] != v]


@pytest.mark.parametrize("interval", [2.0, 3.0])
def test_watch_command_gives_no_yes_no_in_order(tmp_path: Path, interval: float) -> None:
    video = tmp_path / "hands.avi"
    expected = write_hands_video(video)
    assert expected == ["no", "yes", "no"]
    proc = subprocess.run(
        [sys.executable, "-m", "app", "watch", str(video), "--interval", str(interval)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    answers = practice_answers(events)
    assert collapse([a for _, a in answers]) == ["no", "yes", "no"]
    # As a Practice session: the first frame is answered at once, then every keyframe decision (analysed
    # or recorded as unchanged) sits on the interval grid that starts from it.
    times = sorted(set(e["t"] for e in events if e["kind"] in ("practice", "skipped")))
    assert times[0] < 0.5, "the first answer does not wait for the first window to close"
    windows = [int((t - times[0]) // interval) for t in times[1:]]
    assert windows == sorted(set(windows)), "one keyframe decision per interval"
    assert len(windows) >= int(30 / interval) - 1
    assert all(e["kind"] != "failed" for e in events)

    # The run was recorded as a session that can be listed and exported.
    listed = subprocess.run(
        [sys.executable, "-m", "app", "sessions", "list", "--json"], cwd=ROOT, capture_output=True, text=True
    )
    session_id = json.loads(listed.stdout.splitlines()[0])["id"]
    summary = subprocess.run(
        [sys.executable, "-m", "app", "sessions", "export", session_id, "--format", "summary"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert f"Keyframes analysed: {len(answers)}" in summary.stdout
    assert f"Pending examiner confirmation: {len(answers)}" in summary.stdout

    # An examiner's correction is one more event in the same log.
    first = next(e for e in events if e["kind"] == "practice")
    fixed = "yes" if first["observation"] == "no" else "no"
    review = subprocess.run(
        [sys.executable, "-m", "app", "sessions", "review", session_id, first["event_id"], "--correct", fixed],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert review.returncode == 0, review.stderr
    csv_out = subprocess.run(
        [sys.executable, "-m", "app", "sessions", "export", session_id, "--format", "csv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout
    row = next(line for line in csv_out.splitlines() if line.startswith(first["event_id"]))
    assert f",corrected,{fixed}," in row


def test_worker_api_pipeline_with_session_log(tmp_path: Path) -> None:
    video = tmp_path / "hands.avi"
    write_hands_video(video)
    updates: list[PipelineUpdate] = []
    log_path = tmp_path / "session.jsonl"
    with SessionLog(log_path) as log:
        pipeline = LivePipeline(
            WorkerSpec(), updates.append, sampler=SamplerConfig(interval_s=3), log=log, host_kind="process"
        )
        pipeline.start()
        try:
            assert pipeline.wait_ready(60), pipeline.failure
            for t, rgb in iter_video_frames(video):
                pipeline.offer_frame(t, DecodedImage(rgb, "video"))
                if pipeline.busy:
                    assert pipeline.wait_idle(SETTLE_S)
            pipeline.flush()
            assert pipeline.wait_idle(SETTLE_S)
        finally:
            pipeline.stop()
    state = pipeline.state
    assert collapse([e.event.observation for e in state.timeline]) == ["no", "yes", "no"]
    assert all(e.routing.confidence == 0 and e.review == "pending" for e in state.timeline)
    assert any(u.streamed_text.startswith('{"signal"') for u in updates), "tokens streamed to the listener"
    # The log on disk replays to the same state.
    assert load_session(log_path).state == state


def _collect(host_events: list, kinds: tuple, job_id: str | None = None, timeout: float = 60.0):
    def wanted(event: object) -> bool:
        return isinstance(event, kinds) and (job_id is None or getattr(event, "job_id", None) == job_id)

    return wait_for(
        lambda: next(filter(wanted, list(host_events)), None),
        lambda event: event is not None,
        timeout,
        f"{kinds} for {job_id}",
        interval=0.01,
    )


def test_sigkill_during_inference_fails_only_that_keyframe(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list = []
    # Each decode step takes 200 ms in the worker child, so the kill lands mid-answer.
    monkeypatch.setenv(TEST_PACE_ENV, "200")
    host = ProcessWorkerHost(WorkerSpec(), events.append)
    host.start()
    try:
        ready = _collect(events, (Ready,))
        # Measured on this device as it loaded (the Models screen shows them): the check picture's answer,
        # and the peak of the model's own process, Python and MNN with the model loaded (tens of MB).
        assert ready.check_ms is not None and ready.check_ms > 0
        assert ready.peak_memory_bytes is not None and 20 << 20 < ready.peak_memory_bytes < 4 << 30
        scenes = held_out_scenes(count_per_kind=1, seed=99)
        from app.frames.intake import decode_image_bytes

        first = decode_image_bytes(scenes[0][1])
        host.submit(Analyze("kf-1", first, "kf-1"))
        _collect(events, (Token,), "kf-1")
        os.kill(host.pid, signal.SIGKILL)
        failed = _collect(events, (JobFailed,), "kf-1")
        assert failed.error == "worker_died" and "signal 9" in failed.message
        restarted = _collect(events, (WorkerRestarted,))
        # The new child loads the model and says Ready again: a second Ready, after the restart.
        assert wait_until(
            lambda: any(isinstance(e, Ready) for e in events[events.index(restarted) :]), timeout=60, interval=0.01
        ), "the restarted worker never became ready"
        assert sum(isinstance(e, Ready) for e in events) == 2
        second_kind, second_bytes, expected = scenes[1]
        host.submit(Analyze("kf-2", decode_image_bytes(second_bytes), "kf-2"))
        done = _collect(events, (Finished,), "kf-2", timeout=120)
        assert done.result.observation == expected
        assert not any(isinstance(e, Finished) and e.job_id == "kf-1" for e in events)
    finally:
        started = time.monotonic()
        host.stop()
        assert time.monotonic() - started < 10, "shutdown never hangs"


def test_cancel_takes_effect_within_a_decode_step(monkeypatch: pytest.MonkeyPatch) -> None:
    events: list = []
    # Free generation: a constrained answer is one step, too short to cancel midway. Steps of a slow model
    # (1 s each), so the cancel's trip through the pipe fits in one on a busy machine: at 100 ms a step, a
    # fresh clone's run beside the browser tests saw five tokens before it stopped.
    monkeypatch.setenv(TEST_PACE_ENV, "1000")
    host = ProcessWorkerHost(WorkerSpec(constrained=False), events.append)
    host.start()
    try:
        _collect(events, (Ready,))
        from app.frames.intake import decode_image_bytes

        image = decode_image_bytes(held_out_scenes(count_per_kind=1, seed=98)[0][1])
        host.submit(Analyze("kf-1", image, "kf-1"))
        _collect(events, (Token,), "kf-1")
        host.cancel("kf-1")
        failed = _collect(events, (JobFailed,), "kf-1")
        tokens = [e for e in events if isinstance(e, Token) and e.job_id == "kf-1"]
        assert failed.error == "cancelled"
        assert len(tokens) <= 3, "stopped within a step or two of the cancel, not at the end"
    finally:
        host.stop()


def test_a_model_that_cannot_load_is_reported_not_retried_forever(tmp_path: Path) -> None:
    bad = tmp_path / "model"
    bad.mkdir()
    (bad / "config.json").write_text("{}")
    events: list = []
    host = ProcessWorkerHost(WorkerSpec(model=str(bad)), events.append)
    host.start()
    try:
        from app.worker.messages import LoadFailed

        failure = _collect(events, (LoadFailed,))
        assert "missing model files" in failure.message
        time.sleep(1.0)
        assert not any(isinstance(e, WorkerRestarted) for e in events)
    finally:
        host.stop()


def test_thread_host_gives_the_same_answers() -> None:
    threads_before = set(threading.enumerate())
    updates: list[PipelineUpdate] = []
    pipeline = LivePipeline(WorkerSpec(), updates.append, sampler=SamplerConfig(interval_s=2), host_kind="thread")
    pipeline.start()
    try:
        assert pipeline.wait_ready(60)
        ready = pipeline.model
        # In the app's own process the peak would be the app's: not reported as the model's.
        assert ready is not None and ready.peak_memory_bytes is None and (ready.check_ms or 0) > 0
        from app.frames.intake import decode_image_bytes

        scenes = held_out_scenes(count_per_kind=1, seed=97)
        for i, (_, data, _) in enumerate(scenes):
            pipeline.offer_frame(i * 2.0, decode_image_bytes(data))
            assert pipeline.wait_idle(SETTLE_S)
        pipeline.flush()
        assert pipeline.wait_idle(SETTLE_S)
    finally:
        pipeline.stop()
    got = [e.event.observation for e in pipeline.state.timeline]
    assert got == [expected for _, _, expected in scenes]
    assert not any(isinstance(u.event, KeyframeFailed) for u in updates)
    assert all(isinstance(e.event, PracticeEvent) for e in pipeline.state.timeline)
    # stop() ends every thread the pipeline started: not one is left behind.
    wait_for(
        lambda: [t.name for t in set(threading.enumerate()) - threads_before if t.is_alive()],
        lambda names: not names,
        5,
        "every thread the pipeline started ended after stop()",
    )


def test_a_slow_model_supersedes_waiting_keyframes_and_says_the_interval_stretched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from app.frames.intake import decode_image_bytes

    updates: list[PipelineUpdate] = []
    # ~3 s per answer (3 phases + ~3 tokens x 450 ms) while keyframes close every 2 s of video time
    # fed as fast as possible: the model cannot keep up.
    monkeypatch.setenv(TEST_PACE_ENV, "450")
    pipeline = LivePipeline(WorkerSpec(), updates.append, sampler=SamplerConfig(interval_s=2), host_kind="process")
    pipeline.start()
    scenes = held_out_scenes(count_per_kind=2, seed=63)
    try:
        assert pipeline.wait_ready(60)
        for i, (_, data, _) in enumerate(scenes):
            pipeline.offer_frame(i * 2.0, decode_image_bytes(data))
            time.sleep(0.1)
        pipeline.flush()
        assert pipeline.wait_idle(120)
    finally:
        pipeline.stop()
    state = pipeline.state
    superseded = state.skipped - state.unchanged
    assert superseded > 0, "older waiting keyframes were replaced, and recorded as such"
    assert len(state.timeline) + state.skipped + state.failed == len(scenes), "no keyframe silently dropped"
    assert any(u.interval_stretched for u in updates)
    assert max(u.effective_interval_s or 0 for u in updates) > 2.0
    assert max(u.model_seconds or 0 for u in updates) > 2.0
