"""Greedy elimination of 0/1 rows modulo a prime, compiled: which rows, in order, raise the rank.

The choice :class:`~.elimination.Echelon` makes when rows are added one at a time (the same
pivot, the highest coordinate; pivot rows normalised). Which rows are kept does not depend on how
the echelon is held: row i is kept iff it is independent of rows 0..i-1 modulo p. Here the loop
runs in C (``greedy_mod_p_ext.c``, built by setup.py) over CSR arrays: the echelon held in one
int32 pool (a pivot row's coordinates, then its values unless all are 1: a row stored unreduced,
as most of a repair's are, costs 4 bytes an entry) with a start per pivot coordinate, the row being reduced in a
dense accumulator over the rows' coordinates (renumbered 0..k-1 in their order when their range
is wide, so the highest stays the highest) and a binary max-heap of its non-zero coordinates.
Each elimination step touches what the dict-based loop touches, at machine speed: SqueezeNet 1.1
x0.5's raw union core (648,370 rows of 18 weights over 93,593 weights) took 6.7 s a prime in
Python (docs/performance.md).

The loop keeps its state between calls (``GreedyModP``), so rows can be fed a run at a time
(``greedy_masks``) and never held together: the certifier's core and the repair's passes are
made from their described blocks for each prime (WRN-16-4's raw union core, 7 M rows of 19
weights, was 584 MB as CSR arrays).

Where the extension was not built (no C compiler at install time) every input goes through
:class:`~.elimination.Echelon`: the same mask (``tests/test_greedy_mod_p.py`` compares them,
modulo small primes too), slower.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np

from .elimination import ModPElimination

try:
    from .greedy_mod_p_ext import reduce_rows
except ImportError:  # installed without a C compiler (setup.py builds the extension optionally)
    reduce_rows = None

__all__ = ["COMPILED", "COMPILED_ROWS", "FIRST_POOL_ENTRIES", "GreedyModP", "column_ranks", "greedy_mask", "greedy_masks", "greedy_runs", "held_coordinates"]

COMPILED = reduce_rows is not None  # whether the C loop was built
COMPILED_ROWS = 64  # rows from which the C loop is used (below: Python's Echelon, no arrays over coordinates)
FIRST_POOL_ENTRIES = 1 << 16  # pool items first allocated (the fill is often far below the rows' entries)
POOL_GROWTH = 8  # a full pool grows by 1/8: the growth is zero-filled, so resident, and by half it left up to a third of a repair's echelon unused
_BYTES_A_COORDINATE = 21  # the loop's arrays over coordinates: accumulator, heap, flag, pivot start and length


def greedy_mask(ptr: np.ndarray, wids: np.ndarray, p: int, compiled: bool | None = None) -> np.ndarray:
    """Which rows of a CSR 0/1 matrix (row i holds coordinates ``wids[ptr[i]:ptr[i + 1]]``,
    distinct, non-negative) raise the rank modulo the prime ``p`` (< 2**31) when added in order.

    ``compiled``: force the C loop (True; an error where it was not built) or Python's
    :class:`Echelon` (False); default: the C loop from ``COMPILED_ROWS`` rows when built. Time:
    each row costs the entries its reduction touches (the fill of the pivot rows it meets);
    memory: 4 bytes an echelon entry stored as it came (all values 1), 8 bytes one reduced, 21 bytes a coordinate, 4 bytes an entry of the rows when
    their coordinates are renumbered.

    >>> ptr, wids = np.array([0, 2, 4, 6, 9]), np.array([0, 1, 1, 2, 0, 2, 0, 1, 2])
    >>> greedy_mask(ptr, wids, 7).tolist(), greedy_mask(ptr, wids, 2, compiled=False).tolist()
    ([True, True, True, False], [True, True, False, True])
    """
    ptr = np.asarray(ptr, dtype=np.int64)
    n = len(ptr) - 1
    if compiled is None:
        compiled = COMPILED and n >= COMPILED_ROWS
    if not compiled:
        return GreedyModP(0, p, compiled=False).feed(ptr, wids)
    wids = np.asarray(wids)
    if not len(wids):
        return GreedyModP(0, p, compiled=True).feed(ptr, wids)
    top = int(wids.max()) + 1
    if top * _BYTES_A_COORDINATE <= 4 * len(wids):  # ids in a narrow range: used as they are
        return GreedyModP(top, p, compiled=True).feed(ptr, wids)
    present = np.zeros(top, dtype=bool)
    present[wids] = True
    rank = column_ranks(present)
    return GreedyModP(int(rank[-1]) + 1, p, compiled=True).feed(ptr, rank[wids])


def greedy_masks(runs: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]], p: int, held: np.ndarray | None = None) -> list[np.ndarray]:
    """:func:`greedy_mask` of the rows of every run of ``runs()`` (CSR (ptr, weight ids) each)
    taken in order as one matrix, one mask per run, each run made only when it is fed: the rows
    are never held together (WRN-16-4's raw union core, 7 M rows of 19 weights, is 584 MB as
    CSR arrays). ``held``: which coordinates any row holds (bool, indexed by id), found by one more
    pass over ``runs()`` when not given; the C loop works over those coordinates alone."""
    return list(greedy_runs(runs, p, held))


def greedy_runs(runs: Callable[[], Iterable[tuple[np.ndarray, np.ndarray]]], p: int, held: np.ndarray | None = None) -> Iterator[np.ndarray]:
    """:func:`greedy_masks`, each run's mask yielded as it is decided (a caller writes them into
    one array instead of joining a list of them: the core's mask twice)."""
    if not COMPILED:
        greedy = GreedyModP(0, p, compiled=False)
        yield from (greedy.feed(ptr, wids) for ptr, wids in runs())
        return
    if held is None:
        held = held_coordinates(wids for _, wids in runs())
    rank = column_ranks(held)
    greedy = GreedyModP(int(rank[-1]) + 1 if len(rank) else 0, p, compiled=True)
    yield from (greedy.feed(ptr, rank[wids]) for ptr, wids in runs())


