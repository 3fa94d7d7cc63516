"""The practice screen's rendering and arrangement, without a browser."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import flet as ft

from app.core.generation import RunPhase
from app.core.notice import Notice
from app.core.profile.task import ProfileLabels
from app.core.session import AskedSignal, KeyframeSkipped, SessionAsked, SkipReason, reduce
from app.ui.practice.controller import PracticeState, SourceKind, clean_card
from app.ui.practice.view import PracticeActions, PracticeView
from tests.unit.test_session import practice
from tests.unit.test_sessions_controller import recorded, write_session
from tests.unit.test_sessions_view import build, open_session, walk


def _view() -> PracticeView:
    actions = PracticeActions(lambda *a: None, lambda: None, lambda _: None, lambda *a: None)
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


INSTRUCTIONS = "This photo shows a trainee doing CPR. Answer with only this JSON object: {...}"


def _asked(question: str = "", title: str = "CPR: hand position on the chest") -> SessionAsked:
    """The session's first line, as the pipeline writes it from the profile the worker asks with."""
    signal = AskedSignal(
        signal="hand_position_correct",
        values=("yes", "no", "unknown"),
        prompt=INSTRUCTIONS,
        questions=(("en", question),) if question else (),
    )
    return SessionAsked(
        event_id="a", wall_time=1.0, profile_id="p", profile_sha256="", titles=(("", title),), signals=(signal,)
    )


def _asking(state: PracticeState, asked: SessionAsked) -> PracticeState:
    return replace(state, session=reduce([asked, *[e.event for e in state.session.timeline]]))


def test_the_card_and_the_examiners_list_ask_the_same_sentence() -> None:
    view = _view()
    view.render(_asking(_state(en=ProfileLabels(question="Are the arms straight?")), _asked("Are the arms straight?")))
    assert view.question.value == "Are the arms straight?"
    titles = [row.answer.value for row in view.reviews.rows.values()]
    assert titles == ["Are the arms straight? — YES", "Are the arms straight? — NO"]


def test_without_short_words_the_title_leads_both_never_the_prompt() -> None:
    """A profile for instruction-following models printed its whole prompt as the card's question."""
    view = _view()
    state = replace(_state(), question=INSTRUCTIONS, title="CPR: hand position on the chest")
    view.render(_asking(state, _asked()))
    assert view.question.value == "CPR: hand position on the chest"
    row = next(iter(view.reviews.rows.values()))
    assert row.answer.value == "CPR: hand position on the chest — YES"


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
    view.render(replace(_state(), running=True, source_kind=SourceKind.CAMERA, rhythm=rhythm))
    assert view.rhythm_box.visible and view.rate.value == "96/min"
    assert view.rate_words.value == "a little slow: aim for 100–120 per minute"
    assert view.rate_details.value == (
        "41 compressions · pauses of 2 s or more: 1 (longest 3.5 s) · compressing 82 % of the time · 30 frames a second"
    )
    view.render(
        replace(
            _state(), running=True, source_kind=SourceKind.VIDEO, rhythm=replace(rhythm, rate_per_min=None, pauses=())
        )
    )
    assert view.rate.value == "—" and view.rate_words.value == "no steady compressions seen"
    assert "no pause of 2 s or more" in view.rate_details.value
    # Ended: the session's median, said as such, never the last window's figure as if current.
    view.render(replace(_state(), running=False, source_kind=SourceKind.VIDEO, rhythm=rhythm))
    assert view.rate.value == "104/min" and view.rate_title.value == "Compression rate, the session's median"
    assert view.rate_words.value == "in the 100–120 per minute target"
    view.render(replace(_state(), running=True, source_kind=SourceKind.FOLDER, rhythm=rhythm))
    assert not view.rhythm_box.visible  # stills have no movement between them


