"""What the app has to tell the user, as data: each screen words it in the page's language.

Several tabs, in different languages, show one shared state, so a controller never keeps a
sentence: it keeps a key of the screen's table and the values that fill it in. A `reason` value is
a code the table words (app.ui.words.notice_text); a decoder's or the OS's own English sentence is
for the log and the command line, never a value a screen shows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Notice:
    """Something to tell the user; `key` names a string of the screen's table, `values` fill it in."""

    key: str
    values: tuple[tuple[str, str], ...] = ()
    error: bool = False

    @classmethod
    def of(cls, key: str, *, error: bool = False, **values: object) -> Notice:
        return cls(key, tuple((name, str(value)) for name, value in values.items()), error)

    def value(self, name: str) -> str:
        return dict(self.values).get(name, "")
