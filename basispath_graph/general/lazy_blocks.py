"""A basis as a sequence of blocks, some listed, some made only when asked for.

A *part* is either a ``GeneralBlock`` (listed) or an object with ``size`` (its paths) and
``block(start, stop)`` (rows start .. stop - 1 as a block), made on demand: a skeleton family
(``described.py``), a DEAH core block spelled in the general network or a tap lift
(``deah_solve.py``). A made part is cut into blocks of at most ``chunk_rows`` paths unless it
says ``chunked = False`` (a DEAH core block stays one block: its discards' substructures are
counted per block). Iterating makes one block at a time, so code that walks a basis block by
block runs in the memory of one block.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from .blocks import GeneralBlock

__all__ = ["CHUNK_ROWS", "LazyBlocks", "SpelledRows", "iter_chunks", "path_count"]

#: Paths of one made block: 2^18 rows x 50 layers of int32 nodes and taps are about 100 MB,
#: enough rows per block that per-block overheads vanish.
CHUNK_ROWS = 1 << 18


class LazyBlocks(Sequence):
    """The blocks of ``parts`` in order (see the module doc)."""

    def __init__(self, parts: list, chunk_rows: int = CHUNK_ROWS):
        self.parts, self.chunk_rows = list(parts), chunk_rows
        self._table: list[tuple[int, int, int]] = []  # (part, start, stop) of each block
        for p, part in enumerate(self.parts):
            if isinstance(part, GeneralBlock):
                self._table.append((p, 0, len(part)))
                continue
            step = chunk_rows if getattr(part, "chunked", True) else max(part.size, 1)
            for start in range(0, part.size, step):
                self._table.append((p, start, min(part.size, start + step)))
        self._starts = np.concatenate([[0], np.cumsum([stop - start for _, start, stop in self._table])]).astype(np.int64)

    def __len__(self) -> int:
        return len(self._table)

    def _make(self, p: int, start: int, stop: int) -> GeneralBlock:
        part = self.parts[p]
        if isinstance(part, GeneralBlock):
            return part if (start, stop) == (0, len(part)) else part.take(slice(start, stop))
        return part.block(start, stop)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._make(*self._table[index])

    def __iter__(self) -> Iterator[GeneralBlock]:
        return (self[i] for i in range(len(self)))

    def sizes(self) -> list[int]:
        """Paths of each block, without making any."""
        return [stop - start for _, start, stop in self._table]

    @property
    def path_count(self) -> int:
        return int(self._starts[-1])

    def path_at(self, index: int) -> GeneralBlock:
        """Path ``index`` as a block of one row (made alone, whatever its block's size)."""
        if not 0 <= index < self.path_count:
            raise IndexError(index)
        b = int(np.searchsorted(self._starts, index, side="right")) - 1
        p, start, _ = self._table[b]
        row = start + index - int(self._starts[b])
        return self._make(p, row, row + 1)


def path_count(basis) -> int:
    """Paths of a basis: a list of blocks or a ``LazyBlocks`` (counted without making any)."""
    sizes = getattr(basis, "sizes", None)
    return sum(sizes()) if sizes is not None else sum(len(b) for b in basis)


def iter_chunks(basis, chunk_rows: int = CHUNK_ROWS) -> Iterator:
    """The paths of ``basis`` (a ``LazyBlocks`` or a list of blocks with ``take``) in order, in
    blocks of at most ``chunk_rows`` paths, each made when reached, whatever a part says of its
    own chunking (a DEAH core block of ResNet-50 holds 25 M paths: code that only reads paths
    does not need it whole). A part with ``chunk(start, stop)`` gives its own blocks, made only
    as far as asked (``described.FamilyChunk``)."""
    if isinstance(basis, LazyBlocks):
        for p, part in enumerate(basis.parts):
            size = len(part) if isinstance(part, GeneralBlock) else part.size
            lazy = getattr(part, "chunk", None)  # a part that makes its rows only as far as asked
            for start in range(0, size, chunk_rows):
                stop = min(size, start + chunk_rows)
                yield lazy(start, stop) if lazy is not None else basis._make(p, start, stop)
        return
    for block in basis:
        if len(block) <= chunk_rows:
            yield block
            continue
        cut = getattr(block, "view", block.take)  # a described block's chunks made only as far as asked
        for start in range(0, len(block), chunk_rows):
            yield cut(np.arange(start, min(len(block), start + chunk_rows)))


class SpelledRows:
    """Rows of a layered block (a ``PathBlock`` or a described ``KeptRows``) in a general
    network's terms, made only as far as asked: ``spell(made, at)`` turns the made
    ``PathBlock`` of rows ``at`` (positions here) into the ``GeneralBlock`` of the same paths
    (a core's paths at tap 0, a tap lift's with its tap). ``column(k)`` reads the layered rows'
    column k without making them (what ``paths_through`` filters on: the general block's
    layers are the core's, position for position); ``take``, ``nodes``, ``taps`` make."""

    def __init__(self, rows, spell):
        self.rows, self.spell = rows, spell
        none = np.zeros(0, dtype=np.int64)
        empty = spell(rows.take(none), none)
        self.layers, self.hops = empty.layers, empty.hops

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, k: int) -> np.ndarray:
        return self.rows.column(k)

    def take(self, rows) -> GeneralBlock:
        at = np.arange(len(self), dtype=np.int64)[rows]
        return self.spell(self.rows.take(at), at)

    @property
    def nodes(self) -> np.ndarray:
        return self.take(slice(None)).nodes

    @property
    def taps(self) -> np.ndarray:
        return self.take(slice(None)).taps
