"""Outbound-connection guard built on Python audit hooks.

Every socket audit event that can resolve a name or send to an address passes
through the hook: `socket.getaddrinfo`, `socket.gethostbyname` (also raised by
`gethostbyname_ex`), `socket.gethostbyaddr`, `socket.getnameinfo`,
`socket.connect` (also raised by `connect_ex`), `socket.sendto` and
`socket.sendmsg` (Python 3.11's full list of socket events; the others —
`__new__`, `bind`, `gethostname`, `sethostname`, `getservbyname`,
`getservbyport` — name no remote host). Loopback is always allowed (the Flet UI
talks to its own web client on 127.0.0.1), and so are Unix and netlink sockets
and socketpairs, which never leave the machine. Everything else is blocked
before its syscall and counted — unless the calling thread is inside
`allow_download(hosts)`, a user-started model download: that thread may look up
those names (`getaddrinfo` only), and connect or send only to the addresses
those lookups returned.

The hook sees a lookup's arguments, not its answer, so on an allowed lookup the
guard resolves the name itself first (its own lookup's audit event passes
through a per-thread flag) and remembers the addresses for that thread's
allowance. Should the caller's lookup get a different answer (round-robin DNS),
a connect to an address the guard has not seen makes it resolve the names that
allowance looked up once more; an address none of them resolves to stays blocked.

The hook only records. Counts change under the guard's lock and a condition is
signalled; a `GuardWatcher` thread delivers them to whoever shows them, so no
listener code ever runs inside the hook or on the thread that opened a socket.

What a hook cannot see: `sock.connect(("name", port))` (and `sendto`, `sendmsg`,
`bind` with a host name) resolves the name in C before the audit event, so that
DNS query leaves even though the connect is then blocked; native code (MNN,
FFmpeg) never raises audit events at all. Those need the OS below Python.

Audit hooks cannot be removed, so one hook is installed per process and
delegates to the current guard object.
"""

from __future__ import annotations

import contextlib
import functools
import ipaddress
import logging
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("keyframe.privacy")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# host, address family (0: any) -> the addresses it resolves to. Tests substitute a fake.
Resolver = Callable[[str, int], Iterable[str]]

_LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback"})
# Sockets that cannot leave the machine: Unix domain (also socketpair) and netlink (the kernel).
_LOCAL_FAMILIES = frozenset(
    f for f in (getattr(socket, "AF_UNIX", None), getattr(socket, "AF_NETLINK", None)) if f is not None
)
_IP_FAMILIES = frozenset({socket.AF_INET, socket.AF_INET6})
_LOOKUPS = frozenset({"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyaddr", "socket.getnameinfo"})
_SENDS = frozenset({"socket.connect", "socket.sendto", "socket.sendmsg"})


class NetworkBlocked(PermissionError):
    pass


@dataclass(frozen=True)
class Attempt:
    when: float
    event: str
    target: str
    thread: str
    allowed: bool


@dataclass(frozen=True)
class GuardCounts:
    blocked: int  # non-loopback attempts stopped
    outbound: int  # non-loopback attempts let through (downloads only)


def _text(host: object) -> str | None:
    if isinstance(host, bytes):
        try:
            return host.decode("ascii")
        except UnicodeDecodeError:
            return None
    return host if isinstance(host, str) else None


