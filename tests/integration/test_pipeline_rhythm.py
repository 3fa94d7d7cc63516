"""The compression rhythm in the live pipeline: every frame of a moving source feeds it, the screen
hears it about once a second, a new session starts it again, and stills never feed it."""

from __future__ import annotations

import numpy as np

from app.core.sampler import SamplerConfig
from app.frames.intake import DecodedImage
from app.pipeline.live import RHYTHM_EVERY_S, LivePipeline, PipelineUpdate
from app.worker.messages import WorkerSpec
from tests.unit.test_rhythm import block_frame

FPS = 15


def compressions(rate_per_min: float, seconds: float, still: bool = False) -> list[tuple[float, DecodedImage]]:
    """A bright block moving down and up at `rate_per_min`, as frames with their times."""
    out = []
    for i in range(int(seconds * FPS)):
        t = i / FPS
        y = 100 + 8 * (1 - np.cos(2 * np.pi * rate_per_min / 60 * t))
        out.append((t, DecodedImage(block_frame(y), "test", "camera", still=still)))
    return out


def rhythms(updates: list[PipelineUpdate]) -> list:
    return [u.rhythm for u in updates if u.rhythm is not None]


def test_every_frame_feeds_the_rhythm_and_a_new_session_starts_it_again() -> None:
    updates: list[PipelineUpdate] = []
    # The worker is never started: the rhythm needs no model (keyframes only wait in its queue).
    pipeline = LivePipeline(WorkerSpec(), updates.append, sampler=SamplerConfig(interval_s=5), host_kind="thread")
    try:
        for t, image in compressions(110, 20):
            pipeline.offer_frame(t, image)
        said = rhythms(updates)
        # About one a second of frames, never one a frame.
        gaps = [b.t_s - a.t_s for a, b in zip(said, said[1:], strict=False)]
        assert 15 <= len(said) <= 21 and min(gaps) >= RHYTHM_EVERY_S - 1e-9
        assert said[-1].rate_per_min is not None and abs(said[-1].rate_per_min - 110) <= 3
        assert said[-1].count >= 30
        pipeline.begin_session(None)
        updates.clear()
        for t, image in compressions(110, 3)[:1] * 45:  # a still scene: the same frame for 3 s
            pipeline.offer_frame(t, image)
        assert rhythms(updates) and all(r.rate_per_min is None and r.count == 0 for r in rhythms(updates))
    finally:
        pipeline.stop()


def test_stills_never_feed_the_rhythm() -> None:
    updates: list[PipelineUpdate] = []
    pipeline = LivePipeline(WorkerSpec(), updates.append, sampler=SamplerConfig(interval_s=5), host_kind="thread")
    try:
        for t, image in compressions(110, 6, still=True):
            pipeline.offer_frame(t, image)
        assert not rhythms(updates)
    finally:
        pipeline.stop()


def test_the_rhythm_goes_into_the_session_log_and_its_last_sample_holds_the_totals(tmp_path) -> None:
    """About one sample a second of frames in the append-only log; stopping records the frames fed since
    the last sample, so the session's totals are those the screen showed last. Nothing after the stop."""
    from app.core.session import RhythmSample
    from app.session.store import SessionLog, load_session

    updates: list[PipelineUpdate] = []
    path = tmp_path / "s.jsonl"
    log = SessionLog(path)
    pipeline = LivePipeline(WorkerSpec(), updates.append, sampler=SamplerConfig(interval_s=5), host_kind="thread")
    try:
        pipeline.begin_session(log)
        frames = compressions(110, 12.5)
        for t, image in frames:
            pipeline.offer_frame(t, image)
        pipeline.end_session()
        log.close()
        last = rhythms(updates)[-1]
        for t, image in compressions(110, 2):  # after the stop: no log to write to, and none written
            pipeline.offer_frame(t + 20, image)
    finally:
        pipeline.stop()
    samples = [e for e in load_session(path).events if isinstance(e, RhythmSample)]
    assert samples == list(load_session(path).state.rhythm)
    times = [s.t for s in samples]
    assert 12 <= len(samples) <= 14 and all(
        b - a >= RHYTHM_EVERY_S - 1e-9 for a, b in zip(times[:-2], times[1:-1], strict=True)
    )
    assert times[-1] == frames[-1][0], "the stop records the last frame's rhythm"
    assert samples[-1].rhythm == last
    assert samples[-1].count >= 20 and abs(samples[-1].median_rate_per_min - 110) <= 3
