"""Peeling: vectors holding a coordinate no other remaining vector holds, removed in rounds.

A vector with a *private* coordinate is outside the span of the others: peel it (that coordinate
is its pivot) and repeat. Done in batched numpy rounds: every vector with a private coordinate in
the current set is removed in the same round (removing vectors only lowers the per-coordinate
counters, so vectors peeled together stay independent of each other). The peel order is
triangular: the pivot of the i-th peeled vector is held by no later-peeled vector and by no
vector of the *core* (what never peels). So any linear dependency has coefficient 0 on every
peeled vector, and rank = peeled count + rank of the core.

Two input forms, one algorithm: paths as CSR weight lists (:func:`peel`, ``verify.rank``) and
sparse vectors as entries (row, coordinate) (:func:`peel_entries`, the witness systems of
deah-complete). Each coordinate becomes a candidate (counter dropped to 1) at most once, so the
work across all rounds is linear in the entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .sparse import AllBut, csr_of_matrix, gather, group_by, grouped_by_value, present_ids, search_index

__all__ = ["CoreRows", "PeelResult", "StreamedCore", "peel", "peel_entries", "peel_by_holders", "peel_result_by_holders"]


@dataclass
class PeelResult:
    """Outcome of peeling.

    ``order[i]`` is the i-th peeled vector, ``private[i]`` its pivot: a coordinate it held alone
    when peeled (held by no vector peeled later and by no core vector; the smallest such
    coordinate); ``core`` lists the vectors that never peeled, ascending. ``rounds`` is the number
    of batched rounds, ``round_ends[k]`` the end of round k in ``order``.
    """

    order: np.ndarray
    private: np.ndarray
    core: np.ndarray
    rounds: int
    round_ends: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    held: np.ndarray | None = None  # which coordinates core vectors hold (bool; peeling by holders)

    @property
    def n_peeled(self) -> int:
        return len(self.order)

    def by_round(self) -> list[np.ndarray]:
        """The vectors peeled in each round (ascending within a round)."""
        return np.split(self.order, self.round_ends[:-1]) if self.rounds else []

    def pivot_of(self, n: int) -> np.ndarray:
        """Per vector 0..n-1: its pivot coordinate, -1 for the core."""
        out = np.full(n, -1, dtype=np.int64)
        out[self.order] = self.private
        return out

    def core_mask(self, n: int) -> np.ndarray:
        if isinstance(self.core, AllBut):
            mask = np.ones(n, dtype=bool)
            mask[self.core.missing] = False
            return mask
        mask = np.zeros(n, dtype=bool)
        mask[self.core] = True
        return mask


def _peel(n: int, width: int, entry_row: np.ndarray, entry_col: np.ndarray, col_ptr: np.ndarray,
          col_order: np.ndarray, row_ptr: np.ndarray, row_order: np.ndarray | None) -> PeelResult:
    """The rounds. Entries e are (entry_row[e], entry_col[e]); ``col_order`` groups them by
    coordinate (``col_ptr``), ``row_order`` by vector (``row_ptr``; None: already grouped)."""
    counts = np.diff(col_ptr)
    alive = np.ones(n, dtype=bool)
    order_parts: list[np.ndarray] = []
    priv_parts: list[np.ndarray] = []
    cand = np.flatnonzero(counts == 1)
    while cand.size:
        ent = col_order[gather(col_ptr, cand)]
        holders, cols = entry_row[ent], entry_col[ent]
        keep = alive[holders]  # counter is 1, so exactly one alive holder per candidate
        holders, cols = holders[keep], cols[keep]
        peeled, first = np.unique(holders, return_index=True)  # pivot: the smallest private coordinate
        order_parts.append(peeled)
        priv_parts.append(cols[first])
        alive[peeled] = False
        ent = gather(row_ptr, peeled)
        gone = entry_col[ent if row_order is None else row_order[ent]]
        if len(gone) > width // 8:  # a big round: count densely (no sort)
            dec = np.bincount(gone, minlength=width)
            counts -= dec
            cand = np.flatnonzero((dec > 0) & (counts == 1))
        else:
            touched, dec = np.unique(gone, return_counts=True)
            counts[touched] -= dec
            cand = touched[counts[touched] == 1]
    empty = np.zeros(0, dtype=np.int64)
    return PeelResult(
        order=np.concatenate(order_parts) if order_parts else empty,
        private=np.concatenate(priv_parts) if priv_parts else empty,
        core=np.flatnonzero(alive).astype(np.int64),
        rounds=len(order_parts),
        round_ends=np.cumsum([len(p) for p in order_parts], dtype=np.int64),
    )


def peel(ptr: np.ndarray, wids: np.ndarray, m: int) -> PeelResult:
    """Peel 0/1 vectors given in CSR form: vector i holds coordinates ``wids[ptr[i]:ptr[i + 1]]``
    (distinct), each in 0..m-1 (paths as weight ids: ``verify.rank.flatten_blocks``).

    >>> pr = peel(np.array([0, 2, 4, 6]), np.array([0, 1, 1, 2, 0, 2]), 4)  # a triangle: no private weight
    >>> pr.n_peeled, pr.core.tolist()
    (0, [0, 1, 2])
    >>> pr = peel(np.array([0, 2, 3]), np.array([0, 1, 1]), 2)
    >>> pr.order.tolist(), pr.private.tolist(), pr.core.tolist()
    ([0, 1], [0, 1], [])
    """
    ptr = np.asarray(ptr, dtype=np.int64)
    wids = np.asarray(wids, dtype=np.int64)
    n = len(ptr) - 1
    if wids.size and (int(wids.min()) < 0 or int(wids.max()) >= m):
        raise ValueError(f"weight ids must lie in 0..{m - 1}")
    col_ptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(wids, minlength=m), out=col_ptr[1:])
    path_of = np.repeat(np.arange(n, dtype=np.int64), np.diff(ptr))
    return _peel(n, m, path_of, wids, col_ptr, grouped_by_value(wids), ptr, None)


def peel_entries(r: np.ndarray, c: np.ndarray, n: int, width: int) -> PeelResult:
    """Peel the vectors 0..n-1 given by their non-zero entries (vector r, coordinate c in
    0..width-1; one entry per pair)."""
    col_ptr, col_order = group_by(c, width)
    row_ptr, row_order = group_by(r, n)
    return _peel(n, width, r, c, col_ptr, col_order, row_ptr, row_order)


_ENTRIES = 1 << 20  # weight ids made at a time (peel_by_holders), or m / 4 where that is more


def rows_weight_ids(block, rows: np.ndarray, weight_ids) -> np.ndarray:
    """(rows, hops) weight ids of ``block``'s ``rows``: ``weight_ids(block.take(rows))``, or the
    block's own ``weight_ids_at(rows)`` where it has one (a described B_r makes them from its
    description, 3x faster than its rows' nodes made and read; int32 where m allows)."""
    own = getattr(block, "weight_ids_at", None)
    return own(rows) if own is not None else weight_ids(block.take(rows))


