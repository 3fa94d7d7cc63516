from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from app.privacy.guard import NetworkBlocked, NetworkGuard, active_guard, install


@pytest.fixture()
def guard() -> Iterator[NetworkGuard]:
    session_guard = active_guard()
    g = install(NetworkGuard())
    yield g
    if session_guard is not None:
        install(session_guard)  # deliberate attempts here do not count against the session


def test_outbound_connect_is_blocked_and_counted(guard: NetworkGuard) -> None:
    with socket.socket() as s, pytest.raises(NetworkBlocked):
        s.connect(("203.0.113.7", 443))  # TEST-NET-3: never routed; the guard stops it first
    assert guard.blocked_count == 1
    assert guard.attempts()[0].target == "203.0.113.7:443"


def test_name_lookups_are_blocked(guard: NetworkGuard) -> None:
    with pytest.raises(NetworkBlocked):
        socket.getaddrinfo("example.org", 443)
    assert guard.blocked_count == 1


def test_loopback_is_allowed(guard: NetworkGuard) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    with socket.create_connection(server.getsockname(), timeout=2):
        pass
    server.close()
    assert guard.blocked_count == 0


def test_downloads_reach_only_their_hosts_and_only_from_their_thread(guard: NetworkGuard) -> None:
    other_thread_error: list[Exception] = []

    def elsewhere() -> None:
        try:
            socket.getaddrinfo("huggingface.co", 443)
        except NetworkBlocked as exc:
            other_thread_error.append(exc)

    with guard.allow_download(["huggingface.co"]):
        guard.check("socket.getaddrinfo", ("huggingface.co", 443, 0, 0, 0, 0))  # allowed, no exception
        with pytest.raises(NetworkBlocked):
            guard.check("socket.getaddrinfo", ("tracker.example", 443, 0, 0, 0, 0))
        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
    assert other_thread_error, "another thread gets no permission from the download"
    with pytest.raises(NetworkBlocked):
        guard.check("socket.getaddrinfo", ("huggingface.co", 443, 0, 0, 0, 0))
    assert guard.outbound_count == 1 and guard.blocked_count == 3
