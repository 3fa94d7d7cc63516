"""Makes the app's bundled Chinese font: Noto Sans CJK SC cut down to what Keyframe shows.

Flutter's web client draws text with fonts it is given; for characters its own fonts lack it
would fetch Noto from Google's CDN, which the page's policy refuses (images never leave the
device, and neither does anything else). So the app ships its own: the SC face of Debian's
fonts-noto-cjk (SIL Open Font License 1.1), subset to ASCII and Latin-1, common punctuation,
the 6,763 characters of GB 2312 (the everyday simplified set) and every character in the
app's string tables and profiles.

    apt-get install fonts-noto-cjk && pip install fonttools
    .venv/bin/python tools/fonts/subset_cjk.py        # writes assets/fonts/KeyframeSC-{Regular,Names}.otf
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from app.ui.words import LANGUAGES  # noqa: E402 - after the project root is importable

# One weight: Flutter draws bold by emboldening it, and a second file would double the download.
SOURCES = {"Regular": Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")}
OUT = ROOT / "assets" / "fonts"
FAMILY = "Keyframe SC"


def gb2312() -> set[str]:
    chars = set()
    for high in range(0xB0, 0xF8):
        for low in range(0xA1, 0xFF):
            try:
                chars.add(bytes([high, low]).decode("gb2312"))
            except UnicodeDecodeError:
                pass
    return chars


def app_text() -> set[str]:
    chars: set[str] = set()
    for module in sorted((ROOT / "app" / "ui" / "words").glob("[!_]*.py")):
        tables = importlib.import_module(f"app.ui.words.{module.stem}").TABLES
        for table in tables.values():
            for text in table.values():
                chars.update(text)
    for profile in (ROOT / "model_store" / "profiles").glob("*.json"):
        chars.update(json.dumps(json.loads(profile.read_text(encoding="utf-8")), ensure_ascii=False))
    return chars


def wanted() -> set[str]:
    ranges = [
        (0x20, 0x7E),
        (0xA0, 0xFF),
        (0x2000, 0x206F),
        (0x2190, 0x21FF),
        (0x2200, 0x22FF),
        (0x2460, 0x24FF),
        (0x25A0, 0x25FF),
        (0x3000, 0x303F),
        (0xFF00, 0xFFEF),
    ]
    chars = {chr(c) for lo, hi in ranges for c in range(lo, hi + 1)}
    return chars | gb2312() | app_text()


def sc_face(path: Path):
    for font in TTCollection(str(path)).fonts:
        if "SC" in font["name"].getDebugName(1):  # "Noto Sans CJK SC"
            return font
    raise SystemExit(f"no SC face in {path}")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    text = "".join(sorted(wanted()))
    for weight, source in SOURCES.items():
        font = sc_face(source)
        options = subset.Options()
        options.layout_features = ["*"]
        options.name_IDs = ["*"]
        options.name_languages = ["*"]
        subsetter = subset.Subsetter(options)
        subsetter.populate(text=text)
        subsetter.subset(font)
        for record in font["name"].names:  # its own family name, so it is never mistaken for the full font
            if record.nameID in (1, 16):
                record.string = FAMILY
        target = OUT / f"KeyframeSC-{weight}.otf"
        font.save(str(target))
        print(f"{target.relative_to(ROOT)}: {target.stat().st_size / 1e6:.2f} MB, {len(text)} characters")
    names = "".join(sorted(set("".join(LANGUAGES.values()))))  # what English screens show in Chinese
    font = sc_face(SOURCES["Regular"])
    subsetter = subset.Subsetter(subset.Options())
    subsetter.populate(text=names)
    subsetter.subset(font)
    for record in font["name"].names:
        if record.nameID in (1, 16):
            record.string = f"{FAMILY} names"
    target = OUT / "KeyframeSC-Names.otf"
    font.save(str(target))
    print(f"{target.relative_to(ROOT)}: {target.stat().st_size / 1e3:.1f} KB, {len(names)} characters")


if __name__ == "__main__":
    main()
