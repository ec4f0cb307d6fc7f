"""Re-adding certificates: does a combination of basis vectors add up to its target?

The one check behind every certificate the package prints: exact integer vector addition, no
elimination. Two forms of the same test:

- :func:`combination_equals`: one target, in pure Python, over any hashable coordinates (weight
  ids, or weights named by their endpoints as ``why`` reads them from a store);
- :func:`first_mismatch`: many targets at once in numpy, basis vectors as CSR weight lists.
"""

from __future__ import annotations

from typing import Hashable, Iterable

import numpy as np

from .sparse import Terms, gather

__all__ = ["combination_equals", "first_mismatch", "path_entries"]


def combination_equals(target: Iterable[Hashable], terms: Iterable[tuple[int, Iterable[Hashable]]]) -> bool:
    """Does sum of coef x vector equal ``target``, coordinate by coordinate? Vectors are given
    by their coordinates (each occurrence counts 1: a path by its weights).

    >>> combination_equals([1, 2], [(1, [1, 3]), (-1, [3, 4]), (1, [2, 4])])
    True
    >>> combination_equals([1, 2], [(1, [1, 3])])
    False
    """
    acc: dict = {}
    for coef, coords in terms:
        for w in coords:
            acc[w] = acc.get(w, 0) + coef
    for w in target:
        acc[w] = acc.get(w, 0) - 1
    return not any(acc.values())


def path_entries(ptr: np.ndarray, wids: np.ndarray) -> Terms:
    """Paths in CSR form (path i holds ``wids[ptr[i]:ptr[i + 1]]``) as ``first_mismatch``
    targets: entries (path, weight, 1).

    >>> [a.tolist() for a in path_entries(np.array([0, 2, 3]), np.array([4, 7, 5]))]
    [[0, 0, 1], [4, 7, 5], [1, 1, 1]]
    """
    return np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr)), wids, np.ones(len(wids), dtype=np.int64)


def first_mismatch(basis: tuple[np.ndarray, np.ndarray], m: int, targets: Terms, terms: Terms) -> int | None:
    """The first target row whose certificate does not sum to it, or None when all do.

    ``basis``: (ptr, wids), basis vector i = the 0/1 vector on ``wids[ptr[i]:ptr[i + 1]]``
    (coordinates in 0..m-1); ``targets``: entries (target row, coordinate, value); ``terms``:
    (target row, basis index, coefficient).
    """
    rows, idx, coef = terms
    t_rows, t_wids, t_vals = targets
    bptr, bw = basis
    target = t_rows * m + t_wids
    if len(coef) and len(t_vals) and bool(np.all(t_vals == 1)) and int(np.abs(coef).max()) <= 64:
        # 0/1 targets, small coefficients: exact multiset comparison, sum over coef > 0 of
        # coef x vector == the target + sum over coef < 0 of |coef| x vector, as multisets of
        # (row, coordinate) keys; sorted arrays are equal iff every certificate adds up.
        reps = np.abs(coef)
        r_rows, r_idx, r_pos = np.repeat(rows, reps), np.repeat(idx, reps), np.repeat(coef > 0, reps)
        lens = bptr[r_idx + 1] - bptr[r_idx]
        keys = np.repeat(r_rows, lens) * m + bw[gather(bptr, r_idx)]
        positive = np.repeat(r_pos, lens)
        left, right = np.sort(keys[positive]), np.sort(np.concatenate([keys[~positive], target]))
        if len(left) == len(right) and np.array_equal(left, right):
            return None
    # Sum per (row, coordinate) key: the general way, and on failure to name the first bad row.
    lens = bptr[idx + 1] - bptr[idx]
    val = np.concatenate([np.repeat(coef, lens), -t_vals])
    key = np.concatenate([np.repeat(rows, lens) * m + bw[gather(bptr, idx)], target])
    if len(key) == 0:
        return None
    order = np.argsort(key)
    key = key[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    total = np.add.reduceat(val[order], starts)
    bad = np.flatnonzero(total != 0)
    return int(key[starts[bad[0]]] // m) if len(bad) else None
