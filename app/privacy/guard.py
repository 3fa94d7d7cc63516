"""Outbound-connection guard built on Python audit hooks.

Every `socket.connect`, `socket.sendto` and name lookup in this process passes
through the hook. Loopback is always allowed (the Flet UI talks to its own web
client on 127.0.0.1). Everything else is blocked and counted — unless the
calling thread is inside `allow_download(hosts)`, a user-started model
download, and only for those hosts. Audit hooks cannot be removed, so one hook
is installed per process and delegates to the current guard object.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass


class NetworkBlocked(PermissionError):
    pass


@dataclass(frozen=True)
class Attempt:
    when: float
    event: str
    target: str
    thread: str
    allowed: bool


def _is_loopback(host: object) -> bool:
    if not isinstance(host, str):
        return False
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


class NetworkGuard:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self._attempts: list[Attempt] = []
        self._blocked = 0
        self._listeners: list[Callable[[NetworkGuard], None]] = []

    def add_listener(self, listener: Callable[[NetworkGuard], None]) -> None:
        """Called after every non-loopback attempt (the privacy notice shows live counts)."""
        with self._lock:
            self._listeners.append(listener)

    @property
    def blocked_count(self) -> int:
        return self._blocked

    @property
    def outbound_count(self) -> int:
        """Non-loopback connections that were let through (downloads only)."""
        with self._lock:
            return sum(1 for a in self._attempts if a.allowed)

    def attempts(self) -> list[Attempt]:
        with self._lock:
            return list(self._attempts)

    @contextlib.contextmanager
    def allow_download(self, hosts: Iterable[str]) -> Iterator[None]:
        """Lets the current thread (only) reach these hosts while inside the block."""
        previous = getattr(self._local, "hosts", None)
        self._local.hosts = frozenset(h.lower() for h in hosts)
        try:
            yield
        finally:
            self._local.hosts = previous

    def remove_listener(self, listener: Callable[[NetworkGuard], None]) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def check(self, event: str, args: tuple) -> None:
        target = self._target(event, args)
        if target is None:
            return
        host, shown = target
        if _is_loopback(host):
            return
        allowed_hosts = getattr(self._local, "hosts", None)
        # Name lookups are checked by name; connects from a download thread carry
        # the resolved address, which that thread may only reach after its lookup passed.
        allowed = allowed_hosts is not None and (event != "socket.getaddrinfo" or str(host).lower() in allowed_hosts)
        with self._lock:
            self._attempts.append(Attempt(time.time(), event, shown, threading.current_thread().name, allowed))
            del self._attempts[:-1000]
            if not allowed:
                self._blocked += 1
            listeners = list(self._listeners)
        for listener in listeners:
            listener(self)
        if not allowed:
            raise NetworkBlocked(f"outbound connection blocked by Keyframe's privacy guard: {shown}")

    @staticmethod
    def _target(event: str, args: tuple) -> tuple[object, str] | None:
        if event == "socket.getaddrinfo":
            host, port = args[0], args[1]
            if host is None:
                return None
            host = host.decode() if isinstance(host, bytes) else host
            return host, f"{host}:{port}"
        if event in ("socket.connect", "socket.sendto"):
            sock, address = args[0], args[1]
            family = getattr(sock, "family", None)
            if family not in (socket.AF_INET, socket.AF_INET6) or not isinstance(address, tuple):
                return None  # unix sockets and the like never leave the machine
            return address[0], f"{address[0]}:{address[1]}"
        return None


class _Hook:
    """The single process-wide audit hook; forwards to whichever guard is active."""

    def __init__(self) -> None:
        self.guard: NetworkGuard | None = None

    def __call__(self, event: str, args: tuple) -> None:
        guard = self.guard
        if guard is not None and event.startswith("socket."):
            guard.check(event, args)


_HOOK = _Hook()
_INSTALLED = threading.Event()


def install(guard: NetworkGuard) -> NetworkGuard:
    """Makes `guard` the process's network policy (the hook itself is added once)."""
    if not _INSTALLED.is_set():
        sys.addaudithook(_HOOK)
        _INSTALLED.set()
    _HOOK.guard = guard
    return guard


def active_guard() -> NetworkGuard | None:
    return _HOOK.guard


def ensure_installed() -> NetworkGuard:
    """The active guard, installing a fresh one if this process has none yet."""
    return _HOOK.guard or install(NetworkGuard())
