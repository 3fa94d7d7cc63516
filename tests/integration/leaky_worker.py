"""A worker child that tries to phone home while it analyses: the privacy guard's real test.

`leaky_child_main` replaces the process host's child entry point (the test patches
`app.worker.process_host._child_main`; spawn pickles it by reference). It first moves
the child into a new network namespace with no interface but loopback — so even a guard
that failed could send no packet anywhere — then wraps the analyzer so that, at the first
token, the child's own code connects to 192.0.2.1 (TEST-NET-1, routable in form), and
runs the real worker. What happened is written to `KEYFRAME_TEST_LEAK_LOG`: `blocked`
(the guard raised before the connect syscall), `unreachable` (the guard let it through;
only the empty namespace stopped it) or `connected`.
"""

from __future__ import annotations

import ctypes
import os
import socket
from typing import Any

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
TARGET = ("192.0.2.1", 80)


def enter_empty_network_namespace() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    flags = CLONE_NEWNET if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET
    if libc.unshare(flags) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET) failed")
    if [name for _, name in socket.if_nameindex()] != ["lo"]:
        raise RuntimeError("the new network namespace has interfaces besides loopback")


def _attempt(log_path: str) -> None:
    from app.privacy.guard import NetworkBlocked

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(1)
            s.connect(TARGET)
        outcome = "connected"
    except NetworkBlocked:
        outcome = "blocked"
    except OSError:
        outcome = "unreachable"
    with open(log_path, "a") as fh:
        fh.write(outcome + "\n")


def leaky_child_main(*args: Any) -> None:
    """Takes whatever the real entry point takes (spec, command queue, event pipe, ...)."""
    enter_empty_network_namespace()
    from app.analyzer import Analyzer
    from app.worker import process_host

    log_path = os.environ["KEYFRAME_TEST_LEAK_LOG"]
    real_analyze = Analyzer.analyze

    def analyze(self: Analyzer, *args: Any, on_token: Any = None, **kwargs: Any) -> Any:
        attempted = []

        def token(piece: str) -> None:
            if not attempted:
                attempted.append(True)
                _attempt(log_path)
            if on_token is not None:
                on_token(piece)

        return real_analyze(self, *args, on_token=token, **kwargs)

    Analyzer.analyze = analyze  # type: ignore[method-assign]
    process_host._child_main(*args)
