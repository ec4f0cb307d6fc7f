"""Exact incremental rank over Q for the small vectors of the substructure graph G^S.

alpha_r vectors have at most |E^S| <= L(L+1)/2 coordinates and at most L ones, so plain
rational elimination is exact and cheap here; no floating point ("numerical linear algebra"
in the paper) is needed or wanted.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["ExactSpan"]


class ExactSpan:
    """Rows kept in echelon form, each keyed by its highest nonzero column."""

    def __init__(self):
        self._pivots: dict[int, dict[int, Fraction]] = {}

    @property
    def rank(self) -> int:
        return len(self._pivots)

    def _reduce(self, support) -> dict[int, Fraction]:
        row = {c: Fraction(1) for c in support}
        while row:
            top = max(row)
            pivot = self._pivots.get(top)
            if pivot is None:
                return row
            factor = row[top] / pivot[top]
            for c, v in pivot.items():
                nv = row.get(c, 0) - factor * v
                if nv:
                    row[c] = nv
                else:
                    row.pop(c, None)
        return row

    def raises_rank(self, support) -> bool:
        """Would the 0/1 vector with ones at ``support`` raise the rank?"""
        return bool(self._reduce(support))

    def add(self, support) -> bool:
        """Add the vector if it raises the rank; return whether it did."""
        row = self._reduce(support)
        if not row:
            return False
        self._pivots[max(row)] = row
        return True
