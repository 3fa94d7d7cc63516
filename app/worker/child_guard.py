"""A worker child never outlives the app that started it, and leaves Ctrl-C and SIGTERM to it.

After the app is killed (kill -9, a crash, SIGTERM without cleanup) a worker
with a model loaded would otherwise keep running, holding memory and the
caller's stderr. Two mechanisms, because native code may hold the GIL for
seconds: the kernel's parent-death signal on Linux acts even then; a watcher
thread on the parent's sentinel covers macOS and Windows between native calls.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from multiprocessing.connection import wait

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (AttributeError, OSError):
            pass  # no prctl (a libc without it): the watcher thread still covers it
        if os.getppid() != parent.pid:  # the parent died before prctl took effect
            os._exit(1)

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="keyframe-parent-watch", daemon=True).start()


def leave_group_signals_to_parent() -> None:
    """Ctrl-C (SIGINT) and a SIGTERM sent to the whole process group (a terminal, a service manager,
    `kill -- -PGID`) reach the worker too; the parent decides and stops it. Otherwise the worker died
    first and the parent, still shutting down, started a new one. The host itself ends a worker with
    SIGKILL, and the kernel kills it when the parent dies (die_with_parent)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
