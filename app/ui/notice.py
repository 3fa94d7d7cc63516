"""What a controller has to tell the user, as data: the view words it in the chosen language."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Notice:
    """Something to tell the user; `key` names a string of the screen's table, `values` fill it in."""

    key: str
    values: tuple[tuple[str, str], ...] = ()
    error: bool = False
