"""Fetch one model file over HTTP: resumable, bounded, and installed only on a hash match.

The file grows in `<file>.part`. A resume asks for `Range: bytes=<have>-` and
keeps the prefix only when the answer is a 206 whose Content-Range starts
exactly there; a 200 means the server ignored the range, so the part restarts
from zero. The SHA-256 runs while streaming (the kept prefix is re-hashed
first, since bytes on disk from an earlier run are not trusted), nothing is
written past the expected size, and the part is fsynced and moved into place
with os.replace only when the digest matches the manifest.

How much a file may grow is bounded even when the manifest pins no size (the
real model's does not): by the server's Content-Length, by the manifest's
total size and by a fixed ceiling; a .part that outgrows its bound is
deleted. Every file the store writes is opened with O_NOFOLLOW, so a link
planted in the store cannot redirect a write to a file outside it.

Redirects are followed by hand, one hop at a time, and only to a host of the
mirror being tried (its own host or a `redirect_hosts` entry its manifest pins)
and never from https to http; a refused redirect fails that mirror, naming the
host. Each request runs inside `allow(frozenset({host}))`, so the privacy guard
lets that thread reach that one host for that request only.
"""

from __future__ import annotations

import contextlib
import email.utils
import errno
import hashlib
import os
import random
import re
import stat
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import httpx

from app.core.sizes import size_words
from app.models.disk_usage import free_bytes
from app.models.manifest import ManifestFile
from app.models.mirrors import Mirror
from app.models.request_watch import RequestWatch
from app.storage.durable_files import fsync_dir
from app.storage.safefs import open_no_follow

_HASH_CHUNK = 1 << 20
_MAX_REDIRECTS = 5
_CONTENT_RANGE = re.compile(r"^\s*bytes\s+(\d+)-(\d+)/(\d+|\*)\s*$", re.IGNORECASE)
_UNSATISFIED_RANGE = re.compile(r"^\s*bytes\s+\*/(\d+)\s*$", re.IGNORECASE)


class DownloadError(Exception):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class NotEnoughSpace(DownloadError):
    @classmethod
    def unless_room(cls, path: str, what: str, needed: int, reserve: int, free: int) -> None:
        """Raised unless `needed` bytes and the `reserve` fit in `free`: one sentence for a download,
        one of its files, and an import."""
        if needed + reserve > free:
            room = f"{size_words(needed)} plus {size_words(reserve)} spare, {size_words(free)} are free"
            raise cls(path, f"not enough free space: {what} needs {room}")


class DiskFull(DownloadError):
    """A write failed for lack of space; the .part is kept so a later run can resume."""


class HashMismatch(DownloadError):
    def __init__(self, path: str, reason: str, resumed: bool) -> None:
        super().__init__(path, reason)
        self.resumed = resumed


class Cancelled(Exception):
    pass


@dataclass(frozen=True)
class RetryPolicy:
    attempts_per_mirror: int = 5  # consecutive tries without progress before the next mirror
    backoff_s: float = 1.0
    max_backoff_s: float = 30.0
    max_retry_after_s: float = 120.0  # a server asking for longer is skipped, not waited for
    connect_timeout_s: float = 15.0
    read_timeout_s: float = 30.0  # a stalled connection is dropped and resumed after this
    space_reserve_bytes: int = 64 << 20  # left free so a phone is not filled to the last byte
    unknown_size_cap: int = 8 << 30  # a file with no size anywhere is cut off here

    def timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.read_timeout_s, connect=self.connect_timeout_s)

    def answer_within_s(self) -> float:
        """How long after connecting a request may wait for its answer (app.models.request_watch): a bit
        longer than one read, so a silent server still meets the read timeout first and is retried, and
        one that keeps sending interim answers (100 Continue) is dropped soon after."""
        return self.read_timeout_s + min(5.0, 1.0 + self.read_timeout_s / 10)


DEFAULT_POLICY = RetryPolicy()


class Disk:
    """The two file-system facts the downloader depends on; tests substitute failures here."""

    def free_bytes(self, path: Path) -> int:
        return free_bytes(path)

    def write(self, fd: int, data: memoryview) -> int:
        return os.write(fd, data)


@dataclass(frozen=True)
class ContentRange:
    start: int
    end: int
    total: int | None


def parse_content_range(value: str | None) -> ContentRange | None:
    match = _CONTENT_RANGE.match(value or "")
    if not match:
        return None
    start, end = int(match.group(1)), int(match.group(2))
    total = None if match.group(3) == "*" else int(match.group(3))
    if end < start or (total is not None and end >= total):
        return None
    return ContentRange(start, end, total)


