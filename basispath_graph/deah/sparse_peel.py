"""Peeling a sparse set of vectors into triangular rounds (the witness systems of deah-complete).

A vector with a coordinate that no other remaining vector has cannot be in the span of the
others: peel it, with that coordinate as its pivot, and repeat. What is peeled is independent
and triangular in peel order; any linear dependency among the vectors has coefficient 0 on every
peeled one (look at the earliest peeled vector in it: only it is non-zero on its pivot), so what
is left (the *core*) can be eliminated on its own.
"""

from __future__ import annotations

import numpy as np

from ..verify.rank import _gather, grouped_by_value

__all__ = ["group_by", "peel_rounds"]


def group_by(keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(ptr, order): positions of ``keys`` (values 0..n-1) grouped by key, stable."""
    order = grouped_by_value(keys)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=ptr[1:])
    return ptr, order


def peel_rounds(r: np.ndarray, c: np.ndarray, n: int, width: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Peel the vectors given by their non-zero entries (vector r, coordinate c; one entry per
    pair). Returns (rounds: vectors peeled in each round, pivot coordinate of every peeled
    vector (-1 for the core), mask of the core)."""
    col_ptr, col_order = group_by(c, width)
    row_ptr, row_order = group_by(r, n)
    count = np.bincount(c, minlength=width)
    alive = np.ones(n, dtype=bool)
    taken = np.zeros(width, dtype=bool)
    pivot_of_row = np.full(n, -1, dtype=np.int64)
    rounds: list[np.ndarray] = []
    cand = np.flatnonzero(count == 1)
    while len(cand):
        ent = col_order[_gather(col_ptr, cand)]
        ent = ent[alive[r[ent]]]
        # One pivot per vector: its smallest private coordinate.
        holders, first = np.unique(r[ent], return_index=True)
        cols = c[ent][first]
        pivot_of_row[holders] = cols
        taken[cols] = True
        rounds.append(holders)
        alive[holders] = False
        gone = row_order[_gather(row_ptr, holders)]
        count -= np.bincount(c[gone], minlength=width)
        cand = np.flatnonzero((count == 1) & ~taken)
    return rounds, pivot_of_row, alive
