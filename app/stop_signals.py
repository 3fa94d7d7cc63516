"""Ctrl-C and SIGTERM end every command with one line and the shell's exit code, at any moment.

`python -m app` installs this before it imports anything else: importing the app takes ~0.4 s,
and a signal in that time gave a traceback (Ctrl-C) or a silent exit -15 (SIGTERM). The first
signal is raised in the main thread (KeyboardInterrupt, Terminated), so `finally` blocks stop
workers, cancel downloads and close logs; any later one is ignored, so that this cleanup runs to
its end and the user still reads one line. Standard library only, for the same reason.

Two CPython quirks met on the way (3.11): an exception raised where Python drops exceptions (a
weakref callback during an import, a `__del__`) never stops anything, so such a stop is sent
again, from a thread, until it is raised where it counts (one raised inside the hook that reports the
drop would be lost as well, so a stop arriving there waits for the next send); and a
KeyboardInterrupt that left code run by exec() of a string (dataclasses and namedtuple do that as
the app is imported) made the interpreter kill itself with SIGINT at exit (-2) although it was
handled.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Terminated(BaseException):
    """SIGTERM, raised in the main thread like KeyboardInterrupt so `finally` blocks run."""


_stopping: list[int] = []  # the signal this process is stopping for (at most one entry)
_in_hook: list[bool] = []  # set while `_dropped` runs: what it raised would be dropped too
RESEND_S = 0.01


def _raise(signum: int, frame: object) -> None:
    if _stopping:
        return  # already stopping: the cleanup under way is not cut short
    if _in_hook:
        return  # the resender sends it again once the hook is over
    _stopping.append(signum)
    raise KeyboardInterrupt() if signum == signal.SIGINT else Terminated()


def _dropped(unraisable: sys.UnraisableHookArgs, then: Callable[[sys.UnraisableHookArgs], object]) -> None:
    if not (isinstance(unraisable.exc_value, (KeyboardInterrupt, Terminated)) and _stopping):
        then(unraisable)
        return
    _in_hook.append(True)
    try:
        import threading

        signum = _stopping.pop()  # nothing is stopping after all
        # Starting a thread runs Python code, where the resent stop may already arrive: `_raise` ignores
        # it while `_in_hook` is set, and the resender sends it again.
        threading.Thread(target=_resend, args=(signum,), name="stop-resend", daemon=True).start()
    finally:
        _in_hook.clear()  # the last call of the hook: from here no bytecode checks for signals


def _resend(signum: int) -> None:
    """Send `signum` to this process until the main thread has raised it (a raise dropped again is
    reported to `_dropped`, which starts another resender)."""
    while True:
        time.sleep(RESEND_S)
        if _stopping:
            return
        os.kill(os.getpid(), signum)


def install() -> None:
    """From here on the process's first SIGINT or SIGTERM raises in the main thread."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, _raise)
    previous = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: _dropped(unraisable, previous)


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """`install` for the block, the previous handlers after it; outside the main thread signals are left alone."""
    try:
        previous = [(signum, signal.signal(signum, _raise)) for signum in STOP_SIGNALS]
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous:
            signal.signal(signum, handler)


def said_stopped(stop: KeyboardInterrupt | Terminated) -> int:
    """The one line for a stop signal, and the exit code that goes with it (130, 143: app.commands.common)."""
    interrupted = isinstance(stop, KeyboardInterrupt)
    word, signum = ("interrupted", signal.SIGINT) if interrupted else ("terminated", signal.SIGTERM)
    try:
        print(word, file=sys.stderr, flush=True)
    except (OSError, ValueError, AttributeError):  # stderr full, closed or absent: the exit code still says it
        pass
    return 128 + signum  # the shell's convention


def run_command(entry: Callable[[], int]) -> int:
    """The whole life of `python -m app`: a stop signal at any point is one line and 130 or 143."""
    install()
    try:
        code = entry()
    except (KeyboardInterrupt, Terminated) as stop:
        code = said_stopped(stop)
    # The command is over: a signal while the interpreter exits changes nothing (with SIG_IGN, not a handler
    # of ours, since the interpreter's shutdown puts back the default action, a silent death, for those).
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    exec("pass")  # clears CPython's note of a KeyboardInterrupt that left an exec() (see above)
    return code
