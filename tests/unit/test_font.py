"""The bundled font has a glyph for every character the app's tables and profiles show.

Flutter's web client would otherwise fetch a fallback font from Google's CDN, which the page
refuses: a missing glyph would be an empty box on screen (tools/fonts/subset_cjk.py remakes it).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from fontTools.ttLib import TTFont

from app.storage.paths import ASSETS, PROFILES
from app.ui.words import CJK_FONT_FILE as FONT_FILE

WORDS = Path(__file__).resolve().parents[2] / "app" / "ui" / "words"


def _shown_characters() -> dict[str, str]:
    """character -> where it is first used."""
    found: dict[str, str] = {}
    for module in sorted(WORDS.glob("[!_]*.py")):
        for code, table in importlib.import_module(f"app.ui.words.{module.stem}").TABLES.items():
            for key, text in table.items():
                for ch in text:
                    found.setdefault(ch, f"{module.stem}.{code}[{key!r}]")
    for path in PROFILES.glob("*.json"):
        for ch in json.dumps(json.loads(path.read_text(encoding="utf-8")), ensure_ascii=False):
            found.setdefault(ch, path.name)
    return found


def test_the_font_the_page_loads_is_in_the_assets() -> None:
    assert (ASSETS / FONT_FILE).is_file()


def test_every_character_the_app_shows_has_a_glyph() -> None:
    cmap = TTFont(ASSETS / FONT_FILE)["cmap"].getBestCmap()
    missing = {ch: where for ch, where in _shown_characters().items() if ch.isprintable() and ord(ch) not in cmap}
    assert not missing, f"no glyph in {FONT_FILE} for {missing}; run tools/fonts/subset_cjk.py"
    assert all(ord(ch) in cmap for ch in "简体中文手的位置正确吗是否未知")


def test_the_names_face_has_every_language_name_for_screens_in_other_languages() -> None:
    from app.ui.words import LANGUAGES, NAMES_FONT_FILE

    cmap = TTFont(ASSETS / NAMES_FONT_FILE)["cmap"].getBestCmap()
    assert [name for name in LANGUAGES.values() if not all(ord(ch) in cmap for ch in name)] == []


def test_every_zh_text_on_the_practice_screen_is_drawn_in_a_face_that_has_its_glyphs() -> None:
    """Not only the text tree: each Text's font family must be one the page bundles, and cover it.

    A family the page does not bundle ("monospace") is a system face in the browser, with no
    Chinese glyphs: the Details panel and the token stream rendered as boxes."""
    from dataclasses import replace

    import flet as ft

    from app.core.session import reduce
    from app.ui.practice.controller import PracticeState
    from app.ui.practice.view import PracticeActions, PracticeView
    from app.ui.words import CJK_FONT, fonts_for
    from app.ui.words import main as strings
    from app.ui.words import sessions as strings_sessions
    from tests.unit.test_session import practice
    from tests.unit.test_sessions_view import walk

    families, theme_family = fonts_for("zh")
    cmaps = {family: TTFont(ASSETS / path)["cmap"].getBestCmap() for family, path in families.items()}
    actions = PracticeActions(lambda *a: None, lambda: None, lambda _: None, lambda *a: None)
    view = PracticeView(actions, ft.Container(), strings.ZH, strings_sessions.ZH, "zh")
    event = replace(practice(1, "yes"), raw="是")  # an instruct model may answer in Chinese
    state = PracticeState(
        worker_status="ready",
        running=True,
        session_id="s",
        session=reduce([event]),
        latest=event,
        analysing="kf-00002",
        streamed="是",
        answer_values=("yes", "no", "unknown"),
    )
    view.render(state)
    checked, missing = 0, []
    for control in walk(view.root):
        if not isinstance(control, ft.Text) or not isinstance(control.value, str):
            continue
        family = control.font_family or theme_family or CJK_FONT
        wide = [ch for ch in control.value if ord(ch) > 0x2E7F]
        if not wide:
            continue
        checked += 1
        cmap = cmaps.get(family)
        if cmap is None or any(ord(ch) not in cmap for ch in wide):
            missing.append(f"{family!r}: {control.value[:40]!r}")
    assert checked >= 5, "the Chinese screen was rendered"
    assert not missing, f"texts in a face without their glyphs: {missing}"
