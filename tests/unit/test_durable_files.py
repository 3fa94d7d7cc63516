"""One fsync of a folder, one error policy: for session logs, model files and settings alike."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

from app.storage.durable_files import fsync_dir
from app.storage.safefs import write_json_atomic

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="folders are fsynced on POSIX only")


def test_an_atomic_json_write_makes_its_rename_durable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[tuple[int, int]] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        st = os.fstat(fd)
        synced.append((st.st_dev, st.st_ino))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    write_json_atomic(tmp_path / "settings.json", {"a": 1})
    folder = tmp_path.stat()
    assert (folder.st_dev, folder.st_ino) in synced  # the folder, after the file itself


@pytest.mark.parametrize(("code", "raised"), [(errno.EINVAL, False), (errno.ENOTSUP, False), (errno.EIO, True)])
def test_only_a_file_system_that_cannot_sync_folders_is_excused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, raised: bool
) -> None:
    def failing(fd: int) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", failing)
    if raised:
        with pytest.raises(OSError, match=os.strerror(code)):
            fsync_dir(tmp_path)
    else:
        fsync_dir(tmp_path)
