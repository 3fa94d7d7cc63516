"""Every user-visible string exists in every language, with the same placeholders, and the
Chinese tables hold no English words but names (Keyframe, MNN, CPU…) and commands."""

from __future__ import annotations

import importlib
import re
import string
from pathlib import Path

import pytest

from app.ui.words import LANGUAGES

WORDS = Path(__file__).resolve().parents[2] / "app" / "ui" / "words"
MODULES = sorted(p.stem for p in WORDS.glob("[!_]*.py"))
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
    "PDF",
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
    return importlib.import_module(f"app.ui.words.{module}").TABLES


def _fields(template: str) -> list[tuple[str, str]]:
    return sorted((name, spec or "") for _, name, spec, _ in string.Formatter().parse(template) if name is not None)


def test_there_are_string_modules_to_check() -> None:
    assert {"main", "sessions"} <= set(MODULES)


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
        if key == "language":
            continue  # the table's language code, never shown
        text = re.sub(r"\{[^}]*\}", " ", template)  # placeholders are filled in by the app
        text = re.sub(r"\b\d+(\.\d+)*\b", " ", text)  # 127.0.0.1, SHA-256
        words = {w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text) if w not in ALLOWED_LATIN}
        if words:
            found[key] = sorted(words)
    assert not found, f"{module}: English left in the Chinese table: {found}"


FRAMES = WORDS.parents[1] / "frames"


def _codes(pattern: str, source: str) -> set[str]:
    return set(re.findall(pattern, source))


def test_every_reason_a_file_is_refused_for_is_worded_in_every_language() -> None:
    """A refused image or video reaches the practice screen as its reason code (app.frames.sources.refusal);
    a code without words would show as the bare code."""
    from app.frames.intake import _ERRNO_REASONS
    from app.ui.words.main import TABLES

    intake, video = (FRAMES / "intake.py").read_text(), (FRAMES / "video.py").read_text()
    image = _codes(r'ImageRejected\(\s*"([a-z_]+)"', intake) | set(_ERRNO_REASONS.values()) | {"unreadable"}
    videos = _codes(r'VideoError\(\s*"([a-z_]+)"', video)
    assert {"corrupt", "too_large", "missing"} <= image and {"not_a_video", "no_frames"} <= videos
    for table in TABLES.values():
        assert {c for c in image if f"image_refused_{c}" not in table} == set()
        assert {c for c in videos if f"video_refused_{c}" not in table} == set()


def test_a_notice_is_worded_in_the_tables_language_and_an_unknown_reason_still_reads() -> None:
    from app.core.notice import Notice
    from app.ui.words import notices_text
    from app.ui.words.main import EN, ZH

    two = (Notice.of("image_refused", name="a.jpg", reason="corrupt"), Notice.of("tables_left_out", names="t.csv"))
    assert (
        notices_text(EN, two)
        == "a.jpg: the image data is damaged; t.csv: a table of labels is for the Testers screen; left out"
    )
    assert notices_text(ZH, two) == "a.jpg：图片数据已损坏；t.csv：标签表用于“测试”页面，已略过"
    assert notices_text(EN, (Notice.of("image_refused", name="b.png", reason="brand_new"),)) == "b.png: brand new"


def test_every_reason_an_answer_can_be_unknown_for_has_words_in_every_language() -> None:
    from app.core.parser import ParseReason
    from app.ui.words.sessions import TABLES

    for language, table in TABLES.items():
        missing = [r.value for r in ParseReason if r is not ParseReason.OK and f"reason_{r.value}" not in table]
        assert not missing, (language, missing)
