"""The metronome in a real browser: silent until turned on, then the page's audio element loops clicks at
the chosen rate (the clip's length says the rate), and it stops when turned off or when stills are chosen.
After a reload in a browser that holds sound until a tap, the page offers that tap, for the clicks and for
the rate tones alike."""

from __future__ import annotations

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.conditions import wait_until
from tests.e2e.conftest import PAGE_WAIT_S, close_page, evaluate, node, open_app_page, wait_until_loaded
from tests.e2e.test_practice import choose

pytestmark = pytest.mark.browser

# Every audio element the page plays, kept so the test can ask what it holds and whether it is playing;
# with each source given to a media element and each play()'s outcome, for a failure to say where the
# sound stopped (the source never came, play() was never called, or the browser refused it).
_AUDIO_PROBE = """
window.__audio = []; window.__media = []; window.__sources = []; window.__plays = []; window.__contexts = [];
const play = HTMLMediaElement.prototype.play;
HTMLMediaElement.prototype.play = function () {
  if (!window.__audio.includes(this)) window.__audio.push(this);
  const i = window.__plays.push('pending') - 1;
  const started = play.call(this);
  started.then(() => { window.__plays[i] = 'played'; }, (e) => { window.__plays[i] = String(e).slice(0, 160); });
  return started;
};
const src = Object.getOwnPropertyDescriptor(HTMLMediaElement.prototype, 'src');
Object.defineProperty(HTMLMediaElement.prototype, 'src', {
  ...src,
  set(value) {
    if (!window.__media.includes(this)) window.__media.push(this);
    window.__sources.push(String(value).slice(0, 15));
    src.set.call(this, value);
  },
});
// Each audio context the page makes: its states in turn, and each resume()'s outcome.
const Context = window.AudioContext;
window.AudioContext = class extends Context {
  constructor(...args) {
    super(...args);
    const i = window.__contexts.push(this.state) - 1;
    this.addEventListener('statechange', () => { window.__contexts[i] += '>' + this.state; });
    this.__i = i;
  }
  resume() {
    window.__contexts[this.__i] += '>resume?';
    const done = super.resume();
    done.then(() => { window.__contexts[this.__i] += '>resumed'; }, (e) => { window.__contexts[this.__i] += '>' + e; });
    return done;
  }
};
"""

# Safari's rule, here in Chromium: a page's audio starts only after a tap in that page (Chromium counts a
# tap before a reload, and still refused a reloaded page's sound now and then under load). Until a tap,
# the page's audio context says it is suspended and a resume() waits, as a refused one does in Chromium.
_SOUND_AFTER_A_TAP = """
let tapped = false;
window.addEventListener('pointerdown', (e) => { tapped = tapped || e.isTrusted; }, true);
const Allowed = window.AudioContext;
window.AudioContext = class extends Allowed {
  get state() { return tapped ? super.state : 'suspended'; }
  resume() { return tapped ? super.resume() : new Promise(() => {}); }
};
"""


def playing(page) -> list[dict]:
    return page.evaluate(
        """() => window.__audio.map(a => ({src: String(a.currentSrc || a.src).slice(0, 15), loop: a.loop,
            paused: a.paused, duration: a.duration}))"""
    )


def wait_audio(page, condition: str, every: bool = False) -> None:
    """Waits until `condition` (a JS expression on `a`, each audio element played) holds for some element,
    or for every element; a failure says what the page's media did."""
    quantifier = "every" if every else "some"
    try:
        evaluate(page, f"() => window.__audio.{quantifier}(a => {condition})", timeout=PAGE_WAIT_S)
    except PlaywrightError as error:
        said = page.evaluate(
            """() => ({sources: window.__sources, plays: window.__plays, contexts: window.__contexts,
                media: window.__media.map(m => ({ready: m.readyState, network: m.networkState, paused: m.paused,
                    error: m.error && m.error.code}))})"""
        )
        raise AssertionError(
            f"waited for {quantifier} audio element with {condition}; the elements: {playing(page)}, "
            f"sources given: {said['sources']}, play() outcomes: {said['plays']}, "
            f"media elements: {said['media']}, audio contexts (states, resumes): {said['contexts']}"
        ) from error


