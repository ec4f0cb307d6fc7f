"""The exact repair of a DEAH union that is not a basis, one for every network: greedy exact
elimination in three passes, every change recorded as a ``Repair`` (layered runs: ``solver``;
faithful deah on a layer DAG core: ``general/dag_sdvchain.py``; docs/deah-interpretation.md, "The
repair").

1. the union's kept paths in order: one dependent on the paths before it is dropped;
2. while the rank is short, the discards in the order Step 3 made them: one that raises the
   rank is re-admitted;
3. while the rank is still short, the fallback paths (a skeleton's) in order: one that raises
   the rank is added.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field

import numpy as np

from ..result import Repair
from ..verify import IncrementalBasis

__all__ = ["RepairOutcome", "exact_repair", "taken_blocks"]


@dataclass
class RepairOutcome:
    kept: dict = field(default_factory=dict)  # group key -> [(block, row)] kept, the union's rows then re-admitted ones
    readmitted: set = field(default_factory=set)  # (key, row) of the discards re-admitted
    added: list = field(default_factory=list)  # (block, row) of the fallback paths added
    repairs: list[Repair] = field(default_factory=list)


def exact_repair(target: int, union: Iterable[tuple[Hashable, object, np.ndarray]], discards: Iterable[tuple[Hashable, object, np.ndarray]],
                 fallback: Iterable, weight_ids: Callable, spell: Callable) -> RepairOutcome:
    """The three passes (the module doc) up to rank ``target`` (m - H). ``union``: (key, block,
    rows) in order (key: the substructure, or None); ``discards``: (key, block, rows), runs in
    the order Step 3 made them (``PartTable.row_runs``: a described B_r's rows made a run at a
    time, not one by one); ``fallback``: blocks; ``weight_ids(block)``: (paths, hops) weight ids;
    ``spell(block, k)``: (layers, indices, taps) of row ``k`` of a made block, as a ``Repair``
    names a path (the union's and the discards' runs pass the run made, the fallback its block)."""
    span, out = IncrementalBasis(None), RepairOutcome()
    # Rows are made a run at a time and spelled from that made block (``made``, position k): a
    # described B_r makes one row alone in tens of microseconds (dense-8x128: 373,761 drops).
    for key, block, rows in union:
        kept = out.kept.setdefault(key, [])
        made = block.take(rows)
        for k, (row, w) in enumerate(zip(rows.tolist(), weight_ids(made))):
            if span.add(w):
                kept.append((block, row))
            else:
                out.repairs.append(_repair("drop", spell(made, k), key))
    for key, block, rows in discards:
        if span.rank >= target:
            break
        made = block.take(rows)
        for k, (row, w) in enumerate(zip(rows.tolist(), weight_ids(made))):
            if span.rank >= target:
                break
            if span.add(w):
                out.kept.setdefault(key, []).append((block, row))
                out.readmitted.add((key, row))
                out.repairs.append(_repair("readmit", spell(made, k), key))
    for block in fallback:
        if span.rank >= target:
            break
        for row, w in enumerate(weight_ids(block)):
            if span.rank >= target:
                break
            if span.add(w):
                out.added.append((block, row))
                out.repairs.append(_repair("add", spell(block, row), None))
    return out


def _repair(action: str, spelled: tuple, key) -> Repair:
    layers, indices, taps = spelled
    return Repair(action, layers, indices, key, taps)


def taken_blocks(rows: list[tuple[object, int]]) -> list:
    """(block, row) pairs as blocks: each run of rows of one block taken at once."""
    out, start = [], 0
    for k in range(1, len(rows) + 1):
        if k == len(rows) or rows[k][0] is not rows[start][0]:
            out.append(rows[start][0].take(np.array([r for _, r in rows[start:k]], dtype=np.int64)))
            start = k
    return out
