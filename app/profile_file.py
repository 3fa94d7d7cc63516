"""Reading a task profile from disk (the parsing is app.core.profiles, which does no I/O)."""

from __future__ import annotations

from pathlib import Path

from app.core.profiles import ProfileError, TaskProfile, parse_profile


def load_profile(path: Path) -> TaskProfile:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read profile ({exc.strerror or exc})") from exc
    return parse_profile(text, source=str(path))
