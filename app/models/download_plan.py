"""Preparing a model download, the same for `models download` and the Models screen.

The model must be one the store may download (known, not bundled); then the saved
download settings (not read when the caller gives both the mirror and the proxy
choice), the mirrors, and the system's proxy when it is chosen. Each way this can
fail is one `Refusal`, which the CLI words on stderr and the screen as a notice; a
setting that cannot be read is a refusal, never a silent fall-back to the public
mirrors. The plan then starts the job (download_job), whose outcome each words again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from app.models.download_job import DownloadJob
from app.models.errors import NoMirror, StoreError
from app.models.manifest import Manifest
from app.models.mirrors import (
    DownloadSettings,
    Mirror,
    MirrorError,
    choose_mirrors,
    load_download_settings,
    system_proxies,
)
from app.models.store import BundledModel, ModelStore

if TYPE_CHECKING:
    from app.privacy.guard import NetworkGuard


class Refusal(StrEnum):
    UNKNOWN = "unknown"  # no manifest has this id
    BUNDLED = "bundled"  # shipped with the app: nothing to download
    SETTINGS = "settings"  # the saved download settings cannot be read, or a given mirror URL is invalid
    NO_MIRROR = "no_mirror"  # neither the manifest nor the user names a server
    PROXY = "proxy"  # the system's proxy is one Keyframe cannot use (e.g. SOCKS)


class DownloadRefused(Exception):
    """A download that was not started; `cause` is the error as the store or the settings raised it."""

    def __init__(self, refusal: Refusal, cause: Exception) -> None:
        super().__init__(str(cause))
        self.refusal = refusal
        self.cause = cause


@dataclass(frozen=True)
class DownloadPlan:
    store: ModelStore
    manifest: Manifest
    mirrors: tuple[Mirror, ...]
    proxies: Mapping[str, str]  # {"https": "http://proxy:3128"}; empty: a direct connection

    def job(self, guard: NetworkGuard | None) -> DownloadJob:
        """The download as a job (not started yet), under the privacy guard."""
        return DownloadJob(self.store, self.manifest.id, self.mirrors, guard=guard, proxies=self.proxies)


def plan_download(
    store: ModelStore,
    model_id: str,
    *,
    mirror_urls: Sequence[str] = (),
    use_system_proxy: bool | None = None,
    env: Mapping[str, str] | None = None,
) -> DownloadPlan:
    """The mirrors and proxies a download of `model_id` uses: the given ones, else the saved
    settings', else the manifest's mirrors and a direct connection. DownloadRefused says why not."""
    try:
        manifest = store.downloadable(model_id)
    except BundledModel as exc:
        raise DownloadRefused(Refusal.BUNDLED, exc) from exc
    except StoreError as exc:
        raise DownloadRefused(Refusal.UNKNOWN, exc) from exc
    try:
        given = bool(mirror_urls) and use_system_proxy is not None
        saved = DownloadSettings() if given else load_download_settings(env)
        mirrors = choose_mirrors(manifest, list(mirror_urls) or ([saved.mirror] if saved.mirror else []))
    except MirrorError as exc:
        raise DownloadRefused(Refusal.SETTINGS, exc) from exc
    if not mirrors:
        raise DownloadRefused(Refusal.NO_MIRROR, NoMirror(model_id))
    try:
        use_proxy = saved.use_system_proxy if use_system_proxy is None else use_system_proxy
        proxies = system_proxies(mirrors) if use_proxy else {}
    except MirrorError as exc:  # never a silent direct connection instead
        raise DownloadRefused(Refusal.PROXY, exc) from exc
    return DownloadPlan(store, manifest, tuple(mirrors), proxies)
