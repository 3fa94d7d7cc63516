"""The sound across a page built again: the metronome held until its new player says it plays, the rate tones
until one plays or the trainee taps (the browser may refuse sound until then), and the page told each time a
hold ends."""

from __future__ import annotations

import flet_audio as fa

from app.ui.practice.metronome import Metronome, RateTones
from tests.unit.asyncrun import run_async
from tests.unit.test_rate_cue import FakePage


def _said(metronome: Metronome, state: fa.AudioState) -> None:
    """The player's own word on its state, as the browser sends it."""
    audio = metronome.service
    assert audio is not None
    _player_said(audio, state)


def _player_said(audio: fa.Audio, state: fa.AudioState) -> None:
    assert audio.on_state_change is not None
    audio.on_state_change(fa.AudioStateChangeEvent(name="state_change", data=None, control=audio, state=state))


def _playing(page: FakePage) -> tuple[Metronome, list[str], list[int]]:
    """A metronome turned on, its player's calls to the browser recorded, and each time the page was told."""
    metronome, told = Metronome(page), []  # type: ignore[arg-type]
    metronome.hold.listen(lambda: told.append(metronome.hold.held))
    run_async(metronome.set(True, 110))
    calls: list[str] = []
    audio = metronome.service
    assert audio is not None

    async def resume() -> None:
        calls.append("resume")

    async def pause() -> None:
        calls.append("pause")

    audio.resume, audio.pause = resume, pause  # type: ignore[method-assign]
    return metronome, calls, told


def test_a_rebuilt_page_holds_the_clicks_until_its_player_says_it_plays() -> None:
    page = FakePage()
    metronome, calls, told = _playing(page)
    assert metronome.on and not metronome.hold.held and page.services == [metronome.service]
    metronome.rebuilt()
    assert metronome.hold.held, "the new player has not said it plays: the page offers a tap"
    _said(metronome, fa.AudioState.PAUSED)
    assert metronome.hold.held and told == []
    run_async(metronome.play_held())  # the trainee's tap
    assert calls == ["resume"] and metronome.hold.held, "held until the player says it plays"
    _said(metronome, fa.AudioState.PLAYING)
    assert not metronome.hold.held and told == [False]
    _said(metronome, fa.AudioState.PLAYING)
    run_async(metronome.play_held())
    assert told == [False] and calls == ["resume"], "nothing held: no second play, no second word to the page"


def test_the_switch_tapped_while_held_ends_the_hold_and_does_what_it_says() -> None:
    metronome, calls, told = _playing(FakePage())
    metronome.rebuilt()
    run_async(metronome.set(False, 110))
    assert not metronome.hold.held and told == [False] and calls == ["pause"]
    metronome.rebuilt()
    assert not metronome.hold.held, "an off metronome holds nothing"
    run_async(metronome.set(True, 110))
    assert metronome.on and calls == ["pause", "resume"]
    metronome.rebuilt()
    run_async(metronome.set(True, 110))  # the same rate chosen again in the menu: a tap all the same
    assert not metronome.hold.held and calls == ["pause", "resume", "resume"] and told == [False, False]


def test_a_page_that_never_turned_the_metronome_on_holds_nothing() -> None:
    page = FakePage()
    metronome = Metronome(page)  # type: ignore[arg-type]
    metronome.rebuilt()
    run_async(metronome.play_held())
    assert not metronome.hold.held and metronome.service is None and page.services == []


def test_rate_tones_on_a_rebuilt_page_are_held_until_one_plays_or_the_trainee_taps() -> None:
    page, told = FakePage(), []
    tones = RateTones(page)  # type: ignore[arg-type]
    tones.hold.listen(lambda: told.append(tones.hold.held))
    tones.rebuilt()
    assert not tones.hold.held, "tones never turned on hold nothing"
    tones.set(True)
    tones.rebuilt()
    assert tones.hold.held and told == []
    high = tones.services[0]
    _player_said(high, fa.AudioState.STOPPED)
    assert tones.hold.held
    _player_said(high, fa.AudioState.PLAYING)  # a tone played: the browser gives this page sound
    assert not tones.hold.held and told == [False]
    tones.rebuilt()
    tones.play_held()  # the trainee's tap: it lets the browser play the next tone
    assert not tones.hold.held and told == [False, False]
    tones.rebuilt()
    tones.set(False)  # a tap on the switch
    assert not tones.hold.held and told == [False, False, False]
    tones.rebuilt()
    assert not tones.hold.held, "tones turned off hold nothing"