def test_a_camera_too_slow_to_count_compressions_says_so_instead_of_no_compressions() -> None:
    from app.core.rhythm_figures import Rhythm

    view = _view()
    sparse = Rhythm(30.0, None, 0.0, 0, None, (), 0.0, frame_rate=2.5)
    view.render(replace(_state(), running=True, source_kind=SourceKind.CAMERA, rhythm=sparse))
    assert view.rate.value == "—"
    assert view.rate_words.value == "the camera gives 2.5 pictures a second: too few to count compressions"
    assert view.rate_details.value.endswith("· 2.5 frames a second")
    # Enough frames and nothing periodic: no compressions seen, as before.
    view.render(replace(_state(), running=True, source_kind=SourceKind.CAMERA, rhythm=replace(sparse, frame_rate=30.0)))
    assert view.rate_words.value == "no steady compressions seen"


def test_the_timeline_draws_the_rate_of_a_moving_source_under_the_keyframes() -> None:
    from tests.unit.test_sessions_controller import RATES, rhythm_events

    view = _view()
    session = reduce(rhythm_events())
    view.render(replace(_state(), running=True, source_kind=SourceKind.CAMERA, session=session))
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
        view.render(replace(_state(), running=True, source_kind=SourceKind.VIDEO, rhythm=rhythm))
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
    practice_view.render(replace(_state(), running=True, source_kind=SourceKind.VIDEO, session=reduce(events)))
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


