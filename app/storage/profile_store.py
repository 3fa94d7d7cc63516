"""The profiles a person can choose: the shipped ones (read-only templates) and their own.

A person's profiles are files in the config folder (`locations.user_profiles_dir`), one `<id>.json`
each, in the format `--profile` reads (`app.core.profile.dicts`), so a checklist made or given a
score cut in the app is usable on the command line as it is. The shipped profiles are never
written: saving under a shipped id is refused with a sentence, as is a user file that claims one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from app.core.profile.checklist import Checklist, checklist_from_dict
from app.core.profile.dicts import checklist_dict, renamed, with_min_score
from app.core.profile.task import ProfileError
from app.storage.paths import PROFILES
from app.storage.profile_file import load_checklist
from app.storage.safefs import write_json_atomic

# A person makes a handful; a folder of thousands is not theirs to scroll, and each file is read.
MAX_USER_PROFILES = 200


@dataclass(frozen=True)
class ProfileEntry:
    path: Path
    checklist: Checklist | None  # None: the file cannot be used (`error` says why)
    shipped: bool
    error: str = ""


def list_profiles(user_dir: Path, shipped_dir: Path = PROFILES) -> list[ProfileEntry]:
    """The shipped profiles, then the person's (by file name); a file that cannot be used is listed with
    the sentence that says why, never dropped in silence."""
    shipped = _shipped(shipped_dir)
    taken = {e.checklist.id: e.path for e in shipped if e.checklist is not None}
    own = []
    for path in _json_files(user_dir)[:MAX_USER_PROFILES]:
        entry = _entry(path, shipped=False)
        if entry.checklist is not None and entry.checklist.id in taken:
            first = taken[entry.checklist.id]
            whose = "a shipped profile's" if first.parent == shipped_dir else f"also the id of {first.name}"
            entry = ProfileEntry(path, None, False, f"{path}: the id {entry.checklist.id!r} is {whose}")
        elif entry.checklist is not None:
            taken[entry.checklist.id] = path
        own.append(entry)
    return shipped + own


def unlisted_profiles(user_dir: Path) -> int:
    """How many of the person's profile files `list_profiles` leaves out (past MAX_USER_PROFILES by file
    name): said on the Settings screen, never dropped in silence."""
    return max(0, len(_json_files(user_dir)) - MAX_USER_PROFILES)


def save_profile(checklist: Checklist, user_dir: Path, shipped_dir: Path = PROFILES) -> Path:
    """Write `checklist` as `<user_dir>/<id>.json` (all or nothing) and return its path. ProfileError with a
    sentence for a shipped id, or when the disk refuses (full, read-only); the previous file is kept then."""
    if checklist.id in _shipped_ids(shipped_dir):
        raise ProfileError(
            f"{checklist.id!r} is a shipped profile, kept as a template: save your version under another id"
        )
    data = checklist_dict(checklist)
    if checklist_from_dict(data) != checklist:  # what is saved must read back as what was meant
        raise ProfileError(f"{checklist.id!r} cannot be written as a profile file that reads back the same")
    path = user_dir / f"{checklist.id}.json"
    try:
        user_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, data, indent=2, ensure_ascii=False)
    except OSError as exc:
        raise ProfileError(f"{path}: the profile cannot be saved ({exc.strerror or exc})") from exc
    return path


def save_cut(
    source: Path, min_score: float | None, user_dir: Path, shipped_dir: Path = PROFILES, *, signal: str | None = None
) -> Path:
    """The profile in `source` with the score cut of its `signal` (None: its one signal) set to `min_score`,
    saved as the person's: a shipped profile becomes `<id>_cut` (the template stays as it is), one of theirs
    is changed in place, its other signals' cuts kept. ProfileError with a sentence (a checklist and no
    signal named, a signal it does not have, a file that cannot be read)."""
    checklist = load_checklist(source)
    if signal is None:
        if not checklist.is_single:
            raise ProfileError(f"{source}: a checklist's score cuts are set per signal; none was named")
        signal = checklist.signals[0].signal
    try:
        cut = with_min_score(checklist, signal, min_score)
    except KeyError:
        names = ", ".join(spec.signal for spec in checklist.signals)
        raise ProfileError(f"{source}: {checklist.id!r} has no signal {signal!r} ({names})") from None
    if checklist.id in _shipped_ids(shipped_dir):
        cut = renamed(cut, f"{checklist.id[:59]}_cut")
    return save_profile(cut, user_dir, shipped_dir)


def _shipped(shipped_dir: Path) -> list[ProfileEntry]:
    return [_entry(path, shipped=True) for path in _json_files(shipped_dir)]


def _shipped_ids(shipped_dir: Path) -> set[str]:
    return {e.checklist.id for e in _shipped(shipped_dir) if e.checklist is not None}


def _json_files(folder: Path) -> list[Path]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:  # no folder yet (nothing saved), or one that cannot be listed: nothing to offer
        return []
    return [folder / name for name in names if name.endswith(".json") and not name.startswith(".")]


def _entry(path: Path, shipped: bool) -> ProfileEntry:
    try:
        return ProfileEntry(path, load_checklist(path), shipped)
    except ProfileError as exc:
        return ProfileEntry(path, None, shipped, str(exc))
