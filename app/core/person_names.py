"""Trainee and examiner names as a person types them: tidied, bounded, and told apart as people are.

Pure. A name is optional ("" is no name). What a person may type and still mean the same trainee —
"Ana", " ana ", "ANA", "Ana  Lima" for "Ana Lima", a full-width "Ａｎａ" from a Chinese keyboard — is one
trainee in the Sessions filter and the progress view; what is not a name (a line break, a control
character, a paragraph) is refused with the reason, never stored.
"""

from __future__ import annotations

import unicodedata

MAX_NAME = 60  # characters: a full name fits; a pasted paragraph does not


class NameRefused(ValueError):
    """Why a typed name is not kept: `reason` is a code the screens word (name_too_long, name_control)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def person_name(raw: str) -> str:
    """`raw` tidied: surrounding spaces dropped and runs of spaces made one. NameRefused for a line break
    or another control or invisible formatting character, or over `MAX_NAME` characters."""
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp") for ch in raw):
        raise NameRefused("name_control")
    name = " ".join(raw.split())
    if len(name) > MAX_NAME:
        raise NameRefused("name_too_long")
    return name


def same_person(name: str) -> str:
    """The key names of one person share: compatibility-normalised (full-width letters are letters),
    case-folded, spaces collapsed. "" for no name."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())
