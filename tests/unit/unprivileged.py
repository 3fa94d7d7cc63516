"""Running a check as a user without root's right to read any file, for tests of unreadable files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import pytest


def as_unprivileged(fn: Callable[[], Any]) -> Any:
    """`fn()` as the calling user when it is not root, else in a child as `nobody`; its result must be JSON.

    Root reads any file whatever its mode bits, so a test of an unreadable file runs it as nobody
    (the file must then lie where nobody can reach it, e.g. under a 0755 folder in /tmp).
    """
    if os.geteuid() != 0:
        return fn()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(read)
            os.setgid(65534)
            os.setuid(65534)
            try:
                outcome = {"result": fn()}
            except BaseException as exc:  # the test's failure, told to the parent
                outcome = {"raised": f"{type(exc).__name__}: {exc}"}
            os.write(write, json.dumps(outcome).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    if not data:
        pytest.skip("cannot switch to an unprivileged user here")
    outcome = json.loads(data)
    if "raised" in outcome:
        raise AssertionError(f"as nobody: {outcome['raised']}")
    return outcome["result"]