def _chunk_weights(blocks: list, weight_ids, starts: np.ndarray, ids: np.ndarray | None, m: int):
    """((vectors, hops) weight ids, the vectors' ids) of the vectors ``ids`` (ascending; a vector's id is its
    block's start plus its row; None: every vector), about max(``_ENTRIES``, m / 4) weight ids at
    a time: a chunk's arrays (the paths made, their ids, whom they belong to) cost about as much
    as the two counters, and each O(m) ``bincount`` is paid for by m / 4 entries. (Chunks of
    2**19 paths took 160 MB over ResNet-50 x1/8's 6 MB of counters; chunks of m entries, 1.5 GB
    over whole ResNet-50's 400 MB.) Nothing of the size of ``ids`` is made: whole ResNet-50's
    union, 16 M paths, took 260 MB in a block number and a position per id."""
    cut = None if ids is None else search_index(ids, starts)
    for b, block in enumerate(blocks):
        lo, hi = (int(starts[b]), int(starts[b + 1])) if cut is None else (int(cut[b]), int(cut[b + 1]))
        if lo == hi:
            continue
        first = lo if ids is None else int(ids[lo])
        hops = rows_weight_ids(block, np.array([first - starts[b]]), weight_ids).shape[1]  # one row made to learn them
        rows = max(1, max(_ENTRIES, m // 4) // max(1, hops))
        for a in range(lo, hi, rows):
            chunk = np.arange(a, min(a + rows, hi), dtype=np.int64) if ids is None else ids[a : min(a + rows, hi)]
            yield rows_weight_ids(block, chunk - starts[b], weight_ids), chunk


def peel_by_holders(blocks: list, weight_ids, m: int) -> tuple[int, "StreamedCore"]:
    """:func:`peel` on the paths of ``blocks`` (anything with ``len`` and ``take(rows)``) without
    their CSR arrays: (number peeled, the core vectors: ``StreamedCore``, made from the blocks
    a chunk at a time whenever they are read).

    ``weight_ids(block)`` gives a block's (paths, hops) weight ids, distinct in a row. Instead of
    grouping entries by coordinate it keeps, per coordinate, how many remaining vectors hold it
    and the sum of their ids: a coordinate held once names its holder by that sum, and a vector's
    coordinates are made again only when it peels. O(m) memory besides the blocks (a paths file
    of ResNet-18, 222 M entries, peels in 16 bytes a weight), the same rounds as :func:`peel`:
    the peeled set, and so the core, is the same (peeling's fixed point does not depend on order).
    """
    pr, starts, counts = _rounds_by_holders(blocks, weight_ids, m)
    return pr.n_peeled, StreamedCore(blocks, weight_ids, starts, pr.core, m, counts > 0)


class StreamedCore:
    """The core's vectors (``ids``, ascending) of ``blocks``, made from the blocks a chunk at a
    time each time they are read (``runs``): the greedy elimination reads them a run at a time
    (``greedy_mod_p.greedy_masks``), so they are never held together (WRN-16-4's raw union core,
    7 M paths of 19 weights, was 584 MB as CSR arrays, and twice that while they were joined).
    ``held``: which coordinates a core vector holds (bool over 0..m-1). A vector with no
    coordinate (a zero path) is not a row, as a ``CoreRows`` lists none; ``materialise()`` gives the
    ``CoreRows`` where rows are read by index."""

    def __init__(self, blocks: list, weight_ids, starts: np.ndarray, ids: np.ndarray, m: int, held: np.ndarray):
        self.blocks, self.weight_ids, self.starts, self.ids, self.m, self.held = blocks, weight_ids, starts, ids, m, held
        cut = search_index(ids, starts)
        self._rows = sum(int(cut[b + 1] - cut[b]) for b, block in enumerate(blocks)
                         if cut[b + 1] > cut[b] and rows_weight_ids(block, np.array([ids[cut[b]] - starts[b]]), weight_ids).shape[1])

    def __len__(self) -> int:
        return self._rows

    def runs(self):
        """The rows as CSR runs (ptr, weight ids), in order, each made when reached."""
        for w, _ in _chunk_weights(self.blocks, self.weight_ids, self.starts, self.ids, self.m):
            if w.shape[1]:
                yield csr_of_matrix(w)

    def materialise(self) -> "CoreRows":
        ptr, parts = [np.zeros(1, dtype=np.int64)], []
        for run_ptr, w in self.runs():
            parts.append(w.astype(np.int32 if self.m < 2**31 else np.int64))
            ptr.append(ptr[-1][-1] + run_ptr[1:])
        empty = np.zeros(0, dtype=np.int64)
        return CoreRows(np.concatenate(ptr), np.concatenate(parts) if parts else empty, self.ids)


class CoreRows(Sequence):
    """The core's vectors (weight ids) as CSR arrays, each made a list when read: 4 bytes an
    entry, not a list of int objects (about 40; ResNet-50 x1/8's core of 27,068 paths held
    50 MB as lists). ``ids``: which vectors they are (ascending), when known."""

    def __init__(self, ptr: np.ndarray, wids: np.ndarray, ids: np.ndarray | None = None):
        self.ptr, self.wids, self.ids = ptr, wids, ids

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.wids[self.ptr[i] : self.ptr[i + 1]].tolist()


def peel_result_by_holders(blocks: list, weight_ids, m: int) -> PeelResult:
    """:func:`peel`'s whole result (order, pivots, core, rounds) by holders, as
    :func:`peel_by_holders` peels: each round's vectors ascending, each pivot its smallest private
    coordinate, as :func:`peel` chooses them, in O(m) memory besides the blocks."""
    result, _, counts = _rounds_by_holders(blocks, weight_ids, m)
    result.held = counts > 0
    return result


def _rounds_by_holders(blocks: list, weight_ids, m: int) -> tuple[PeelResult, np.ndarray, np.ndarray]:
    """The rounds of :func:`peel_by_holders`; (result, start of each block among the vectors,
    how many core vectors hold each coordinate)."""
    sizes = [len(b) for b in blocks]
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(starts[-1])
    small = np.int32 if n < 2**31 else np.int64  # a count of vectors (int32: 100 MB less on ResNet-50)
    counts = np.zeros(m, dtype=small)
    held = np.zeros(m, dtype=np.int64)  # sum of the ids of the remaining vectors that hold each coordinate
    for w, ids in _chunk_weights(blocks, weight_ids, starts, None, m):
        w, who = w.ravel(), np.repeat(ids, w.shape[1])
        counts += np.bincount(w, minlength=m)
        np.add.at(held, w, who)
    per_vector = counts.sum() / max(n, 1)
    alive = np.ones(n, dtype=bool)
    order_parts: list[np.ndarray] = []
    priv_parts: list[np.ndarray] = []
    cand = np.flatnonzero(counts == 1)  # ascending in every round: a holder's first is its smallest
    while cand.size:
        holders, first = np.unique(held[cand], return_index=True)
        order_parts.append(holders)
        priv_parts.append(cand[first])
        alive[holders] = False
        dense = len(holders) * per_vector > m // 8  # a big round: count densely (no sort)
        dec = np.zeros(m, dtype=small) if dense else None
        touched = []
        for w, ids in _chunk_weights(blocks, weight_ids, starts, holders, m):
            w, who = w.ravel(), np.repeat(ids, w.shape[1])
            np.subtract.at(held, w, who)
            if dense:
                dec += np.bincount(w, minlength=m)
            else:
                touched.append(w)
        if dense:
            counts -= dec
            cand = np.flatnonzero((dec > 0) & (counts == 1))
        else:
            u, d = np.unique(np.concatenate(touched), return_counts=True)
            counts[u] -= d
            cand = u[counts[u] == 1]
    empty = np.zeros(0, dtype=np.int64)
    result = PeelResult(
        order=np.concatenate(order_parts) if order_parts else empty,
        private=np.concatenate(priv_parts) if priv_parts else empty,
        core=present_ids(alive),  # held through a repair: ids, or those missing where fewer (an ``AllBut``)
        rounds=len(order_parts),
        round_ends=np.cumsum([len(p) for p in order_parts], dtype=np.int64),
    )
    return result, starts, counts
