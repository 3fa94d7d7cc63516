"""What an MNN graph file (`*.mnn`) needs from its weight file, read from the FlatBuffer by hand.

MNN keeps a model's large constants out of the graph. The parameter table of
such an op records `external = [offset, size, size, ...]`: the runs of bytes it
reads from the weight file, back to back from `offset` (schema/default/*.fbs;
the converter's RemoveParams.cpp writes them so). MNN seeks there without
checking the file's length, so a truncated or swapped weight file crashes the
process. The end of the furthest run is what the weight file must hold at least.

Only the tables on the way are read — Net -> oplists and subgraphs[].nodes -> Op
-> its parameter's `external` — through a memory map, so a graph of any size
costs a few page reads per op, and every offset is checked against the file
before it is followed: a damaged graph is a GraphError, never a crash here.
Field numbers follow MNN 3.6's schema (append-only, as FlatBuffers requires).
"""

from __future__ import annotations

import itertools
import mmap
import struct
from collections.abc import Iterator
from pathlib import Path

from app.storage.small_file import open_regular

# A FlatBuffer starts with a 4-byte root offset; the root table needs a vtable of at least 4 bytes.
FLATBUFFER_MIN = 16

# Field slots (the n-th field of a table, from 0) in schema/default/MNN.fbs.
_NET_OPLISTS, _NET_SUBGRAPHS = 3, 10
_SUBGRAPH_NODES = 4
_OP_MAIN_TYPE, _OP_MAIN, _OP_EXTERNAL_PATH = 1, 2, 7
# OpParameter union type -> slot of its table's `external` field: Blob (a constant tensor),
# Convolution2D (also matrix products), Scale, Convolution3D, LayerNorm, GroupNorm.
_EXTERNAL_SLOT = {7: 9, 9: 6, 58: 3, 80: 3, 88: 5, 95: 6}


class GraphError(ValueError):
    """Not a well-formed MNN graph; the message says why, without the file's name."""


class _FlatBuffer:
    def __init__(self, data: mmap.mmap) -> None:
        self._data = data
        self._size = len(data)

    def _read(self, fmt: str, pos: int) -> tuple[int, ...]:
        if pos < 0 or pos + struct.calcsize(fmt) > self._size:
            raise GraphError("not an MNN model (damaged FlatBuffer: an offset points outside the file)")
        return struct.unpack_from(fmt, self._data, pos)

    def root(self) -> int:
        (root,) = self._read("<I", 0)
        if root % 4 or not 4 <= root <= self._size - 4:
            raise GraphError(f"not an MNN model (bad FlatBuffer root offset {root})")
        return self.table(root)

    def table(self, pos: int) -> int:
        """`pos`, checked to be a table whose vtable and fields lie in the file."""
        (back,) = self._read("<i", pos)
        vtable = pos - back
        vsize, tsize = self._read("<HH", vtable)
        if vsize < 4 or vsize % 2 or vtable + vsize > self._size or tsize < 4 or pos + tsize > self._size:
            raise GraphError("not an MNN model (damaged FlatBuffer header)")
        return pos

    def _field(self, table: int, slot: int) -> int | None:
        (back,) = self._read("<i", table)
        vtable = table - back
        (vsize,) = self._read("<H", vtable)
        if 4 + 2 * slot >= vsize:
            return None  # written by an older schema: the field's default
        (offset,) = self._read("<H", vtable + 4 + 2 * slot)
        return table + offset if offset else None

    def byte(self, table: int, slot: int) -> int:
        pos = self._field(table, slot)
        return 0 if pos is None else self._read("<B", pos)[0]

    def ref(self, table: int, slot: int) -> int | None:
        """Where the table, vector or string in this field starts, or None when absent."""
        pos = self._field(table, slot)
        return None if pos is None else pos + self._read("<I", pos)[0]

    def vector(self, table: int, slot: int, item_size: int) -> tuple[int, int]:
        """(first item, count) of the vector in this field, checked to lie in the file; (0, 0) when absent."""
        pos = self.ref(table, slot)
        if pos is None:
            return 0, 0
        (count,) = self._read("<I", pos)
        if pos + 4 + count * item_size > self._size:
            raise GraphError("not an MNN model (damaged FlatBuffer: a list runs past the end of the file)")
        return pos + 4, count

    def tables(self, table: int, slot: int) -> Iterator[int]:
        start, count = self.vector(table, slot, 4)
        for pos in range(start, start + 4 * count, 4):
            yield self.table(pos + self._read("<I", pos)[0])

    def int64s(self, start: int, count: int) -> tuple[int, ...]:
        return self._read(f"<{count}q", start)


def _op_data_end(fb: _FlatBuffer, op: int) -> int:
    """The end of the external data this op reads from the graph's weight file; 0 for none."""
    slot = _EXTERNAL_SLOT.get(fb.byte(op, _OP_MAIN_TYPE))
    main = fb.ref(op, _OP_MAIN)
    if slot is None or main is None or fb.ref(op, _OP_EXTERNAL_PATH) is not None:
        return 0  # no external data, or in a file of the op's own
    start, count = fb.vector(fb.table(main), slot, 8)
    if count < 2:
        return 0  # MNN reads external data only when the list gives a size (USE_EXTERNAL_DATA)
    offset, *sizes = fb.int64s(start, count)
    if offset < 0 or min(sizes) < 0:
        raise GraphError("not an MNN model (damaged FlatBuffer: a negative weight offset or size)")
    return offset + sum(sizes)


def weight_bytes_needed(path: Path) -> int:
    """How many bytes of its weight file the MNN graph at `path` reads at least (0: it reads none).

    GraphError when the file is not a well-formed graph, OSError when it cannot be read.
    """
    with open_regular(path) as fh:
        size = fh.seek(0, 2)
        if size < FLATBUFFER_MIN:
            raise GraphError(f"{size} bytes is too small to be an MNN model")
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
            fb = _FlatBuffer(data)
            net = fb.root()
            subgraph_ops = (fb.tables(sub, _SUBGRAPH_NODES) for sub in fb.tables(net, _NET_SUBGRAPHS))
            ops = itertools.chain(fb.tables(net, _NET_OPLISTS), *subgraph_ops)
            return max((_op_data_end(fb, op) for op in ops), default=0)
