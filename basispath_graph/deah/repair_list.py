"""The repair's records as a sequence whose drops and re-admissions are spelled when read.

A drop names a union path by its layers and neurons (``Repair``): about 1.4 kB of tuples and int
objects for a 50-layer path, and whole ResNet-50's faithful union has 857,472 drops (1.2 GB held
from the repair to the end of the run). ``RepairList`` keeps each run of drops as its block and
rows and spells a ``Repair`` when it is read (a chunk of rows made at once when iterated). So it
does the re-admissions the compiled pass decides a run at a time: Inception-v3 x1/8 re-admits
most of its 549,042 repairs, and held as records (with their (substructure, row) in a set) they
took 207 MiB. The Python pass's re-admissions and the additions, few, stay records. Order,
length, equality and every record read are those of the list it replaces.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from ..discarded import first_named

__all__ = ["ReadmittedRows", "RepairList", "SpelledRun", "path_key", "position_named", "repair_counts", "repairs_that_drop", "repairs_that_keep",
           "repairs_that_readmit"]

_ROWS = 1 << 14  # records spelled at once when iterated


class SpelledRun(Sequence):
    """Rows ``rows`` of ``block`` the repair dropped or re-admitted (``action``), their records
    made when read: ``record(made, k)`` is the ``Repair`` for row k of the rows made."""

    def __init__(self, block, rows: np.ndarray, record: Callable, action: str = "drop"):
        self.block, self.rows, self.record, self.action = block, rows, record, action

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
    """Records in the order the repair made them: runs of drops (``SpelledRun``), then
    re-admissions, as runs or records (``append``), and additions. Compares equal to any
    sequence of the same records."""

    def __init__(self, records: Sequence = ()):
        self.parts: list[Sequence] = [list(records)] if records else []

    def append(self, record) -> None:
        if not self.parts or not isinstance(self.parts[-1], list):
            self.parts.append([])
        self.parts[-1].append(record)

    def add_run(self, run: SpelledRun) -> None:
        self.parts.append(run)

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


def _parts(repairs: Sequence) -> list:
    return repairs.parts if isinstance(repairs, RepairList) else [repairs]


def repairs_that_keep(repairs: Sequence) -> Iterator:
    """The re-admissions and additions of ``repairs`` (any sequence of records), in order; a
    ``RepairList``'s drops are skipped unread."""
    for part in _parts(repairs):
        if isinstance(part, SpelledRun):
            yield from (part if part.action != "drop" else ())
        else:
            yield from (r for r in part if r.action != "drop")


def repairs_that_drop(repairs: Sequence) -> Sequence:
    """The drops of ``repairs`` (any sequence of records), in order; a ``RepairList``'s still
    spelled only when read."""
    return _that(repairs, "drop")


def repairs_that_readmit(repairs: Sequence) -> Sequence:
    """The re-admissions of ``repairs``, as ``repairs_that_drop`` has the drops."""
    return _that(repairs, "readmit")


def _that(repairs: Sequence, action: str) -> RepairList:
    out = RepairList()
    for part in _parts(repairs):
        if isinstance(part, SpelledRun):
            if part.action == action:
                out.add_run(part)
        else:
            for r in part:
                if r.action == action:
                    out.append(r)
    return out


def path_key(layers, indices, taps=None) -> tuple:
    """A path as a ``Repair`` names it, in plain ints: (layers, indices), with its taps (None on
    identity hops) on a general network."""
    key = (tuple(int(l) for l in layers), tuple(int(i) for i in indices))
    return key if taps is None else (*key, tuple(None if t is None else int(t) for t in taps))


def position_named(repairs: Sequence, key: tuple, matches: Callable) -> int | None:
    """Where path ``key`` (``path_key``) is first among ``repairs`` (any sequence of records),
    or None: a ``RepairList``'s runs searched unspelled, by ``matches`` (``discarded.first_named``'s:
    the positions among a run's rows whose path is ``key``), a record by its key."""
    k = 0
    for part in _parts(repairs):
        if isinstance(part, SpelledRun):
            hit = first_named([(part.block, part.rows)], matches)
            if hit is not None:
                return k + hit
        else:
            for j, r in enumerate(part):
                if path_key(r.layers, r.indices, r.taps) == key:
                    return k + j
        k += len(part)
    return None


def repair_counts(repairs: Sequence) -> Counter:
    """Records per action; a ``RepairList``'s runs counted unread."""
    out: Counter = Counter()
    for part in _parts(repairs):
        if isinstance(part, SpelledRun):
            out[part.action] += len(part)
        else:
            out.update(r.action for r in part)
    return out


class ReadmittedRows:
    """The discards the repair re-admitted, as (key, rows) runs: what a set of (key, row)
    pairs said, without an int object and a tuple per row. Iterates as those pairs; equal to a
    set (or another ``ReadmittedRows``) of the same pairs."""

    def __init__(self):
        self.runs: list[tuple[object, np.ndarray]] = []

    def add(self, key, rows) -> None:
        self.runs.append((key, np.asarray(rows, dtype=np.int64).reshape(-1)))

    def by_key(self) -> dict:
        """key -> its re-admitted rows, one array."""
        out: dict = {}
        for key, rows in self.runs:
            out.setdefault(key, []).append(rows)
        return {key: np.concatenate(rows) for key, rows in out.items()}

    def __len__(self) -> int:
        return sum(len(rows) for _, rows in self.runs)

    def __iter__(self) -> Iterator:
        for key, rows in self.runs:
            for row in rows.tolist():
                yield key, row

    def __eq__(self, other) -> bool:
        return isinstance(other, (ReadmittedRows, set, frozenset)) and set(self) == set(other)

    __hash__ = None  # type: ignore[assignment]
