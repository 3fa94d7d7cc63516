"""Opening and reading the files the app reads whole: settings, profiles, configs, manifests, labels, images.

Any of them may be replaced by something that is not a file. open() on a FIFO
waits for a writer for ever, and a device such as /dev/zero never ends, so a
plain read_text() hangs or fills memory. Here a file is opened without blocking,
refused unless it is a regular file (checked on the open descriptor, so no swap
after the check counts), and read with a cap the caller picks for its kind.

The refusals are OSErrors whose `strerror` reads as part of a sentence, so a
caller's "{path}: cannot read ({exc.strerror})" names the file and says why.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Callable
from typing import Any, BinaryIO

from app.core.sizes import size_words

_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)

FilePath = str | os.PathLike[str]


class NotAFile(OSError):
    """A folder, FIFO, device or socket where a file was expected."""


class TooLarge(OSError):
    """A file larger than its kind's cap; `size` may be a lower bound (the file grew while read)."""

    def __init__(self, path: FilePath, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size_words(size)}, over the limit of {size_words(limit)}", os.fspath(path))
        self.size = size
        self.limit = limit


class BadJSON(ValueError):
    """Bytes that are not a JSON document; the message says why, without the file's name."""


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder, not a file"
    what = next((words for test, words in _KINDS if test(mode)), "")
    return f"not a regular file ({what})" if what else "not a regular file"


def open_regular(path: FilePath) -> BinaryIO:
    """The open file at `path`, which is a regular file; NotAFile otherwise, or the OSError of open()."""
    fd = os.open(path, _OPEN_FLAGS)  # O_NONBLOCK: a FIFO opens at once instead of waiting for a writer
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotAFile(errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL, _kind(mode), os.fspath(path))
        # A regular file ignores O_NONBLOCK: reads below block and end as usual.
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_small_file(path: FilePath, limit: int) -> bytes:
    """All bytes of the regular file `path`, at most `limit` of them (TooLarge beyond)."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        data = b"" if size > limit else fh.read(limit + 1)  # +1: a file growing meanwhile is caught too
    if size > limit or len(data) > limit:
        raise TooLarge(path, max(size, len(data)), limit)
    return data


def read_small_json(
    path: FilePath, limit: int, *, bom: bool = True, parse_constant: Callable[[str], Any] | None = None
) -> Any:
    """The JSON document in the regular file `path` of at most `limit` bytes: OSError, or BadJSON.

    The text is UTF-8, after a byte-order mark when `bom`. Deep nesting, which makes
    Python's parser raise RecursionError, is BadJSON too.
    """
    data = read_small_file(path, limit)
    try:
        text = data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        raise BadJSON(f"not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    try:
        return json.loads(text, parse_constant=parse_constant)
    except json.JSONDecodeError as exc:
        raise BadJSON(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise BadJSON("not valid JSON (nested too deeply)") from None
    except ValueError as exc:  # what `parse_constant` refuses
        raise BadJSON(f"not valid JSON ({exc})") from None
