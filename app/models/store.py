"""The on-device model store: what is installed, downloading, importing, removing.

A model is usable only when every file in its manifest is verified. Verifying
1.5 GB at every start is too slow, so each model folder keeps a marker
(`.keyframe-verified.json`) recording, per file, the SHA-256 it was verified
against and the size and mtime it had then. The start-up check compares only
those (cheap, catches truncation and replacement, not an in-place edit that
keeps size and mtime); `verify` re-hashes everything and rewrites the marker.
Every write to a model folder happens under that model's lock (locks.py),
and never through a link planted in the store (safefs.py). Loading re-hashes
in full (catalog.ModelRef.require_verified): the marker only serves listings
and lets a download skip files it already has.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from app.models.catalog import load_manifests, read_manifests
from app.models.download import (
    DEFAULT_POLICY,
    Cancelled,
    Disk,
    FileFetcher,
    NotEnoughSpace,
    RetryPolicy,
    part_path,
)
from app.models.errors import NoMirror, StoreError
from app.models.importer import ImportRejected, copy_verified, import_size
from app.models.locks import ModelBusy, ModelLock
from app.models.manifest import Manifest, ManifestFile, model_folder
from app.models.marker import VerifiedFile, quick_ok, read_marker, record_for, write_marker
from app.models.mirrors import Mirror
from app.models.progress import DownloadProgress, Phase, ProgressTracker
from app.models.request_watch import NO_KEEPALIVE
from app.models.verify import FileState, HashProgress, VerifyReport, sha256_file, verify_folder
from app.storage.durable_files import fsync_dir
from app.storage.locations import downloaded_models_dir, exclude_from_backup, manifests_dir
from app.storage.paths import MODEL_STORE
from app.storage.safefs import check_no_links, real_dir

if TYPE_CHECKING:
    from app.privacy.guard import NetworkGuard

_CHUNK = 1 << 20


class UnknownModel(StoreError):
    pass


class BundledModel(StoreError):
    pass


class ModelState(StrEnum):
    BUNDLED = "bundled"  # shipped with the app; always installed
    DAMAGED = "damaged"  # bundled, but a file fails its hash: reinstall the app
    INSTALLED = "installed"  # every file verified
    PARTIAL = "partial"  # some files (or parts of files) present; not usable
    ABSENT = "not installed"


@dataclass(frozen=True)
class ModelStatus:
    model_id: str
    display_name: str
    state: ModelState
    folder: Path
    verified: tuple[str, ...]
    pending: tuple[str, ...]  # not verified: missing, partly downloaded, or changed since
    size: int | None
    size_is_estimate: bool
    partial_bytes: int  # bytes in .part files a download would resume from

    @property
    def usable(self) -> bool:
        return self.state in (ModelState.BUNDLED, ModelState.INSTALLED)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.model_id,
            "name": self.display_name,
            "state": self.state.value,
            "usable": self.usable,
            "folder": str(self.folder),
            "verified_files": list(self.verified),
            "pending_files": list(self.pending),
            "size": self.size,
            "size_is_estimate": self.size_is_estimate,
            "partial_bytes": self.partial_bytes,
        }


def _part_size(dest: Path) -> int:
    """Bytes a download of `dest` would resume from (0 when there is no .part)."""
    try:
        return part_path(dest).stat().st_size
    except OSError:  # absent, or removed by a download finishing right now
        return 0


def _hash_file(path: Path, cancel: threading.Event | None) -> str:
    def check(_n: int) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled()

    return sha256_file(path, check)


class ModelStore:
    def __init__(
        self,
        manifests: Mapping[str, Manifest],
        root: Path,
        *,
        bundled_root: Path = MODEL_STORE,
        disk: Disk | None = None,
        policy: RetryPolicy = DEFAULT_POLICY,
        problems: tuple[str, ...] = (),
    ) -> None:
        """`problems`: manifests that could not be read (said on the Models screen; their models are not offered)."""
        self._manifests = dict(manifests)
        self.problems = problems
        self.root = root
        self._bundled_root = bundled_root
        self._disk = disk or Disk()
        self._policy = policy

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, skip_broken: bool = False) -> ModelStore:
        """Strict by default (ManifestError); `skip_broken`: a broken manifest costs only its own model."""
        if not skip_broken:
            return cls(load_manifests(manifests_dir(env)), downloaded_models_dir(env))
        found = read_manifests(manifests_dir(env))
        return cls(found.manifests, downloaded_models_dir(env), problems=found.problems)

    @property
    def manifests(self) -> Mapping[str, Manifest]:
        return dict(self._manifests)

    def manifest(self, model_id: str) -> Manifest:
        try:
            return self._manifests[model_id]
        except KeyError:
            known = ", ".join(sorted(self._manifests)) or "none"
            raise UnknownModel(f"no manifest for model {model_id!r} (known: {known})") from None

    def folder(self, model_id: str) -> Path:
        return model_folder(self.manifest(model_id), self.root, self._bundled_root)

    def lock(self, model_id: str) -> ModelLock:
        return ModelLock(self.root / ".locks" / f"{model_id}.lock", model_id)

    # -- state -------------------------------------------------------------------------

    def status(self, model_id: str) -> ModelStatus:
        manifest = self.manifest(model_id)
        folder = self.folder(model_id)
        paths = tuple(f.path for f in manifest.files)
        size, estimate = self._model_total(manifest)
        if manifest.bundled:
            # Checked, not assumed: bundled files are a few MB, a full hash costs milliseconds.
            report = verify_folder(folder, manifest)
            good = tuple(c.path for c in report.checks if c.state is FileState.OK)
            bad = tuple(c.path for c in report.failures)
            state = ModelState.BUNDLED if report.ok else ModelState.DAMAGED
            return ModelStatus(manifest.id, manifest.display_name, state, folder, good, bad, size, estimate, 0)
        records = read_marker(folder)
        verified = tuple(f.path for f in manifest.files if quick_ok(folder, f, records.get(f.path)))
        pending = tuple(p for p in paths if p not in verified)
        partial = sum(_part_size(folder / p) for p in pending)
        if not pending:
            state = ModelState.INSTALLED
        elif verified or partial or any((folder / p).exists() for p in pending):
            state = ModelState.PARTIAL
        else:
            state = ModelState.ABSENT
        return ModelStatus(
            manifest.id, manifest.display_name, state, folder, verified, pending, size, estimate, partial
        )

    def statuses(self) -> list[ModelStatus]:
        return [self.status(model_id) for model_id in sorted(self._manifests)]

    def verify(self, model_id: str, on_progress: Callable[[HashProgress], None] | None = None) -> VerifyReport:
        """Full re-hash of every file; the marker is rewritten to match (failing files leave it).

        `on_progress` gets the bytes hashed so far before each MiB (a screen's progress); it may
        raise (e.g. Cancelled) to stop, and then nothing is written."""
        manifest = self.manifest(model_id)
        folder = self.folder(model_id)
        report = verify_folder(folder, manifest, on_progress)
        if manifest.bundled or not folder.is_dir() or folder.is_symlink():
            return report  # a linked folder is reported on, but nothing is written through the link
        # A download running now owns the marker; the report still stands, the marker waits.
        with contextlib.suppress(ModelBusy), self.lock(model_id):
            records = {
                c.path: record_for(folder / c.path, self._sha(manifest, c.path))
                for c in report.checks
                if c.state is FileState.OK
            }
            write_marker(folder, manifest.id, records)
        return report

    @staticmethod
    def _sha(manifest: Manifest, path: str) -> str:
        return next(f.sha256 for f in manifest.files if f.path == path)

    # -- changes -----------------------------------------------------------------------

    def downloadable(self, model_id: str, action: str = "downloaded") -> Manifest:
        """The manifest of a model the store may change (UnknownModel, BundledModel: it may not)."""
        manifest = self.manifest(model_id)
        if manifest.bundled:
            raise BundledModel(f"{model_id} is bundled with the app and always installed; it cannot be {action}")
        return manifest

    def _prepare_root(self, model_id: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        exclude_from_backup(self.root)
        # Left by an import or removal that was killed half-way; only this model's, under its lock.
        # A link planted at a scratch folder is removed, never followed: rmtree through it would
        # delete a folder outside the store.
        for kind in (".staging", ".trash"):
            real_dir(self.root / kind)
            shutil.rmtree(self.root / kind / model_id, ignore_errors=True)

    def _scratch(self, kind: str, model_id: str) -> Path:
        path = self.root / kind / model_id / secrets.token_hex(6)
        real_dir(self.root / kind)
        real_dir(path.parent)
        return path

    def remove(self, model_id: str) -> bool:
        """Deletes a downloaded model (and any partial download); False when it was not installed.

        "Not installed" is a folder that is absent or holds no file at all (a download
        that failed before its first byte leaves an empty folder). A link planted at
        the model's folder is removed itself; what it points to is never touched.
        """
        self.downloadable(model_id, "removed")
        with self.lock(model_id):
            self._prepare_root(model_id)
            folder = self.folder(model_id)
            if folder.is_symlink():
                folder.unlink()
                return True
            if not folder.exists():
                return False
            holds_files = any(p.is_file() or p.is_symlink() for p in folder.rglob("*"))
            trash = self._scratch(".trash", model_id)
            os.replace(folder, trash)  # gone at once, even if deleting 1.5 GB takes a while
            shutil.rmtree(self.root / ".trash" / model_id, ignore_errors=True)
            return holds_files

    def discard_partial(self, model_id: str) -> bool:
        """Drops what an unfinished download left: its .part files, and the whole folder when
        no file of it is verified yet. Verified files stay, so cancelling the repair of one bad
        file never deletes a working rest. True when anything was dropped."""
        self.downloadable(model_id, "changed")
        status = self.status(model_id)
        if not status.verified:
            return self.remove(model_id)
        dropped = False
        with self.lock(model_id):
            folder = self.folder(model_id)
            check_no_links(self.root, folder / "x")
            for path in status.pending:
                part = part_path(folder / path)
                check_no_links(folder, part)
                if part.is_file() or part.is_symlink():
                    part.unlink()
                    dropped = True
        return dropped

    def import_folder(self, model_id: str, source: Path) -> ModelStatus:
        """Copies a local copy of a known model in, verified file by file, then swaps it into place."""
        manifest = self.downloadable(model_id, "imported")
        source = Path(source)
        if not source.is_dir():
            raise ImportRejected(str(source), "not a folder")
        with self.lock(model_id):
            self._prepare_root(model_id)
            folder = self.folder(model_id)
            if source.resolve() == folder.resolve():
                raise ImportRejected(str(source), "is the model's own folder; use `verify` instead")
            needed = import_size(manifest, source)
            free = self._disk.free_bytes(self.root)
            NotEnoughSpace.unless_room(model_id, "the import", needed, self._policy.space_reserve_bytes, free)
            staging = self._scratch(".staging", model_id)
            real_dir(staging)
            try:
                copy_verified(manifest, source, staging)
                self._swap_in(staging, folder, model_id)
            finally:
                shutil.rmtree(self.root / ".staging" / model_id, ignore_errors=True)
        return self.status(model_id)

    def _swap_in(self, staging: Path, folder: Path, model_id: str) -> None:
        # Two renames: a crash between them leaves no folder (model absent, never half-replaced);
        # the leftovers are cleaned up under the lock next time.
        if folder.exists():
            os.replace(folder, self._scratch(".trash", model_id))
        os.replace(staging, folder)
        fsync_dir(self.root)
        shutil.rmtree(self.root / ".trash" / model_id, ignore_errors=True)

    def download(
        self,
        model_id: str,
        mirrors: Sequence[Mirror],
        *,
        cancel: threading.Event | None = None,
        on_progress: Callable[[DownloadProgress], None] | None = None,
        guard: NetworkGuard | None = None,
        wait: Callable[[float], None] | None = None,
        proxies: Mapping[str, str] | None = None,
    ) -> ModelStatus:
        """Fetches whatever is not verified yet. Runs in the caller's thread, which `guard`
        lets reach one host per request: a mirror's, or a redirect's within that mirror's hosts.

        `proxies` ({"https": "http://proxy:3128"}, mirrors.system_proxies) sends the requests of
        those schemes through a proxy, which the guard then lets this thread reach as well.
        Without it the connection is direct: the environment's proxy variables are ignored."""
        manifest = self.downloadable(model_id, "downloaded")
        if not mirrors:
            raise NoMirror(model_id)
        cancel = cancel or threading.Event()
        tracker = ProgressTracker(model_id, on_progress or (lambda p: None))
        proxies = dict(proxies or {})
        proxy_hosts = frozenset(h for h in (urlsplit(u).hostname for u in proxies.values()) if h)
        allow: Callable[[frozenset[str]], contextlib.AbstractContextManager[None]] | None = None
        if guard is not None:
            allow = (lambda hosts: guard.allow_download(hosts | proxy_hosts)) if proxy_hosts else guard.allow_download
        mounts: dict[str, httpx.BaseTransport | None] = {
            f"{scheme}://": httpx.HTTPTransport(proxy=url, limits=NO_KEEPALIVE) for scheme, url in proxies.items()
        }
        try:
            with self.lock(model_id):
                self._prepare_root(model_id)
                folder = self.folder(model_id)
                check_no_links(self.root, folder / "x")  # a linked model folder would take the download elsewhere
                folder.mkdir(parents=True, exist_ok=True)
                records = read_marker(folder)
                todo = self._files_to_fetch(manifest, folder, records, tracker, cancel)
                done = sum(r.size for p, r in records.items() if any(f.path == p for f in manifest.files))
                total, estimate = self._model_total(manifest)
                self._check_space(manifest, folder, todo, done)
                tracker.set_totals(total, done, len(todo), estimate)
                with httpx.Client(
                    timeout=self._policy.timeout(),
                    follow_redirects=False,
                    trust_env=False,
                    limits=NO_KEEPALIVE,  # each request its own connection, which a cancel can cut (request_watch)
                    mounts=mounts or None,
                    headers={"User-Agent": "Keyframe-model-store/1"},
                ) as client:
                    fetcher = FileFetcher(
                        client,
                        cancel=cancel,
                        policy=self._policy,
                        disk=self._disk,
                        allow=allow,
                        wait=wait,
                        on_bytes=tracker.on_bytes,
                        on_wait=tracker.waiting,
                    )
                    cap = self._size_cap(manifest)
                    for index, entry in enumerate(todo, 1):
                        tracker.start_file(entry.path, index, entry.size)
                        dest = folder / entry.path
                        check_no_links(folder, dest)
                        fetcher.fetch(mirrors, entry, dest, size_cap=cap)
                        records[entry.path] = record_for(dest, entry.sha256)
                        write_marker(folder, manifest.id, records)  # a later cut never re-fetches this file
                        tracker.file_finished(records[entry.path].size)
            tracker.finish(Phase.DONE, f"all {len(manifest.files)} files verified")
        except Cancelled:
            tracker.finish(Phase.CANCELLED, "cancelled; downloading again resumes where it stopped")
            raise
        except BaseException as exc:
            tracker.finish(Phase.FAILED, str(exc))
            raise
        return self.status(model_id)

    @staticmethod
    def _size_cap(manifest: Manifest) -> int | None:
        """No file can be larger than the whole model: the bound for files without a pinned size.

        `approx_total_size` is an estimate, so it gets 1 % (and 1 MiB) of slack; a mirror
        that offers or streams more is cut off and its .part dropped (download.py).
        """
        if manifest.total_size is not None:
            return manifest.total_size
        if manifest.approx_total_size is not None:
            return manifest.approx_total_size + manifest.approx_total_size // 100 + (1 << 20)
        return None

    @staticmethod
    def _model_total(manifest: Manifest) -> tuple[int | None, bool]:
        if manifest.total_size is not None:
            return manifest.total_size, False
        return manifest.approx_total_size, manifest.approx_total_size is not None

    def _files_to_fetch(
        self,
        manifest: Manifest,
        folder: Path,
        records: dict[str, VerifiedFile],
        tracker: ProgressTracker,
        cancel: threading.Event,
    ) -> list[ManifestFile]:
        todo: list[ManifestFile] = []
        known = {f.path for f in manifest.files}
        changed = any(p not in known for p in records)
        for p in [p for p in records if p not in known]:
            del records[p]
        for entry in manifest.files:
            dest = folder / entry.path
            if quick_ok(folder, entry, records.get(entry.path)):
                continue
            changed |= records.pop(entry.path, None) is not None
            check_no_links(folder, dest)
            if dest.is_symlink():
                dest.unlink()
            elif dest.exists() and not dest.is_file():
                raise StoreError(f"{dest} should be a file; move it away and try again")
            elif dest.is_file():
                # Present but not on record (marker lost, or changed since): the hash decides.
                tracker.checking(entry.path)
                size_ok = entry.size is None or dest.stat().st_size == entry.size
                if size_ok and _hash_file(dest, cancel) == entry.sha256:
                    records[entry.path] = record_for(dest, entry.sha256)
                    changed = True
                    continue
                dest.unlink()  # a wrong file is no use as a prefix: where it differs is unknown
            todo.append(entry)
        if changed:
            write_marker(folder, manifest.id, records)
        return todo

    def _check_space(self, manifest: Manifest, folder: Path, todo: Sequence[ManifestFile], done: int) -> None:
        needed = 0
        have_parts = 0
        unknown = False
        for entry in todo:
            have = _part_size(folder / entry.path)
            have_parts += have
            if entry.size is None:
                unknown = True
            else:
                needed += max(0, entry.size - have)
        if unknown and manifest.approx_total_size is not None:
            needed = max(needed, manifest.approx_total_size - done - have_parts)
        free = self._disk.free_bytes(folder)
        if todo:
            NotEnoughSpace.unless_room(manifest.id, "the download", needed, self._policy.space_reserve_bytes, free)
