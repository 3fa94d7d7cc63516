"""A worker child that tries to phone home while it analyses: the privacy promise's real test.

`leaky_child_main` replaces the process host's child entry point (the test patches
`app.worker.process_host._child_main`; spawn pickles it by reference). It wraps the
analyzer so that, at a keyframe's first token, the child's own code tries two ways out, then runs
the real entry point (which isolates the process before anything else):

1. Python's socket.connect to 192.0.2.1 (TEST-NET-1, routable in form): the audit hook
   must raise before any syscall -> `python: blocked`.
2. A connect() through libc, as MNN or FFmpeg would make it, to the test's own listener on
   127.0.0.1 (`KEYFRAME_TEST_LEAK_PORT`): the hook cannot see it, so only the OS isolation
   stops it -> `native: <error>`; `native: connected` means the isolation failed.

What happened is appended to `KEYFRAME_TEST_LEAK_LOG`.
"""

from __future__ import annotations

import os
import socket
from typing import Any

TARGET = ("192.0.2.1", 80)


def _attempt(log_path: str, port: int) -> None:
    from app.privacy.guard import NetworkBlocked
    from app.privacy.native_connect import native_connect

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(1)
            s.connect(TARGET)
        outcome = "connected"
    except NetworkBlocked:
        outcome = "blocked"
    except OSError:
        outcome = "unreachable"
    native = native_connect("127.0.0.1", port) or "connected"
    with open(log_path, "a") as fh:
        fh.write(f"python: {outcome}\nnative: {native}\n")


def leaky_child_main(*args: Any) -> None:
    """Takes whatever the real entry point takes (spec, command queue, event pipe, ...)."""
    from app.worker import process_host
    from app.worker.analyzer import Analyzer

    log_path = os.environ["KEYFRAME_TEST_LEAK_LOG"]
    port = int(os.environ["KEYFRAME_TEST_LEAK_PORT"])
    real_analyze = Analyzer.analyze

    def analyze(self: Analyzer, *args: Any, on_token: Any = None, **kwargs: Any) -> Any:
        if on_token is None:  # the worker's own check of its model as it loads, not a keyframe
            return real_analyze(self, *args, **kwargs)
        attempted = []

        def token(piece: str) -> None:
            if not attempted:
                attempted.append(True)
                _attempt(log_path, port)
            if on_token is not None:
                on_token(piece)

        return real_analyze(self, *args, on_token=token, **kwargs)

    Analyzer.analyze = analyze  # type: ignore[method-assign]
    process_host._child_main(*args)
