"""Dense integer keys for the rows of an integer array, in lexicographic row order.

Grouping paths (or parts of paths) by their weights is the core of SDVChain; doing it with
numpy keys instead of Python tuples keeps it linear-ish in the number of paths.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = ["RowIndex", "first_of_each", "fold_keys", "radix_keys", "row_keys"]


def row_keys(rows: np.ndarray) -> tuple[np.ndarray, int]:
    """(keys, count): keys[i] == keys[j] iff rows i and j are equal; keys ordered as the rows are
    lexicographically; count = number of distinct rows. Values must be >= 0. Keys are int32 for
    fewer than 2**31 rows (int64 otherwise).

    Columns are folded one at a time in mixed radix (key so far x span + next column), the keys
    renumbered densely whenever the next fold would overflow int64, and at the end.

    >>> row_keys(np.array([[2, 1], [0, 5], [2, 1]]))[0].tolist()
    [1, 0, 1]
    """
    rows = np.asarray(rows, dtype=np.int64)
    if rows.ndim != 2:
        return np.zeros(rows.shape[0], dtype=np.int32), (1 if rows.shape[0] else 0)
    return fold_keys(rows.T, rows.shape[0])


def fold_keys(columns: Iterable[np.ndarray], n: int) -> tuple[np.ndarray, int]:
    """``row_keys`` of the n rows whose columns ``columns`` gives one at a time (each made when
    reached: SDVChain's parts of ResNet-18's B_r, 1.7 M paths of 18 hops, never held as a matrix).

    Columns are packed in mixed radix and the keys renumbered densely, order kept: by a table of
    the values present while the keys' range is at most ``_table_limit(n)`` (no sort), else by a
    stable sort only when the next column would overflow int64. The rows' order by the keys of the
    last sort is kept: the new keys, read in that order, are already sorted but within runs of
    equal old keys, which a stable (run-finding) sort orders several times faster than shuffled
    keys. Each column is first ranked among its own values (a hop's weight ids span a few thousand
    of m values). ResNet-50 x1/4's Step 3 spent 20 of its 26 s sorting 1.6 M keys 79 times when
    every column counted as m values and each sort started afresh. Ranks are int32 and the keys
    folded in place: SDVChain folds the shared parts of two B_r of whole ResNet-50 at once (26 M
    rows), where every array of n int64 is 210 MB."""
    keys = np.zeros(n, dtype=np.int64)
    bound = 1  # every key < bound
    limit = _table_limit(n)
    order = None  # rows in the order of the keys of the last sort (None: no sort yet)
    for col in columns:
        col, span = _ranked(np.asarray(col), limit)
        if bound * span > limit and 1 < bound <= limit:  # ranked by a table while that is cheap
            keys, bound = _dense(keys, bound)
            keys = keys.astype(np.int64)
        if bound * span >= 2**62:  # the next column would overflow: make the keys dense first
            keys, bound, order = _sorted_dense(keys, bound, order)
            keys = keys.astype(np.int64, copy=False)
        if bound * span >= 2**62:  # even dense keys would: rank the (key, column) pairs instead
            _, keys = np.unique(np.stack([keys, col], axis=1), axis=0, return_inverse=True)
            keys, bound, order = keys.astype(np.int64).ravel(), n, None
            continue
        keys *= span  # mixed radix, in place (keys are always this function's own array):
        keys += col  # lexicographic order kept, no sort per column
        bound *= span
    keys, count, _ = _sorted_dense(keys, bound, order)
    # held by the caller (SDVChain: three sets of keys over two B_r): int32 where they fit
    return (keys.astype(np.int32, copy=False) if n < 2**31 else keys), count if n else 0


def _sorted_dense(keys: np.ndarray, bound: int, order: np.ndarray | None) -> tuple[np.ndarray, int, np.ndarray | None]:
    """``_dense`` of the keys (by a table when ``bound`` allows), else by a stable sort of the
    keys read in ``order`` (see ``fold_keys``); (keys, count, the rows in key order). Keys by a
    table are int32 below 2**31 values, by a sort int64."""
    if not len(keys) or bound <= _table_limit(len(keys)):
        return (*_dense(keys, bound), order)
    if order is None:
        order = np.argsort(keys, kind="stable")
    else:
        order = order[np.argsort(keys[order], kind="stable")]
    ordered = keys[order]
    new = np.empty(len(keys), dtype=bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    del ordered
    rank = np.cumsum(new, dtype=np.int32 if len(keys) < 2**31 else np.int64)
    del new
    rank -= 1
    dense = np.empty(len(keys), dtype=np.int64)
    dense[order] = rank
    return dense, int(rank[-1]) + 1, order


def _table_limit(n: int) -> int:
    """The largest key range ranked by a table: its bytes about those of the n keys, at least
    4 M entries (5.7 ms) for many keys, but at most 32 entries a key for few (a table entry costs
    about 1.4 ns, a key sorted 60-95 ns): a layer DAG's Step 3 ranks 117,000 small columns
    (Inception-v3 x1/32: cumsums over 4 M-entry tables were 25 of its 42 s)."""
    return max(min(1 << 22, 32 * n), 1 << 16, 2 * n)


def _ranked(col: np.ndarray, limit: int) -> tuple[np.ndarray, int]:
    """``col`` renumbered 0 .. count - 1 in the same order (by a table over its range when that
    is at most ``limit``: int32; else only shifted to start at 0), and the values' span."""
    if not len(col):
        return col.astype(np.int64), 1
    lo = int(col.min())
    span = int(col.max()) - lo + 1
    if span > limit:
        return np.subtract(col, np.int64(lo), dtype=np.int64), span
    # computed in int64, written as int32 a buffer at a time: no int64 copy of the column
    shifted = np.empty(len(col), dtype=np.int32 if span < 2**31 else np.int64)
    np.subtract(col, np.int64(lo), out=shifted, casting="same_kind")
    return _dense(shifted, span)


