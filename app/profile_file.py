"""Reading a task profile from disk (the checking is app.core.profiles, which does no I/O)."""

from __future__ import annotations

from pathlib import Path

from app.core.profiles import ProfileError, TaskProfile, profile_from_dict
from app.small_file import BadJSON, read_small_json

# A profile is a question, a few answers and their words in some languages: a few KB.
MAX_PROFILE_BYTES = 256 * 1024


def load_profile(path: Path) -> TaskProfile:
    """The profile in `path`; every way the file can be unusable is a ProfileError naming it."""
    try:
        data = read_small_json(path, MAX_PROFILE_BYTES)  # UTF-8, with or without a byte-order mark
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read profile ({exc.strerror or exc})") from exc
    except BadJSON as exc:
        raise ProfileError(f"{path}: {exc}") from exc
    return profile_from_dict(data, source=str(path))
