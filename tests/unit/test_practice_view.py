"""The practice screen's rendering and arrangement, without a browser."""

from __future__ import annotations

from dataclasses import replace

import flet as ft

from app.core.profiles import ProfileLabels
from app.core.session import reduce
from app.ui.practice_controller import PracticeState
from app.ui.practice_view import PracticeActions, PracticeView
from tests.unit.test_session import practice
from tests.unit.test_sessions_view import walk


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
    rhythm = Rhythm(30.0, 96.4, 0.9, 41, 104.2, (Pause(12.0, 3.5, ongoing=False),), 0.82)
    view.render(replace(_state(), running=True, source_kind="camera", rhythm=rhythm))
    assert view.rhythm_box.visible and view.rate.value == "96/min"
    assert view.rate_words.value == "a little slow: aim for 100–120 per minute"
    assert view.rate_details.value == (
        "41 compressions · pauses of 2 s or more: 1 (longest 3.5 s) · compressing 82 % of the time"
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


def test_the_timeline_draws_the_rate_of_a_moving_source_under_the_keyframes() -> None:
    from tests.unit.test_sessions_controller import RATES, rhythm_events

    view = _view()
    session = reduce(rhythm_events())
    view.render(replace(_state(), running=True, source_kind="camera", session=session))
    assert view.timeline.rate_box.visible
    assert [p.rate_per_min for p in view.timeline.rate_points] == list(RATES)
    view.render(_state())  # a session without rhythm: the lane stays hidden
    assert not view.timeline.rate_box.visible
