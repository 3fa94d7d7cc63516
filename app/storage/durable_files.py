"""Making a folder's entries durable: the one `fsync_dir` of the app (session logs, model files, settings).

A file fsynced and then renamed or created is not on disk until the folder that holds
it is fsynced too: a power cut could otherwise lose the whole file.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


def fsync_dir(folder: Path) -> None:
    """Makes `folder`'s entries (a new or renamed file, a new sub-folder) durable. POSIX only.

    A file system that cannot sync a folder (EINVAL, ENOTSUP) is accepted as it is; any
    other error is raised, because the caller's file may then not survive a power cut.
    """
    if os.name != "posix":
        return  # Windows cannot open a folder for fsync; NTFS journals the metadata itself
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)