def _dense(keys: np.ndarray, bound: int) -> tuple[np.ndarray, int]:
    """Keys renumbered 0 .. count - 1 in the same order (int32 below 2**31 values), and count,
    by a table of the values present (every key below ``bound``, at most ``_table_limit``:
    O(n + bound), no sort)."""
    if not len(keys):
        return keys, 1
    present = np.zeros(bound, dtype=bool)
    present[keys] = True
    rank = np.cumsum(present, dtype=np.int32 if bound < 2**31 else np.int64)
    del present
    out = rank[keys]
    out -= 1
    return out, int(rank[-1])


def radix_keys(nodes: np.ndarray, widths: list[int]) -> list[np.ndarray]:
    """Each row as mixed-radix int64 keys over consecutive column groups (a group is closed
    before its product of widths would reach 2^62): equal rows <=> equal keys. Unlike ``row_keys`` no
    sort per column: for grouping rows by one ``lexsort``."""
    keys, key, span = [], np.zeros(len(nodes), dtype=np.int64), 1
    for k, w in enumerate(widths):
        if span * w >= 2**62:
            keys.append(key)
            key, span = np.zeros(len(nodes), dtype=np.int64), 1
        key = key * w + nodes[:, k]
        span *= w
    keys.append(key)
    return keys


def first_of_each(rows: np.ndarray) -> np.ndarray:
    """Ascending positions of the first occurrence of every distinct row (values >= 0)."""
    keys, _ = row_keys(rows)
    _, firsts = np.unique(keys, return_index=True)
    return np.sort(firsts)


class RowIndex:
    """Position of given rows among the rows of ``nodes`` (all distinct), by sorted 64-bit row
    hashes; every match is then compared node by node, so a hash collision cannot give a wrong
    answer (it would raise, like a row that is not there)."""

    def __init__(self, nodes: np.ndarray):
        self.nodes = nodes
        self.mix = np.random.default_rng(0).integers(1, 2**63 - 1, size=nodes.shape[1], dtype=np.int64) | 1
        h = self._hash(nodes)
        self.order = np.argsort(h)
        self.sorted = h[self.order]

    def _hash(self, nodes: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return (nodes.astype(np.int64) + 1) @ self.mix  # wraps modulo 2^64

    def find(self, rows: np.ndarray, missing_ok: bool = False) -> np.ndarray:
        """Row number of each given row; a row that is not there raises KeyError, or with
        ``missing_ok`` gets -1."""
        if len(self.sorted) == 0:
            if len(rows) and not missing_ok:
                raise KeyError(f"path {rows[0].tolist()} is not in the block")
            return np.full(len(rows), -1, dtype=np.int64)
        h = self._hash(rows)
        at = np.minimum(np.searchsorted(self.sorted, h), len(self.sorted) - 1)
        found = self.order[at]
        bad = np.flatnonzero(~np.all(self.nodes[found] == rows, axis=1))
        if len(bad):  # a hash collision (or a missing row): look those up exactly
            exact = {t: k for k, t in enumerate(map(tuple, self.nodes.tolist()))}
            for k in bad.tolist():
                key = tuple(rows[k].tolist())
                if key not in exact and not missing_ok:
                    raise KeyError(f"path {list(key)} is not in the block")
                found[k] = exact.get(key, -1)
        return found
