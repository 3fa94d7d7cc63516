"""Reading a task profile or checklist from disk (the checking is app.core, which does no I/O)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.profile.checklist import Checklist, checklist_from_dict
from app.core.profile.task import ProfileError, TaskProfile
from app.storage.small_file import BadJSON, read_small_json

# A profile is a question, a few answers and their words in some languages: a few KB (a checklist a few of them).
MAX_PROFILE_BYTES = 256 * 1024


def load_checklist(path: Path) -> Checklist:
    """The checklist in `path` (a one-signal profile is a checklist of one); ProfileError naming the file."""
    return checklist_from_dict(_read(path), source=str(path))


def load_profile(path: Path) -> TaskProfile:
    """The one-signal profile in `path`; a checklist is refused rather than reduced to one of its questions."""
    checklist = load_checklist(path)
    if not checklist.is_single:
        raise ProfileError(
            f"{path}: a checklist of {len(checklist.signals)} signals, where one question is needed "
            f"({', '.join(s.signal for s in checklist.ordered())})"
        )
    return checklist.signals[0]


def _read(path: Path) -> Any:
    try:
        return read_small_json(path, MAX_PROFILE_BYTES)  # UTF-8, with or without a byte-order mark
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read profile ({exc.strerror or exc})") from exc
    except BadJSON as exc:
        raise ProfileError(f"{path}: {exc}") from exc
