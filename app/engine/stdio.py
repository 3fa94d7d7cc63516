"""Keep file descriptor 1 clean.

MNN's C++ side prints banners and logs straight to fd 1 (`import MNN` prints
"The device supports...", `response()` prints "[MNNLLM] ..."). The CLI promises
JSON only on stdout, so MNN's output is sent to fd 2 at the descriptor level.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO


class _Fd1Redirect:
    """Reference-counted fd 1 -> fd 2 redirect.

    fd 1 is process-wide, so this one object mirrors it; the count makes nested
    and concurrent users (UI thread, engine thread) safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._saved: int | None = None

    def enter(self) -> None:
        with self._lock:
            if self._depth == 0 and not _same_file(1, 2):
                sys.stdout.flush()
                self._saved = os.dup(1)
                os.dup2(2, 1)
            self._depth += 1

    def exit(self) -> None:
        with self._lock:
            self._depth -= 1
            if self._depth == 0 and self._saved is not None:
                sys.stdout.flush()
                os.dup2(self._saved, 1)
                os.close(self._saved)
                self._saved = None


_REDIRECT = _Fd1Redirect()


def _same_file(fd_a: int, fd_b: int) -> bool:
    a, b = os.fstat(fd_a), os.fstat(fd_b)
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


@contextlib.contextmanager
def native_stdout_to_stderr() -> Iterator[None]:
    """While active, anything written to fd 1 (by C++ or Python) lands on fd 2.

    Nothing to do when fd 1 already is fd 2's file (a process that took its
    stdout for good with `claim_stdout`).
    """
    _REDIRECT.enter()
    try:
        yield
    finally:
        _REDIRECT.exit()


class OutputFailed(Exception):
    """stdout could not be written (a full disk, /dev/full, an I/O error): the command cannot go on."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(f"cannot write the output ({cause.strerror or cause})")


@contextlib.contextmanager
def _as_output_failed() -> Iterator[None]:
    try:
        yield
    except BrokenPipeError:
        raise  # its reader left (`| head`): nothing to say, see run_interruptible
    except OSError as exc:
        raise OutputFailed(exc) from None


class _Output(io.TextIOWrapper):
    """The command's stdout: a failed write is an OutputFailed, which the command ends on with a sentence."""

    def write(self, text: str) -> int:
        with _as_output_failed():
            return super().write(text)

    def flush(self) -> None:
        with _as_output_failed():
            super().flush()


class _Messages(io.TextIOWrapper):
    """stderr for messages to people: one that cannot be written (stderr on a full disk) is lost, and the
    work goes on; it must not cost the command its output."""

    def write(self, text: str) -> int:
        try:
            return super().write(text)
        except OSError:
            return len(text)

    def flush(self) -> None:
        try:
            super().flush()
        except OSError:
            pass


def claim_stdout() -> TextIO:
    """Take fd 1 for this program's own output for the rest of the process.

    Returns a text stream on the original stdout; afterwards fd 1 (and
    `sys.stdout`) point at stderr, so no library can interleave with it, and
    `sys.stderr` never raises (see `_Messages`). OutputFailed when there is no
    stdout at all (started with fd 1 closed).
    """
    if sys.stdout is None:  # fd 1 was closed at start; by now it may be some other file this process opened
        raise OutputFailed(OSError(errno.EBADF, "standard output is closed"))
    sys.stdout.flush()
    out = _Output(open(os.dup(1), "wb"), encoding="utf-8", line_buffering=True)
    os.dup2(2, 1)
    if sys.stderr is not None:
        # The same fd 2, unowned: capture_native_output and setup_child redirect fd 2 underneath it.
        sys.stderr.flush()
        sys.stderr = _Messages(
            open(2, "wb", closefd=False),
            encoding=sys.stderr.encoding,
            errors="backslashreplace",
            line_buffering=True,
        )
    sys.stdout = sys.stderr
    return out


@contextlib.contextmanager
def native_output_to(path: Path | None) -> Iterator[None]:
    """While active, fd 1 and fd 2 append to the file `path` (a log): what native code says there is
    for whoever reads the log, and stays in it even when that code crashes the process. Nothing
    changes without a path or when the file cannot be opened: the words stay where they were."""
    if path is None:
        yield
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        with _fds_1_and_2_to(fd):
            yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def _fds_1_and_2_to(fd: int) -> Iterator[None]:
    """fd 1 and fd 2 write to `fd` while active (Python's buffers flushed on both sides of it)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for saved_fd in saved:
            os.close(saved_fd)


class CapturedOutput:
    text = ""  # what native code and Python wrote to fd 1 and fd 2 inside the block


@contextlib.contextmanager
def capture_native_output() -> Iterator[CapturedOutput]:
    """While active, fd 1 and fd 2 go to a temporary file; afterwards its text is in the result and is
    written on to fd 2 as well, so nothing is hidden from the log. For reading what MNN says about
    itself (a backend it does not have) in a process where nothing else writes meanwhile."""
    import tempfile

    captured = CapturedOutput()
    with tempfile.TemporaryFile() as sink:
        try:
            with _fds_1_and_2_to(sink.fileno()):
                yield captured
        finally:
            sink.seek(0)
            data = sink.read()
            captured.text = data.decode("utf-8", "replace")
            if data:
                os.write(2, data)
