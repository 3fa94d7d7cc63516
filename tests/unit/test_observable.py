"""The one state holder the controllers notify their pages with."""

from __future__ import annotations

import logging
import sys
import threading

import pytest

from app.core.observable import Observable


def test_a_listener_gets_the_present_at_once_then_every_change_and_no_repeat() -> None:
    state = Observable(0, "test")
    seen: list[int] = []
    state.set(1)
    state.subscribe(seen.append)
    state.set(2)
    state.set(2)  # no change: nothing to show
    state.update(lambda n: n + 1)
    state.unsubscribe(seen.append)
    state.set(9)
    assert seen == [1, 2, 3] and state.value == 9


def test_states_from_many_threads_reach_every_listener_in_the_order_they_were_made() -> None:
    state = Observable(0, "test")
    got: list[list[int]] = [[], []]
    for record in got:
        state.subscribe(record.append)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [
            threading.Thread(target=lambda: [state.update(lambda n: n + 1) for _ in range(300)]) for _ in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    for record in got:
        assert record == list(range(1201)), "every state, each after the one before"


def test_a_failing_listener_is_logged_once_dropped_and_the_others_still_hear(
    caplog: pytest.LogCaptureFixture,
) -> None:
    state = Observable("a", "the test screen")
    calls: list[str] = []
    seen: list[str] = []

    def broken(value: str) -> None:
        calls.append(value)
        if value != "a":
            raise RuntimeError("a closed tab")

    state.subscribe(broken)
    state.subscribe(seen.append)
    with caplog.at_level(logging.WARNING, logger="keyframe.state"):
        for value in "bcd":
            state.set(value)
    assert seen == ["a", "b", "c", "d"] and calls == ["a", "b"]
    assert caplog.text.count("a listener of the test screen failed") == 1


def test_a_listener_that_changes_the_state_never_leaves_another_with_the_older_one() -> None:
    state = Observable(0, "test")
    later: list[int] = []

    def bumps(value: int) -> None:
        if value == 1:
            state.set(2)  # e.g. a screen that acts on what it is told

    state.subscribe(bumps)
    state.subscribe(later.append)
    state.set(1)
    assert later == [0, 2] and state.value == 2


def test_staged_states_reach_listeners_only_when_published_and_only_the_newest() -> None:
    states = Observable(0, "a test")
    seen: list[int] = []
    states.subscribe(seen.append)
    states.stage(1)
    states.stage(2)
    assert states.value == 2 and seen == [0]  # the owner reads its newest state; no listener ran
    states.publish()
    states.publish()  # nothing new: nothing sent again
    assert seen == [0, 2]
    states.stage(0)
    states.stage(2)  # back to what the listeners have: publishing sends nothing
    states.publish()
    assert seen == [0, 2]
