"""The "spawn" context, with CPython's resource tracker ending before the app does, not after.

Starting a child with "spawn" starts the tracker too: a process that ignores SIGINT and SIGTERM and
ends only once every holder of its pipe has closed it, the app last, at the app's own exit. So it
outlived the app, orphaned (once by 22 s after SIGTERM, under load). Here the app closes its end
itself as the very last of multiprocessing's exit steps (after the worker hosts' atexit stop and
the join of every child) and waits for the tracker to finish.
"""

from __future__ import annotations

import functools
import multiprocessing
from multiprocessing import resource_tracker, util
from multiprocessing.context import SpawnContext
from typing import Any

# multiprocessing runs its exit finalizers highest first, negative ones after joining the children.
_AFTER_EVERYTHING = -100


def spawn_context() -> SpawnContext:
    """multiprocessing's "spawn" context; this process reaps the resource tracker it starts."""
    _stop_tracker_at_exit()
    return multiprocessing.get_context("spawn")


@functools.cache
def _stop_tracker_at_exit() -> None:
    util.Finalize(None, _stop_tracker, exitpriority=_AFTER_EVERYTHING)


def _stop_tracker() -> None:
    tracker: Any = resource_tracker._resource_tracker  # _pid and _stop: CPython 3.11-3.14, not in the stubs
    if tracker._pid is not None:  # started by this process, not inherited from the parent
        tracker._stop()  # closes this process's end, then waits for the tracker's exit
