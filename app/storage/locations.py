"""Where the app keeps its files on this device: models, sessions, logs, settings, uploads, caches.

Built Flet apps get FLET_APP_STORAGE_DATA and FLET_APP_STORAGE_CACHE (the app's sandboxed folders
on iOS and Android; tests set them too); otherwise platformdirs gives the usual per-OS folders.
Every location is a function of the environment, so a test or a second app points them elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from app.storage.paths import MANIFESTS

APP_NAME = "Keyframe"


def _flet_or_platform(env: Mapping[str, str] | None, flet_key: str, platform_dir: str) -> Path:
    value = (os.environ if env is None else env).get(flet_key)
    return Path(value) if value else Path(platform_dir)


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    return _flet_or_platform(env, "FLET_APP_STORAGE_DATA", platformdirs.user_data_dir(APP_NAME, appauthor=False))


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    return _flet_or_platform(env, "FLET_APP_STORAGE_CACHE", platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def models_dir(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / "models"


def sessions_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where sessions are recorded (logs and their keyframe thumbnails): the CLI's and the UI's."""
    return data_dir(env) / "sessions"


def log_dir(env: Mapping[str, str] | None = None) -> Path:
    flet_data = (os.environ if env is None else env).get("FLET_APP_STORAGE_DATA")
    return Path(flet_data) / "logs" if flet_data else Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """Flet's app storage when it is set, else the platform's per-user config folder."""
    return _flet_or_platform(env, "FLET_APP_STORAGE_DATA", platformdirs.user_config_dir(APP_NAME, appauthor=False))


def settings_path(env: Mapping[str, str] | None = None) -> Path:
    return config_dir(env) / "settings.json"


def user_profiles_dir(env: Mapping[str, str] | None = None) -> Path:
    """The profiles and checklists a person made or changed in the app (the shipped ones are templates)."""
    return config_dir(env) / "profiles"


def upload_dir(env: Mapping[str, str] | None = None) -> Path:
    """Copies of files a browser uploaded for a session (deleted when it ends, and at each start)."""
    return cache_dir(env) / "uploads"


def engine_cache_dir(model_id: str, backend: str, env: Mapping[str, str] | None = None) -> Path:
    """MNN tmp_path for one model on one backend; never shared: a tmp_path shared by two backends
    corrupted their answers (MNN 3.6.0)."""
    return cache_dir(env) / "mnn" / model_id / backend


def downloaded_models_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where downloaded models go, kept out of device backups where the platform allows.

    Android backs up the app's files (FLET_APP_STORAGE_DATA is `<app root>/app_flutter`)
    but never `<app root>/no_backup/` (Context.getNoBackupFilesDir). iOS and macOS use
    the normal folder and get the do-not-back-up flag (`exclude_from_backup`).
    """
    env = os.environ if env is None else env
    flet_dir = env.get("FLET_APP_STORAGE_DATA")
    if flet_dir and env.get("FLET_PLATFORM", "").lower() == "android":
        return Path(flet_dir).parent / "no_backup" / "models"
    return models_dir(env)


def exclude_from_backup(path: Path, platform: str | None = None) -> bool:
    """Sets NSURLIsExcludedFromBackupKey on Apple platforms (iCloud/iTunes and Time Machine).

    Best effort through CoreFoundation with ctypes (no PyObjC on device); returns False
    where the flag does not exist or could not be set. A directory's flag covers its contents.
    """
    import sys

    platform = sys.platform if platform is None else platform
    if platform not in ("darwin", "ios"):
        return False
    import ctypes

    try:
        cf = ctypes.CDLL("/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation")
        create = cf.CFURLCreateFromFileSystemRepresentation
        create.restype = ctypes.c_void_p
        create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_long, ctypes.c_bool]
        set_property = cf.CFURLSetResourcePropertyForKey
        set_property.restype = ctypes.c_bool
        set_property.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        cf.CFRelease.argtypes = [ctypes.c_void_p]
        key = ctypes.c_void_p.in_dll(cf, "kCFURLIsExcludedFromBackupKey")
        true = ctypes.c_void_p.in_dll(cf, "kCFBooleanTrue")
        raw = os.fsencode(path)
        url = create(None, raw, len(raw), True)
        if not url:
            return False
        try:
            return bool(set_property(url, key, true, None))
        finally:
            cf.CFRelease(url)
    except (OSError, AttributeError, ValueError):
        return False


ENV_MANIFESTS = "KEYFRAME_MANIFESTS_DIR"


def manifests_dir(env: Mapping[str, str] | None = None) -> Path:
    """The app's own manifests, or KEYFRAME_MANIFESTS_DIR (tests and testers point it at theirs)."""
    env = os.environ if env is None else env
    override = env.get(ENV_MANIFESTS)
    return Path(override) if override else MANIFESTS
