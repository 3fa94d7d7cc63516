"""The privacy guard: every socket entry point, download threads, and change delivery outside the hook.

tests/conftest.py installs a session-wide guard and fails the run if anything was
blocked or let through, so every test here that means to trigger the guard
installs a guard of its own (`install_guard`) and puts the session's back after.
Nothing here reaches past loopback: addresses are from the documentation ranges
(192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32), which are never
routed, and every connect to one of them is one the guard must refuse before the
syscall. Connects the guard must allow to such an address are checked through
`guard.check` with the event's arguments, never made; name lookups a download may
make go to a fake resolver.
"""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from app.privacy.guard import GuardCounts, GuardWatcher, NetworkBlocked, NetworkGuard, active_guard, install
from tests.conditions import HANG_S

ROOT = Path(__file__).resolve().parents[2]
InstallGuard = Callable[..., NetworkGuard]


@pytest.fixture()
def install_guard() -> Iterator[InstallGuard]:
    session_guard = active_guard()

    def make(resolver: Callable[[str, int], Iterable[str]] | None = None) -> NetworkGuard:
        return install(NetworkGuard(resolver))

    yield make
    if session_guard is not None:
        install(session_guard)  # deliberate attempts here do not count against the session


@pytest.fixture()
def guard(install_guard: InstallGuard) -> NetworkGuard:
    return install_guard()


