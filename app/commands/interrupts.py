"""Ctrl-C, SIGTERM, a closed pipe and an unwritable stdout end a headless command cleanly.

The command's own `finally` blocks stop the worker and close the session log;
the user sees one line, never a traceback. Exit codes follow the shell's
convention (128 + signal number).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from app.commands.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_TERMINATED
from app.engine.stdio import OutputFailed


class Terminated(BaseException):
    """SIGTERM, raised in the main thread like KeyboardInterrupt so `finally` blocks run."""


@contextmanager
def terminate_as_exception() -> Iterator[None]:
    def handler(signum: int, frame: object) -> None:
        raise Terminated()

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_interruptible(command: Callable[[], int]) -> int:
    try:
        with terminate_as_exception():
            return command()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Terminated:
        print("terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except BrokenPipeError:
        # The reader of stdout went away (e.g. `| head`): nothing left to say to it.
        return EXIT_INTERRUPTED
    except OutputFailed as exc:  # stdout on a full disk or /dev/full: what was printed is all there is
        print(f"error: {exc}; stopped", file=sys.stderr)
        return EXIT_FAILED
