"""Wheel file helpers shared by the build_configs scripts (standard library only).

Used by ``macos/repack_mnn_wheel.py``, ``common/rename_wheel.py`` and ``common/make_wheel.py``: the wheel file name
pattern, RECORD hashes, checking a wheel's RECORD against its files, and writing a wheel with a
fresh RECORD (binary distribution format, https://packaging.python.org/specifications/).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path

WHEEL_RE = re.compile(
    r"^(?P<name>[^-]+)-(?P<version>[^-]+)(?:-(?P<build>\d[^-]*))?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$"
)

# RECORD may use any hashlib algorithm except these (binary distribution format, "The .dist-info directory").
WEAK_HASHES = {"md5", "sha1"}


def escaped(name: str) -> str:
    """The name as a wheel file name and .dist-info folder spell it (``opencv-python`` -> ``opencv_python``)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def is_signature(name: str, dist_info: str) -> bool:
    """RECORD.jws / RECORD.p7s: not listed in RECORD, and void once RECORD changes."""
    return name.startswith(f"{dist_info}/RECORD.")


def record_problems(files: Mapping[str, bytes], dist_info: str) -> list[str]:
    """Where ``<dist_info>/RECORD`` disagrees with ``files`` (every other file listed with its hash and size)."""
    record_name = f"{dist_info}/RECORD"
    if record_name not in files:
        return [f"{record_name} is missing"]
    try:
        rows = list(csv.reader(io.StringIO(files[record_name].decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        return [f"{record_name} cannot be read ({exc})"]
    problems: list[str] = []
    listed: set[str] = set()
    for row in rows:
        if not row:
            continue
        if len(row) != 3:
            problems.append(f"RECORD row {row!r} does not have 3 fields")
            continue
        name, hash_, size = row
        listed.add(name)
        if name == record_name:
            continue
        if name not in files:
            problems.append(f"RECORD lists {name}, which is not in the wheel")
            continue
        algo, _, digest = hash_.partition("=")
        if algo not in hashlib.algorithms_guaranteed or algo in WEAK_HASHES or not digest:
            problems.append(f"RECORD has no usable hash for {name} ({hash_!r})")
            continue
        actual = base64.urlsafe_b64encode(hashlib.new(algo, files[name]).digest()).rstrip(b"=").decode("ascii")
        if actual != digest:
            problems.append(f"{name} does not match its RECORD hash")
        elif size != str(len(files[name])):
            problems.append(f"{name} is {len(files[name])} bytes, RECORD says {size!r}")
    for name in sorted(set(files) - listed):
        if name != record_name and not is_signature(name, dist_info):
            problems.append(f"{name} is not listed in RECORD")
    return problems


def write_wheel(path: Path, files: Mapping[str, bytes], modes: Mapping[str, int], dist_info: str) -> None:
    """Write ``files`` and a new ``<dist_info>/RECORD`` (sha256 and size of every file; itself last, unhashed).

    Files outside the .dist-info come first, so an installer reads the metadata last. ``modes`` holds
    each file's ``ZipInfo.external_attr`` (Unix mode in the high 16 bits); 0644 when absent.
    """
    record_name = f"{dist_info}/RECORD"
    inside = dist_info + "/"
    order = sorted(n for n in files if not n.startswith(inside))
    order += sorted(n for n in files if n.startswith(inside) and n != record_name)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for name in order:
        writer.writerow([name, record_hash(files[name]), str(len(files[name]))])
    writer.writerow([record_name, "", ""])
    data = {**files, record_name: buf.getvalue().encode("utf-8")}
    order.append(record_name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in order:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = modes.get(name) or (0o644 << 16)
            zf.writestr(info, data[name])
