"""How many bytes: a model's files, everything under a folder, the free space where a folder will be."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable
from pathlib import Path


def files_bytes(folder: Path, paths: Iterable[str]) -> int:
    """Bytes of the files at `paths` under `folder`; one that is missing or unreadable counts 0."""
    total = 0
    for path in paths:
        with contextlib.suppress(OSError):
            total += (folder / path).stat().st_size
    return total


def folder_bytes(folder: Path) -> int:
    """Bytes of the regular files under `folder` (links are not followed; .part files count)."""
    total = 0
    if folder.is_symlink() or not folder.is_dir():
        return 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with contextlib.suppress(OSError):
                if not os.path.islink(path):
                    total += os.lstat(path).st_size
    return total


def free_bytes(path: Path) -> int:
    """Free space where `path` is or will be created: on the file system of its nearest existing folder."""
    probe = path
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    return shutil.disk_usage(probe).free
