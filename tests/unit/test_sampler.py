from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.sampler import Decision, FrameStats, KeyframeSampler, SamplerConfig
from app.core.slot import InFlightSlot


def stats(sharp: float, level: int = 0) -> FrameStats:
    return FrameStats(sharpness=sharp, thumb=np.full((8, 8), level, np.uint8))


def test_interval_bounds() -> None:
    for bad in (1.9, 5.1, 0):
        with pytest.raises(ValueError):
            SamplerConfig(interval_s=bad)
    SamplerConfig(interval_s=2)
    SamplerConfig(interval_s=5)


def test_sharpest_frame_of_each_window_is_chosen() -> None:
    sampler: KeyframeSampler[str] = KeyframeSampler(SamplerConfig(interval_s=2, change_threshold=1))
    out = []
    frames = [(0.0, 5, 0), (0.5, 9, 0), (1.5, 3, 0), (2.0, 1, 100), (3.9, 7, 100), (4.0, 2, 200)]
    for t, sharp, level in frames:
        sel = sampler.offer(t, stats(sharp, level), f"f{t}")
        if sel:
            out.append(sel)
    out.append(sampler.flush())
    assert [s.payload for s in out] == ["f0.5", "f3.9", "f4.0"]
    assert [s.window_start for s in out] == [0.0, 2.0, 4.0]
    assert all(s.decision is Decision.KEYFRAME for s in out)


def test_near_duplicates_are_recorded_as_unchanged() -> None:
    sampler: KeyframeSampler[int] = KeyframeSampler(SamplerConfig(interval_s=2, change_threshold=4))
    levels = [10, 11, 12, 60, 61]
    results = []
    for i, level in enumerate(levels):
        results.append(sampler.offer(i * 2.0, stats(1, level), i))
    results.append(sampler.flush())
    decisions = [s.decision for s in results if s]
    # 10 → keyframe; 11, 12 within 4 of the last *analysed* (10) → unchanged; 60 → keyframe; 61 → unchanged
    assert decisions == [
        Decision.KEYFRAME,
        Decision.UNCHANGED,
        Decision.UNCHANGED,
        Decision.KEYFRAME,
        Decision.UNCHANGED,
    ]


def test_slow_drift_is_caught_because_comparison_is_with_the_last_analysed() -> None:
    sampler: KeyframeSampler[int] = KeyframeSampler(SamplerConfig(interval_s=2, change_threshold=4))
    decisions = []
    for i in range(6):
        sel = sampler.offer(i * 2.0, stats(1, 10 + 3 * i), i)
        if sel:
            decisions.append(sel.decision)
    assert Decision.KEYFRAME in decisions[1:], "a drift of 3 per window must trigger within a few windows"


def test_a_gap_in_the_stream_does_not_replay_empty_windows() -> None:
    sampler: KeyframeSampler[int] = KeyframeSampler(SamplerConfig(interval_s=3, change_threshold=0))
    assert sampler.offer(0.0, stats(1, 0), 0) is None
    sel = sampler.offer(31.0, stats(1, 50), 1)
    assert sel is not None and sel.payload == 0
    nxt = sampler.offer(32.0, stats(1, 90), 2)
    assert nxt is None, "31 s and 32 s share the window starting at 30 s"


@given(
    st.lists(st.tuples(st.floats(0, 0.9), st.floats(0, 100)), min_size=1, max_size=60), st.sampled_from([2.0, 3.0, 5.0])
)
def test_at_most_one_selection_per_window(steps: list[tuple[float, float]], interval: float) -> None:
    sampler: KeyframeSampler[float] = KeyframeSampler(SamplerConfig(interval_s=interval, change_threshold=0))
    t, selections = 0.0, []
    for dt, sharp in steps:
        t += dt
        sel = sampler.offer(t, stats(sharp, int(sharp)), t)
        if sel:
            selections.append(sel)
    last = sampler.flush()
    if last:
        selections.append(last)
    starts = [s.window_start for s in selections]
    assert len(starts) == len(set(starts))
    assert all(s.window_start <= s.t < s.window_start + interval for s in selections)


def test_slot_keeps_one_in_flight_and_only_the_newest_waiting() -> None:
    times = {"a": 0.0, "b": 3.0, "c": 7.0}
    slot: InFlightSlot[str] = InFlightSlot(time_of=times.__getitem__)
    assert slot.submit("a") == ("a", None)
    assert slot.submit("b") == (None, None)
    assert slot.submit("c") == (None, "b")  # b superseded by the newer c
    assert slot.in_flight == "a" and slot.waiting == "c"
    assert slot.done() == "c"
    assert slot.done() is None
    assert slot.stats.superseded == 1 and slot.stats.dispatched == 2 and slot.stats.completed == 2
    assert slot.effective_interval() == 7.0
    assert slot.stretched(3.0) and not slot.stretched(6.0)
