"""What the Models screen shows, and the card of each model as a pure function of what is known of it.

No Flet, no I/O: `pinned_card` turns a manifest, the store's status and what the
controller has seen (`ModelFacts`: a running download or verify, a failure, a pending
confirmation) into the card the view renders; `folder_card` does the same for a folder
the user chose. The controller gathers the facts and calls these on every change.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from app.core.notice import Notice
from app.models.manifest import Manifest, Reference, words_in
from app.models.progress import DownloadProgress, Phase
from app.models.store import ModelState, ModelStatus


class ActivityKind(StrEnum):
    DOWNLOAD = "download"
    VERIFY = "verify"


class Stopping(StrEnum):
    """How a running download or verify was asked to stop (until it has)."""

    PAUSE = "pause"
    CANCEL = "cancel"
    STOP = "stop"


class Confirm(StrEnum):
    """The action a card waits for the user's yes to."""

    CANCEL = "cancel"
    DELETE = "delete"


class CardState(StrEnum):
    NOT_INSTALLED = "not_installed"
    PARTIAL = "partial"  # some files or parts on disk: a download resumes from them
    DOWNLOADING = "downloading"
    VERIFYING = "verifying"
    INSTALLED = "installed"  # every file on record (size and time); not re-hashed since this app started
    VERIFIED = "verified"  # every file re-hashed and matching, in this run of the app
    FAILED = "failed"  # a file failed its hash, or the download failed


class ModelKind(StrEnum):
    DEMO = "demo"  # bundled with the app, trained on synthetic drawings only
    PINNED = "pinned"  # a manifest pins every file by SHA-256
    FOLDER = "folder"  # a folder the user chose; no manifest


@dataclass(frozen=True)
class Activity:
    """Long work running on a model: a download (from the store's progress records) or a verify."""

    kind: ActivityKind
    phase: Phase | None = Phase.CHECKING  # a download's (a verify has one: hashing)
    file: str | None = None
    file_index: int = 0
    file_count: int = 0
    done: int = 0
    total: int | None = None
    total_is_estimate: bool = False
    rate_bps: float | None = None
    eta_s: float | None = None
    message: str = ""
    stopping: Stopping | None = None  # asked, not yet stopped

    @property
    def fraction(self) -> float | None:
        if not self.total:
            return None
        return min(1.0, self.done / self.total)


def download_activity(p: DownloadProgress, stopping: Stopping | None = None) -> Activity:
    """A download's progress record as the card shows it: a rate and time left only while bytes flow."""
    flowing = p.phase is Phase.DOWNLOADING
    return Activity(
        ActivityKind.DOWNLOAD,
        phase=p.phase,
        file=p.file,
        file_index=p.file_index,
        file_count=p.file_count,
        done=p.done,
        total=p.total,
        total_is_estimate=p.total_is_estimate,
        rate_bps=p.rate_bps if flowing else None,
        eta_s=p.eta_s if flowing else None,
        # The last failure, while waiting to retry and until bytes flow again: the sign that a download at
        # 0 % is retrying, not stuck.
        message=p.message if p.phase is Phase.WAITING or (flowing and not p.rate_bps) else "",
        stopping=stopping,
    )


KEYFRAMES_KEPT = 50  # the speed on this device is the median of this many latest keyframes


@dataclass(frozen=True)
class MeasuredHere:
    """The model in use as measured on this device in this run of the app: after loading it answered the
    built-in picture in `check_s`; its process peaked at `peak_memory_bytes` (None where it runs in the
    app's own process, whose figure would not be the model's); `keyframe_s` are the latest keyframes'
    model times, every question of a keyframe together."""

    backend: str
    check_s: float | None
    peak_memory_bytes: int | None
    keyframe_s: tuple[float, ...] = ()
    last_keyframe: str = ""

    def with_keyframe(self, keyframe_id: str, seconds: float) -> MeasuredHere:
        """A keyframe's model time, all its questions so far: the same keyframe again replaces its time
        (a checklist's next question came), a new one is added."""
        if keyframe_id == self.last_keyframe and self.keyframe_s:
            times = (*self.keyframe_s[:-1], seconds)
        else:
            times = (*self.keyframe_s, seconds)[-KEYFRAMES_KEPT:]
        return replace(self, keyframe_s=times, last_keyframe=keyframe_id)

    @property
    def median_s(self) -> float | None:
        return statistics.median(self.keyframe_s) if self.keyframe_s else None