class FakeResolver:
    """What a download's name lookups return, without DNS; answers may change between calls."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, int]] = []

    def __call__(self, host: str, family: int) -> list[str]:
        self.calls.append((host, family))
        queued = self.answers[host]
        return queued.pop(0) if len(queued) > 1 else queued[0]


def _udp() -> socket.socket:
    return socket.socket(socket.AF_INET, socket.SOCK_DGRAM)


def _ipv6_socket() -> socket.socket:
    try:
        return socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    except OSError:
        pytest.skip("no IPv6 sockets here")


# --- every entry point ---------------------------------------------------------------------------------------

BLOCKED: dict[str, tuple[str, Callable[[], object]]] = {
    "getaddrinfo": ("socket.getaddrinfo", lambda: socket.getaddrinfo("example.org", 443)),
    "getaddrinfo of bytes": ("socket.getaddrinfo", lambda: socket.getaddrinfo(b"example.org", 443)),
    "getaddrinfo of undecodable bytes": ("socket.getaddrinfo", lambda: socket.getaddrinfo(b"\xffexample.org", 443)),
    "gethostbyname": ("socket.gethostbyname", lambda: socket.gethostbyname("example.org")),
    "gethostbyname_ex": ("socket.gethostbyname", lambda: socket.gethostbyname_ex("example.org")),
    "gethostbyaddr of an address": ("socket.gethostbyaddr", lambda: socket.gethostbyaddr("192.0.2.1")),
    "gethostbyaddr of a name": ("socket.gethostbyaddr", lambda: socket.gethostbyaddr("example.org")),
    "getnameinfo": ("socket.getnameinfo", lambda: socket.getnameinfo(("192.0.2.1", 443), 0)),
    "connect": ("socket.connect", lambda: socket.socket().connect(("203.0.113.7", 443))),
    "connect_ex": ("socket.connect", lambda: socket.socket().connect_ex(("203.0.113.7", 443))),
    "sendto": ("socket.sendto", lambda: _udp().sendto(b"x", ("192.0.2.1", 9))),
    "sendmsg": ("socket.sendmsg", lambda: _udp().sendmsg([b"x"], [], 0, ("192.0.2.1", 9))),
    "IPv6 connect": ("socket.connect", lambda: _ipv6_socket().connect(("2001:db8::1", 443, 0, 0))),
    "v4-mapped IPv6 connect": ("socket.connect", lambda: _ipv6_socket().connect(("::ffff:192.0.2.1", 443, 0, 0))),
}


@pytest.mark.parametrize("name", list(BLOCKED))
def test_every_entry_point_is_blocked_and_counted(guard: NetworkGuard, name: str) -> None:
    event, call = BLOCKED[name]
    with pytest.raises(NetworkBlocked):  # connect_ex too: it raises instead of returning an errno
        call()
    assert guard.blocked_count == 1 and guard.outbound_count == 0
    (attempt,) = guard.attempts()
    assert attempt.event == event and not attempt.allowed


def test_outbound_connect_shows_its_target(guard: NetworkGuard) -> None:
    with socket.socket() as s, pytest.raises(NetworkBlocked):
        s.connect(("203.0.113.7", 443))  # TEST-NET-3: never routed; the guard stops it first
    assert guard.attempts()[0].target == "203.0.113.7:443"


@pytest.mark.strace
def test_no_blocked_entry_point_reaches_a_syscall(strace: str, tmp_path: Path) -> None:
    """Under strace: every blocked call stops before connect/sendto/sendmsg and before any name lookup starts."""
    script = tmp_path / "leak.py"
    script.write_text(
        textwrap.dedent(
            """
            import socket, sys
            from app.privacy.guard import NetworkBlocked, NetworkGuard, install
            from tests.unit.test_privacy_guard import BLOCKED
            guard = install(NetworkGuard())
            for name, (event, call) in BLOCKED.items():
                try:
                    call()
                except NetworkBlocked:
                    pass
                except BaseException as exc:  # no IPv6 here: the socket itself could not be made
                    print("skipped", name, exc, file=sys.stderr)
            print(guard.blocked_count)
            """
        )
    )
    trace = tmp_path / "trace"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [strace, "-f", "-e", "trace=network,openat", "-o", str(trace), sys.executable, str(script)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert run.returncode == 0, run.stderr
    assert int(run.stdout.strip()) >= len(BLOCKED) - 2  # (the two IPv6 calls need IPv6 sockets)
    lines = trace.read_text().splitlines()
    sends = [ln for ln in lines if any(f" {c}(" in ln for c in ("connect", "sendto", "sendmsg", "sendmmsg"))]
    lookups = [ln for ln in lines if any(f in ln for f in ("/etc/hosts", "/etc/resolv.conf", "nsswitch.conf"))]
    assert sends == [] and lookups == [], "\n".join(sends + lookups)


def test_loopback_is_allowed(guard: NetworkGuard) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    with socket.create_connection(server.getsockname(), timeout=2):
        pass
    with socket.socket() as s:
        assert s.connect_ex(server.getsockname()) == 0
    server.close()
    assert guard.blocked_count == 0


def test_every_entry_point_allows_loopback(guard: NetworkGuard, tmp_path: Path) -> None:
    socket.getaddrinfo("localhost", 80)
    socket.gethostbyname("localhost")
    socket.gethostbyname_ex("localhost")
    socket.gethostbyaddr("127.0.0.1")
    socket.getnameinfo(("127.0.0.1", 80), socket.NI_NUMERICHOST | socket.NI_NUMERICSERV)
    receiver = _udp()
    receiver.bind(("127.0.0.1", 0))
    with _udp() as u:
        u.sendto(b"x", receiver.getsockname())
        u.sendmsg([b"x"], [], 0, receiver.getsockname())
        u.connect(receiver.getsockname())
        u.sendmsg([b"x"])  # connected: no address in the event
    receiver.close()
    assert guard.blocked_count == 0 and guard.outbound_count == 0 and guard.attempts() == []


def test_v4_mapped_loopback_is_loopback(guard: NetworkGuard) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    with _ipv6_socket() as s:
        s.settimeout(2)
        try:
            s.connect(("::ffff:127.0.0.1", port, 0, 0))
        except NetworkBlocked:
            raise
        except OSError:
            pass  # an IPv6-only socket may refuse v4-mapped addresses: the guard let it try, which is the point
    server.close()
    assert guard.blocked_count == 0


def test_unix_sockets_and_socketpairs_stay_allowed(guard: NetworkGuard, tmp_path: Path) -> None:
    a, b = socket.socketpair()
    a.sendall(b"x")
    assert b.recv(1) == b"x"
    a.close(), b.close()
    path = str(tmp_path / "s")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
        c.connect(path)
    dgram_path = str(tmp_path / "d")
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(dgram_path)
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as d:
        d.sendto(b"x", dgram_path)
        d.sendmsg([b"x"], [], 0, dgram_path)
    server.close(), receiver.close()
    assert guard.blocked_count == 0 and guard.attempts() == []


def test_sockets_of_other_families_are_blocked(guard: NetworkGuard) -> None:
    # Anything neither IP nor local (Bluetooth, raw packets...) can leave the device: blocked.
    class Odd:
        family = 31  # AF_BLUETOOTH on Linux

    with pytest.raises(NetworkBlocked):
        guard.check("socket.connect", (Odd(), ("00:11:22:33:44:55", 1)))
    assert guard.blocked_count == 1


# --- download threads ------------------------------------------------------------------------------------------


def _lookup(guard: NetworkGuard, host: str, family: int = 0) -> None:
    """The audit event of socket.getaddrinfo(host, 443, family, SOCK_STREAM), without the real lookup."""
    guard.check("socket.getaddrinfo", (host, 443, family, socket.SOCK_STREAM, 0))


def _connect(guard: NetworkGuard, address: tuple, family: int = socket.AF_INET) -> None:
    """The audit event of a connect to `address`, without the connect."""
    with socket.socket(family, socket.SOCK_STREAM) as s:
        guard.check("socket.connect", (s, address))


def test_downloads_look_up_only_their_hosts_and_only_from_their_thread(install_guard: InstallGuard) -> None:
    resolver = FakeResolver({"mirror.example": [["192.0.2.1"]]})
    guard = install_guard(resolver)
    other_thread_error: list[Exception] = []

    def elsewhere() -> None:
        try:
            socket.getaddrinfo("mirror.example", 443)
        except NetworkBlocked as exc:
            other_thread_error.append(exc)

    with guard.allow_download(["Mirror.Example"]):
        _lookup(guard, "mirror.example")  # allowed, no exception
        with pytest.raises(NetworkBlocked):
            _lookup(guard, "tracker.example")
        with pytest.raises(NetworkBlocked):
            socket.gethostbyname("mirror.example")  # a download resolves with getaddrinfo only
        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
    assert other_thread_error, "another thread gets no permission from the download"
    with pytest.raises(NetworkBlocked):
        _lookup(guard, "mirror.example")
    assert resolver.calls == [("mirror.example", 0)]  # the guard looked up the allowed name only
    assert guard.outbound_count == 1 and guard.blocked_count == 4


def test_a_download_thread_connects_only_to_what_its_lookups_returned(install_guard: InstallGuard) -> None:
    resolver = FakeResolver({"mirror.example": [["192.0.2.1", "2001:db8::5", "fe80::1%eth0"]]})
    guard = install_guard(resolver)
    with guard.allow_download(["mirror.example"]):
        with socket.socket() as s, pytest.raises(NetworkBlocked):
            s.connect(("192.0.2.1", 443))  # inside the allowance, but nothing was looked up yet
        _lookup(guard, "mirror.example")
        _connect(guard, ("192.0.2.1", 443))
        _connect(guard, ("::ffff:192.0.2.1", 443, 0, 0), socket.AF_INET6)  # v4-mapped: the same address
        _connect(guard, ("2001:db8::5", 443, 0, 0), socket.AF_INET6)
        _connect(guard, ("fe80::1", 443, 0, 2), socket.AF_INET6)  # the scope id does not make another address
        _connect(guard, ("fe80::1%2", 443, 0, 2), socket.AF_INET6)
        with _udp() as u:
            guard.check("socket.sendto", (u, ("192.0.2.1", 443)))
            guard.check("socket.sendmsg", (u, ("192.0.2.1", 443)))
        with socket.socket() as s, pytest.raises(NetworkBlocked):
            s.connect(("198.51.100.1", 443))  # an address no allowed lookup returned: before the syscall
        with _udp() as u, pytest.raises(NetworkBlocked):
            u.sendto(b"x", ("198.51.100.1", 443))
        with _udp() as u, pytest.raises(NetworkBlocked):
            u.sendmsg([b"x"], [], 0, ("198.51.100.1", 443))
        with pytest.raises(NetworkBlocked):
            _connect(guard, ("mirror.example", 443))  # a name in a connect is resolved unseen, in C
    with socket.socket() as s, pytest.raises(NetworkBlocked):
        s.connect(("192.0.2.1", 443))  # the allowance is over
    assert [a.allowed for a in guard.attempts()] == [False, True, True, True, True, True, True, True, True] + [
        False
    ] * 5


def test_another_thread_gets_none_of_the_download_threads_addresses(install_guard: InstallGuard) -> None:
    guard = install_guard(FakeResolver({"mirror.example": [["192.0.2.1"]]}))
    errors: list[Exception] = []

    def elsewhere() -> None:
        try:
            with socket.socket() as s:
                s.connect(("192.0.2.1", 443))
        except NetworkBlocked as exc:
            errors.append(exc)

    with guard.allow_download(["mirror.example"]):
        _lookup(guard, "mirror.example")
        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
    assert len(errors) == 1 and guard.blocked_count == 1


def test_an_address_dns_gives_on_a_second_asking_is_checked_against_a_fresh_lookup(
    install_guard: InstallGuard,
) -> None:
    # Round-robin DNS: the caller's own lookup may have been answered differently from the guard's.
    resolver = FakeResolver({"cdn.example": [["192.0.2.1"], ["192.0.2.2"]]})
    guard = install_guard(resolver)
    with guard.allow_download(["cdn.example"]):
        _lookup(guard, "cdn.example", socket.AF_INET)
        _connect(guard, ("192.0.2.2", 443))  # allowed: cdn.example resolves to it now
        with socket.socket() as s, pytest.raises(NetworkBlocked):
            s.connect(("192.0.2.3", 443))  # resolves to nothing allowed, however often asked
    assert resolver.calls == [("cdn.example", socket.AF_INET)] * 3


def test_a_nested_allowance_ends_with_its_addresses(install_guard: InstallGuard) -> None:
    guard = install_guard(FakeResolver({"mirror.example": [["192.0.2.1"]], "cdn.example": [["192.0.2.9"]]}))
    with guard.allow_download(["mirror.example"]):
        _lookup(guard, "mirror.example")
        with guard.allow_download(["cdn.example"]):
            _lookup(guard, "cdn.example")
            _connect(guard, ("192.0.2.9", 443))
            with pytest.raises(NetworkBlocked):
                _lookup(guard, "mirror.example")  # the inner allowance names its own hosts only
        with socket.socket() as s, pytest.raises(NetworkBlocked):
            s.connect(("192.0.2.9", 443))
        _connect(guard, ("192.0.2.1", 443))


def test_the_guards_own_lookup_passes_its_hook(install_guard: InstallGuard) -> None:
    # The real resolver, on a numeric host (no DNS): the guard's lookup raises an audit event of its
    # own, which must pass (no recursion, not counted), and its answer must be what the thread may reach.
    guard = install_guard()
    with guard.allow_download(["192.0.2.1"]):
        socket.getaddrinfo("192.0.2.1", 443, type=socket.SOCK_STREAM)
        _connect(guard, ("192.0.2.1", 443))
    assert [(a.event, a.allowed) for a in guard.attempts()] == [("socket.getaddrinfo", True), ("socket.connect", True)]


# --- changes are delivered outside the hook ---------------------------------------------------------------


def test_a_watcher_delivers_counts_on_its_own_thread(guard: NetworkGuard) -> None:
    got: queue.Queue[tuple[GuardCounts, str]] = queue.Queue()
    # A long poll: only the guard's signal can wake the watcher within the test's timeouts.
    watcher = GuardWatcher(guard, lambda counts: got.put((counts, threading.current_thread().name)), poll_s=60)
    watcher.start()
    try:
        assert got.get(timeout=5)[0] == GuardCounts(0, 0)  # the counts at start
        time.sleep(0.2)  # the watcher is waiting again
        with pytest.raises(NetworkBlocked):
            socket.getaddrinfo("example.org", 443)
        counts, thread = got.get(timeout=5)
        assert counts == GuardCounts(blocked=1, outbound=0)
        assert thread == "privacy-guard-watcher" != threading.current_thread().name
    finally:
        watcher.stop()
    assert not watcher._thread.is_alive()


def test_a_slow_watcher_never_holds_up_a_socket_call(guard: NetworkGuard) -> None:
    release = threading.Event()
    got: queue.Queue[GuardCounts] = queue.Queue()

    def on_change(counts: GuardCounts) -> None:
        got.put(counts)
        release.wait(10)

    watcher = GuardWatcher(guard, on_change).start()
    try:
        assert got.get(timeout=5) == GuardCounts(0, 0)  # the watcher is now stuck in its callback
        started = time.monotonic()
        for _ in range(3):
            with pytest.raises(NetworkBlocked):
                socket.gethostbyname("example.org")
        assert time.monotonic() - started < 1
        release.set()
        assert got.get(timeout=5) == GuardCounts(3, 0)  # three changes, delivered as one
    finally:
        release.set()
        watcher.stop()


def test_a_watcher_outlives_a_failing_callback_and_stops_promptly(guard: NetworkGuard) -> None:
    got: queue.Queue[GuardCounts] = queue.Queue()

    def on_change(counts: GuardCounts) -> None:
        got.put(counts)
        raise RuntimeError("a broken screen")

    watcher = GuardWatcher(guard, on_change, poll_s=60).start()
    assert got.get(timeout=5) == GuardCounts(0, 0)
    time.sleep(0.2)  # the watcher is waiting again (60 s poll: only the guard's signal wakes it)
    with pytest.raises(NetworkBlocked):
        socket.gethostbyaddr("192.0.2.1")
    assert got.get(timeout=5) == GuardCounts(1, 0)
    started = time.monotonic()
    watcher.stop()
    assert time.monotonic() - started < 2 and not watcher._thread.is_alive()
