"""A worker child never outlives the app that started it, and leaves Ctrl-C and SIGTERM to it from birth.

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
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import wait

_PR_SET_PDEATHSIG = 1
_GROUP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


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
    for signum in _GROUP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _GROUP_SIGNALS)  # blocked since birth: spawned_with_signals_blocked


@contextmanager
def spawned_with_signals_blocked() -> Iterator[None]:
    """Children started inside begin life with SIGINT and SIGTERM blocked, until they ignore them
    (leave_group_signals_to_parent); the parent stops them. A Ctrl-C reaching the whole process group
    while a child was still starting Python ended it with "Fatal Python error: init_import_site ...
    KeyboardInterrupt". A thread's signal mask survives fork and exec; CPython starts its resource
    tracker the same way. Only the calling thread's mask changes, and only for the block: a signal
    meanwhile goes to another thread or waits, and the main thread still handles it."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no process groups to signal
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _GROUP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
