"""The user's settings: what they are, their allowed values, and strict reading from JSON data. Pure logic.

No Flet, no MNN, no I/O: `app.storage.settings_file` reads and writes the file,
`app.ui.settings.controller` owns the current settings and turns them into a
worker spec. Reading is strict on purpose: a value that is out of range or of
the wrong type is refused with a sentence naming the field and what it may be,
never clamped or guessed (a settings file is a user's file; a silent repair
would hide the edit that broke it).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from app.core.record import FLAG, Rule, check_fields, one_of, optional, text, unknown_keys, whole
from app.core.vision_size import MAX_USER_SIDE, MIN_USER_SIDE

# MNN backends the app can ask for (the one definition; the CLI's --backend uses it too).
# A non-CPU backend is checked against CPU by the worker before it is used.
BACKENDS = ("cpu", "metal", "opencl", "vulkan")
MIN_THREADS, MAX_THREADS = 1, 16
# The GPU backends MNN can have on each platform (sys.platform): Metal is Apple's only.
_PLATFORM_BACKENDS = {"darwin": ("cpu", "metal"), "ios": ("cpu", "metal")}
_OTHER_BACKENDS = ("cpu", "opencl", "vulkan")


def backends_for(platform: str, current: str = "cpu") -> tuple[str, ...]:
    """The backends worth offering on `platform`, and the current one even if it is not (so it shows)."""
    offered = _PLATFORM_BACKENDS.get(platform, _OTHER_BACKENDS)
    return offered if current in offered or current not in BACKENDS else (*offered, current)


def threads_cap(cores: int | None) -> int:
    """The most threads worth offering: this machine's cores (MNN gains nothing beyond), within the bounds."""
    return max(MIN_THREADS, min(MAX_THREADS, cores or MAX_THREADS))


MIN_INTERVAL_S, MAX_INTERVAL_S = 2, 5  # as the keyframe sampler allows (app.core.sampler)
LANGUAGES = ("en", "zh")


class SettingsError(ValueError):
    """A value the settings cannot take; `field` names it, the message says what is allowed."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Settings:
    backend: str = "cpu"  # one of BACKENDS
    threads: int = 2  # CPU threads for MNN
    image_max_side: int | None = None  # longest side fed to the model; None = the model's own size
    constrained: bool = True  # decode only the profile's answers (False: free generation)
    interval_s: int = 3  # the practice screen's default keyframe interval
    language: str = "en"  # one of LANGUAGES
    model: str | None = None  # the active model's id or folder; None = the bundled demo model
    profile: str | None = None  # the question's profile file (shipped or the person's); None = the model's own

    def __post_init__(self) -> None:
        for f in fields(self):
            _check(f.name, getattr(self, f.name))


# Each setting's rule (app.core.record); a value that breaks it is refused naming the setting.
_RULES: dict[str, Rule] = {
    "backend": one_of(BACKENDS),
    "threads": whole(MIN_THREADS, MAX_THREADS),
    "image_max_side": optional(whole(MIN_USER_SIDE, MAX_USER_SIDE, "pixels"), "the model's own size"),
    "constrained": FLAG,
    "interval_s": whole(MIN_INTERVAL_S, MAX_INTERVAL_S, "seconds"),
    "language": one_of(LANGUAGES),
    "model": optional(text("a model id or folder"), "the bundled demo model"),
    "profile": optional(text("a profile file's path"), "the model's own question"),
}


def _refuse(name: str, rule: Rule, value: object) -> SettingsError:
    return SettingsError(name, f"{name} must be {rule.words} (got {value!r})")


def _check(name: str, value: object) -> None:
    check_fields({name: value}, _RULES, _refuse)


FIELDS = tuple(f.name for f in fields(Settings))
# What the model worker is built from: a change to one of these restarts it.
WORKER_FIELDS = ("backend", "threads", "image_max_side", "constrained", "model", "profile")


def settings_from_dict(data: object) -> Settings:
    """Settings from parsed JSON; a missing field takes its default, anything else wrong raises SettingsError."""
    if not isinstance(data, dict):
        raise SettingsError("", f"the settings must be a JSON object (got {type(data).__name__})")
    unknown = unknown_keys(data, FIELDS)
    if unknown:
        raise SettingsError(unknown[0], f"unknown setting {', '.join(unknown)}; the settings are {', '.join(FIELDS)}")
    return Settings(**data)


def settings_to_dict(settings: Settings) -> dict[str, Any]:
    return {name: getattr(settings, name) for name in FIELDS}


def changed(settings: Settings, **values: object) -> Settings:
    """`settings` with `values` set, validated (SettingsError names the first bad one)."""
    unknown = sorted(k for k in values if k not in FIELDS)
    if unknown:
        raise SettingsError(unknown[0], f"unknown setting {unknown[0]}")
    return replace(settings, **values)  # type: ignore[arg-type]


def worker_changed(before: Settings, after: Settings) -> bool:
    """True when the model worker must be rebuilt to follow `after`."""
    return any(getattr(before, name) != getattr(after, name) for name in WORKER_FIELDS)