def parse_unsatisfied_range(value: str | None) -> int | None:
    match = _UNSATISFIED_RANGE.match(value or "")
    return int(match.group(1)) if match else None


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def part_path(dest: Path) -> Path:
    return dest.with_name(dest.name + ".part")


class _Retry(Exception):
    """Worth another try on the same mirror (network trouble, 5xx, a cut)."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


class _RangeBroken(_Retry):
    """The mirror answered a range request wrongly: later tries on it start from zero."""


class _NextMirror(Exception):
    """This mirror cannot supply the file (404, wrong size, refused redirect...)."""


class _TooBig(_NextMirror):
    """The mirror offers or sends more bytes than the file can have: its .part is dropped."""


def _blocked_by_guard(exc: BaseException) -> bool:
    from app.privacy.guard import NetworkBlocked

    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, NetworkBlocked):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _size_of(path: Path) -> int:
    """Size of a regular file at `path`; a link or anything else counts as nothing to resume."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


class FileFetcher:
    """Downloads manifest files one at a time, trying mirrors in order."""

    def __init__(
        self,
        client: httpx.Client,
        *,
        cancel: threading.Event,
        policy: RetryPolicy = DEFAULT_POLICY,
        disk: Disk | None = None,
        allow: Callable[[frozenset[str]], AbstractContextManager[None]] | None = None,
        wait: Callable[[float], None] | None = None,
        on_bytes: Callable[[int, int | None, int], None] | None = None,
        on_wait: Callable[[str], None] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self._client = client
        self._cancel = cancel
        self._policy = policy
        self._disk = disk or Disk()
        # Lets the privacy guard admit this request's host (a mirror or its CDN) for that request only.
        self._allow = allow or (lambda hosts: contextlib.nullcontext())
        self._wait = wait or (lambda seconds: self._cancel.wait(seconds))
        self._on_bytes = on_bytes or (lambda have, total, received: None)
        self._on_wait = on_wait or (lambda message: None)
        self._rng = rng or random.Random()
        self._cap = policy.unknown_size_cap

    def fetch(self, mirrors: Sequence[Mirror], entry: ManifestFile, dest: Path, size_cap: int | None = None) -> None:
        """Puts the verified file at `dest` or raises; never leaves a wrong file at `dest`.

        `size_cap` bounds a file whose manifest pins no size (the store passes the
        manifest's total); the policy's ceiling applies on top.
        """
        dest.parent.mkdir(parents=True, exist_ok=True)
        part = part_path(dest)
        self._cap = min(self._policy.unknown_size_cap, size_cap if size_cap is not None else 1 << 62)
        problems: list[str] = []
        for number, mirror in enumerate(mirrors, start=1):
            url = mirror.url_for(entry.path)
            use_range = True
            retried_from_zero = False
            failures = 0
            while True:
                self._check_cancel()
                before = _size_of(part)
                try:
                    self._attempt(mirror, url, entry, dest, part, use_range)
                    return
                except _TooBig as exc:
                    part.unlink(missing_ok=True)  # a part past the bound is no prefix of the file
                    problems.append(f"{mirror.name}: {exc}")
                    break
                except _NextMirror as exc:
                    problems.append(f"{mirror.name}: {exc}")
                    break
                except HashMismatch as exc:
                    # Once more from byte 0: the kept prefix may be what was wrong, or the response was
                    # damaged once on its way; with no other mirror left, that try is this mirror's.
                    if not retried_from_zero and (exc.resumed or number == len(mirrors)):
                        retried_from_zero = True
                        continue
                    problems.append(f"{mirror.name}: {exc.reason}")
                    break
                except _Retry as exc:
                    if isinstance(exc, _RangeBroken):
                        use_range = False
                    # A try that moved the file forward proves the mirror works: don't count it.
                    failures = 0 if _size_of(part) > before else failures + 1
                    if failures >= self._policy.attempts_per_mirror:
                        problems.append(f"{mirror.name}: {exc} (gave up after {failures} tries)")
                        break
                    if exc.retry_after is not None and exc.retry_after > self._policy.max_retry_after_s:
                        problems.append(f"{mirror.name}: {exc} and asks to wait {exc.retry_after:.0f} s")
                        break
                    delay = exc.retry_after if exc.retry_after is not None else self._backoff(failures)
                    self._on_wait(f"{mirror.name}: {exc}; retrying in {delay:.0f} s")
                    self._wait(delay)
        self._check_cancel()
        if _size_of(part) == 0:
            part.unlink(missing_ok=True)  # nothing worth resuming; don't leave litter
        detail = "; ".join(problems) if problems else "no mirror to download from"
        raise DownloadError(entry.path, f"could not be downloaded ({detail})")

    def _backoff(self, failures: int) -> float:
        base = min(self._policy.max_backoff_s, self._policy.backoff_s * 2 ** max(0, failures - 1))
        return float(base * (0.5 + self._rng.random() / 2))  # jitter: clients cut together don't retry together

    def _check_cancel(self) -> None:
        if self._cancel.is_set():
            raise Cancelled()

    def _attempt(self, mirror: Mirror, url: str, entry: ManifestFile, dest: Path, part: Path, use_range: bool) -> None:
        expected = entry.size
        cap = expected if expected is not None else self._cap
        try:
            fd = open_no_follow(part, os.O_RDWR | os.O_CREAT)
        except IsADirectoryError as exc:  # not ours to remove: it may hold someone's files
            raise DownloadError(entry.path, f"{part} is a folder where the partial download goes; move it") from exc
        try:
            have = os.fstat(fd).st_size if use_range else 0
            if have > cap:
                have = 0  # longer than the file can be: not a prefix of it
            os.ftruncate(fd, have)
            hasher = self._hash_prefix(fd, have)
            if expected is not None and have == expected and have > 0:
                # A complete part from an earlier run (killed before the rename): no request needed.
                os.close(fd)
                fd = -1
                self._install(part, dest, entry, hasher, resumed=True)
                return
            os.lseek(fd, have, os.SEEK_SET)
            resumed = have > 0
            headers = {"Accept-Encoding": "identity"}
            if have:
                headers["Range"] = f"bytes={have}-"
            with (
                RequestWatch(self._cancel, self._policy.answer_within_s()) as watch,
                contextlib.closing(self._open(mirror, url, headers, watch)) as response,
            ):
                status = response.status_code
                if status == 416:
                    total = parse_unsatisfied_range(response.headers.get("content-range"))
                    if have > 0 and total == have and expected in (None, have):
                        os.fsync(fd)
                        os.close(fd)
                        fd = -1
                        self._install(part, dest, entry, hasher, resumed=True)
                        return
                    os.ftruncate(fd, 0)  # our part does not fit the server's file
                    raise _Retry(f"HTTP 416 for bytes from {have} (server size {total})")
                if status in (408, 425, 429) or status >= 500:
                    raise _Retry(f"HTTP {status}", parse_retry_after(response.headers.get("retry-after")))
                if status == 206:
                    header = response.headers.get("content-range")
                    answer = parse_content_range(header)
                    if answer is None or answer.start != have:
                        raise _RangeBroken(f"asked for bytes from {have}, got Content-Range {header!r}")
                    total = answer.total
                elif status == 200:
                    length = response.headers.get("content-length")
                    total = int(length) if length and length.isdigit() else None
                else:
                    raise _NextMirror(f"HTTP {status}")
                encoding = response.headers.get("content-encoding", "identity").strip().lower()
                if encoding not in ("", "identity"):
                    raise _NextMirror(f"sent {encoding}-encoded bytes despite Accept-Encoding: identity")
                if expected is not None and total is not None and total != expected:
                    raise _NextMirror(f"serves {total} bytes, the manifest says {expected}")
                if total is not None and total > cap:
                    raise _TooBig(f"serves {total} bytes, more than the {cap} this file can have")
                if status == 200 and have:
                    # The server ignored Range: its body starts at byte 0, so the part does too.
                    os.ftruncate(fd, 0)
                    os.lseek(fd, 0, os.SEEK_SET)
                    hasher, have, resumed = hashlib.sha256(), 0, False
                    self._on_bytes(0, expected, 0)
                # Without a manifest size the server's total is trusted for the limit; the hash still decides.
                limit = expected if expected is not None else total
                if limit is not None:
                    self._check_space(entry.path, part, limit - have)
                have = self._stream(response, fd, hasher, have, limit, entry.path, cap)
            os.fsync(fd)
        finally:
            if fd >= 0:
                os.close(fd)
        self._install(part, dest, entry, hasher, resumed)

    def _stream(
        self,
        response: httpx.Response,
        fd: int,
        hasher: hashlib._Hash,
        have: int,
        limit: int | None,
        path: str,
        cap: int,
    ) -> int:
        cap = limit if limit is not None else cap
        try:
            for piece in response.iter_raw():
                self._check_cancel()
                room = cap - have
                overflow = len(piece) > room
                view = memoryview(piece)[:room]
                self._write_all(fd, view, path)
                hasher.update(view)
                have += len(view)
                self._on_bytes(have, limit, len(view))
                if overflow:
                    if limit is None:
                        raise _TooBig(f"sent more than the {cap} bytes this file can have")
                    break  # never write past the expected size; the hash judges what we kept
        except httpx.TransportError as exc:
            self._check_cancel()  # the watcher ended the read: a cancel, not a lost connection
            raise _Retry(f"the connection was lost after {have} bytes") from exc
        if limit is not None and have < limit:
            raise _Retry(f"connection closed after {have} of {limit} bytes")
        return have

    def _write_all(self, fd: int, data: memoryview, path: str) -> None:
        while data:
            try:
                written = self._disk.write(fd, data)
            except OSError as exc:
                if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
                    raise DiskFull(
                        path,
                        "the disk is full; free some space and start the download again (it resumes where it stopped)",
                    ) from exc
                raise DownloadError(path, f"cannot write the download ({exc.strerror or exc})") from exc
            data = data[written:]

    def _check_space(self, path: str, part: Path, needed: int) -> None:
        free = self._disk.free_bytes(part.parent)
        NotEnoughSpace.unless_room(path, "the rest of this file", needed, self._policy.space_reserve_bytes, free)

    def _hash_prefix(self, fd: int, length: int) -> hashlib._Hash:
        """Hashes the part's first `length` bytes through its open descriptor (never by path)."""
        hasher = hashlib.sha256()
        offset = 0
        while offset < length:
            self._check_cancel()
            chunk = os.pread(fd, min(_HASH_CHUNK, length - offset), offset)
            if not chunk:
                break
            hasher.update(chunk)
            offset += len(chunk)
        return hasher

    def _install(self, part: Path, dest: Path, entry: ManifestFile, hasher: hashlib._Hash, resumed: bool) -> None:
        digest = hasher.hexdigest()
        if digest != entry.sha256:
            part.unlink(missing_ok=True)  # which byte is wrong is unknowable: none of it is kept
            raise HashMismatch(
                entry.path,
                f"SHA-256 {digest[:12]}… does not match the manifest's {entry.sha256[:12]}…; nothing was installed",
                resumed,
            )
        os.replace(part, dest)
        fsync_dir(dest.parent)

    def _open(self, mirror: Mirror, url: str, headers: dict[str, str], watch: RequestWatch) -> httpx.Response:
        """GET with redirects followed by hand: each hop must stay on the mirror's hosts and
        on https, and passes the guard on its own."""
        hosts = mirror.hosts
        for _ in range(_MAX_REDIRECTS + 1):
            request = self._client.build_request("GET", url, headers=headers, extensions=watch.extensions)
            host = request.url.host.lower()  # the host httpx will connect to, parsed as httpx parses it
            if host not in hosts:
                raise _NextMirror(
                    f"refused a redirect to {host or url}, which is not one of this mirror's hosts "
                    f"({', '.join(sorted(hosts))})"
                )
            try:
                with self._allow(frozenset({host})):
                    response = self._client.send(request, stream=True)
            except httpx.TransportError as exc:
                self._check_cancel()
                if watch.expired:  # bytes kept coming (a silent server meets the read timeout first)
                    waited = f"{watch.limit_s:.0f} s"
                    raise _NextMirror(f"{host} kept the request waiting {waited} without an answer") from exc
                if _blocked_by_guard(exc):
                    raise _NextMirror(f"{host} is blocked by Keyframe's privacy guard") from exc
                raise _Retry(_transport_words(exc, host)) from exc
            watch.answered()
            if not response.is_redirect:
                return response
            response.close()
            location = response.headers.get("location")
            if not location:
                raise _NextMirror(f"HTTP {response.status_code} without a Location to redirect to")
            target = urljoin(url, location)
            scheme = urlsplit(target).scheme
            if scheme not in ("http", "https") or (urlsplit(url).scheme == "https" and scheme != "https"):
                raise _NextMirror(f"refused a redirect from {url} to {target}")
            url = target
        raise _NextMirror("too many redirects")


def _transport_words(exc: httpx.TransportError, host: str) -> str:
    """A failed connection in words (the exception's class goes to the log with its traceback)."""
    if isinstance(exc, httpx.ConnectError):
        return f"could not connect to {host} (no network, or it is blocked)"
    if isinstance(exc, httpx.TimeoutException):
        return f"{host} did not answer in time"
    return f"the connection to {host} failed"
