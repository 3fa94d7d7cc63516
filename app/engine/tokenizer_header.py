"""Read the special/stop token ids from an MNN tokenizer file.

MNN decides when to stop with the stop ids listed in its tokenizer file, but
the Python binding does not expose them. Both formats (`tokenizer.txt` and the
binary `.mtok`) start with the same three text lines::

    430 <type>
    <n_special> <n_stop> <n_prefix>
    <special ids...> <stop ids...> <prefix ids...>
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.storage.small_file import open_regular

MAGIC = 430


class TokenizerHeaderError(ValueError):
    pass


@dataclass(frozen=True)
class TokenizerHeader:
    tokenizer_type: int
    special_ids: tuple[int, ...]
    stop_ids: tuple[int, ...]
    prefix_ids: tuple[int, ...]


def read_tokenizer_header(path: Path) -> TokenizerHeader:
    try:
        with open_regular(path) as fh:  # the file may be large: only its three header lines, each capped
            lines = [fh.readline(1 << 20) for _ in range(3)]
    except OSError as exc:
        raise TokenizerHeaderError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    try:
        magic, ttype = (int(x) for x in lines[0].split()[:2])
        counts = [int(x) for x in lines[1].split()[:3]]
        ids = [int(x) for x in lines[2].split()] if sum(counts) else []
    except ValueError as exc:
        raise TokenizerHeaderError(f"{path}: not an MNN tokenizer file") from exc
    if magic != MAGIC or len(counts) != 3 or len(ids) < sum(counts):
        raise TokenizerHeaderError(f"{path}: not an MNN tokenizer file")
    n_special, n_stop, n_prefix = counts
    return TokenizerHeader(
        tokenizer_type=ttype,
        special_ids=tuple(ids[:n_special]),
        stop_ids=tuple(ids[n_special : n_special + n_stop]),
        prefix_ids=tuple(ids[n_special + n_stop : n_special + n_stop + n_prefix]),
    )
