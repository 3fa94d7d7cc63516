"""Check a model folder against its manifest, file by file."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import BinaryIO

from app.models.disk_usage import files_bytes
from app.models.manifest import Manifest, ManifestFile
from app.storage.small_file import open_regular

_CHUNK = 1 << 20


class FileState(StrEnum):
    OK = "ok"
    MISSING = "missing"
    NOT_A_FILE = "not_a_file"  # a folder or a link where a file should be
    WRONG_SIZE = "wrong_size"
    WRONG_HASH = "wrong_hash"


@dataclass(frozen=True)
class FileCheck:
    path: str
    state: FileState
    detail: str = ""


@dataclass(frozen=True)
class VerifyReport:
    model_id: str
    folder: Path
    checks: tuple[FileCheck, ...]

    @property
    def ok(self) -> bool:
        return all(c.state is FileState.OK for c in self.checks)

    @property
    def failures(self) -> tuple[FileCheck, ...]:
        return tuple(c for c in self.checks if c.state is not FileState.OK)

    def describe(self) -> str:
        if self.ok:
            return f"{self.model_id}: all {len(self.checks)} files verified"
        bad = "; ".join(f"{c.path}: {c.state.value}{' (' + c.detail + ')' if c.detail else ''}" for c in self.failures)
        return f"{self.model_id}: not verified: {bad}"


def sha256_stream(src: BinaryIO, each_chunk: Callable[[bytes], object] | None = None) -> str:
    """The SHA-256 of everything left in `src`, read one MiB at a time (never the whole file).

    `each_chunk` gets every chunk before it is hashed: it may write it elsewhere (a copy
    hashed in the same pass) or raise to abandon a long hash. The one hashing loop of the app.
    """
    digest = hashlib.sha256()
    while chunk := src.read(_CHUNK):
        if each_chunk is not None:
            each_chunk(chunk)
        digest.update(chunk)
    return digest.hexdigest()


def sha256_file(path: Path, before_chunk: Callable[[int], None] | None = None) -> str:
    """`before_chunk(n)` runs before each chunk of n bytes (a MiB, less at the end) is hashed;
    it may raise to abandon a long hash."""
    with open_regular(path) as fh:  # a FIFO put in a model's folder is refused, never waited on
        return sha256_stream(fh, None if before_chunk is None else lambda chunk: before_chunk(len(chunk)))


def check_file(folder: Path, entry: ManifestFile, before_chunk: Callable[[int], None] | None = None) -> FileCheck:
    """`before_chunk(n)` runs before each chunk of n bytes is hashed (progress, or raise to stop)."""
    path = folder / entry.path
    if path.is_symlink() or (path.exists() and not path.is_file()):
        return FileCheck(entry.path, FileState.NOT_A_FILE)
    if not path.exists():
        return FileCheck(entry.path, FileState.MISSING)
    size = path.stat().st_size
    if entry.size is not None and size != entry.size:
        return FileCheck(entry.path, FileState.WRONG_SIZE, f"{size} bytes, expected {entry.size}")
    actual = sha256_file(path, before_chunk)
    if actual != entry.sha256:
        return FileCheck(entry.path, FileState.WRONG_HASH, f"sha256 {actual[:12]}…, expected {entry.sha256[:12]}…")
    return FileCheck(entry.path, FileState.OK)


@dataclass(frozen=True)
class HashProgress:
    """How far a verify is, just before it hashes the next chunk of `path`."""

    path: str
    file_index: int  # 1-based, in the manifest's order
    file_count: int
    done: int  # bytes hashed so far, over every file
    total: int  # bytes of the model's files present when the verify began


@dataclass
class _Tally:
    """The bytes a verify has hashed, reported before each chunk."""

    report: Callable[[HashProgress], None]
    file_count: int
    total: int
    done: int = 0

    def before_chunk(self, path: str, index: int) -> Callable[[int], None]:
        def before(n: int) -> None:
            self.report(HashProgress(path, index, self.file_count, min(self.done, self.total), self.total))
            self.done += n

        return before


def verify_folder(
    folder: Path, manifest: Manifest, on_progress: Callable[[HashProgress], None] | None = None
) -> VerifyReport:
    """`on_progress` gets a HashProgress before each chunk is hashed: a screen's progress, or raise to stop."""
    if on_progress is None:
        return VerifyReport(manifest.id, folder, tuple(check_file(folder, f) for f in manifest.files))
    tally = _Tally(on_progress, len(manifest.files), files_bytes(folder, (f.path for f in manifest.files)))
    checks = (check_file(folder, f, tally.before_chunk(f.path, i)) for i, f in enumerate(manifest.files, 1))
    return VerifyReport(manifest.id, folder, tuple(checks))