class Clock:
    """The view's wall clock, set by the test (no test sleeps)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _clocked(now: float, language: str = "en") -> PracticeView:
    from app.ui.words import main as strings
    from app.ui.words import sessions as strings_sessions

    actions = PracticeActions(lambda *a: None, lambda: None, lambda _: None, lambda *a: None)
    return PracticeView(
        actions,
        ft.Container(),
        strings.TABLES[language],
        strings_sessions.TABLES[language],
        language,
        now=Clock(now),
    )


def _camera_state() -> PracticeState:
    """A running camera session at 2 s whose newest answer (NO) arrived at wall time 1002."""
    return replace(_state(), running=True, source_kind=SourceKind.CAMERA, interval_s=2.0, effective_interval_s=2.0)


def test_the_card_says_how_old_its_answer_is_and_a_tick_keeps_it_current() -> None:
    view = _clocked(1011.4)  # the answer arrived at 1002.0 by the wall clock
    view.render(_camera_state())
    assert view.age.value == "answered 9 s ago"
    assert view._card_lines[view.age].visible
    assert view.answer_row.opacity == 1.0, "nothing newer is being analysed: the answer is as current as it gets"
    clock = view._now
    assert isinstance(clock, Clock)
    clock.now = 1002.3
    view.tick()
    assert view.age.value == "answered just now"
    clock.now = 1002.0 + 125
    view.tick()  # no new state: the page's ticker alone brings the age on
    assert view.age.value == "answered 2 min ago"
    zh = _clocked(1011.4, "zh")
    zh.render(_camera_state())
    assert zh.age.value == "9 秒前回答"


def test_an_answer_older_than_the_interval_is_dimmed_while_the_next_keyframe_is_analysed() -> None:
    view = _clocked(1002.0 + 3.5)
    analysing = replace(_camera_state(), analysing="k3", phase=RunPhase.VISION)
    view.render(analysing)
    assert view.answer_row.opacity < 0.5
    assert view.age.value == "answered 3 s ago · an older answer: the next keyframe is being analysed"
    assert view.age.color == ft.Colors.ORANGE_900
    # Within the interval an analysis is the usual next one: the answer stays in full colour.
    fresh = _clocked(1002.0 + 1.5)
    fresh.render(analysing)
    assert fresh.answer_row.opacity == 1.0 and fresh.age.value == "answered 1 s ago"
    # A model slower than the interval: older than the stretched interval (7 s), not the asked 2 s.
    slow = replace(analysing, interval_stretched=True, model_seconds=7.0, effective_interval_s=7.0)
    view.render(slow)
    assert view.answer_row.opacity == 1.0
    assert view.slower.value == "The model needs 7.0 s per keyframe, so it looks every 7.0 s instead of every 2 s."
    zh = _clocked(1002.0 + 3.5, "zh")
    zh.render(analysing)
    assert zh.age.value == "3 秒前回答 · 这是较早的回答：正在分析下一个关键帧"


def test_a_new_answer_is_shown_in_full_colour() -> None:
    view = _clocked(1002.0 + 3.5)
    view.render(replace(_camera_state(), analysing="k3", phase=RunPhase.DECODE))
    assert view.answer_row.opacity < 1.0
    newer = replace(practice(3, "yes"), wall_time=1005.2)  # it has just arrived
    events = [practice(1, "yes"), practice(2, "no"), newer]
    view.render(replace(_camera_state(), session=reduce(events), latest=newer, analysing=None))
    assert view.answer_row.opacity == 1.0
    assert view.answer.value == "YES" and view.answer.color == ft.Colors.GREEN_700
    assert view.age.value == "answered just now" and view.age.color == ft.Colors.GREY_800


def test_the_checklist_lines_are_dimmed_like_the_one_answer() -> None:
    from app.storage.paths import PROFILES
    from app.storage.profile_file import load_checklist
    from tests.unit.test_session import checklist_keyframe

    checklist = load_checklist(PROFILES / "cpr_checklist.json")
    events = checklist_keyframe(1, {"hands_visible": "yes", "hand_position_correct": "no", "hands_stacked": "yes"})
    state = replace(_camera_state(), checklist=checklist, session=reduce(events), latest=events[-1], analysing="k2")
    view = _clocked(1001.0 + 4)
    view.render(state)
    assert view.age.value.startswith("answered 4 s ago · an older answer")
    rows = list(view._checklist_rows.values())
    assert rows and all(row.icon.opacity < 0.5 and row.texts.opacity < 0.5 for row in rows)
    view.render(replace(state, analysing=None))
    assert all(row.icon.opacity == 1.0 and row.texts.opacity == 1.0 for row in rows)


def test_stills_and_an_ended_session_show_no_age() -> None:
    """Stills are answered in turn: how long ago says nothing of them. An ended session is not ticked, so an
    age there would stand still and lie."""
    view = _clocked(1002.0 + 30)
    for kind in (SourceKind.IMAGE, SourceKind.FOLDER):
        view.render(replace(_camera_state(), source_kind=kind, analysing="k3"))
        assert view.age.value == "" and not view._card_lines[view.age].visible
        assert view.answer_row.opacity == 1.0
    still = replace(practice(2, "no"), still=True, source="a.jpg")
    view.render(replace(_camera_state(), source_kind=SourceKind.TESTERS, latest=still))
    assert view.age.value == ""
    view.render(replace(_camera_state(), running=False))
    assert view.age.value == "" and not view._card_lines[view.age].visible


def _rate_view(language: str = "en", tones: list[bool] | None = None) -> PracticeView:
    from app.ui.words import main as strings
    from app.ui.words import sessions as strings_sessions

    said = tones if tones is not None else []
    actions = PracticeActions(
        lambda *a: None,
        lambda: None,
        lambda _: None,
        lambda *a: None,
        rate_tones=said.append,
    )
    return PracticeView(actions, ft.Container(), strings.TABLES[language], strings_sessions.TABLES[language], language)


def _rhythm(rate: float | None, pauses: tuple = ()):
    from app.core.rhythm_figures import Rhythm

    return Rhythm(30.0, rate, 0.9, 41, 110.0, pauses, 0.8, frame_rate=30.0)


def test_the_cue_word_follows_the_band_of_the_rate_shown() -> None:
    """Faster / Good / Slower in words, an arrow or a tick, and colour, judged on the rounded rate shown."""
    view = _rate_view()
    for rate, shown, cue, icon, colour in (
        (99.4, "99/min", "Faster", ft.Icons.ARROW_UPWARD, ft.Colors.ORANGE_900),
        (99.7, "100/min", "Good", ft.Icons.CHECK_CIRCLE_OUTLINE, ft.Colors.GREEN_800),
        (100.0, "100/min", "Good", ft.Icons.CHECK_CIRCLE_OUTLINE, ft.Colors.GREEN_800),
        (120.4, "120/min", "Good", ft.Icons.CHECK_CIRCLE_OUTLINE, ft.Colors.GREEN_800),
        (121.0, "121/min", "Slower", ft.Icons.ARROW_DOWNWARD, ft.Colors.ORANGE_900),
    ):
        view.render(replace(_state(), running=True, source_kind=SourceKind.CAMERA, rhythm=_rhythm(rate)))
        assert view.rate.value == shown
        assert view.rate_cue_box.visible and view.rate_cue.value == cue, rate
        assert (view.rate_cue_icon.icon, view.rate_cue_box.bgcolor) == (icon, colour), rate
        assert view.rate_cue.size >= 64  # read from 2 m, with the phone on the floor
    zh = _rate_view("zh")
    for rate, cue in ((99.4, "加快"), (100.0, "很好"), (121.0, "减慢")):
        zh.render(replace(_state(), running=True, source_kind=SourceKind.VIDEO, rhythm=_rhythm(rate)))
        assert zh.rate_cue.value == cue


def test_the_cue_shows_only_while_a_moving_source_runs_and_a_rate_is_shown() -> None:
    view = _rate_view()
    view.render(replace(_state(), running=True, source_kind=SourceKind.CAMERA, rhythm=_rhythm(96.0)))
    assert view.rate_cue_box.visible and view.cue_band == "slow"
    for state in (
        replace(_state(), running=True, source_kind=SourceKind.CAMERA, rhythm=_rhythm(None)),  # "—": nothing to judge
        replace(_state(), running=False, source_kind=SourceKind.CAMERA, rhythm=_rhythm(96.0)),  # ended: the median
        replace(_state(), running=True, source_kind=SourceKind.FOLDER, rhythm=_rhythm(96.0)),  # stills
        replace(_state(), running=True, source_kind=SourceKind.CAMERA, rhythm=None),
    ):
        view.render(state)
        assert not view.rate_cue_box.visible and view.cue_band is None


def test_a_pause_over_10_s_is_flagged_in_words_and_colour_while_it_lasts_and_after() -> None:
    from app.core.rhythm_figures import Pause

    view = _rate_view()
    running = replace(_state(), running=True, source_kind=SourceKind.CAMERA)
    view.render(replace(running, rhythm=_rhythm(None, (Pause(5.0, 3.2, False), Pause(12.0, 12.34, True)))))
    assert view.pause_flag_row.visible
    assert view.pause_flag.value == "Paused 12.3 s now — over 10 s (pauses over 10 s: 1)"
    assert view.pause_flag.color == ft.Colors.RED_800
    resumed = (Pause(5.0, 3.2, False), Pause(12.0, 12.34, False), Pause(40.0, 10.6, False))
    view.render(replace(running, rhythm=_rhythm(110.0, resumed)))
    assert view.pause_flag.value == "Longest pause 12.3 s — over 10 s (pauses over 10 s: 2)"
    view.render(replace(running, running=False, rhythm=_rhythm(110.0, resumed)))  # after the session too
    assert view.pause_flag_row.visible and view.pause_flag.value.startswith("Longest pause 12.3 s — over 10 s")
    zh = _rate_view("zh")
    zh.render(replace(running, rhythm=_rhythm(110.0, resumed)))
    assert zh.pause_flag.value == "最长停顿 12.3 秒——超过 10 秒（超过 10 秒的停顿：2 次）"


def test_a_pause_of_10_s_as_shown_or_one_that_lasted_until_the_end_is_not_flagged() -> None:
    from app.core.rhythm_figures import Pause

    view = _rate_view()
    running = replace(_state(), running=True, source_kind=SourceKind.CAMERA)
    view.render(replace(running, rhythm=_rhythm(110.0, (Pause(5.0, 10.04, False),))))  # shown "10.0 s"
    assert not view.pause_flag_row.visible
    # The trainee got up to stop the app: that last pause is the end of the attempt, not an interruption.
    view.render(replace(running, running=False, rhythm=_rhythm(None, (Pause(50.0, 14.0, True),))))
    assert not view.pause_flag_row.visible


def test_the_rate_tones_switch_is_off_by_default_and_turns_off_with_the_metronome_for_stills() -> None:
    tones: list[bool] = []
    view = _rate_view(tones=tones)
    assert view.rate_tones.value is False and view.rate_tones.label == "Rate tones (high: faster, low: slower)"
    assert _rate_view("zh").rate_tones.label == "频率提示音（高音：加快，低音：减慢）"
    view.rate_tones.value = True
    view.rate_tones.on_change(None)  # type: ignore[misc]
    assert tones == [True]
    view.source.selected = ["image"]
    view._source_chosen(None)  # type: ignore[arg-type]
    assert view.rate_tones.value is False and tones == [True, False]


def test_held_sound_shows_a_button_whose_tap_asks_for_it_in_either_language() -> None:
    taps: list[str] = []
    view = PracticeView(
        PracticeActions(
            lambda *a: None, lambda: None, lambda _: None, lambda *a: None, play_held_sound=lambda: taps.append("tap")
        ),
        ft.Container(),
    )
    assert not view.sound_held.visible, "nothing held on a new page"
    view.show_metronome(True, 120, sound_held=True)
    assert view.sound_held.visible and view.metronome.value is True and view.metronome_rate.value == "120"
    button = view.sound_held.content
    assert isinstance(button, ft.FilledTonalButton) and button.content == "Tap to hear the sound"
    button.on_click(None)  # type: ignore[misc]
    assert taps == ["tap"]
    view.show_metronome(True, 120)
    assert not view.sound_held.visible
    held_zh = _rate_view("zh").sound_held.content
    assert isinstance(held_zh, ft.FilledTonalButton) and held_zh.content == "点按以听到声音"


def test_questions_written_for_another_model_say_so_beside_what_is_asked() -> None:
    view = _view()
    written = replace(_state(), title="CPR", model_id="keyframe-demo-cpr", profile_models=("qwen3-vl-2b-instruct-mnn",))
    view.render(written)
    assert view.written_for.value.startswith("These questions were written for qwen3-vl-2b-instruct-mnn;")
    assert "(keyframe-demo-cpr)" in view.written_for.value and view._written_for_box.visible
    for fits in (
        replace(written, model_id="qwen3-vl-2b-instruct-mnn"),  # the model it was written for
        replace(written, profile_models=()),  # a profile that names no model claims nothing
        replace(written, model_id=""),  # no model loaded yet
    ):
        view.render(fits)
        assert view.written_for.value == "" and not view._written_for_box.visible


def test_one_answer_left_waiting_is_said_in_the_singular() -> None:
    """Seen on the screen after a reload: "1 answers of it wait for the examiner"."""
    one = reduce([practice(1, "yes")])
    ended = replace(clean_card(_state()), session=one, latest=None, notice=(Notice("camera_tab_gone"),))
    view = _view()
    view.render(ended)
    assert view.ended_pending.value == "1 answer of it waits for the examiner."


def test_a_session_that_ended_on_its_own_says_so_on_the_card_with_the_way_to_its_waiting_answers() -> None:
    """The camera's tab reloaded: the news was a small grey line under the controls, the card said only
    "No answer yet", and a tab opened since did not list the answers still waiting for the examiner."""
    opened: list[str] = []
    actions = PracticeActions(
        lambda *a: None, lambda: None, lambda _: None, lambda *a: None, open_session=opened.append
    )
    ended = replace(clean_card(_state()), notice=(Notice("camera_tab_gone"),))
    for hidden in (False, True):  # the tab that watched it, and one opened after it ended
        view = PracticeView(actions, ft.Container())
        if hidden:
            view.hide_session("s")
        view.render(ended)
        assert view._ended_box.visible and view.notice.value.startswith("The session ended: the tab with the camera")
        assert view.ended_pending.value == "2 answers of it wait for the examiner." and view._ended_pending_box.visible
        assert any(c is view._ended_pending_box for c in walk(view._ended_box))  # the wrapper that hides is shown
        assert view.answer.value == "Session ended"
        assert bool(view.reviews.rows) is not hidden  # the opened-since tab lists none, but says where they are
        view.open_ended.on_click(None)
        assert opened[-1] == "s"
    view.render(replace(ended, running=True, notice=()))  # the next session: the news goes
    assert not view._ended_box.visible and view.answer.value == "No answer yet"
