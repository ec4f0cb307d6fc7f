"""The repair's records as a sequence whose drops are spelled when read.

A drop names a union path by its layers and neurons (``Repair``): about 1.4 kB of tuples and int
objects for a 50-layer path, and whole ResNet-50's faithful union has 857,472 drops (1.2 GB held
from the repair to the end of the run). ``RepairList`` keeps each run of drops as its block and
rows and spells a ``Repair`` when it is read (a chunk of rows made at once when iterated); the
re-admissions and additions, few, stay records. Order, length, equality and every record read
are those of the list it replaces.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence

import numpy as np

__all__ = ["RepairList", "SpelledDrops", "repair_counts", "repairs_that_drop", "repairs_that_keep"]

_ROWS = 1 << 14  # drops spelled at once when iterated


class SpelledDrops(Sequence):
    """Rows ``rows`` of ``block`` the repair dropped, their records made when read:
    ``record(made, k)`` is the drop's ``Repair`` for row k of the rows made."""

    action = "drop"

    def __init__(self, block, rows: np.ndarray, record: Callable):
        self.block, self.rows, self.record = block, rows, record

    def __len__(self) -> int:
        return len(self.rows)

    def _spelled(self, rows: np.ndarray) -> list:
        made = self.block.take(rows)
        return [self.record(made, k) for k in range(len(rows))]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._spelled(self.rows[i])
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._spelled(self.rows[i : i + 1])[0]

    def __iter__(self) -> Iterator:
        for lo in range(0, len(self.rows), _ROWS):
            yield from self._spelled(self.rows[lo : lo + _ROWS])


class RepairList(Sequence):
    """Records in the order the repair made them: runs of ``SpelledDrops``, then re-admissions
    and additions (``append``). Compares equal to any sequence of the same records."""

    def __init__(self, records: Sequence = ()):
        self.parts: list[Sequence] = [list(records)] if records else []

    def append(self, record) -> None:
        if not self.parts or not isinstance(self.parts[-1], list):
            self.parts.append([])
        self.parts[-1].append(record)

    def add_drops(self, drops: SpelledDrops) -> None:
        self.parts.append(drops)

    def __len__(self) -> int:
        return sum(len(p) for p in self.parts)

    def __iter__(self) -> Iterator:
        for part in self.parts:
            yield from part

    def __getitem__(self, i):
        if isinstance(i, slice):
            return list(self)[i]
        if i < 0:
            i += len(self)
        for part in self.parts:
            if 0 <= i < len(part):
                return part[i]
            i -= len(part)
        raise IndexError(i)

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RepairList({len(self)} records)"


def repairs_that_keep(repairs: Sequence) -> Iterator:
    """The re-admissions and additions of ``repairs`` (any sequence of records), in order; a
    ``RepairList``'s drops are skipped unread."""
    for part in repairs.parts if isinstance(repairs, RepairList) else [repairs]:
        if getattr(part, "action", None) != "drop":
            yield from (r for r in part if r.action != "drop")


def repairs_that_drop(repairs: Sequence) -> Sequence:
    """The drops of ``repairs`` (any sequence of records), in order; a ``RepairList``'s still
    spelled only when read."""
    out = RepairList()
    for part in repairs.parts if isinstance(repairs, RepairList) else [repairs]:
        if getattr(part, "action", None) == "drop":
            out.add_drops(part)
        else:
            for r in part:
                if r.action == "drop":
                    out.append(r)
    return out


def repair_counts(repairs: Sequence) -> Counter:
    """Records per action; a ``RepairList``'s drops counted unread."""
    out: Counter = Counter()
    for part in repairs.parts if isinstance(repairs, RepairList) else [repairs]:
        if getattr(part, "action", None) == "drop":
            out["drop"] += len(part)
        else:
            out.update(r.action for r in part)
    return out
