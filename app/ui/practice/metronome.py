"""An optional metronome for compressions, off by default: a click track the platform's player loops.
Beside it, optional rate tones (off by default too): a high tone when the rate shown is too slow, a
low one when it is too fast (`app.core.rate_cue` decides when).

The sound is made here, not fetched: a WAV of clicks exactly 60/rate seconds apart, handed to
flet-audio's player as bytes (the browser's audio element on the web, the phone's or the Mac's
player in a built app). Looping a whole number of beats keeps the loop's seam on a beat. The tones
are WAVs made here too, one player each, played from the start when a cue is due.
"""

from __future__ import annotations

import io
import time
import wave
from collections.abc import Callable

import flet as ft
import flet_audio as fa
import numpy as np

from app.core.rate_cue import RateCue

RATES = (100, 105, 110, 115, 120)  # the guideline band, per minute
DEFAULT_RATE = 110
SAMPLE_RATE = 16000  # plenty for a 1.5 kHz tick
_BEATS = 8  # per loop: a few seconds, so the loop's seam comes rarely; ~140 kB to send


def click_track(rate_per_min: int, beats: int = _BEATS, sample_rate: int = SAMPLE_RATE) -> bytes:
    """A mono 16-bit WAV of `beats` short clicks, one every 60/rate s, the first at 0."""
    if not 20 <= rate_per_min <= 300 or beats < 1:
        raise ValueError(f"a metronome rate of {rate_per_min} per minute is out of range")
    period = round(sample_rate * 60 / rate_per_min)
    t = np.arange(int(0.03 * sample_rate)) / sample_rate
    click = np.sin(2 * np.pi * 1500 * t) * np.exp(-t / 0.006)  # a 30 ms woodblock-like tick
    samples = np.zeros(period * beats)
    for beat in range(beats):
        samples[beat * period : beat * period + len(click)] = click
    return _wav(samples, sample_rate)


# The rate tones: unlike the metronome's 30 ms tick, each is a held note. High (E6) = "faster"; low
# (A4, with its 2nd and 3rd harmonics so a phone's small speaker still sounds it) = "slower".
TONES = {
    "faster": (1318.5, 0.18, (1.0,)),  # (fundamental Hz, seconds, harmonics' amplitudes)
    "slower": (440.0, 0.26, (1.0, 0.5, 0.3)),
}


def cue_tone(tone: str, sample_rate: int = SAMPLE_RATE) -> bytes:
    """A mono 16-bit WAV of one rate tone (`TONES`), faded in and out (no click at either end)."""
    hz, seconds, harmonics = TONES[tone]
    t = np.arange(int(seconds * sample_rate)) / sample_rate
    note = sum(a * np.sin(2 * np.pi * hz * (k + 1) * t) for k, a in enumerate(harmonics)) / sum(harmonics)
    ramp = int(0.01 * sample_rate)  # 10 ms fades
    envelope = np.minimum(1.0, np.minimum(np.arange(len(t)) + 1, len(t) - np.arange(len(t))) / ramp)
    return _wav(note * envelope, sample_rate)


def _wav(samples: np.ndarray, sample_rate: int) -> bytes:
    pcm = (samples * 0.8 * 32767).astype("<i2")
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(sample_rate)
        wav.writeframes(pcm.tobytes())
    return out.getvalue()


class SoundHold:
    """Whether a page built again (a reload, a dropped connection) waits for a tap before its sound plays.

    The page's new players start by themselves where the browser allows sound without a tap in that page.
    Safari never does, and Chromium sometimes does not after a reload (seen under load: its audio stays
    suspended, and the player waits on it for ever). Held until a player says it plays or the trainee
    taps: the page shows a button for that tap while any sound is held."""

    def __init__(self) -> None:
        self.held = False
        self._listener: Callable[[], None] = lambda: None

    def listen(self, listener: Callable[[], None]) -> None:
        """`listener` is called when a hold ends (the page showing the button, the newest one)."""
        self._listener = listener

    def release(self) -> None:
        if self.held:
            self.held = False
            self._listener()

    def state_changed(self, e: fa.AudioStateChangeEvent) -> None:
        """A player's own word on its state, from the browser."""
        if e.state == fa.AudioState.PLAYING:
            self.release()


