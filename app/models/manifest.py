"""Model manifests: what a model consists of, pinned by SHA-256. Pure logic.

A manifest whose file paths could escape the model folder is rejected: the
paths come from a file that may have been edited or downloaded.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from app.storage.small_file import BadJSON, read_small_json

MANIFEST_SCHEMA = 1
MAX_MANIFEST_BYTES = 1024 * 1024  # a manifest lists a model's files and hashes: a few KB
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,99}$")
# One DNS name (or IPv4 address) in lower case: no scheme, port, path, wildcard or trailing dot.
_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST = re.compile(rf"(?=.{{1,253}}\Z){_LABEL}(?:\.{_LABEL})*\Z")


class ManifestError(ValueError):
    pass


@dataclass(frozen=True)
class ManifestFile:
    path: str
    sha256: str
    size: int | None = None


def words_in(words: tuple[tuple[str, str], ...], language: str) -> str:
    """A manifest's words in `language` when it gives them there, else in English ("" when not given)."""
    said = dict(words)
    return said.get(language) or said.get("en", "")


@dataclass(frozen=True)
class Reference:
    """A model's cost as measured, with what measured it: the Models screen shows it as a figure for that
    class of machine, never as this device's."""

    devices: tuple[tuple[str, str], ...]  # the machine class it was measured on, per UI language
    keyframe_s: float  # one keyframe, one question, after the model is loaded
    peak_memory_bytes: int  # the model's process at its largest
    command: str  # what measured it (a bench command and its receipt)

    def device_in(self, language: str) -> str:
        return words_in(self.devices, language)


@dataclass(frozen=True)
class Manifest:
    id: str
    display_name: str
    licence: str
    architecture: str
    revision: str
    min_mnn_version: str
    profiles: tuple[str, ...]
    files: tuple[ManifestFile, ...]
    mirrors: tuple[dict[str, Any], ...] = ()
    bundled: str | None = None  # folder name under model_store/ for a model shipped with the app
    repo: str | None = None
    # Sizes are not always pinned; this estimate lets the free-space check run anyway.
    approx_total_size: int | None = None
    display_names: tuple[tuple[str, str], ...] = ()  # (UI language code, the name in it)
    purposes: tuple[tuple[str, str], ...] = ()  # (UI language code, what the model is for, in one sentence)
    reference: Reference | None = None  # its speed and memory as measured on one named machine

    def purpose_in(self, language: str) -> str:
        """What it is for, in `language` when the manifest says it there, else in English ("" if not said)."""
        return words_in(self.purposes, language)

    @property
    def total_size(self) -> int | None:
        sizes = [f.size for f in self.files]
        return None if any(s is None for s in sizes) else sum(s for s in sizes if s is not None)


def check_relative_path(path: Any) -> str:
    """Returns the path if it is a plain relative path inside the model folder."""
    if not isinstance(path, str) or not path or "\\" in path or "\x00" in path:
        raise ManifestError(f"unsafe file path {path!r}")
    pure = PurePosixPath(path)
    if pure.is_absolute() or path.startswith("~") or re.match(r"^[A-Za-z]:", path):
        raise ManifestError(f"absolute file path {path!r}")
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise ManifestError(f"file path {path!r} has empty, '.' or '..' parts")
    return path


def check_redirect_hosts(entry: dict[str, Any]) -> tuple[str, ...]:
    """The hosts a mirror entry lets its downloads be redirected to (`redirect_hosts`).

    A download follows a redirect only to its mirror's own host or one of these, so
    each must be exactly one host name: a list of them, never a pattern."""
    hosts = entry.get("redirect_hosts", [])
    if not isinstance(hosts, list):
        raise ManifestError("a mirror's 'redirect_hosts' must be a list of host names")
    for host in hosts:
        if not isinstance(host, str) or not _HOST.match(host):
            raise ManifestError(
                f"redirect host {host!r} must be one lower-case host name (no scheme, port, path or wildcard)"
            )
    return tuple(hosts)


def _text(data: dict[str, Any], key: str, default: str | None = None) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or not value:
        raise ManifestError(f"'{key}' must be a non-empty string")
    return value


def _display_names(data: Any) -> tuple[tuple[str, str], ...]:
    """The model's name in other UI languages: {"zh": "…"}."""
    if not isinstance(data, dict) or not all(
        isinstance(code, str) and code.isalpha() and isinstance(name, str) and name.strip()
        for code, name in data.items()
    ):
        raise ManifestError("'display_names' must map language codes to non-empty names")
    return tuple(sorted(data.items()))


