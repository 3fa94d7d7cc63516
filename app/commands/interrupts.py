"""Ctrl-C, SIGTERM, a closed pipe and an unwritable stdout end a headless command cleanly.

The command's own `finally` blocks stop the worker and close the session log;
the user sees one line, never a traceback. Exit codes follow the shell's
convention (128 + signal number); the signals themselves: app.stop_signals.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from app.commands.common import EXIT_FAILED, EXIT_INTERRUPTED
from app.engine.stdio import OutputFailed
from app.stop_signals import Terminated, said_stopped, stop_signals_raise


def run_interruptible(command: Callable[[], int]) -> int:
    try:
        with stop_signals_raise():
            return command()
    except (KeyboardInterrupt, Terminated) as stop:
        return said_stopped(stop)
    except BrokenPipeError:
        # The reader of stdout went away (e.g. `| head`): nothing left to say to it.
        return EXIT_INTERRUPTED
    except OutputFailed as exc:  # stdout on a full disk or /dev/full: what was printed is all there is
        print(f"error: {exc}; stopped", file=sys.stderr)
        return EXIT_FAILED