def _address(host: object) -> IPAddress | None:
    """The IP a host string names, normalised: no IPv6 scope id, v4-mapped IPv6 as IPv4."""
    text = _text(host)
    if text is None:
        return None
    text = text.strip("[]").split("%", 1)[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def _name(host: object) -> str | None:
    """A host name as allowances hold it: lower case, no trailing dot, IDNA (punycode) form."""
    text = _text(host)
    if text is None:
        return None
    text = text.strip().lower().rstrip(".")
    with contextlib.suppress(UnicodeError):
        text = text.encode("idna").decode("ascii")
    return text


def _is_loopback(host: object) -> bool:
    text = _text(host)
    if text is None:
        return False
    if text.lower() in _LOOPBACK_NAMES:
        return True
    ip = _address(text)
    return ip is not None and ip.is_loopback


def _system_resolve(host: str, family: int) -> list[str]:
    return [str(info[4][0]) for info in socket.getaddrinfo(host, None, family)]


class _Allowance:
    """One `allow_download` block on one thread: its names, and what looking them up returned."""

    def __init__(self, hosts: Iterable[str]) -> None:
        self.hosts = frozenset(n for n in map(_name, hosts) if n)
        self.looked_up: dict[str, int] = {}  # name -> address family of its lookup
        self.addresses: set[IPAddress] = set()


class NetworkGuard:
    def __init__(self, resolver: Resolver | None = None) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._local = threading.local()
        self._resolver = resolver or _system_resolve
        self._attempts: list[Attempt] = []
        self._blocked = 0
        self._outbound = 0
        self._version = 0  # bumped on every recorded attempt; watchers wait for it to move

    @property
    def blocked_count(self) -> int:
        return self._blocked

    @property
    def outbound_count(self) -> int:
        """Non-loopback lookups and connections that were let through (downloads only)."""
        return self._outbound

    def attempts(self) -> list[Attempt]:
        """The last 1000 non-loopback attempts, oldest first."""
        with self._lock:
            return list(self._attempts)

    @contextlib.contextmanager
    def allow_download(self, hosts: Iterable[str]) -> Iterator[None]:
        """Lets the current thread (only) look up these hosts, and reach the addresses
        those lookups return, while inside the block."""
        previous = getattr(self._local, "allowance", None)
        self._local.allowance = _Allowance(hosts)
        try:
            yield
        finally:
            self._local.allowance = previous

    # --- the hook's side ----------------------------------------------------------------------

    def check(self, event: str, args: tuple[Any, ...]) -> None:
        if getattr(self._local, "resolving", False):
            return  # the guard's own lookup of a name it has just allowed
        target = self._target(event, args)
        if target is None:
            return
        host, shown = target
        if _is_loopback(host):
            return
        allowance: _Allowance | None = getattr(self._local, "allowance", None)
        allowed = False
        if allowance is not None:
            if event == "socket.getaddrinfo":
                allowed = self._allowed_lookup(allowance, host, args)
            elif event in _SENDS:
                allowed = self._allowed_address(allowance, host)
        self._record(Attempt(time.time(), event, shown, threading.current_thread().name, allowed))
        if not allowed:
            raise NetworkBlocked(f"outbound connection blocked by Keyframe's privacy guard: {shown}")

    def _record(self, attempt: Attempt) -> None:
        with self._changed:
            self._attempts.append(attempt)
            del self._attempts[:-1000]
            if attempt.allowed:
                self._outbound += 1
            else:
                self._blocked += 1
            self._version += 1
            self._changed.notify_all()

    def _allowed_lookup(self, allowance: _Allowance, host: object, args: tuple[Any, ...]) -> bool:
        name = _name(host)
        if name is None or name not in allowance.hosts:
            return False
        family = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        allowance.looked_up[name] = family
        self._resolve_into(allowance, name, family)
        return True

    def _allowed_address(self, allowance: _Allowance, host: object) -> bool:
        ip = _address(host)
        if ip is None:
            return False  # a name here was resolved in C, unseen: only looked-up addresses count
        if ip in allowance.addresses:
            return True
        for name, family in list(allowance.looked_up.items()):
            self._resolve_into(allowance, name, family)  # DNS may answer differently a second time
        return ip in allowance.addresses

    def _resolve_into(self, allowance: _Allowance, name: str, family: int) -> None:
        self._local.resolving = True
        try:
            found = list(self._resolver(name, family))
        except (OSError, UnicodeError):
            return  # the caller's own lookup fails the same way
        finally:
            self._local.resolving = False
        allowance.addresses.update(ip for ip in map(_address, found) if ip is not None)

    @staticmethod
    def _target(event: str, args: tuple[Any, ...]) -> tuple[object, str] | None:
        """(host, how to show it) for an event that names a remote host; None for the rest."""
        if event in _LOOKUPS:
            if event == "socket.getnameinfo":
                sockaddr = args[0]
                if not isinstance(sockaddr, tuple) or not sockaddr:
                    return None
                return sockaddr[0], f"getnameinfo {sockaddr[0]}"
            raw = args[0] if args else None
            if raw is None:
                return None  # getaddrinfo(None, port): the local wildcard or loopback
            host = _text(raw)
            shown_host = host if host is not None else repr(raw)  # undecodable bytes: shown, and blocked
            if event == "socket.getaddrinfo":
                return raw, f"{shown_host}:{args[1]}"
            return raw, f"{event.split('.', 1)[1]} {shown_host}"
        if event in _SENDS:
            sock, address = args[0], args[1]
            if address is None:
                return None  # sendmsg on a connected socket: its connect was checked
            family = getattr(sock, "family", None)
            if family in _LOCAL_FAMILIES:
                return None  # Unix sockets and the like never leave the machine
            if family not in _IP_FAMILIES or not isinstance(address, tuple):
                return None, f"{getattr(family, 'name', family)} {address!r}"  # Bluetooth, raw packets...
            return address[0], f"{address[0]}:{address[1]}"
        return None


class GuardWatcher:
    """One daemon thread that waits for a guard's counts to change and calls `on_change`
    with them, outside the audit hook. Calls it once at start with the current counts;
    changes that come close together are delivered as one call with the latest counts."""

    def __init__(self, guard: NetworkGuard, on_change: Callable[[GuardCounts], None], *, poll_s: float = 1.0) -> None:
        self._guard = guard
        self._on_change = on_change
        self._poll_s = poll_s
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="privacy-guard-watcher", daemon=True)

    def start(self) -> GuardWatcher:
        self._thread.start()
        return self

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stops the thread and waits for it (unless called from `on_change` itself)."""
        guard = self._guard
        with guard._changed:
            self._stopping = True
            guard._changed.notify_all()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _due(self, seen: int) -> bool:
        return self._stopping or self._guard._version != seen

    def _run(self) -> None:
        guard = self._guard
        seen = -1
        while True:
            with guard._changed:
                guard._changed.wait_for(functools.partial(self._due, seen), self._poll_s)
                if self._stopping:
                    return
                if guard._version == seen:
                    continue
                seen = guard._version
                counts = GuardCounts(guard._blocked, guard._outbound)
            try:
                self._on_change(counts)
            except Exception:
                log.exception("privacy guard watcher: on_change failed")


class _Hook:
    """The single process-wide audit hook; forwards to whichever guard is active."""

    def __init__(self) -> None:
        self.guard: NetworkGuard | None = None

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
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
