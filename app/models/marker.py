"""The record of verified files kept in a model folder: the cheap start-up check.

Re-hashing 1.5 GB at every start is not an option on a phone. After a file is
verified its hash, size and mtime are recorded; at start-up a file counts as
verified while its size and mtime are unchanged. A full re-hash stays available.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from app.models.manifest import Manifest, ManifestFile
from app.storage.safefs import write_json_atomic
from app.storage.small_file import read_small_json

MARKER_NAME = ".keyframe-verified.json"
MARKER_SCHEMA = 1
MAX_MARKER_BYTES = 1024 * 1024  # about 200 bytes per file of the model


@dataclass(frozen=True)
class VerifiedFile:
    sha256: str
    size: int
    mtime_ns: int


def read_marker(folder: Path) -> dict[str, VerifiedFile]:
    """Verified-file records; a missing or damaged marker means nothing is known to be verified."""
    try:
        data = read_small_json(folder / MARKER_NAME, MAX_MARKER_BYTES)
        files = data["files"] if data.get("schema") == MARKER_SCHEMA else {}
        return {path: VerifiedFile(str(r["sha256"]), int(r["size"]), int(r["mtime_ns"])) for path, r in files.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def write_marker(folder: Path, model_id: str, records: Mapping[str, VerifiedFile]) -> None:
    data = {
        "schema": MARKER_SCHEMA,
        "model_id": model_id,
        "files": {p: {"sha256": r.sha256, "size": r.size, "mtime_ns": r.mtime_ns} for p, r in sorted(records.items())},
    }
    write_json_atomic(folder / MARKER_NAME, data, indent=1)


def record_for(path: Path, sha256: str) -> VerifiedFile:
    st = path.stat()
    return VerifiedFile(sha256, st.st_size, st.st_mtime_ns)


def quick_ok(folder: Path, entry: ManifestFile, record: VerifiedFile | None) -> bool:
    """The cheap start-up check: verified against this hash, and unchanged in size and mtime since."""
    if record is None or record.sha256 != entry.sha256:
        return False
    path = folder / entry.path
    try:
        st = path.lstat()
    except OSError:
        return False
    if not path.is_file() or path.is_symlink():
        return False
    if entry.size is not None and st.st_size != entry.size:
        return False
    return st.st_size == record.size and st.st_mtime_ns == record.mtime_ns


def all_quick_ok(folder: Path, manifest: Manifest) -> bool:
    records = read_marker(folder)
    return all(quick_ok(folder, f, records.get(f.path)) for f in manifest.files)
