"""Importing a local copy of a known model: the checks and the verified copy.

`ModelStore.import_folder` runs these under the model's lock, into a staging
folder that it then swaps into place.
"""

from __future__ import annotations

import os
from pathlib import Path

from app.models.errors import StoreError
from app.models.manifest import Manifest
from app.models.marker import VerifiedFile, record_for, write_marker
from app.models.verify import sha256_stream
from app.storage.safefs import open_no_follow
from app.storage.small_file import open_regular


class ImportRejected(StoreError):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path


def import_size(manifest: Manifest, source: Path) -> int:
    """Bytes the import will copy; ImportRejected for a file missing or of the wrong size."""
    needed = 0
    for entry in manifest.files:
        src = source / entry.path
        if not src.is_file():
            raise ImportRejected(entry.path, f"missing from {source}")
        size = src.stat().st_size
        if entry.size is not None and size != entry.size:
            raise ImportRejected(entry.path, f"is {size} bytes, the manifest says {entry.size}")
        needed += size
    return needed


def copy_verified(manifest: Manifest, source: Path, staging: Path) -> None:
    """Copy every file of `manifest` from `source` into `staging`, hashed in the same pass,
    and write the verified marker; ImportRejected at the first file whose hash is wrong."""
    records: dict[str, VerifiedFile] = {}
    for entry in manifest.files:
        dest = staging / entry.path
        digest = _copy_hashing(source / entry.path, dest)
        if digest != entry.sha256:
            raise ImportRejected(
                entry.path,
                f"SHA-256 {digest[:12]}… does not match the manifest's {entry.sha256[:12]}…; nothing was imported",
            )
        records[entry.path] = record_for(dest, entry.sha256)
    write_marker(staging, manifest.id, records)


def _copy_hashing(src: Path, dest: Path) -> str:
    """Copies and hashes in one pass: the hash is of exactly the bytes written."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd = open_no_follow(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with open_regular(src) as fin, open(fd, "wb") as fout:  # a FIFO among the files: refused, not waited on
        digest = sha256_stream(fin, fout.write)
        fout.flush()
        os.fsync(fout.fileno())
    return digest