@dataclass(frozen=True)
class ModelCard:
    model_id: str  # the manifest id, or the folder path for a chosen folder
    name: str
    kind: ModelKind
    licence: str | None  # None: the manifest does not state one
    state: CardState
    folder: Path
    size_on_disk: int
    size_to_download: int | None  # None: unknown (no sizes pinned); 0 when nothing is left
    total_size: int | None
    size_is_estimate: bool
    fraction: float | None = None  # how far: a partial download, a download or a verify running
    names: tuple[tuple[str, str], ...] = ()  # the name in other UI languages (the manifest's display_names)
    failed_files: tuple[str, ...] = ()
    error: str = ""  # the failure as a sentence (download error, unreadable file…)
    activity: Activity | None = None
    confirm: Confirm | None = None  # the action waiting for the user's yes
    active: bool = False
    purposes: tuple[tuple[str, str], ...] = ()  # what it is for, per UI language (the manifest's)
    reference: Reference | None = None  # its cost as measured on a named machine (the manifest's)
    here: MeasuredHere | None = None  # its cost on this device, while it is the model in use

    def purpose_in(self, language: str) -> str:
        return words_in(self.purposes, language)

    def name_in(self, language: str) -> str:
        return dict(self.names).get(language, self.name)

    @property
    def usable(self) -> bool:
        return self.state in (CardState.INSTALLED, CardState.VERIFIED)


@dataclass(frozen=True)
class ModelsState:
    storage_folder: Path
    cards: tuple[ModelCard, ...] = ()
    free_bytes: int | None = None
    mirror_url: str = ""  # the saved mirror, "" for the manifests' own mirrors
    mirror_error: str = ""  # the saved setting cannot be read: downloads wait until it is fixed or cleared
    use_system_proxy: bool = False
    listed: bool = False
    notice: Notice | None = None

    def card(self, model_id: str) -> ModelCard | None:
        return next((c for c in self.cards if c.model_id == model_id), None)


@dataclass
class ModelFacts:
    """What the screen knows of a pinned model beyond its manifest and the store's status."""

    on_disk: int = 0  # bytes under its folder, .part files included
    verified_bytes: int = 0  # bytes of the files the status counts as verified
    verified_now: bool = False  # a full re-hash passed in this run
    failed_files: tuple[str, ...] = ()
    error: str = ""
    activity: Activity | None = None
    confirm: Confirm | None = None


def card_order(manifest: Manifest) -> tuple[bool, str]:
    """The bundled demo first, then by name."""
    return (not manifest.bundled, manifest.display_name.lower())


def _licence(text: str) -> str | None:
    return None if text.strip().lower() in ("", "unknown", "not stated") else text


def pinned_card(
    manifest: Manifest, status: ModelStatus, facts: ModelFacts, *, active: bool, here: MeasuredHere | None = None
) -> ModelCard:
    """The card of a model the store knows (the bundled demo or a pinned download)."""
    total = status.size
    left: int | None = None
    if manifest.bundled:
        left = 0
    elif total is not None:
        left = max(0, total - facts.verified_bytes - status.partial_bytes) if status.pending else 0
    activity = facts.activity
    on_disk = facts.on_disk
    if activity is not None and activity.kind is ActivityKind.DOWNLOAD:  # the status is read again when it ends
        on_disk = max(on_disk, activity.done)
        if activity.total is not None:
            left = max(0, activity.total - activity.done)
    fraction: float | None = None
    failed = facts.failed_files
    if activity is not None:
        state = CardState.DOWNLOADING if activity.kind is ActivityKind.DOWNLOAD else CardState.VERIFYING
        fraction = activity.fraction
    elif status.state is ModelState.DAMAGED:
        state, failed = CardState.FAILED, status.pending
    elif failed or facts.error:
        state = CardState.FAILED
    elif status.state is ModelState.BUNDLED:
        state = CardState.VERIFIED  # its status hashed every file just now
    elif status.state is ModelState.INSTALLED:
        state = CardState.VERIFIED if facts.verified_now else CardState.INSTALLED
    elif status.state is ModelState.PARTIAL:
        state = CardState.PARTIAL
        if total:
            fraction = min(1.0, (facts.verified_bytes + status.partial_bytes) / total)
    else:
        state = CardState.NOT_INSTALLED
    error = facts.error
    if status.state is ModelState.DAMAGED and not error:
        error = ", ".join(status.pending)
    return ModelCard(
        model_id=manifest.id,
        name=manifest.display_name,
        names=manifest.display_names,
        kind=ModelKind.DEMO if manifest.bundled else ModelKind.PINNED,
        licence=_licence(manifest.licence),
        state=state,
        folder=status.folder,
        size_on_disk=on_disk,
        size_to_download=left,
        total_size=total,
        size_is_estimate=status.size_is_estimate,
        fraction=fraction,
        failed_files=failed,
        error=error,
        activity=activity,
        confirm=facts.confirm,
        active=active,
        purposes=manifest.purposes,
        reference=manifest.reference,
        here=here if active else None,
    )


def folder_card(
    folder: Path, *, has_config: bool, size_on_disk: int, active: bool, here: MeasuredHere | None = None
) -> ModelCard:
    """The card of a folder the user chose: usable when it has a config.json (nothing is pinned)."""
    return ModelCard(
        model_id=str(folder),
        name=folder.name,
        kind=ModelKind.FOLDER,
        licence=None,
        state=CardState.INSTALLED if has_config else CardState.FAILED,
        folder=folder,
        size_on_disk=size_on_disk,
        size_to_download=0,
        total_size=None,
        size_is_estimate=False,
        error="" if has_config else "config.json is missing",
        failed_files=() if has_config else ("config.json",),
        active=active,
        here=here if active else None,
    )
