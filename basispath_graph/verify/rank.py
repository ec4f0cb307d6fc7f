"""Exact rank of path sets: peeling plus sparse Gaussian elimination over GF(p).

A path is a 0/1 vector over the m weights, given here as the list (or int64 array) of its
weight ids. Two exact tools are combined (notes/math.md, section 2), both from ``linalg``:

* **Peeling** (``linalg.peeling``): a path holding a weight that no other remaining path holds
  is independent of the rest; removed in batched rounds, triangular in peel order.
* **Elimination** (``linalg.elimination``): what does not peel (the *core*) is reduced row by
  row modulo a prime, pivoting on the highest weight id, like the reference checker. rank over
  GF(p) <= rank over Q, so "rank mod p == row count" proves independence over Q. A shortfall
  modulo ``P1 = 2**31 - 1`` is re-checked modulo ``P2 = 2**31 - 19`` before dependence is declared.

This module holds what is specific to paths: their CSR form (``flatten_blocks``), rank of path
blocks, and the incremental basis of the repair step.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from ..linalg.elimination import P1, P2, PRIMES, ModPElimination
from ..linalg.peeling import PeelResult, peel
from ..network import Network, PathBlock

__all__ = [
    "P1",
    "P2",
    "PRIMES",
    "ModPElimination",
    "IncrementalBasis",
    "PeelResult",
    "flatten_blocks",
    "peel",
    "peel_blocks",
    "rank_of_rows",
    "rows_of",
    "rank_of",
    "independent_mask",
]


def rank_of_rows(rows: Sequence[Sequence[int]], primes: Sequence[int] = PRIMES) -> int:
    """Rank over Q of 0/1 rows (lists of weight ids), certified by elimination mod primes.

    Full rank modulo any prime proves full rank over Q. On a shortfall the next prime is
    tried and the largest rank seen is returned (each is a lower bound on the rank over Q).
    """
    best = 0
    for p in primes:
        el = ModPElimination(p)
        for row in rows:
            el.add(row)
        best = max(best, el.rank)
        if best == len(rows):
            break
    return best


# --------------------------------------------------------------------------------------
# Incremental basis (used by repair steps)
# --------------------------------------------------------------------------------------


class IncrementalBasis:
    """Grow an independent set of paths one row at a time, exactly.

    ``add(row)`` keeps the row iff it is independent of the rows kept so far. A row that
    reduces to zero modulo the working prime is re-checked modulo the next prime (that
    elimination is built lazily by replaying the kept rows) before being rejected; if the
    second prime separates it, that prime becomes the working one.

    Rows are weight-id sequences (list, tuple or int64 array), each id at most once.
    """

    def __init__(self, network: Network | None = None, primes: Sequence[int] = PRIMES) -> None:
        self.m = network.m if network is not None else None
        self._elims = [ModPElimination(p) for p in primes]
        self._fed = [0] * len(primes)  # how many kept rows each elimination has seen
        self._full = [True] * len(primes)  # elimination has full rank on the rows it has seen
        self._work = 0  # index of the working prime
        self.rows: list[list[int]] = []  # kept rows, in order

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def rank(self) -> int:
        return len(self.rows)

    def _row(self, row) -> list[int]:
        r = row.tolist() if isinstance(row, np.ndarray) else [int(x) for x in row]
        if len(set(r)) != len(r):
            raise ValueError(f"row {r} repeats a weight id (rows are 0/1 vectors)")
        if self.m is not None and r and (min(r) < 0 or max(r) >= self.m):
            raise ValueError(f"row {r} has a weight id outside 0..{self.m - 1}")
        return r

    def _catch_up(self, k: int) -> None:
        el = self._elims[k]
        while self._fed[k] < len(self.rows):
            if not el.add(self.rows[self._fed[k]]):
                self._full[k] = False
            self._fed[k] += 1

    def reduce(self, row) -> dict[int, int]:
        """Residual of ``row`` modulo the working prime (``{}``: in the span of the kept rows)."""
        k = self._work
        self._catch_up(k)
        return self._elims[k].reduce(self._row(row))

    def _separating_prime(self, r: list[int], skip: int = -1) -> tuple[int, dict[int, int]] | None:
        """A prime (index, residual) modulo which ``r`` is independent of the kept rows."""
        for k in range(len(self._elims)):
            if k == skip or not self._full[k]:
                continue  # a prime that lost rank on the kept rows proves nothing
            self._catch_up(k)
            if not self._full[k]:
                continue
            v = self._elims[k].reduce(r)
            if v:
                return k, v
        return None

    def independent(self, row) -> bool:
        """Whether ``row`` is independent of the kept rows (does not add it)."""
        return self._separating_prime(self._row(row)) is not None

    def add(self, row) -> bool:
        """Keep ``row`` if it is independent of the kept rows; return whether it was kept."""
        r = self._row(row)
        k = self._work
        self._catch_up(k)
        v = self._elims[k].reduce(r)
        if not v:
            # Zero modulo the working prime: confirm with the others before rejecting.
            hit = self._separating_prime(r, skip=k)
            if hit is None:
                return False
            self._full[k] = False  # the old working prime just lost rank
            k, v = hit
            self._work = k
        self._elims[k].insert_residual(v)
        self._fed[k] += 1
        self.rows.append(r)
        return True


# --------------------------------------------------------------------------------------
# Peeling
# --------------------------------------------------------------------------------------


def flatten_blocks(network: Network, blocks: Iterable[PathBlock]) -> tuple[np.ndarray, np.ndarray]:
    """Weight ids of all paths of ``blocks`` (concatenated in order) as CSR arrays.

    Returns ``(ptr, wids)``: path i holds ``wids[ptr[i]:ptr[i + 1]]``. Paths must be valid.
    """
    lens, parts = [], []
    for b in blocks:
        if len(b) == 0:
            continue  # an empty block may carry any layer tuple; it holds no path
        w = network.weight_ids(b)
        parts.append(w.ravel())
        lens.append(np.full(len(b), w.shape[1], dtype=np.int64))
    if not parts:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ptr = np.zeros(sum(len(x) for x in lens) + 1, dtype=np.int64)
    np.cumsum(np.concatenate(lens), out=ptr[1:])
    return ptr, np.concatenate(parts).astype(np.int64, copy=False)


def peel_blocks(network: Network, blocks: Iterable[PathBlock]) -> PeelResult:
    """:func:`peel` on the concatenated paths of ``blocks``."""
    ptr, wids = flatten_blocks(network, blocks)
    return peel(ptr, wids, network.m)


def rows_of(ptr: np.ndarray, wids: np.ndarray, idx: np.ndarray) -> list[list[int]]:
    """Rows ``idx`` of a CSR (``flatten_blocks``) as lists of weight ids."""
    return [wids[ptr[i] : ptr[i + 1]].tolist() for i in idx.tolist()]


def rank_of(network: Network, blocks: Iterable[PathBlock]) -> int:
    """Rank over Q of the paths in ``blocks``: peeled count + certified rank of the core.

    Paths must be valid (see :func:`basispath_graph.verify.certify.find_invalid`).
    """
    ptr, wids = flatten_blocks(network, blocks)
    pr = peel(ptr, wids, network.m)
    return pr.n_peeled + rank_of_rows(rows_of(ptr, wids, pr.core))


def independent_mask(network: Network, blocks: Iterable[PathBlock]) -> np.ndarray:
    """Greedy pass in the given order: ``mask[i]`` iff path i is independent of the kept
    paths before it (global index over the concatenated blocks).

    Peeled paths are always kept: a path with a private weight is outside the span of any
    set of other paths, and removing it never changes whether another path lies in the span
    of its predecessors. So only the core runs through :class:`IncrementalBasis`.
    """
    ptr, wids = flatten_blocks(network, blocks)
    n = len(ptr) - 1
    pr = peel(ptr, wids, network.m)
    mask = np.ones(n, dtype=bool)
    inc = IncrementalBasis(network)
    for i, row in zip(pr.core.tolist(), rows_of(ptr, wids, pr.core)):
        mask[i] = inc.add(row)
    return mask
