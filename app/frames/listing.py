"""Command-line inputs (files and folders) to a list of images to analyse.

Nothing here raises for a bad input: a name that cannot be opened, a folder that
cannot be read, an empty folder or an empty argument becomes an item carrying its
`ImageRejected`, so a batch reports it and goes on. Files left out of a folder are
listed in `skipped`, never dropped without a word.

A folder's regular files are chosen by suffix *or* content: a JPEG named `.heic`
or without a suffix is analysed; a damaged `.jpg` is kept so it is reported; any
other file is skipped and reported. Sub-folders are not searched. Only regular
files are ever opened (a FIFO would block a reader), and then without blocking.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from app.frames.intake import ImageRejected, display_name
from app.storage.small_file import open_regular

IMAGE_SUFFIXES = frozenset(
    {".jpg", ".jpeg", ".jpe", ".jfif", ".png", ".bmp", ".webp", ".gif", ".tif", ".tiff", ".avif"}
)
# Image kinds the app cannot decode: analysed anyway, so the file gets its own error.
FOREIGN_IMAGE_SUFFIXES = frozenset({".heic", ".heif"})
_SNIFF_BYTES = 32


@dataclass(frozen=True)
class InputItem:
    """One image to analyse. `path` opens it; `display` names it in output (a
    printable str, non-UTF-8 bytes as \\xNN). With `error` set, report it instead."""

    path: Path | None
    display: str
    error: ImageRejected | None = None


@dataclass(frozen=True)
class SkippedFile:
    display: str
    why: str


@dataclass
class ListingReport:
    items: list[InputItem] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)

    @property
    def errors(self) -> list[InputItem]:
        return [item for item in self.items if item.error is not None]

    def notes(self, limit: int = 10) -> list[str]:
        """Lines for stderr: what was left out of folders (first `limit` names)."""
        if not self.skipped:
            return []
        names = ", ".join(f"{s.display} ({s.why})" for s in self.skipped[:limit])
        more = f" and {len(self.skipped) - limit} more" if len(self.skipped) > limit else ""
        return [f"skipped {len(self.skipped)} file(s) that are not images: {names}{more}"]


def named_image(name: str) -> bool:
    """An image by its name: the suffixes the app reads, and HEIF (so it is reported, not skipped)."""
    suffix = os.path.splitext(name)[1].lower()
    return suffix in IMAGE_SUFFIXES or suffix in FOREIGN_IMAGE_SUFFIXES


def is_image(name: str, data: bytes) -> bool:
    """The rule for a folder's files: an image by its name or by its first bytes. A damaged .jpg is
    kept (it becomes that file's error); a notes.txt is left out."""
    return named_image(name) or looks_like_image(data[:_SNIFF_BYTES])


def looks_like_image(head: bytes | None) -> bool:
    """Magic numbers of the still-image formats (and HEIF, so it is reported, not skipped)."""
    if not head:
        return False
    return (
        head.startswith((b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"BM"))
        or head.startswith((b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"))
        or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")
        or (head[4:8] == b"ftyp" and head[8:12] in (b"avif", b"avis", b"heic", b"heix", b"heim", b"heis", b"mif1"))
    )


def list_inputs(args: Iterable[str | os.PathLike[str]]) -> ListingReport:
    """Expand command-line arguments; folders in name order, files as given."""
    report = ListingReport()
    for arg in args:
        shown = display_name(arg)
        if os.fspath(arg) in ("", b""):
            report.items.append(InputItem(None, '""', ImageRejected("empty_name", 'an empty file name ("") was given')))
            continue
        path = Path(arg)
        try:
            is_dir = stat.S_ISDIR(os.stat(path).st_mode)
        except (OSError, ValueError):
            is_dir = False  # read_image_file names the exact problem (missing, too long, loop...)
        if is_dir:
            _list_folder(path, shown, report)
        else:
            report.items.append(InputItem(path, shown))
    return report


def _list_folder(folder: Path, shown: str, report: ListingReport) -> None:
    try:
        with os.scandir(folder) as it:
            entries = sorted(((e.name, Path(e.path)) for e in it), key=lambda e: os.fsencode(e[0]))
    except OSError as exc:
        error = ImageRejected("unreadable_folder", f"{shown}: cannot list the folder ({exc.strerror or exc})")
        report.items.append(InputItem(folder, shown, error))
        return
    found = 0
    for name, path in entries:
        item_shown = display_name(path)
        by_name = named_image(name)
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError) as exc:
            if by_name:  # e.g. a dangling link or a link loop named .jpg: reported as its own error
                report.items.append(InputItem(path, item_shown))
                found += 1
            else:
                report.skipped.append(SkippedFile(item_shown, f"cannot be read: {getattr(exc, 'strerror', exc)}"))
            continue
        if stat.S_ISDIR(mode):
            report.skipped.append(SkippedFile(item_shown, "a folder; folders inside are not searched"))
        elif not stat.S_ISREG(mode):
            if by_name:
                report.items.append(InputItem(path, item_shown))
                found += 1
            else:
                report.skipped.append(SkippedFile(item_shown, "not a regular file"))
        else:
            head = b"" if by_name else _head(path)
            if by_name or looks_like_image(head):
                report.items.append(InputItem(path, item_shown))
                found += 1
            else:
                report.skipped.append(SkippedFile(item_shown, "not an image" if head is not None else "cannot be read"))
    if not found:
        error = ImageRejected("no_images", f"{shown}: the folder contains no images")
        report.items.append(InputItem(folder, shown, error))


def _head(path: Path) -> bytes | None:
    """The first bytes of a regular file, without blocking; None when unreadable."""
    try:
        with open_regular(path) as fh:  # refuses what replaced it since the stat above
            return fh.read(_SNIFF_BYTES)
    except OSError:
        return None
