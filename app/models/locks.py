"""One lock per model, held by whoever writes into that model's folder.

Policy: fail fast. A second download (or import/remove) of the same model,
in this process or another, raises ModelBusy with the holder's pid instead of
waiting: a user who starts the same 1.5 GB download twice wants to be told,
not to watch a second progress bar sit still.

The lock is an OS advisory lock (flock; msvcrt on Windows) on a small file, so
it disappears with the process that held it, even after SIGKILL: there is no
stale lock to clean up. flock locks belong to the open file, so two
ModelLock objects in one process exclude each other too.

`held` is the same lock for a short critical section where waiting is right
(a session review: read the log, then append what the reading allowed).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from app.storage.safefs import open_no_follow


class ModelBusy(RuntimeError):
    pass


class ModelLock:
    def __init__(self, path: Path, model_id: str) -> None:
        self.path = path
        self.model_id = model_id
        self._fd: int | None = None

    def acquire(self) -> None:
        if self._fd is not None:
            raise RuntimeError(f"lock {self.path} is already held by this object")
        if self.path.parent.is_symlink():
            self.path.parent.unlink()  # a planted link must not carry the locks (and their truncation) elsewhere
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # Never through a link: the lock file is truncated below, and a link would truncate its target.
        fd = open_no_follow(self.path, os.O_RDWR | os.O_CREAT)
        if not _try_lock(fd):
            holder = _read_pid(fd)
            os.close(fd)
            who = f" (pid {holder})" if holder else ""
            raise ModelBusy(
                f"{self.model_id} is busy: another Keyframe download, import or removal of this model "
                f"is running{who}. Wait for it to finish or stop it, then try again."
            )
        # The pid is only for the message above; the lock itself is the flock.
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            # Unlinking the file would let a third process lock a new inode while a
            # second still waits on the old one; the empty file is left in place.
            os.ftruncate(fd, 0)
            _unlock(fd)
            os.close(fd)

    def __enter__(self) -> ModelLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


@contextlib.contextmanager
def held(fd: int) -> Iterator[None]:
    """An exclusive lock on the open file `fd`, waiting while another holder has it: another process, or
    another open of the same file in this one (not another thread using the same `fd`)."""
    _wait_lock(fd)
    try:
        yield
    finally:
        _unlock(fd)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except (OSError, AttributeError):
        return None
    return int(text) if text.isdigit() else None


if sys.platform == "win32":  # pragma: no cover - not exercised on the Linux test machine
    import msvcrt

    # Windows locks are mandatory: lock one byte far past any data (below 2 GiB, for a 32-bit CRT offset),
    # so reading the file (a session log under review) is never refused.
    _REGION = (1 << 31) - 2

    def _locking(fd: int, mode: int) -> None:
        position = os.lseek(fd, 0, os.SEEK_CUR)  # kept: ModelLock writes its pid where the file was
        os.lseek(fd, _REGION, os.SEEK_SET)
        try:
            msvcrt.locking(fd, mode, 1)
        finally:
            os.lseek(fd, position, os.SEEK_SET)

    def _try_lock(fd: int) -> bool:
        try:
            _locking(fd, msvcrt.LK_NBLCK)
            return True
        except OSError:
            return False

    def _wait_lock(fd: int) -> None:
        _locking(fd, msvcrt.LK_LOCK)  # retries for 10 s, then OSError

    def _unlock(fd: int) -> None:
        _locking(fd, msvcrt.LK_UNLCK)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def _wait_lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
