"""Writing inside the model store without following links planted in it.

The store's folders live in the user's data folder, where anything running as
the user (or a copied-in folder) may have left a symbolic link. Writing,
truncating or deleting through such a link would change a file outside the
store, so every path the store writes is checked or opened with O_NOFOLLOW.
Hard links are not covered: the store never truncates a file it did not
create, it only replaces files with os.replace.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

from app.storage.durable_files import fsync_dir

# O_NOFOLLOW makes open() fail (ELOOP) on a symbolic link instead of writing through it;
# Windows has no such flag, and there only an administrator can create symbolic links.
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class UnsafePath(OSError):
    """A path inside the store is a link (or not a file) where Keyframe writes."""


def open_no_follow(path: Path, flags: int, mode: int = 0o644) -> int:
    """os.open that never follows a link at `path`: a link planted there is removed first.

    Unlinking a link never touches its target. A link planted again between the
    unlink and the open still fails the open (ELOOP), which is reported.
    """
    if path.is_symlink():
        path.unlink()
    try:
        return os.open(path, flags | O_NOFOLLOW | getattr(os, "O_BINARY", 0), mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePath(errno.ELOOP, f"{path} is a symbolic link; Keyframe does not write through links") from exc
        raise


def real_dir(path: Path) -> Path:
    """Makes `path` a real directory of the store: a link there is removed, never followed."""
    if path.is_symlink():
        path.unlink()
    path.mkdir(parents=True, exist_ok=True)
    return path


def check_no_links(base: Path, path: Path) -> None:
    """Raises UnsafePath if any folder between `base` and `path` is a link.

    `base` itself may be one: where the store's root lives is the user's choice.
    """
    current = base
    for part in path.relative_to(base).parts[:-1]:
        current = current / part
        if current.is_symlink():
            raise UnsafePath(
                errno.ELOOP,
                f"{current} is a symbolic link; Keyframe writes only into real folders of its model store "
                "(remove the link, or `models remove` the model, and try again)",
            )


def write_json_atomic(path: Path, data: object, indent: int | None = None, ensure_ascii: bool = True) -> None:
    """Replace `path` with `data` as JSON, all or nothing and durable: a temporary file beside it,
    fsynced, renamed over it, then the folder fsynced. The temporary name is opened without
    following links, so one planted there cannot make the write land outside the folder."""
    tmp = path.with_name(path.name + ".tmp")
    fd = open_no_follow(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with open(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=indent, ensure_ascii=ensure_ascii)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)
