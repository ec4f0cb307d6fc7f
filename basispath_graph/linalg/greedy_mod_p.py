"""Greedy elimination of 0/1 rows modulo a prime, compiled: which rows, in order, raise the rank.

The choice :class:`~.elimination.Echelon` makes when rows are added one at a time (the same
pivot, the highest coordinate; pivot rows normalised). Which rows are kept does not depend on how
the echelon is held: row i is kept iff it is independent of rows 0..i-1 modulo p. Here the loop
runs in C (``greedy_mod_p_ext.c``, built by setup.py) over CSR arrays: the echelon held as two
int32 pools (coordinate, value) with a start per pivot coordinate, the row being reduced in a
dense accumulator over the rows' coordinates (renumbered 0..k-1 in their order when their range
is wide, so the highest stays the highest) and a binary max-heap of its non-zero coordinates.
Each elimination step touches what the dict-based loop touches, at machine speed: SqueezeNet 1.1
x0.5's raw union core (648,370 rows of 18 weights over 93,593 weights) took 6.7 s a prime in
Python (docs/performance.md).

Where the extension was not built (no C compiler at install time) every input goes through
:class:`~.elimination.Echelon`: the same mask (``tests/test_greedy_mod_p.py`` compares them,
modulo small primes too), slower.
"""

from __future__ import annotations

import numpy as np

from .elimination import ModPElimination

try:
    from .greedy_mod_p_ext import reduce_rows
except ImportError:  # installed without a C compiler (setup.py builds the extension optionally)
    reduce_rows = None

__all__ = ["COMPILED", "COMPILED_ROWS", "FIRST_POOL_ENTRIES", "greedy_mask"]

COMPILED = reduce_rows is not None  # whether the C loop was built
COMPILED_ROWS = 64  # rows from which the C loop is used (below: Python's Echelon, no arrays over coordinates)
FIRST_POOL_ENTRIES = 1 << 16  # echelon entries first allocated, doubled when full (the fill is often far below the rows' entries)
_BYTES_A_COORDINATE = 25  # the loop's arrays over coordinates: accumulator, heap, flag, pivot start and length


def greedy_mask(ptr: np.ndarray, wids: np.ndarray, p: int, compiled: bool | None = None) -> np.ndarray:
    """Which rows of a CSR 0/1 matrix (row i holds coordinates ``wids[ptr[i]:ptr[i + 1]]``,
    distinct, non-negative) raise the rank modulo the prime ``p`` (< 2**31) when added in order.

    ``compiled``: force the C loop (True; an error where it was not built) or Python's
    :class:`Echelon` (False); default: the C loop from ``COMPILED_ROWS`` rows when built. Time:
    each row costs the entries its reduction touches (the fill of the pivot rows it meets);
    memory: 8 bytes an echelon entry, 25 bytes a coordinate, 4 bytes an entry of the rows when
    their coordinates are renumbered.

    >>> ptr, wids = np.array([0, 2, 4, 6, 9]), np.array([0, 1, 1, 2, 0, 2, 0, 1, 2])
    >>> greedy_mask(ptr, wids, 7).tolist(), greedy_mask(ptr, wids, 2, compiled=False).tolist()
    ([True, True, True, False], [True, True, False, True])
    """
    ptr = np.asarray(ptr, dtype=np.int64)
    n = len(ptr) - 1
    if not 1 < p < 2**31:
        raise ValueError(f"p = {p}: a prime below 2**31 is needed (products fit 64 bits)")
    if compiled and not COMPILED:
        raise RuntimeError("the C loop of greedy_mod_p was not built (no C compiler at install time?)")
    if compiled is None:
        compiled = COMPILED and n >= COMPILED_ROWS
    if not compiled:
        el = ModPElimination(p)
        w = np.asarray(wids).tolist()
        bounds = ptr.tolist()
        return np.fromiter((el.add(w[bounds[i] : bounds[i + 1]]) for i in range(n)), dtype=bool, count=n)
    wids = np.asarray(wids)
    if not len(wids):
        return np.zeros(n, dtype=bool)
    top = int(wids.max()) + 1
    if top * _BYTES_A_COORDINATE <= 4 * len(wids):  # ids in a narrow range: used as they are
        return _greedy(ptr, wids.astype(np.int32, copy=False), top, p)
    # Renumbered in order (the highest stays the highest) by a presence table, not np.unique's
    # inverse (5.4 s on 11.7 M ids); one int32 copy of the ids.
    present = np.zeros(top, dtype=bool)
    present[wids] = True
    rank = np.cumsum(present, dtype=np.int32)
    rank -= 1
    return _greedy(ptr, rank[wids], int(rank[-1]) + 1, p)


def _greedy(ptr: np.ndarray, cols: np.ndarray, width: int, p: int) -> np.ndarray:
    n = len(ptr) - 1
    ptr, cols = np.ascontiguousarray(ptr, dtype=np.int64), np.ascontiguousarray(cols, dtype=np.int32)
    keep = np.zeros(n, dtype=bool)
    acc = np.zeros(width, dtype=np.int64)
    in_heap = np.zeros(width, dtype=bool)
    heap = np.zeros(width, dtype=np.int32)
    start = np.full(width, -1, dtype=np.int64)
    length = np.zeros(width, dtype=np.int32)
    capacity = FIRST_POOL_ENTRIES
    pool_c = np.zeros(capacity, dtype=np.int32)
    pool_v = np.zeros(capacity, dtype=np.int32)
    row, used = 0, 0
    while row < n:
        row, used, need = reduce_rows(ptr, cols, p, row, used, keep, acc, in_heap, heap, start, length, pool_c, pool_v)
        if row < n:  # the pools are full: grow them and go on with the same row
            capacity = max(2 * capacity, used + need)
            pool_c = np.concatenate([pool_c[:used], np.zeros(capacity - used, dtype=np.int32)])
            pool_v = np.concatenate([pool_v[:used], np.zeros(capacity - used, dtype=np.int32)])
    return keep
