"""Where downloaded models and app data live on this device.

Built Flet apps get FLET_APP_STORAGE_DATA (the app's sandboxed folder on iOS
and Android); otherwise platformdirs gives the usual per-OS folder.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import platformdirs

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


def engine_cache_dir(model_id: str, backend: str, env: Mapping[str, str] | None = None) -> Path:
    """MNN tmp_path for one model on one backend; never shared (see mnn-notes)."""
    return cache_dir(env) / "mnn" / model_id / backend