class Metronome:
    """One page's metronome; `set` turns it on at a rate, or off.

    The player joins the page's services only when first turned on, with its clicks: flet-audio's
    player refuses to exist without a sound, and a page that never asks for one carries none. On a page
    built again it is held (`SoundHold`) until its new player says it plays; `play_held`, on the trainee's
    tap, asks for the clicks again."""

    def __init__(self, page: ft.Page) -> None:
        self._page = page
        self._audio: fa.Audio | None = None
        self._loaded = 0  # the rate of the clicks the player holds
        self.hold = SoundHold()
        self.on = False
        self.rate = DEFAULT_RATE

    @property
    def service(self) -> fa.Audio | None:
        """The player, once the metronome was first turned on (a rebuilt page must keep it)."""
        return self._audio

    def rebuilt(self) -> None:
        """The browser's page is new and its player has not yet said it plays."""
        self.hold.held = self.on and self._audio is not None

    async def set(self, on: bool, rate: int) -> None:
        audio, was_on, loaded, was_held = self._audio, self.on, self._loaded, self.hold.held
        # The state first: the browser's answer to a play can take long, or never come (`SoundHold`).
        self.on, self.rate = on, rate
        self.hold.release()  # the trainee's own tap on the switch or the rate lets the browser play
        if on and audio is None:
            # autoplay: the player starts once the clicks are loaded, not before (a play sent at once
            # could reach it first).
            self._audio = fa.Audio(
                src=click_track(rate),
                release_mode=fa.ReleaseMode.LOOP,
                autoplay=True,
                on_state_change=self.hold.state_changed,
            )
            self._page.services.append(self._audio)
            self._page.update()
            self._loaded = rate
        elif audio is not None and on and rate != loaded:
            audio.src = click_track(rate)  # plays once loaded (autoplay)
            audio.update()
            self._loaded = rate
        elif audio is not None and on and (not was_on or was_held):
            await audio.resume()
        elif audio is not None and not on and was_on:
            await audio.pause()

    async def play_held(self) -> None:
        """The trainee tapped to hear the held clicks: the tap lets the browser play them."""
        if self.hold.held and self._audio is not None:
            await self._audio.resume()


class RateTones:
    """One page's rate tones; `set` turns them on or off, `follow` is told the band of every rate shown.

    Like the metronome, the players join the page's services only when first turned on, each holding its
    tone: a page that never asks for a sound carries none. The decision is `RateCue`'s (pure, tested);
    this only plays what it decides. On a page built again they are held (`SoundHold`) until a tone plays
    or the trainee taps (`play_held`): the tap itself lets the browser play the next tone."""

    def __init__(self, page: ft.Page, clock: Callable[[], float] = time.monotonic) -> None:
        self._page = page
        self.cue = RateCue(clock)
        self._players: dict[str, fa.Audio] = {}
        self.hold = SoundHold()

    @property
    def on(self) -> bool:
        return self.cue.on

    @property
    def services(self) -> list[fa.Audio]:
        """The players, once first turned on (a rebuilt page must keep them)."""
        return list(self._players.values())

    def set(self, on: bool) -> None:
        if on and not self._players:
            # STOP, not RELEASE: a tone played to its end stays loaded for the next cue.
            self._players = {
                tone: fa.Audio(
                    src=cue_tone(tone), release_mode=fa.ReleaseMode.STOP, on_state_change=self.hold.state_changed
                )
                for tone in TONES
            }
            self._page.services.extend(self._players.values())
            self._page.update()
        self.cue.on = on
        self.hold.release()  # the trainee's tap on the switch

    def rebuilt(self) -> None:
        """The browser's page is new and no tone has played on it yet."""
        self.hold.held = self.on and bool(self._players)

    def play_held(self) -> None:
        """The trainee tapped to hear the held sound: the tap lets the browser play the next tone."""
        self.hold.release()

    def follow(self, band: str | None) -> None:
        """`band`: of the rate the screen shows now (`slow` | `in_band` | `fast`), None when none is shown."""
        tone = self.cue.decide(band)
        player = self._players.get(tone) if tone is not None else None
        if player is not None:
            self._page.run_task(player.play)
