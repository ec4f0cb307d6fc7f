"""Dense elimination over GF(2): independent columns of a 0/1 matrix and the inverse of the
square matrix they make, mod 2.

A 0/1 matrix invertible mod 2 has an odd determinant, so it is invertible over Q too: G-SGD
(``gsgd/path_space.py``) picks the free weights of a basis' unpeeled core this way, so that both
the log-magnitudes (over Q) and the signs (mod 2) of the free weights have one solution.
"""

from __future__ import annotations

import numpy as np

__all__ = ["independent_columns_mod2"]


def independent_columns_mod2(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """For an r x n 0/1 matrix of rank r mod 2: (r column indices, ascending, whose square
    submatrix S is invertible mod 2; S's inverse mod 2 as a 0/1 uint8 array). None when the
    rank mod 2 is below r.

    >>> cols, inv = independent_columns_mod2(np.array([[1, 1, 0], [0, 1, 1]]))
    >>> cols.tolist(), inv.tolist()
    ([0, 1], [[1, 1], [0, 1]])
    >>> independent_columns_mod2(np.array([[1, 1], [1, 1]])) is None
    True
    """
    a = np.asarray(matrix, dtype=np.uint8) & 1
    r, n = a.shape
    work = np.concatenate([a.copy(), np.eye(r, dtype=np.uint8)], axis=1)  # row operations recorded on the right
    pivots, row = [], 0
    for col in range(n):
        if row == r:
            break
        hits = np.flatnonzero(work[row:, col]) + row
        if not hits.size:
            continue
        p = hits[0]
        if p != row:
            work[[row, p]] = work[[p, row]]
        others = np.flatnonzero(work[:, col])
        others = others[others != row]
        work[others] ^= work[row]
        pivots.append(col)
        row += 1
    if row < r:
        return None
    cols = np.asarray(pivots, dtype=np.int64)
    # work = E [A | I] with E A[:, cols] = I, so E = A[:, cols]^-1 mod 2
    return cols, work[:, n:].copy()
