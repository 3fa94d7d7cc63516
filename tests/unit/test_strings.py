"""Every user-visible string exists in every language, with the same placeholders, and the
Chinese tables hold no English words but names (Keyframe, MNN, CPU…) and commands."""

from __future__ import annotations

import importlib
import re
import string
from pathlib import Path

import pytest

from app.ui.i18n import LANGUAGES

UI = Path(__file__).resolve().parents[2] / "app" / "ui"
MODULES = sorted(p.stem for p in UI.glob("strings*.py"))
# Names and technical words a Chinese reader sees as they are.
ALLOWED_LATIN = {
    "Keyframe",
    "MNN",
    "CPU",
    "GPU",
    "OpenCL",
    "Metal",
    "Vulkan",
    "JSON",
    "JSONL",
    "CSV",
    "PNG",
    "MB",
    "GB",
    "KB",
    "SHA",
    "Python",
    "Linux",
    "macOS",
    "Windows",
    "iOS",
    "Android",
    "URL",
    "HTTP",
    "HTTPS",
    "Hugging",
    "Face",
    "ModelScope",
    "Qwen",
    "VL",
    "CPR",
    "OS",
    "ID",
    # the commands the app names (python -m app …)
    "python",
    "m",
    "app",
    "models",
    "download",
    "verify",
    "doctor",
    "eval",
    "MODEL_ID",
}


def _tables(module: str) -> dict[str, dict[str, str]]:
    return importlib.import_module(f"app.ui.{module}").TABLES


def _fields(template: str) -> list[tuple[str, str]]:
    return sorted((name, spec or "") for _, name, spec, _ in string.Formatter().parse(template) if name is not None)


def test_there_are_string_modules_to_check() -> None:
    assert {"strings", "strings_sessions"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_every_language_has_every_string_with_the_same_placeholders(module: str) -> None:
    tables = _tables(module)
    assert set(tables) == set(LANGUAGES), f"{module}: languages {sorted(tables)}"
    english = tables["en"]
    for code, table in tables.items():
        missing, extra = set(english) - set(table), set(table) - set(english)
        assert not missing and not extra, f"{module}.{code}: missing {sorted(missing)}, extra {sorted(extra)}"
        for key, template in table.items():
            assert _fields(template) == _fields(english[key]), f"{module}.{code}[{key!r}] placeholders differ"


@pytest.mark.parametrize("module", MODULES)
def test_chinese_strings_hold_no_english_words(module: str) -> None:
    found = {}
    for key, template in _tables(module)["zh"].items():
        text = re.sub(r"\{[^}]*\}", " ", template)  # placeholders are filled in by the app
        text = re.sub(r"\b\d+(\.\d+)*\b", " ", text)  # 127.0.0.1, SHA-256
        words = {w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text) if w not in ALLOWED_LATIN}
        if words:
            found[key] = sorted(words)
    assert not found, f"{module}: English left in the Chinese table: {found}"
