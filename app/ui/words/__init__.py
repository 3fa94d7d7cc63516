"""User-facing text and the UI's languages, so a second language is a table, not a hunt. Each module
here holds one table per language
(`TABLES[code]`, the same keys and placeholders in each; tests/unit/test_strings.py
checks it); a screen gets its module's table for the language chosen in settings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from app.core.notice import Notice

LANGUAGES: dict[str, str] = {"en": "English", "zh": "简体中文"}  # code -> its own name, as the chooser shows it
# Flutter's own words (a tab's "Tab 1 of 5", a date picker) follow the page's locale.
LOCALES: dict[str, tuple[str, str, str]] = {"en": ("en", "US", ""), "zh": ("zh", "CN", "Hans")}
DEFAULT_LANGUAGE = "en"


# The bundled faces (assets/fonts, made by tools/fonts/subset_cjk.py). Flutter's web client would
# fetch Chinese glyphs from Google's CDN, which the page refuses: Chinese screens use the full face;
# other screens name the languages from a face of a few characters, and use the full face only where
# Chinese is typed (the profile editor's Chinese fields).
CJK_FONT, CJK_FONT_FILE = "Keyframe SC", "fonts/KeyframeSC-Regular.otf"
NAMES_FONT, NAMES_FONT_FILE = "Keyframe SC names", "fonts/KeyframeSC-Names.otf"


def fonts_for(language: str) -> tuple[dict[str, str], str | None]:
    """(the page's font files by family, the theme's family: None = Flutter's own) for a language."""
    return {CJK_FONT: CJK_FONT_FILE, NAMES_FONT: NAMES_FONT_FILE}, CJK_FONT if language == "zh" else None


def mono_font(language: str) -> str | None:
    """The face for raw model output and details: the browser's monospace has no Chinese glyphs (boxes
    on a Chinese screen), so there the theme's bundled face is used (None)."""
    return None if language == "zh" else "monospace"


def language_or_default(code: str | None) -> str:
    return code if code in LANGUAGES else DEFAULT_LANGUAGE


def text(strings: Mapping[str, str], key: str, **values: object) -> str:
    """The string for `key` in a screen's table, formatted; an unknown key shows itself rather than
    crashing a render (tests/unit/test_strings.py keeps every language's keys the same)."""
    template = strings.get(key, key)
    return template.format(**values) if values else template


def notice_text(strings: Mapping[str, str], notice: Notice) -> str:
    """A notice in a screen's table: its `reason` code (when it has one) worded by the key
    `<notice key>_<reason>`, which a language without it shows as the code in words."""
    values = dict(notice.values)
    if "reason" in values:
        values["reason"] = strings.get(f"{notice.key}_{values['reason']}", values["reason"].replace("_", " "))
    return text(strings, notice.key, **values)


def notices_text(strings: Mapping[str, str], notices: Iterable[Notice]) -> str:
    return strings.get("notice_separator", "; ").join(notice_text(strings, n) for n in notices)
