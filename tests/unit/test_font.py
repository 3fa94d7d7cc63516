"""The bundled font has a glyph for every character the app's tables and profiles show.

Flutter's web client would otherwise fetch a fallback font from Google's CDN, which the page
refuses: a missing glyph would be an empty box on screen (tools/fonts/subset_cjk.py remakes it).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from fontTools.ttLib import TTFont

from app.paths import ASSETS, PROFILES
from app.ui.i18n import CJK_FONT_FILE as FONT_FILE

UI = Path(__file__).resolve().parents[2] / "app" / "ui"


def _shown_characters() -> dict[str, str]:
    """character -> where it is first used."""
    found: dict[str, str] = {}
    for module in sorted(UI.glob("strings*.py")):
        for code, table in importlib.import_module(f"app.ui.{module.stem}").TABLES.items():
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
    from app.ui.i18n import LANGUAGES, NAMES_FONT_FILE

    cmap = TTFont(ASSETS / NAMES_FONT_FILE)["cmap"].getBestCmap()
    assert [name for name in LANGUAGES.values() if not all(ord(ch) in cmap for ch in name)] == []
