"""The UI's languages. Each `app/ui/strings*.py` module holds one table per language
(`TABLES[code]`, the same keys and placeholders in each; tests/unit/test_strings.py
checks it); a screen gets its module's table for the language chosen in settings."""

from __future__ import annotations

LANGUAGES: dict[str, str] = {"en": "English", "zh": "简体中文"}  # code -> its own name, as the chooser shows it
DEFAULT_LANGUAGE = "en"


def language_or_default(code: str | None) -> str:
    return code if code in LANGUAGES else DEFAULT_LANGUAGE
