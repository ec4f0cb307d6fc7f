"""The discarded paths of a solve, with their reasons and certificates.

``DiscardedPath`` is one record. ``DiscardedList`` keeps Step 3's discards as arrays (its table:
deah-complete's ``DiscardTable`` or SDVChain's ``SdvDiscards``, plus certificates in CSR form) and
builds records only when they are read, so that solving a network with millions of discards does
not build millions of objects.
Both read the same way: ``len``, indexing, iteration; ``certificate_lengths`` is the bulk read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from .deah.discard_table import PartTable, RecordSequence
from .network import PathBlock, rows_matching

__all__ = ["DiscardedPath", "DiscardedList", "certificate_lengths", "discards_named", "first_named", "layered_rows_named"]


@dataclass
class DiscardedPath:
    """A path DEAH did not keep, why (a Step 3 ``Discard`` or a ``Repair``), and its
    certificate over the final basis."""

    layers: tuple[int, ...]
    indices: tuple[int, ...]
    substructure: int | None
    reason: object
    certificate: list[tuple[int, int]] = field(default_factory=list)  # (basis index, coef)
    taps: tuple[int, ...] | None = None  # a general network's path (layers, neurons, taps): faithful deah on a layer DAG


class DiscardedList(RecordSequence):
    """Step 3's discards in its order, kept as arrays (a repaired run's: less the re-admitted ones,
    then the drops, ``deah.repaired_discards``). The certificates are CSR arrays set by ``solve``
    (``set_certificates``: deah-complete's, listed), or made for each discard when it is read (a
    described deah-complete run, faithful deah: ``on_demand``, an object with ``certificate(k)``,
    and ``block_certificates(block)`` when a made block's are made together, as iteration does a
    run of up to ``ITER_ROWS`` at a time; ``deah.on_demand_certificates``)."""

    def __init__(self, bases: dict[int, PathBlock], table: PartTable):
        self.bases, self.table = bases, table
        self._subs = self._rows = None
        # Certificates, CSR: discard k has basis indices idx[ptr[k]:ptr[k+1]] with coefficients.
        self.ptr: np.ndarray | None = None
        self.idx = np.zeros(0, dtype=np.int64)
        self.coef = np.zeros(0, dtype=np.int64)
        self.on_demand = None

    @property
    def subs(self) -> np.ndarray:
        """Substructure of every discard (listed when first read)."""
        if self._subs is None:
            self._subs = self.table.substructures()
        return self._subs

    @property
    def rows(self) -> np.ndarray:
        """Row in its B_r of every discard (listed when first read)."""
        if self._rows is None:
            self._rows = self.table.rows()
        return self._rows

    def set_certificates(self, ptr: np.ndarray, idx: np.ndarray, coef: np.ndarray) -> None:
        self.ptr, self.idx, self.coef = ptr, idx, coef

    def __len__(self) -> int:
        return len(self.table)

    def _certificate(self, k: int) -> list[tuple[int, int]]:
        if self.ptr is not None:
            lo, hi = self.ptr[k], self.ptr[k + 1]
            return list(zip(self.idx[lo:hi].tolist(), self.coef[lo:hi].tolist()))
        return self.on_demand.certificate(k) if self.on_demand is not None else []

    def path(self, k: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(layers, neurons) of discard k, without its record (its certificate is not made)."""
        sub, row = self.table.locate(k)
        block = self.bases[sub]
        return block.layers, tuple(row_nodes(block, row))

    def _item(self, k: int) -> DiscardedPath:
        sub, row = self.table.locate(k)
        block = self.bases[sub]
        return DiscardedPath(block.layers, tuple(row_nodes(block, row)), sub, self.table[k], self._certificate(k))

    def __iter__(self) -> Iterator[DiscardedPath]:
        listed = self.ptr is not None
        if listed:
            idx, coef, ptr = self.idx.tolist(), self.coef.tolist(), self.ptr.tolist()
        by_block = not listed and hasattr(self.on_demand, "block_certificates")  # a run's certificates made together
        reasons, k = iter(self.table), 0
        for sub, rows in self.table.row_runs(ITER_ROWS):  # a described B_r's rows made a run at a time
            block = self.bases[sub]
            made = block.take(rows)
            made_certificates = self.on_demand.block_certificates(made) if by_block else None
            for j, nodes in enumerate(made.nodes.tolist()):
                if listed:
                    certificate = list(zip(idx[ptr[k]:ptr[k + 1]], coef[ptr[k]:ptr[k + 1]]))
                else:
                    certificate = made_certificates[j] if by_block else self._certificate(k)
                yield DiscardedPath(block.layers, tuple(nodes), sub, next(reasons), certificate)
                k += 1

    def position(self, layers, indices, taps=None) -> int | None:
        """Where the path (``indices`` along ``layers``) is in the list; None if it is not (a
        path with ``taps``, a general one, never is). Rows with its first neuron are made, a run
        at a time (a described B_r's rows are made on reading)."""
        if taps is not None:
            return None
        runs = ((self.bases[sub], rows) for sub, rows in self.table.row_runs(ITER_ROWS))
        return first_named(runs, layered_rows_named(layers, indices))

    def blocks(self) -> list[PathBlock]:
        """The discarded paths as blocks, in order (one block per run of equal substructure)."""
        return list(self.iter_blocks())

    def iter_blocks(self, chunk_rows: int | None = None, lazy: bool = False) -> Iterator[PathBlock]:
        """The discarded paths as blocks, in order, each made when reached: one per run of equal
        substructure, cut into blocks of at most ``chunk_rows`` paths when given (ResNet-50's
        49 M discards in the memory of one block). ``lazy``: a described B_r's rows as a
        ``KeptRows`` view instead, made only as far as asked (``paths_through`` reads one column)."""
        for sub, rows in self.table.row_runs(chunk_rows):
            block = self.bases[sub]
            yield block.view(rows) if lazy else block.take(rows)

    @property
    def on_demand_only(self) -> bool:
        """Whether the certificates are made only when a discard is read (a described
        deah-complete run, faithful deah)."""
        return self.ptr is None and self.on_demand is not None

    def certificate_lengths(self) -> np.ndarray | None:
        if self.on_demand_only:  # not listed: counting them would make every one
            return None
        return np.zeros(len(self), dtype=np.int64) if self.ptr is None else np.diff(self.ptr)