def held_coordinates(parts: Iterable[np.ndarray]) -> np.ndarray:
    """Which coordinates the id arrays ``parts`` hold, as a bool table over 0..max id."""
    held = np.zeros(0, dtype=bool)
    for wids in parts:
        if len(wids):
            top = int(wids.max()) + 1
            if top > len(held):
                held = np.concatenate([held, np.zeros(top - len(held), dtype=bool)])
            held[wids] = True
    return held


def column_ranks(held: np.ndarray) -> np.ndarray:
    """Each held coordinate's rank among the held ones (int32, over every id): coordinates renumbered
    0..k-1 in their order, so the highest stays the highest and the choice is unchanged; a presence
    table, not np.unique's inverse (5.4 s on 11.7 M ids)."""
    rank = np.cumsum(held, dtype=np.int32)
    rank -= 1
    return rank


class GreedyModP:
    """The greedy elimination modulo ``p`` of 0/1 rows over coordinates 0..``width``-1, fed a run
    of rows at a time (``feed``): the echelon (pool, pivot starts and lengths) is kept between
    runs, so the rows themselves need never be held together. ``compiled``: the C loop (the
    extension must be built), else Python's :class:`Echelon` (any ids, ``width`` unused)."""

    def __init__(self, width: int, p: int, compiled: bool) -> None:
        if not 1 < p < 2**31:
            raise ValueError(f"p = {p}: a prime below 2**31 is needed (products fit 64 bits)")
        if compiled and not COMPILED:
            raise RuntimeError("the C loop of greedy_mod_p was not built (no C compiler at install time?)")
        self.p, self.compiled = p, compiled
        if not compiled:
            self._echelon = ModPElimination(p)
            return
        self._acc = np.zeros(width, dtype=np.int32)  # the row being reduced, dense (zero between rows; values below p)
        self._in_heap = np.zeros(width, dtype=bool)
        self._heap = np.zeros(width, dtype=np.int32)
        self._start = np.full(width, -1, dtype=np.int64)  # each pivot row's start in the pool
        self._length = np.zeros(width, dtype=np.int32)
        self._pool = np.zeros(FIRST_POOL_ENTRIES, dtype=np.int32)  # the pivot rows (greedy_mod_p_ext.c says how)
        self._used = 0

    def feed(self, ptr: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Which rows of this run (CSR; coordinates below ``width``) raise the rank, the rows fed
        before included in the echelon."""
        n = len(ptr) - 1
        if not self.compiled:
            w, bounds = np.asarray(cols).tolist(), np.asarray(ptr).tolist()
            return np.fromiter((self._echelon.add(w[bounds[i] : bounds[i + 1]]) for i in range(n)), dtype=bool, count=n)
        ptr, cols = np.ascontiguousarray(ptr, dtype=np.int64), np.ascontiguousarray(cols, dtype=np.int32)
        keep = np.zeros(n, dtype=bool)
        row = 0
        while row < n:
            row, self._used, need = reduce_rows(ptr, cols, self.p, row, self._used, keep, self._acc, self._in_heap,
                                                self._heap, self._start, self._length, self._pool)
            if row < n:  # the pool is full: grow it (in place where the allocator can: a copy held
                # the old pool beside the new, 3x the echelon; GoogLeNet x0.5's greedy peaked so) and go on with the same row
                capacity = max(len(self._pool) + len(self._pool) // POOL_GROWTH, self._used + need)
                self._pool.resize(capacity, refcheck=False)  # the pool owns its data; the C loop keeps no pointer
        return keep
