"""The discarded paths of a solve, with their reasons and certificates.

``DiscardedPath`` is one record. ``DiscardedList`` keeps deah-complete's discards as arrays (the
``DiscardTable`` of Step 3 plus certificates in CSR form) and builds records only when they are
read, so that solving a network with millions of discards does not build millions of objects.
Both read the same way: ``len``, indexing, iteration; ``certificate_lengths`` is the bulk read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from .deah.discard_table import DiscardTable, RecordSequence
from .network import PathBlock

__all__ = ["DiscardedPath", "DiscardedList", "certificate_lengths"]


@dataclass
class DiscardedPath:
    """A path DEAH did not keep, why (a Step 3 ``Discard`` or a ``Repair``), and its
    certificate over the final basis."""

    layers: tuple[int, ...]
    indices: tuple[int, ...]
    substructure: int | None
    reason: object
    certificate: list[tuple[int, int]] = field(default_factory=list)  # (basis index, coef)


class DiscardedList(RecordSequence):
    """deah-complete's discards in Step 3's order, kept as arrays."""

    def __init__(self, bases: dict[int, PathBlock], table: DiscardTable):
        self.bases, self.table = bases, table
        self.subs = table.substructures()
        self.rows = table.rows()
        # Certificates, CSR: discard k has basis indices idx[ptr[k]:ptr[k+1]] with coefficients.
        self.ptr = np.zeros(len(self.rows) + 1, dtype=np.int64)
        self.idx = np.zeros(0, dtype=np.int64)
        self.coef = np.zeros(0, dtype=np.int64)

    def set_certificates(self, ptr: np.ndarray, idx: np.ndarray, coef: np.ndarray) -> None:
        self.ptr, self.idx, self.coef = ptr, idx, coef

    def __len__(self) -> int:
        return len(self.rows)

    def _item(self, k: int) -> DiscardedPath:
        sub, row = int(self.subs[k]), int(self.rows[k])
        block = self.bases[sub]
        lo, hi = self.ptr[k], self.ptr[k + 1]
        cert = list(zip(self.idx[lo:hi].tolist(), self.coef[lo:hi].tolist()))
        return DiscardedPath(block.layers, tuple(block.nodes[row].tolist()), sub, self.table[k], cert)

    def __iter__(self) -> Iterator[DiscardedPath]:
        idx, coef, ptr = self.idx.tolist(), self.coef.tolist(), self.ptr.tolist()
        subs, rows = self.subs.tolist(), self.rows.tolist()
        for k, reason in enumerate(self.table):
            block = self.bases[subs[k]]
            lo, hi = ptr[k], ptr[k + 1]
            yield DiscardedPath(block.layers, tuple(block.nodes[rows[k]].tolist()), subs[k], reason, list(zip(idx[lo:hi], coef[lo:hi])))

    def blocks(self) -> list[PathBlock]:
        """The discarded paths as blocks, in order (one block per run of equal substructure)."""
        if len(self) == 0:
            return []
        cuts = np.flatnonzero(np.r_[True, np.diff(self.subs) != 0, True])
        out = []
        for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            block = self.bases[int(self.subs[lo])]
            out.append(PathBlock(block.layers, block.nodes[self.rows[lo:hi]]))
        return out

    def certificate_lengths(self) -> np.ndarray:
        return np.diff(self.ptr)


def certificate_lengths(discarded) -> np.ndarray:
    """Number of basis paths in each discard's certificate (either kind of list)."""
    if isinstance(discarded, DiscardedList):
        return discarded.certificate_lengths()
    return np.array([len(d.certificate) for d in discarded], dtype=np.int64)
