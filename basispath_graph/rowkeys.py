"""Dense integer keys for the rows of an integer array, in lexicographic row order.

Grouping paths (or parts of paths) by their weights is the core of SDVChain; doing it with
numpy keys instead of Python tuples keeps it linear-ish in the number of paths.
"""

from __future__ import annotations

import numpy as np

__all__ = ["row_keys"]


def row_keys(rows: np.ndarray) -> tuple[np.ndarray, int]:
    """(keys, count): keys[i] == keys[j] iff rows i and j are equal; keys ordered as the rows are
    lexicographically; count = number of distinct rows. Values must be >= 0.

    Columns are folded one at a time: (key so far, next column) -> dense key, which never
    overflows int64 however many columns there are.

    >>> row_keys(np.array([[2, 1], [0, 5], [2, 1]]))[0].tolist()
    [1, 0, 1]
    """
    rows = np.asarray(rows, dtype=np.int64)
    n = rows.shape[0]
    if rows.ndim != 2 or rows.shape[1] == 0:
        return np.zeros(n, dtype=np.int64), (1 if n else 0)
    keys = np.zeros(n, dtype=np.int64)
    count = 1
    for col in rows.T:
        span = int(col.max()) + 1 if n else 1
        _, keys = np.unique(keys * span + col, return_inverse=True)
        keys = keys.astype(np.int64).ravel()
        count = int(keys.max()) + 1 if n else 0
    return keys, count
