"""Faithful deah's discards on a layer DAG core, each record made when read.

Listing them as ``DiscardedPath`` records (three tuples of a 35-layer path, about 1 kB each)
was most of the run's memory: Inception-v3 x1/32 held its 495,794 discards in about 1.8 GB of a
2.17 GB peak, and spelling them one row at a time took a third of its time. ``SdvChainDiscards``
keeps Step 3's table (less the re-admitted rows: ``RepairedDiscards``) and the repair's drops
(``repairs_that_drop``: spelled when read) and makes a record, with its taps, when one is read,
in the order the listing had: Step 3's discards in table order, then the drops in repair order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ..deah.discard_table import PartTable, RecordSequence
from ..discarded import ITER_ROWS, DiscardedPath, first_named
from ..deah.repair_list import path_key, position_named
from .blocks import GeneralBlock, general_path_keys, general_rows_named
from .model import GeneralNetwork

__all__ = ["SdvChainDiscards"]


class SdvChainDiscards(RecordSequence):
    """``table``'s discards (rows of ``bases``), then ``drops`` (``Repair`` records);
    ``certificates``, when set, one per discard (listed runs: ``LISTED_DAG_DISCARDS``), otherwise
    each record's certificate is empty and ``Result.why`` makes it."""

    def __init__(self, net: GeneralNetwork, bases: dict[int, GeneralBlock], table: PartTable, drops: Sequence):
        self.net, self.bases, self.table, self.drops = net, bases, table, drops
        self.certificates: list | None = None

    def __len__(self) -> int:
        return len(self.table) + len(self.drops)

    def _certificate(self, k: int) -> list:
        return self.certificates[k] if self.certificates is not None else []

    def _item(self, k: int) -> DiscardedPath:
        if k >= len(self.table):
            return self._dropped(k, self.drops[k - len(self.table)])
        sub, row = self.table.locate(k)
        layers, nodes, taps = general_path_keys(self.net, self.bases[sub].take([row]))[0]
        return DiscardedPath(layers, nodes, sub, self.table[k], self._certificate(k), taps=taps)

    def _dropped(self, k: int, r) -> DiscardedPath:
        return DiscardedPath(r.layers, r.indices, r.substructure, r, self._certificate(k), taps=r.taps)

    def __iter__(self) -> Iterator[DiscardedPath]:
        reasons, k = iter(self.table), 0
        for sub, rows in self.table.row_runs(ITER_ROWS):  # a run of rows spelled at once
            for layers, nodes, taps in general_path_keys(self.net, self.bases[sub].take(rows)):
                yield DiscardedPath(layers, nodes, sub, next(reasons), self._certificate(k), taps=taps)
                k += 1
        for r in self.drops:
            yield self._dropped(k, r)
            k += 1

    def position(self, layers, indices, taps) -> int | None:
        """Where the path (``indices`` along ``layers``, with ``taps``, None on identity hops) is
        in the list, or None: found by rows, a run at a time, no record made (as
        ``DiscardedList.position``)."""
        key = path_key(layers, indices, taps)
        matches = general_rows_named(self.net, key)
        k = first_named(((self.bases[sub], rows) for sub, rows in self.table.row_runs(ITER_ROWS)), matches)
        if k is not None:
            return k
        k = position_named(self.drops, key, matches)
        return None if k is None else len(self.table) + k
