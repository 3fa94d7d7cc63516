"""The practice screen's rendering and arrangement, without a browser."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import flet as ft

from app.core.profiles import ProfileLabels
from app.core.session import KeyframeSkipped, SkipReason, reduce
from app.ui.practice_controller import PracticeState
from app.ui.practice_view import PracticeActions, PracticeView
from tests.unit.test_session import practice
from tests.unit.test_sessions_controller import recorded, write_session
from tests.unit.test_sessions_view import build, open_session, walk


def _view() -> PracticeView:
    actions = PracticeActions(
        lambda *a: None, lambda: None, lambda _: None, lambda *a: None, lambda *a: None, lambda *a: None
    )
    return PracticeView(actions, ft.Container())


def _state(**labels: ProfileLabels) -> PracticeState:
    events = [practice(1, "yes"), practice(2, "no")]
    return PracticeState(
        worker_status="ready",
        session_id="s",
        session=reduce(events),
        latest=events[-1],
        answer_values=("yes", "no", "unknown"),
        labels=tuple(labels.items()),
    )


def test_the_card_and_the_examiners_list_ask_the_same_sentence() -> None:
    view = _view()
    view.render(_state(en=ProfileLabels(question="Are the arms straight?")))
    assert view.question.value == "Are the arms straight?"
    titles = [row.answer.value for row in view.reviews.rows.values()]
    assert titles == ["Are the arms straight? — YES", "Are the arms straight? — NO"]


def test_without_labels_the_profiles_question_leads_both() -> None:
    view = _view()
    view.render(replace(_state(), question="Is the hand position correct?"))
    row = next(iter(view.reviews.rows.values()))
    assert row.answer.value == "Is the hand position correct? — YES"


def test_a_phone_layout_moves_the_card_but_never_the_camera() -> None:
    """A camera control that moves in the tree is rebuilt by Flutter, and its stream ends."""
    view = _view()

    def parent_of(target: ft.Control) -> ft.Control:
        return next(c for c in walk(view.root) if target in getattr(c, "controls", []) or [])

    camera_parent = parent_of(view.stage)
    view.render(_state())
    for wide in (False, True, False):
        view.arrange(wide)
        assert parent_of(view.stage) is camera_parent
        card_parent = parent_of(view._card)
        assert (card_parent is camera_parent) is not wide, "on a phone the card sits right under the preview"
        order = camera_parent.controls
        assert order.index(view.stage) == 0
        if not wide:  # the card comes before the source and interval buttons
            assert order.index(view._card) < next(i for i, c in enumerate(order) if view.source in walk(c))


def test_the_rate_is_said_against_the_target_and_only_for_moving_sources() -> None:
    from app.core.rhythm_figures import Pause, Rhythm

    view = _view()
    rhythm = Rhythm(30.0, 96.4, 0.9, 41, 104.2, (Pause(12.0, 3.5, ongoing=False),), 0.82, frame_rate=29.6)
    view.render(replace(_state(), running=True, source_kind="camera", rhythm=rhythm))
    assert view.rhythm_box.visible and view.rate.value == "96/min"
    assert view.rate_words.value == "a little slow: aim for 100–120 per minute"
    assert view.rate_details.value == (
        "41 compressions · pauses of 2 s or more: 1 (longest 3.5 s) · compressing 82 % of the time · 30 frames a second"
    )
    view.render(
        replace(_state(), running=True, source_kind="video", rhythm=replace(rhythm, rate_per_min=None, pauses=()))
    )
    assert view.rate.value == "—" and view.rate_words.value == "no steady compressions seen"
    assert "no pause of 2 s or more" in view.rate_details.value
    # Ended: the session's median, said as such, never the last window's figure as if current.
    view.render(replace(_state(), running=False, source_kind="video", rhythm=rhythm))
    assert view.rate.value == "104/min" and view.rate_title.value == "Compression rate, the session's median"
    assert view.rate_words.value == "in the 100–120 per minute target"
    view.render(replace(_state(), running=True, source_kind="folder", rhythm=rhythm))
    assert not view.rhythm_box.visible  # stills have no movement between them


def test_a_camera_too_slow_to_count_compressions_says_so_instead_of_no_compressions() -> None:
    from app.core.rhythm_figures import Rhythm

    view = _view()
    sparse = Rhythm(30.0, None, 0.0, 0, None, (), 0.0, frame_rate=2.5)
    view.render(replace(_state(), running=True, source_kind="camera", rhythm=sparse))
    assert view.rate.value == "—"
    assert view.rate_words.value == "the camera gives 2.5 pictures a second: too few to count compressions"
    assert view.rate_details.value.endswith("· 2.5 frames a second")
    # Enough frames and nothing periodic: no compressions seen, as before.
    view.render(replace(_state(), running=True, source_kind="camera", rhythm=replace(sparse, frame_rate=30.0)))
    assert view.rate_words.value == "no steady compressions seen"


def test_the_timeline_draws_the_rate_of_a_moving_source_under_the_keyframes() -> None:
    from tests.unit.test_sessions_controller import RATES, rhythm_events

    view = _view()
    session = reduce(rhythm_events())
    view.render(replace(_state(), running=True, source_kind="camera", session=session))
    assert view.timeline.rate_box.visible
    assert [p.rate_per_min for p in view.timeline.rate_points] == list(RATES)
    view.render(_state())  # a session without rhythm: the lane stays hidden
    assert not view.timeline.rate_box.visible


def test_the_rate_shown_and_its_words_and_colour_agree() -> None:
    from app.core.rhythm_figures import Rhythm

    view = _view()
    for rate, shown, words in (
        (99.7, "100/min", "in the 100–120 per minute target"),
        (120.4, "120/min", "in the 100–120 per minute target"),
        (120.6, "121/min", "a little fast: aim for 100–120 per minute"),
        (99.4, "99/min", "a little slow: aim for 100–120 per minute"),
    ):
        rhythm = Rhythm(30.0, rate, 0.9, 41, rate, (), 0.8)
        view.render(replace(_state(), running=True, source_kind="video", rhythm=rhythm))
        assert (view.rate.value, view.rate_words.value) == (shown, words)
        in_band = words.startswith("in the")
        assert view.rate.color == (ft.Colors.GREEN_800 if in_band else ft.Colors.ORANGE_900)


def test_the_live_timeline_shows_the_skipped_keyframes_as_sessions_does(tmp_path: Path) -> None:
    """A live video session whose unchanged keyframes were skipped: Practice's timeline, drawn from the live
    state, shows and counts them exactly as Sessions does from the same session's log."""
    skipped = [
        KeyframeSkipped(
            event_id=f"s{i}", t=1.0 + i, wall_time=1001.0 + i, keyframe_id=f"k-s{i}", reason=SkipReason.UNCHANGED
        )
        for i in range(7)
    ]
    events = sorted([recorded(1, "yes"), recorded(2, "no"), recorded(3, "yes"), *skipped], key=lambda e: e.t)
    practice_view = _view()
    practice_view.render(replace(_state(), running=True, source_kind="video", session=reduce(events)))
    folder = tmp_path / "sessions"
    folder.mkdir()
    write_session(folder, "20250101-120000-abcdef", events)
    _, sessions_view = build(folder)
    open_session(sessions_view, "20250101-120000-abcdef")

    live, kept = practice_view.timeline, sessions_view.timeline
    assert sum(p.kind == "skipped" for p in live.points) == 7
    assert live.points == kept.points  # the same points, tooltips and lanes
    assert live.semantics.label == kept.semantics.label and "; 7 skipped, 0 failed" in live.semantics.label
    assert "Skipped 7 (unchanged 7) · failed 0" in [c.value for c in sessions_view.summary.controls]
