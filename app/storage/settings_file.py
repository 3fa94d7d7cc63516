"""The settings file: `settings.json` in the platform config folder (FLET_APP_STORAGE_DATA in built apps).

A missing file means the defaults. A file that cannot be read, is not JSON or
holds a value the settings cannot take also gives the defaults, plus one
sentence for the screen; the file itself is kept as `settings.json.bad` so a
later save never overwrites what the user (or a damaged disk) left there.
Saves are atomic and fsynced (`write_json_atomic`): a crash leaves the old file
or the new one, never half of one.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from app.core.settings import Settings, SettingsError, settings_from_dict, settings_to_dict
from app.storage.locations import settings_path
from app.storage.safefs import write_json_atomic
from app.storage.small_file import BadJSON, TooLarge, read_small_json

logger = logging.getLogger("keyframe.settings")

BAD_SUFFIX = ".bad"
MAX_BYTES = 64 * 1024  # a settings file is a few hundred bytes; anything far larger is not one


@dataclass(frozen=True)
class LoadedSettings:
    settings: Settings
    problem: str | None = None  # the whole story in one English sentence (logs, CLI), None when all is well
    reason: str = ""  # why the file could not be used (the screen frames it in the user's language)
    kept_as: Path | None = None  # where the unusable file was moved to (None: it could not be moved)


def load_settings(path: Path | None = None) -> LoadedSettings:
    path = settings_path() if path is None else path
    try:
        return LoadedSettings(settings_from_dict(read_small_json(path, MAX_BYTES)))
    except FileNotFoundError:
        return LoadedSettings(Settings())
    except TooLarge as exc:
        reason = f"it is {exc.strerror}"  # "it is 70 KB, over the limit of 64 KB"
    except OSError as exc:  # no permission, a folder or a FIFO in its place
        reason = f"it cannot be read: {exc.strerror or exc}"
    except BadJSON as exc:
        reason = f"it is {exc}"
    except SettingsError as exc:
        reason = str(exc)
    kept = _keep_bad(path)
    where = (
        f"; the file was kept as {kept}"
        if kept is not None
        else "; the file could not be moved aside and the next change will replace it"
    )
    logger.warning("settings file %s not used: %s", path, reason)
    return LoadedSettings(
        Settings(),
        f"The settings file {path} could not be used ({reason}), so the defaults are in use{where}.",
        reason,
        kept,
    )


def _keep_bad(path: Path) -> Path | None:
    """Moves the unusable file aside (replacing an older `.bad`); None if it could not be moved."""
    bad = path.with_name(path.name + BAD_SUFFIX)
    try:
        os.replace(path, bad)
    except OSError as exc:
        logger.error("could not keep %s as %s: %s", path, bad, exc)
        return None
    return bad


def save_settings(settings: Settings, path: Path | None = None) -> Path:
    """Writes `settings` atomically (temporary file, fsync, rename); OSError when the disk refuses."""
    path = settings_path() if path is None else path
    path.parent.mkdir(parents=True, exist_ok=True)  # a link there is the user's choice: followed
    write_json_atomic(path, settings_to_dict(settings), indent=2)
    return path
