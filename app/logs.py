"""The app's log: a rotating file in the platform log folder, and stderr with `--verbose`.

Loggers are the standard library's, named `keyframe.<part>`. The file is
`keyframe.log` (the app) and `worker.log` (the inference worker child) in
`log_dir()`: `FLET_APP_STORAGE_DATA/logs` in built apps, otherwise platformdirs'
user log folder. What is logged: starts, model loads, worker restarts and
failures with their tracebacks, sessions begun and ended, errors. Never image
data; never answers (raw text, observations) unless the user turns it on
(`--log-answers`, or KEYFRAME_LOG_ANSWERS=1): `answers_logged()` says whether.

For the `ui` command the worker child's stderr — MNN's console lines ("The
device supports: ...") — goes to `worker.log` instead of the user's terminal.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from app.storage.locations import log_dir

LOGGER = "keyframe"
ANSWERS_ENV = "KEYFRAME_LOG_ANSWERS"
APP_LOG = "keyframe.log"
WORKER_LOG = "worker.log"
_MAX_BYTES = 1 << 20  # per file; with 3 old files at most 4 MB of log per process kind
_BACKUPS = 3
_FORMAT = "%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"


@dataclass(frozen=True)
class LogSettings:
    """How this process logs; handed to the worker child so it logs the same way (picklable)."""

    folder: Path | None  # None: no file (the folder could not be created)
    verbose: bool = False  # also to stderr, with debug lines
    answers: bool = False  # the model's answers may be logged
    native_output_to_log: bool = False  # the worker child's stderr (MNN's console lines) goes to worker.log


_current: LogSettings | None = None


def current() -> LogSettings | None:
    """The settings `setup` installed in this process (None: logging was never set up)."""
    return _current


def worker_log_file() -> Path | None:
    """Where the worker process's log goes, when logging was set up with a folder."""
    return _current.folder / WORKER_LOG if _current is not None and _current.folder is not None else None


def answers_logged() -> bool:
    return _current is not None and _current.answers


def setup(
    verbose: bool = False,
    answers: bool | None = None,
    native_output_to_log: bool = False,
    folder: Path | None = None,
) -> LogSettings:
    """Install the app's handlers (replacing earlier ones of ours); returns the settings."""
    global _current
    if answers is None:
        answers = os.environ.get(ANSWERS_ENV, "") == "1"
    settings = LogSettings(folder or log_dir(), verbose, answers, native_output_to_log)
    settings = _install(settings, APP_LOG, to_stderr=verbose)
    _current = settings
    return settings


def reset() -> None:
    """Remove this module's handlers and settings (the end of `cli.main`, and tests)."""
    global _current
    for name in LIBRARY_LOGGERS:
        library = logging.getLogger(name)
        for old in [h for h in library.handlers if getattr(h, "_keyframe", False)]:
            library.removeHandler(old)
        library.propagate = True
    logger = logging.getLogger(LOGGER)
    for old in [h for h in logger.handlers if getattr(h, "_keyframe", False)]:
        logger.removeHandler(old)
        old.close()
    logger.setLevel(logging.NOTSET)
    _current = None


# Flet's loggers, and asyncio's (which reports Flet's tasks that failed). A client that sends what Flet
# cannot read (a malformed frame, a page that goes away mid-registration) made them print a traceback
# per frame on the terminal of `ui`.
LIBRARY_LOGGERS = ("flet", "flet_web", "flet_transport", "asyncio")


def quiet_libraries() -> None:
    """Flet's and asyncio's records go where the app's go (the log file; stderr too with `--verbose`);
    the terminal gets one line the first time one warns, naming the file. Call after `setup`."""
    ours = [h for h in logging.getLogger(LOGGER).handlers if getattr(h, "_keyframe", False)]
    once = _OnceOnTerminal(_current.folder / APP_LOG if _current and _current.folder else None)
    once._keyframe = True  # type: ignore[attr-defined]
    for name in LIBRARY_LOGGERS:
        library = logging.getLogger(name)
        for handler in [*ours, once]:
            library.addHandler(handler)
        library.propagate = False  # not to the root logger's last resort: the terminal


class _OnceOnTerminal(logging.Handler):
    def __init__(self, log_file: Path | None) -> None:
        super().__init__(logging.WARNING)
        self._log_file = log_file
        self._said = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._said:
            return
        self._said = True
        where = f"details in {self._log_file}" if self._log_file else "no log file to keep the details"
        try:
            print(f"note: the web server logged an error, e.g. a page that went away ({where})", file=sys.stderr)
        except (OSError, ValueError):  # stderr is full or closed
            pass


def setup_child(settings: LogSettings | None) -> None:
    """In the worker child, before anything else: its own file in the same folder.

    With `native_output_to_log`, fd 2 (and so MNN's output, which `claim_stdout`
    then sends from fd 1 to fd 2) is the log file.
    """
    global _current
    if settings is None:
        return
    settings = _install(settings, WORKER_LOG, to_stderr=settings.verbose and not settings.native_output_to_log)
    _current = settings
    if settings.native_output_to_log and settings.folder is not None:
        try:
            fd = os.open(settings.folder / WORKER_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError:
            return  # no log file: MNN's lines stay on the terminal rather than be lost
        sys.stderr.flush()
        os.dup2(fd, 2)
        os.close(fd)


def _install(settings: LogSettings, file_name: str, to_stderr: bool) -> LogSettings:
    reset()
    logger = logging.getLogger(LOGGER)
    logger.setLevel(logging.DEBUG if settings.verbose else logging.INFO)
    formatter = logging.Formatter(_FORMAT)
    if settings.folder is not None:
        try:
            settings.folder.mkdir(parents=True, exist_ok=True)
            handler: logging.Handler = _LogFile(
                settings.folder / file_name, maxBytes=_MAX_BYTES, backupCount=_BACKUPS, encoding="utf-8"
            )
        except OSError as exc:
            print(f"note: no log file in {settings.folder} ({exc.strerror or exc})", file=sys.stderr)
            settings = replace(settings, folder=None, native_output_to_log=False)
        else:
            _add(logger, handler, formatter)
    if to_stderr:
        _add(logger, logging.StreamHandler(sys.stderr), formatter)
    return settings


class _LogFile(logging.handlers.RotatingFileHandler):
    """The log file. One that cannot be written (a full disk, `ulimit -f`) is said once on stderr and then
    left alone: the work goes on without it, as it does without a session log."""

    _failed = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self._failed:
            super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):
            super().handleError(record)  # a broken log call is a bug: its traceback stays visible
            return
        self._failed = True
        try:
            print(
                f"note: cannot write the log {self.baseFilename} ({error.strerror or error}); going on without it",
                file=sys.stderr,
            )
        except (OSError, ValueError):  # stderr is full or closed too
            pass

    def close(self) -> None:
        try:
            super().close()  # flushes what the failed writes left in the buffer
        except OSError:
            pass


def _add(logger: logging.Logger, handler: logging.Handler, formatter: logging.Formatter) -> None:
    handler.setFormatter(formatter)
    handler._keyframe = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