def _per_language(data: Any, what: str) -> tuple[tuple[str, str], ...]:
    """Words per UI language: {"en": "…", "zh": "…"}."""
    if not isinstance(data, dict) or not all(
        isinstance(code, str) and code.isalpha() and isinstance(words, str) and words.strip()
        for code, words in data.items()
    ):
        raise ManifestError(f"'{what}' must map language codes to non-empty words")
    return tuple(sorted((code, words.strip()) for code, words in data.items()))


def _reference(data: Any) -> Reference | None:
    if data is None:
        return None
    fields = ("device", "keyframe_s", "peak_memory_mib", "command")
    if not isinstance(data, dict) or set(data) != set(fields):
        raise ManifestError(f"'reference' must be an object of exactly {', '.join(fields)}")
    devices, command = _per_language(data["device"], "reference.device"), data["command"]
    if not devices or not isinstance(command, str) or not command.strip():
        raise ManifestError("'reference': 'device' (per language) and 'command' must be given")
    seconds, mib = data["keyframe_s"], data["peak_memory_mib"]
    for name, value in (("keyframe_s", seconds), ("peak_memory_mib", mib)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
            raise ManifestError(f"'reference': '{name}' must be a positive number")
    return Reference(devices, float(seconds), round(mib * 1024 * 1024), command.strip())


def manifest_from_dict(data: Any) -> Manifest:
    if not isinstance(data, dict):
        raise ManifestError("a manifest must be a JSON object")
    if data.get("schema") != MANIFEST_SCHEMA:
        raise ManifestError(f"unsupported manifest schema {data.get('schema')!r} (expected {MANIFEST_SCHEMA})")
    model_id = _text(data, "id")
    if not _ID.match(model_id):
        raise ManifestError(f"invalid model id {model_id!r}")
    raw_files = data.get("files")
    if not isinstance(raw_files, list) or not raw_files:
        raise ManifestError("'files' must be a non-empty list")
    files: list[ManifestFile] = []
    for entry in raw_files:
        if not isinstance(entry, dict):
            raise ManifestError("each file entry must be an object")
        path = check_relative_path(entry.get("path"))
        sha = entry.get("sha256")
        if not isinstance(sha, str) or not _SHA256.match(sha):
            raise ManifestError(f"{path}: 'sha256' must be 64 lowercase hex digits")
        size = entry.get("size")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
            raise ManifestError(f"{path}: 'size' must be a non-negative integer")
        files.append(ManifestFile(path=path, sha256=sha, size=size))
    paths = [f.path for f in files]
    if len(set(p.lower() for p in paths)) != len(paths):
        raise ManifestError("duplicate file paths (case-insensitive file systems would merge them)")
    profiles = data.get("profiles", [])
    if not isinstance(profiles, list) or not all(isinstance(p, str) for p in profiles):
        raise ManifestError("'profiles' must be a list of profile ids")
    mirrors = data.get("mirrors", [])
    if not isinstance(mirrors, list) or not all(isinstance(m, dict) for m in mirrors):
        raise ManifestError("'mirrors' must be a list of objects")
    for mirror in mirrors:
        check_redirect_hosts(mirror)
    bundled = data.get("bundled")
    if bundled is not None:
        bundled = check_relative_path(bundled)
    return Manifest(
        id=model_id,
        display_name=_text(data, "display_name", model_id),
        display_names=_display_names(data.get("display_names", {})),
        licence=_text(data, "licence", "unknown"),
        architecture=_text(data, "architecture", "unknown"),
        revision=_text(data, "revision"),
        min_mnn_version=_text(data, "min_mnn_version", "0"),
        profiles=tuple(profiles),
        files=tuple(files),
        mirrors=tuple(mirrors),
        bundled=bundled,
        repo=data.get("repo") if isinstance(data.get("repo"), str) else None,
        approx_total_size=_approx_total_size(data),
        purposes=_per_language(data.get("purpose", {}), "purpose"),
        reference=_reference(data.get("reference")),
    )


def _approx_total_size(data: dict[str, Any]) -> int | None:
    value = data.get("approx_total_size")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ManifestError("'approx_total_size' must be a non-negative integer")
    return value


def load_manifest(path: Path) -> Manifest:
    try:
        data = read_small_json(path, MAX_MANIFEST_BYTES)
    except OSError as exc:
        raise ManifestError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    except BadJSON as exc:
        raise ManifestError(f"{path}: {exc}") from exc
    try:
        return manifest_from_dict(data)
    except ManifestError as exc:
        raise ManifestError(f"{path}: {exc}") from exc


def model_folder(manifest: Manifest, downloaded_root: Path, bundled_root: Path) -> Path:
    """Where a model's files are: a bundled model in its folder under `bundled_root`
    (model_store/), any other under `downloaded_root` by its id. The one statement of it."""
    if manifest.bundled:
        return bundled_root / manifest.bundled
    return downloaded_root / manifest.id
