from __future__ import annotations

from app.core.watchdog import ProgressClock, StallLimit


def test_the_limit_follows_the_measured_speed_above_a_floor() -> None:
    limit = StallLimit(floor_s=30.0, factor=10.0, load_factor=3.0)
    assert limit.limit_s() == 30.0
    limit.loaded(20.0)  # a slow load stands in before any keyframe was measured
    assert limit.limit_s() == 60.0
    limit.observe(0.5)
    assert limit.limit_s() == 30.0  # measured: fast, so the floor holds
    limit.observe(8.0)
    assert limit.limit_s() == 80.0
    for _ in range(16):  # the slow one ages out of the history
        limit.observe(1.0)
    assert limit.limit_s() == 30.0


def test_the_progress_clock_measures_silence_only_while_a_job_runs() -> None:
    clock = ProgressClock()
    assert clock.silent_for(100.0) == 0.0
    clock.begin(10.0)
    clock.tick(11.0)
    clock.tick(15.0)
    assert clock.silent_for(17.5) == 2.5
    assert clock.end() == 4.0
    assert clock.silent_for(50.0) == 0.0
