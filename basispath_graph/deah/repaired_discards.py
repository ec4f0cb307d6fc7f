"""A repaired run's discards as one table: Step 3's, less the re-admitted ones, then the drops.

The repair (``deah.repair``) re-admits some of SDVChain's discards and drops some union paths.
Listing the result as records cost about 5 kB a discard (ResNet-50 x1/8: 186,536 records, 1 GB:
each ``Discard`` holds four tuples of weight ids). ``RepairedDiscards`` keeps Step 3's table as
it is, cut around the re-admitted rows, and the drops as (substructure, rows, their ``Repair``
records): a ``DiscardedList`` reads it like Step 3's own table, a record made when read, in the
order the listing had (Step 3's discards in table order, then the drops in repair order).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .discard_table import PartTable
from .repair_list import ReadmittedRows

__all__ = ["RepairedDiscards"]


class _Segment:
    """Positions lo .. hi - 1 of a part of the source table."""

    def __init__(self, part, lo: int, hi: int):
        self.part, self.lo, self.hi, self.idx = part, lo, hi, part.idx

    def __len__(self) -> int:
        return self.hi - self.lo

    def shifted(self, which: slice) -> slice:
        a, b, _ = which.indices(len(self))
        return slice(self.lo + a, self.lo + b)

    def rows_of(self, which: slice) -> np.ndarray:
        return self.part.rows_of(self.shifted(which))


class _Drops:
    """Union rows of one substructure the repair dropped, with their ``Repair`` records."""

    def __init__(self, idx, rows: np.ndarray, repairs: list):
        self.idx, self.rows, self.repairs = idx, rows, repairs

    def __len__(self) -> int:
        return len(self.rows)

    def rows_of(self, which: slice) -> np.ndarray:
        return self.rows[which]


class RepairedDiscards(PartTable):
    """``source`` (Step 3's table) less the (substructure, row) in ``readmitted``, then
    ``drops``: (substructure, rows, Repair records) in repair order."""

    def __init__(self, source: PartTable, readmitted: ReadmittedRows, drops: list[tuple[object, np.ndarray, list]]):
        super().__init__(source.network, source.bases)
        self.source = source
        gone = readmitted.by_key()
        for part in source._parts:
            cuts = [len(part)]
            if part.idx in gone:  # positions of its re-admitted rows
                cuts = np.flatnonzero(np.isin(part.rows_of(slice(None)), gone[part.idx])).tolist() + cuts
            lo = 0
            for cut in cuts:
                if cut > lo:
                    self._add(_Segment(part, lo, cut))
                lo = cut + 1
        for idx, rows, repairs in drops:
            self._add(_Drops(idx, rows, repairs))

    def _materialise(self, part, which: slice) -> Iterator:
        if isinstance(part, _Drops):
            yield from part.repairs[which]
        else:
            yield from self.source._materialise(part.part, part.shifted(which))