ITER_ROWS = 65_536  # discards' rows made at once when iterating


def discards_named(discards: PartTable, bases, keys: set, path_keys) -> Iterator[tuple[tuple, int]]:
    """(key, index among Step 3's ``discards``) of each discard whose path is named in ``keys``:
    the paths a repair re-admitted (``path_keys(block)``: each row's key, as the caller names a
    path). Rows are made a run of up to ``ITER_ROWS`` at a time, no record made (ResNet-18 has
    2.6 M discards)."""
    k = 0
    for sub, rows in discards.row_runs(ITER_ROWS):
        for j, key in enumerate(path_keys(bases[sub].take(rows))):
            if key in keys:
                yield key, k + j
        k += len(rows)


def first_named(runs: Iterable[tuple[object, object]], matches: Callable) -> int | None:
    """Where, counting the rows of ``runs`` ((block, rows) in order) one after the other, the
    first row is that ``matches(block, rows)`` finds (positions among ``rows`` whose path is the
    one sought); None if none is. Read ``ITER_ROWS`` rows at a time, no record made: a faithful
    run's ``why`` spelled every discard to find one path (Inception-v3 x1/16: 78 s of 2.0 M)."""
    k = 0
    for block, rows in runs:
        for lo in range(0, len(rows), ITER_ROWS):
            hit = matches(block, np.asarray(rows[lo : lo + ITER_ROWS]))
            if len(hit):
                return k + lo + int(hit[0])
        k += len(rows)
    return None


def layered_rows_named(layers, indices) -> Callable:
    """``matches`` for ``first_named`` on a layered network: the rows of ``block`` (a
    ``PathBlock`` or a described B_r) that are the path ``indices`` along ``layers``."""
    layers, want = tuple(int(l) for l in layers), np.asarray(indices, dtype=np.int64)

    def matches(block, rows: np.ndarray) -> np.ndarray:
        if tuple(int(l) for l in block.layers) != layers:
            return rows[:0]
        return rows_matching(block.view(rows), want)

    return matches


def row_nodes(block, row: int) -> list[int]:
    """Neurons of row ``row`` of a listed block or of a described B_r (made alone)."""
    if isinstance(block, PathBlock):
        return block.nodes[row].tolist()
    return block.take([row]).nodes[0].tolist()


def certificate_lengths(discarded) -> np.ndarray | None:
    """Number of basis paths in each discard's certificate (either kind of list); None when the
    certificates are made on demand (a described deah-complete run, faithful deah: ``why`` makes one)."""
    if isinstance(discarded, DiscardedList):
        return discarded.certificate_lengths()
    return np.array([len(d.certificate) for d in discarded], dtype=np.int64)
