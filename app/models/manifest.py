"""Model manifests: what a model consists of, pinned by SHA-256. Pure logic.

A manifest whose file paths could escape the model folder is rejected: the
paths come from a file that may have been edited or downloaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from app.core.record import (
    NONEMPTY,
    OBJECT,
    TEXT,
    Refuse,
    Rule,
    is_number,
    list_of,
    matching,
    optional,
    read_field,
    whole,
)
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


def _refuse(key: str, rule: Rule, value: object) -> ManifestError:
    return ManifestError(f"'{key}' must be {rule.words}")  # load_manifest names the file


def _refuse_in(path: str) -> Refuse:
    """Refuses a field of one file entry, naming the file."""
    return lambda key, rule, value: ManifestError(f"{path}: '{key}' must be {rule.words}")


_FILES = Rule("a non-empty list", lambda v: isinstance(v, list) and bool(v))
_SHA = matching(_SHA256, "64 lowercase hex digits")
_SIZE = optional(whole(0), said=False)
_PROFILES = list_of(TEXT, "a list of profile ids")
_MIRRORS = list_of(OBJECT, "a list of objects")
_POSITIVE = Rule("a positive number", lambda v: is_number(v) and v > 0)


def _words_by_language(words: str) -> Rule:
    """{"en": "…", "zh": "…"}: a language code to non-empty words."""
    return Rule(
        f"map language codes to non-empty {words}",
        lambda v: (
            isinstance(v, dict)
            and all(isinstance(c, str) and c.isalpha() and isinstance(w, str) and w.strip() for c, w in v.items())
        ),
    )


def _text(data: dict[str, Any], key: str, default: str | None = None) -> str:
    """`data[key]`, or `default` when it is left out (None: it may not be)."""
    value: str = read_field({key: data.get(key, default)}, key, NONEMPTY, _refuse)
    return value


def _refuse_words(key: str, rule: Rule, value: object) -> ManifestError:
    return ManifestError(f"'{key}' must {rule.words}")


def _display_names(data: Any) -> tuple[tuple[str, str], ...]:
    """The model's name in other UI languages: {"zh": "…"}."""
    names = read_field({"display_names": data}, "display_names", _words_by_language("names"), _refuse_words)
    return tuple(sorted(names.items()))


def _per_language(data: Any, what: str) -> tuple[tuple[str, str], ...]:
    """Words per UI language: {"en": "…", "zh": "…"}."""
    by_code = read_field({what: data}, what, _words_by_language("words"), _refuse_words)
    return tuple(sorted((code, words.strip()) for code, words in by_code.items()))


def _reference(data: Any) -> Reference | None:
    if data is None:
        return None
    fields = ("device", "keyframe_s", "peak_memory_mib", "command")
    if not isinstance(data, dict) or set(data) != set(fields):
        raise ManifestError(f"'reference' must be an object of exactly {', '.join(fields)}")
    devices, command = _per_language(data["device"], "reference.device"), data["command"]
    if not devices or not isinstance(command, str) or not command.strip():
        raise ManifestError("'reference': 'device' (per language) and 'command' must be given")
    refuse = _refuse_in("'reference'")
    seconds, mib = (
        read_field(data, "keyframe_s", _POSITIVE, refuse),
        read_field(data, "peak_memory_mib", _POSITIVE, refuse),
    )
    return Reference(devices, float(seconds), round(mib * 1024 * 1024), command.strip())


def manifest_from_dict(data: Any) -> Manifest:
    if not isinstance(data, dict):
        raise ManifestError("a manifest must be a JSON object")
    if data.get("schema") != MANIFEST_SCHEMA:
        raise ManifestError(f"unsupported manifest schema {data.get('schema')!r} (expected {MANIFEST_SCHEMA})")
    model_id = _text(data, "id")
    if not _ID.match(model_id):
        raise ManifestError(f"invalid model id {model_id!r}")
    raw_files = read_field(data, "files", _FILES, _refuse)
    files: list[ManifestFile] = []
    for entry in raw_files:
        if not isinstance(entry, dict):
            raise ManifestError("each file entry must be an object")
        path = check_relative_path(entry.get("path"))
        sha = read_field(entry, "sha256", _SHA, _refuse_in(path))
        size = read_field(entry, "size", _SIZE, _refuse_in(path), None)
        files.append(ManifestFile(path=path, sha256=sha, size=size))
    paths = [f.path for f in files]
    if len(set(p.lower() for p in paths)) != len(paths):
        raise ManifestError("duplicate file paths (case-insensitive file systems would merge them)")
    profiles = read_field(data, "profiles", _PROFILES, _refuse, [])
    mirrors = read_field(data, "mirrors", _MIRRORS, _refuse, [])
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
    value: int | None = read_field(data, "approx_total_size", _SIZE, _refuse, None)
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
