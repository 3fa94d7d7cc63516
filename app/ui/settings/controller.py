"""The Settings screen's state and work, shared by every tab of one app. No Flet imports.

The controller owns the current settings. Every accepted change is saved at
once (atomic, fsynced) and, when it concerns the model worker or the default
interval, handed to an injected `apply` callback (the app wires it to
`PracticeController.apply_settings`). A value the settings cannot take is
refused with a sentence in the state; nothing is saved then. The worker's
backend self-check (what was asked, what is used, why) comes in through
`worker_update` and is part of the state, so the screen can say it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.observable import Observable
from app.core.profile.checklist import Checklist
from app.core.profile.draft import ProfileDraft, checklist_from_draft, draft_from_checklist
from app.core.settings import Settings, SettingsError, changed, worker_changed
from app.storage.locations import settings_path, user_profiles_dir
from app.storage.profile_file import load_checklist
from app.storage.profile_store import list_profiles, save_profile, unlisted_profiles
from app.storage.settings_file import LoadedSettings, load_settings, save_settings
from app.worker.messages import WorkerSpec, WorkerStatus

if TYPE_CHECKING:
    from app.ui.practice.controller import PracticeController, PracticeState

logger = logging.getLogger("keyframe.settings")

BACKEND_NAMES = {"cpu": "CPU", "metal": "Metal", "opencl": "OpenCL", "vulkan": "Vulkan"}


def backend_name(backend: str) -> str:
    return BACKEND_NAMES.get(backend, backend)


def worker_spec(settings: Settings, base: WorkerSpec) -> WorkerSpec:
    """The worker spec for `settings`, keeping what the settings do not hold (the profile, test knobs).

    Here rather than in app.core.settings: the core stays free of worker imports, and the
    spec's other fields (the command line's --profile) are the app's, not the user's settings.
    A model or profile chosen in the settings replaces the command line's; None keeps it (the demo model,
    and the model's own question, by default).
    """
    return replace(
        base,
        model=settings.model if settings.model is not None else base.model,
        profile=Path(settings.profile) if settings.profile is not None else base.profile,
        backend=settings.backend,
        threads=settings.threads,
        image_max_side=settings.image_max_side,
        constrained=settings.constrained,
    )


@dataclass(frozen=True)
class WorkerReport:
    """What the model worker said about its backend (from PracticeState)."""

    status: WorkerStatus = WorkerStatus.STARTING
    asked: str = ""  # the backend it was asked for
    used: str = ""  # the backend it uses after its self-check ("" until it is ready)
    note: str = ""  # why (the worker's own sentence)
    message: str = ""  # the worker's status message (why it failed)
    profile_path: str = ""  # the profile file the worker asks from (the model's own when none is chosen)
    model_id: str = ""  # the model it loaded ("" until it is ready)

    @property
    def fell_back(self) -> bool:
        return bool(self.used) and bool(self.asked) and self.used != self.asked


@dataclass(frozen=True)
class ProfileChoice:
    """A profile file the Settings screen offers (app.storage.profile_store), and whether the app can ask it."""

    path: str
    id: str = ""
    title: str = ""
    titles: tuple[tuple[str, str], ...] = ()  # (language code, title) where the profile has its own words
    signals: int = 0  # questions it asks on each keyframe (more than one: a checklist)
    shipped: bool = False
    error: str = ""  # why the file cannot be used
    models: tuple[str, ...] = ()  # the models it was written for (empty: it names none)

    @property
    def usable(self) -> bool:
        return not self.error

    def title_in(self, language: str) -> str:
        return dict(self.titles).get(language) or self.title or self.id


def profile_choices(user_dir: Path) -> tuple[ProfileChoice, ...]:
    choices = []
    for entry in list_profiles(user_dir):
        c = entry.checklist
        if c is None:
            choices.append(ProfileChoice(str(entry.path), shipped=entry.shipped, error=entry.error))
        else:
            titles = tuple((code, words.title) for code, words in c.labels if words.title)
            choices.append(
                ProfileChoice(str(entry.path), c.id, c.title, titles, len(c.signals), entry.shipped, models=c.models)
            )
    return tuple(choices)


@dataclass(frozen=True)
class EditedProfile:
    """A profile open in the editor: its fields, the checklist it began from (None: a new one), and whether
    it is a copy of a shipped template (saved under the new id, the template untouched)."""

    draft: ProfileDraft
    base: Checklist | None
    copy: bool


@dataclass(frozen=True)
class SettingsState:
    settings: Settings = field(default_factory=Settings)
    path: str = ""  # where the settings file is
    file_problem: str = ""  # why the settings file could not be used ("" when it could)
    file_kept_as: str = ""  # where that file was kept ("" when it could not be moved aside)
    error_field: str = ""  # the setting whose new value was refused
    error: str = ""  # why it was refused
    save_error: str = ""  # the last save failed: the settings hold until the app ends, not longer
    worker: WorkerReport = field(default_factory=WorkerReport)
    profiles: tuple[ProfileChoice, ...] = ()  # the shipped ones, then the person's (profiles_dir)
    profiles_dir: str = ""
    profiles_unlisted: int = 0  # the person's profile files past the first MAX_USER_PROFILES, not listed
    started_profile: str = ""  # the command line's --profile: what "no choice here" asks ("" for the model's own)


class SettingsController:
    def __init__(
        self,
        loaded: LoadedSettings | None = None,
        *,
        path: Path | None = None,
        save: Callable[[Settings, Path], object] = save_settings,
        apply: Callable[[Settings], None] | None = None,
        profiles_dir: Path | None = None,
    ) -> None:
        self._path = settings_path() if path is None else path
        self._profiles_dir = user_profiles_dir() if profiles_dir is None else profiles_dir
        loaded = load_settings(self._path) if loaded is None else loaded
        self._save = save
        self._apply = apply
        self._changing = threading.Lock()  # one change (save + apply) at a time
        # The worker's reports (its reader thread) and a change on the page's loop both change the
        # state; a page must never get an older one (the old language) after a newer one.
        self._states = Observable(
            SettingsState(
                settings=loaded.settings,
                path=str(self._path),
                file_problem=loaded.reason if loaded.problem else "",
                file_kept_as=str(loaded.kept_as) if loaded.kept_as is not None else "",
                worker=WorkerReport(asked=loaded.settings.backend),
                profiles=profile_choices(self._profiles_dir),
                profiles_dir=str(self._profiles_dir),
                profiles_unlisted=unlisted_profiles(self._profiles_dir),
            ),
            "the Settings screen",
        )
        if loaded.problem:
            logger.warning("%s", loaded.problem)

    @property
    def state(self) -> SettingsState:
        return self._states.value

    @property
    def settings(self) -> Settings:
        return self._state.settings

    def set_apply(self, apply: Callable[[Settings], None] | None) -> None:
        """Where worker-affecting changes go (the app wires it once its practice controller exists)."""
        self._apply = apply

    # --- listeners -------------------------------------------------------------------------

    def subscribe(self, listener: Callable[[SettingsState], None]) -> None:
        self._states.subscribe(listener)

    def unsubscribe(self, listener: Callable[[SettingsState], None]) -> None:
        self._states.unsubscribe(listener)

    @property
    def _state(self) -> SettingsState:
        return self._states.value

    def _set(self, change: Callable[[SettingsState], SettingsState]) -> SettingsState:
        return self._states.update(change)

    # --- changes ---------------------------------------------------------------------------

    def update(self, **values: object) -> bool:
        """Change settings (e.g. `update(threads=4)`); False when a value is refused (the state says why)."""
        with self._changing:
            before = self._state.settings
            try:
                after = changed(before, **values)
            except SettingsError as exc:
                refused = exc
            else:
                return self._commit(before, after)
        self._set(lambda s: replace(s, error_field=refused.field, error=str(refused)))
        return False

    def reset(self) -> bool:
        """Back to the defaults (the active model is kept: it is chosen on the Models screen, not here)."""
        with self._changing:
            before = self._state.settings
            return self._commit(before, Settings(model=before.model))

    def set_started_profile(self, path: Path | None) -> None:
        """The profile the app was started with (`--profile`): what the settings' own default asks."""
        self._set(lambda s: replace(s, started_profile="" if path is None else str(path)))

    @property
    def profiles_dir(self) -> Path:
        """Where the person's profiles are: the folder this screen lists, and where a kept cut is saved."""
        return self._profiles_dir

    def draft_for(self, path: str | None) -> EditedProfile:
        """The editor's fields for the profile file `path` (None: the one the worker asks from, or a new
        checklist when it is not known yet). Only the person's own files are edited in place; a shipped
        template (or a model's own profile) is edited as a copy under a free id.
        ProfileError when the file cannot be read."""
        path = path or self._state.worker.profile_path
        if not path:
            return self.new_draft()
        checklist = load_checklist(Path(path))
        if Path(path).parent != self._profiles_dir:  # a shipped template or a model's own: never written
            copy = draft_from_checklist(checklist, self._free_id(f"{checklist.id[:58]}_copy"))
            return EditedProfile(copy, checklist, copy=True)
        return EditedProfile(draft_from_checklist(checklist), checklist, copy=False)

    def new_draft(self) -> EditedProfile:
        """Empty fields for a new profile, under an id no profile has."""
        return EditedProfile(ProfileDraft(id=self._free_id("my_checklist")), None, copy=False)

    def save_draft(self, edited: EditedProfile) -> Path:
        """Check the edited fields and save them as the person's profile file; ProfileError with a sentence."""
        path = save_profile(checklist_from_draft(edited.draft, edited.base), self._profiles_dir)
        self.refresh_profiles()
        return path

    def _free_id(self, wanted: str) -> str:
        taken = {c.id for c in self._state.profiles} | {Path(c.path).stem for c in self._state.profiles}
        candidates = (wanted, *(f"{wanted[:60]}_{n}" for n in range(2, 1000)))
        # A file not listed (past the first MAX_USER_PROFILES) is still the person's: never written over.
        return next(c for c in candidates if c not in taken and not (self._profiles_dir / f"{c}.json").exists())

    def refresh_profiles(self) -> None:
        """Read the profiles folder again (one saved since, e.g. from Testers)."""
        choices, unlisted = profile_choices(self._profiles_dir), unlisted_profiles(self._profiles_dir)
        self._set(lambda s: replace(s, profiles=choices, profiles_unlisted=unlisted))

    def dismiss_problem(self) -> None:
        self._set(lambda s: replace(s, file_problem="", file_kept_as="", save_error=""))

    def _commit(self, before: Settings, after: Settings) -> bool:
        """Save, show, apply; called with `_changing` held (one change at a time), never `_lock`:
        applying may stop a worker whose reader thread is, that moment, reporting here."""
        save_error = ""
        if after != before:
            try:
                self._save(after, self._path)
            except OSError as exc:
                save_error = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
                logger.error("settings not saved to %s: %s", self._path, save_error)
        self._set(lambda s: replace(s, settings=after, error_field="", error="", save_error=save_error))
        needs_worker = worker_changed(before, after) or before.interval_s != after.interval_s
        if needs_worker and self._apply is not None:
            try:
                self._apply(after)
            except Exception as exc:  # the change is saved; the screen says it could not be applied now
                logger.exception("settings could not be applied")
                message = str(exc) or type(exc).__name__
                self._set(lambda s: replace(s, error_field="apply", error=message))
                return False
        return True

    # --- what the worker reported ------------------------------------------------------------

    def worker_update(
        self,
        status: WorkerStatus,
        asked: str,
        used: str,
        note: str,
        message: str = "",
        profile_path: str = "",
        model_id: str = "",
    ) -> None:
        """From the practice controller's state: the worker's status, its backend self-check and its model."""
        report = WorkerReport(status, asked, used, note, message, profile_path, model_id)
        if report != self._state.worker:
            self._set(lambda s: replace(s, worker=report))


def connect_practice(settings: SettingsController, practice: PracticeController, base: WorkerSpec) -> None:
    """Wire the settings to the app's one practice controller: a worker or interval change is applied
    to it (`apply_settings`), and its worker's status and backend self-check come back here.

    Make the practice controller with `worker_spec(settings.settings, base)` first, so the first worker
    already follows the saved settings.
    """

    def report(state: PracticeState) -> None:
        settings.worker_update(
            state.worker_status,
            state.backend_asked,
            state.backend,
            state.backend_note,
            state.worker_message,
            state.profile_path,
            state.model_id,
        )

    settings.set_apply(lambda s: practice.apply_settings(worker_spec(s, base), s.interval_s))
    if not practice.state.running:
        practice.set_interval(settings.settings.interval_s)
    practice.subscribe(report)