def switch_on(page, name: str) -> str | None:
    """A switch's state as the page says it ("true" or "false"), found by its label's start."""
    return page.get_by_role("switch", name=name).first.get_attribute("aria-checked")


def pick_rate(page, rate: int) -> None:
    node(page, "metronome-rate").first.click()
    page.get_by_role("menuitem", name=f"{rate} per minute").or_(page.get_by_text(f"{rate} per minute")).last.click()


def clip_seconds(rate: int) -> float:
    """The metronome's loop: 8 clicks at `rate` per minute, 16 kHz (app.ui.practice.metronome)."""
    return 8 * round(16000 * 60 / rate) / 16000


def test_the_metronome_is_silent_until_turned_on_then_loops_clicks_at_the_chosen_rate(browser, app_url: str) -> None:
    page = open_app_page(browser, app_url)
    try:
        page.add_init_script(_AUDIO_PROBE)
        page.add_init_script(_SOUND_AFTER_A_TAP)
        page.reload()
        wait_until_loaded(page, reloaded=True)
        choose(page, "Camera")
        assert node(page, "metronome").count() == 1
        assert playing(page) == [], "off by default: no sound before the trainee asks for it"

        node(page, "metronome").first.click()
        wait_audio(page, "!a.paused && a.duration > 0")
        (audio,) = [a for a in playing(page) if not a["paused"]]
        assert audio["loop"] and audio["src"].startswith(("data:audio/", "blob:"))
        assert abs(audio["duration"] - clip_seconds(110)) < 0.01, audio  # the default, 110 per minute

        pick_rate(page, 120)
        wait_audio(page, f"!a.paused && Math.abs(a.duration - {clip_seconds(120)}) < 0.01")

        node(page, "metronome").first.click()  # off
        wait_audio(page, "a.paused", every=True)

        pick_rate(page, 100)  # chosen while off: silent until turned on, then at that rate
        assert all(a["paused"] for a in playing(page))
        node(page, "metronome").first.click()
        wait_audio(page, f"!a.paused && Math.abs(a.duration - {clip_seconds(100)}) < 0.01")
        # A reload resumes this page: the source chosen and the switch stay, and as this browser gives a
        # reloaded page no sound before a tap, the page offers one; the tap brings the clicks back.
        page.reload()
        wait_until_loaded(page, reloaded=True)
        assert wait_until(lambda: node(page, "sound-held").count() == 1, timeout=PAGE_WAIT_S, interval=0.2), (
            "a button to hear the sound the browser holds"
        )
        assert switch_on(page, "Metronome") == "true"
        camera = page.get_by_role("button", name="Camera", exact=True).first
        assert camera.get_attribute("aria-current") == "true", "the source chosen before the reload"
        assert playing(page) == [], "no sound before the tap"
        node(page, "sound-held").first.click()
        wait_audio(page, f"!a.paused && Math.abs(a.duration - {clip_seconds(100)}) < 0.01")
        assert wait_until(lambda: node(page, "sound-held").count() == 0, timeout=PAGE_WAIT_S, interval=0.2)
        node(page, "metronome").first.click()
        wait_audio(page, "a.paused", every=True)
        # The rate tones alone across a reload: held too (no tone has played on the new page) until a tap.
        node(page, "rate-tones").first.click()
        assert wait_until(lambda: switch_on(page, "Rate tones") == "true", timeout=PAGE_WAIT_S, interval=0.2)
        page.reload()
        wait_until_loaded(page, reloaded=True)
        assert wait_until(lambda: node(page, "sound-held").count() == 1, timeout=PAGE_WAIT_S, interval=0.2), (
            "a button to hear the rate tones the browser holds"
        )
        assert (switch_on(page, "Rate tones"), switch_on(page, "Metronome")) == ("true", "false")
        node(page, "sound-held").first.click()
        assert wait_until(lambda: node(page, "sound-held").count() == 0, timeout=PAGE_WAIT_S, interval=0.2)
        node(page, "metronome").first.click()
        wait_audio(page, "!a.paused")
        choose(page, "Image")  # stills: it stops and hides
        wait_audio(page, "a.paused", every=True)
        assert wait_until(lambda: node(page, "metronome").count() == 0, timeout=PAGE_WAIT_S, interval=0.2)
    finally:
        close_page(page)
    page.request_log.assert_local()
