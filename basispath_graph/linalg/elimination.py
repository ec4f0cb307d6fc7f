"""Sparse Gaussian elimination over GF(p) or Q, pivot = highest coordinate.

One :class:`Echelon` serves every caller; the variants are parameters where they really differ:

- ``modulus=p`` (values int in 0..p-1) or ``modulus=None`` (exact over Q: ``fractions.Fraction``);
- ``recipes=True``: remember how each echelon row was formed from the added vectors, so that
  :meth:`Echelon.coordinates` gives a target's coefficients on them (certificates), by back
  substitution, without storing a dense transform.

Rank over GF(p) <= rank over Q, so "rank mod p == row count" proves independence over Q. A
shortfall modulo p proves nothing by itself (p may divide a minor of rows independent over Q):
``verify.rank.exact_rank_of_rows`` turns it into a proof with :func:`rational_reconstruction`
and integer re-adding, or exact elimination over Q. Also here: :func:`nullspace_mod_p`, dense,
for the small alpha systems of deah-complete.
"""

from __future__ import annotations

import heapq
from array import array
from fractions import Fraction
from math import gcd, isqrt
from typing import Iterable

import numpy as np

__all__ = [
    "P1", "P2", "PRIMES", "Echelon", "ExactSpan", "ModPElimination", "NotInSpan", "forest_in_order",
    "independent_in_order", "machine_row", "nullspace_mod_p", "rational_reconstruction",
]

P1 = 2_147_483_647  # 2**31 - 1
P2 = 2_147_483_629  # 2**31 - 19, used to confirm a shortfall seen modulo P1
PRIMES = (P1, P2)


class NotInSpan(ValueError):
    """The target is not in the span of the echelon rows: ``coordinate`` is the leading
    coordinate of what was left, which no echelon row has."""

    def __init__(self, coordinate: int):
        super().__init__(f"coordinate {coordinate} of what is left has no pivot row")
        self.coordinate = coordinate


class Echelon:
    """Row echelon form of sparse vectors ``{coordinate: value}``, pivot = highest coordinate.

    Pivot rows are stored normalised (leading coefficient 1) so reducing needs no inverse; only
    the leading entry of a residual is ever eliminated: that is all rank needs. With ``recipes``,
    echelon row k (k-th vector added) = scale_k * (vector_k - sum_j f_j * echelon row j), stored as
    ``recipe[k] = [(j, f_j), ...]``.

    >>> e = Echelon(modulus=7, recipes=True)
    >>> e.add_vector({0: 1, 1: 1}), e.add_vector({1: 1}), e.add_vector({0: 3})
    (True, True, False)
    >>> sorted(e.coordinates({0: 2, 1: 5}).items())  # 2 (e0 + e1) + 3 e1
    [(0, 2), (1, 3)]
    >>> q = Echelon(modulus=None, recipes=True)
    >>> q.add_vector({0: Fraction(2)}), q.coordinates({0: Fraction(1)})
    (True, {0: Fraction(1, 2)})
    """

    __slots__ = ("p", "pivots", "recipes", "number", "scale", "recipe")

    def __init__(self, modulus: int | None = P1, recipes: bool = False) -> None:
        self.p = modulus
        # leading coordinate -> normalised row: a dict over Q, (coordinates, values) arrays mod p
        self.pivots: dict[int, object] = {}
        self.recipes = recipes
        self.number: dict[int, int] = {}  # leading coordinate -> echelon index (with recipes)
        self.scale: list = []
        self.recipe: list[list[tuple[int, object]]] = []

    @property
    def rank(self) -> int:
        return len(self.pivots)

    def reduce(self, row: Iterable[int]) -> dict:
        """Residual of a 0/1 row (its coordinates) after elimination; ``{}`` iff in the span."""
        return self.reduce_vector(dict.fromkeys(row, 1))

    def reduce_vector(self, v: dict, recipe: list | None = None) -> dict:
        """Residual of a sparse vector {coordinate: value} (consumed); with ``recipe``, append
        (echelon index, factor) for every row eliminated."""
        p, piv = self.p, self.pivots
        if p is None:
            v = {k: c for k, c in v.items() if c}
            while v:
                e = max(v)
                pr = piv.get(e)
                if pr is None:
                    return v  # leading coordinate has no pivot: independent
                f = v[e]
                if recipe is not None:
                    recipe.append((self.number[e], f))
                for k, c in pr.items():
                    nv = v.get(k, 0) - f * c
                    if nv:
                        v[k] = nv
                    else:
                        v.pop(k, None)
            return v
        v = {k: c % p for k, c in v.items() if c % p}
        while v:
            e = max(v)
            pr = piv.get(e)
            if pr is None:
                return v  # leading coordinate has no pivot: independent modulo p
            f = v[e]
            if recipe is not None:
                recipe.append((self.number[e], f))
            for k, c in zip(*pr):
                nv = (v.get(k, 0) - f * c) % p
                if nv:
                    v[k] = nv
                else:
                    v.pop(k, None)
        return v

    def insert_residual(self, v: dict, recipe: list | None = None) -> None:
        """Store a non-zero residual returned by :meth:`reduce_vector` as a new pivot row (with
        the recipe that reduction recorded, when this echelon keeps recipes)."""
        e = max(v)
        p = self.p
        if p is None:
            s = Fraction(1) / v[e]
            if s != 1:
                v = {k: c * s for k, c in v.items()}
        else:
            s = pow(v[e], p - 2, p)
            # Held as two machine-integer arrays, not a dict: 8 bytes an entry (int32 where the
            # coordinates and p allow, else 16) instead of about 100 (a dict slot and two int
            # objects); the repair's elimination of a union's core holds a row of some 70 entries
            # for each kept core path (ResNet-50 x1/8: 13,964; whole ResNet-50: 1.2 GB as int64).
            v = machine_row(v, v.values() if s == 1 else [c * s % p for c in v.values()])
        if self.recipes:
            self.number[e] = len(self.scale)
            self.scale.append(s)
            self.recipe.append(recipe if recipe is not None else [])
        self.pivots[e] = v

    def add(self, row: Iterable[int]) -> bool:
        """Add a 0/1 row if it raises the rank; return whether it did."""
        return self.add_vector(dict.fromkeys(row, 1))

    def add_vector(self, v: dict) -> bool:
        """Add a sparse vector if it raises the rank; return whether it did."""
        recipe: list | None = [] if self.recipes else None
        v = self.reduce_vector(v, recipe)
        if not v:
            return False
        self.insert_residual(v, recipe)
        return True

    def coordinates(self, target: dict) -> dict[int, object]:
        """{echelon index k: coefficient} (non-zero) with target = sum coefficient x (k-th vector
        added); needs ``recipes``. Raises :class:`NotInSpan` when there is no such combination."""
        if not self.recipes:
            raise ValueError("coordinates need an Echelon built with recipes=True")
        found: list = []
        left = self.reduce_vector(dict(target), found)
        if left:
            raise NotInSpan(max(left))
        p = self.p
        g = dict(found)  # each echelon row is eliminated at most once
        out: dict[int, object] = {}
        # echelon k = scale_k * (vector_k - sum f_j echelon_j), j < k: back substitution downwards.
        heap = [-k for k in g]
        heapq.heapify(heap)
        while heap:
            k = -heapq.heappop(heap)
            gk = g.pop(k)
            if not gk:
                continue
            t = gk * self.scale[k] if p is None else gk * self.scale[k] % p
            out[k] = t
            for j, fj in self.recipe[k]:
                if j not in g:
                    g[j] = 0
                    heapq.heappush(heap, -j)
                g[j] = g[j] - t * fj if p is None else (g[j] - t * fj) % p
        return out


def machine_row(keys, values) -> tuple[array, array]:
    """A pivot row mod p as (coordinates, values) arrays: int32 when every number fits (weight
    ids below 2**31 and p below 2**31), else int64."""
    try:
        return array("i", keys), array("i", values)
    except OverflowError:
        return array("q", keys), array("q", values)


class ModPElimination(Echelon):
    """:class:`Echelon` modulo ``p`` without recipes (rank and greedy independence)."""

    __slots__ = ()

    def __init__(self, p: int = P1) -> None:
        super().__init__(p)


class ExactSpan(Echelon):
    """Exact incremental rank over Q of small 0/1 vectors given by their supports (the alpha
    vectors of Step 1: at most L(L+1)/2 coordinates, at most L ones), no floating point.

    >>> s = ExactSpan()
    >>> s.add([0, 1]), s.add([1, 2]), s.raises_rank([0, 2]), s.add([0, 1, 2])
    (True, True, True, True)
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(None)

    def raises_rank(self, support) -> bool:
        """Would the 0/1 vector with ones at ``support`` raise the rank?"""
        return bool(self.reduce(support))


def independent_in_order(tested: np.ndarray, vectors: list[dict[int, int]], n: int, p: int = P1) -> np.ndarray:
    """Mask (over rows 0..n-1) of the rows ``tested``, in that order, whose ``vectors`` are
    independent (mod p) of the ones before them: greedy elimination."""
    system = ModPElimination(p)
    keep = np.zeros(n, dtype=bool)
    for r, v in zip(tested.tolist(), vectors):
        residual = system.reduce_vector(v)
        if residual:
            system.insert_residual(residual)
            keep[r] = True
    return keep


def forest_in_order(tested: np.ndarray, z_q: np.ndarray, z_x: np.ndarray, n: int) -> np.ndarray:
    """``independent_in_order`` for the vectors +-(e_{z_q} - e_{z_x}) (deah-complete: one paid
    debt layer): graph edges, independent exactly when they form a forest, so the greedy choice in
    order is Kruskal's with union-find (an edge z_q = z_x is the zero vector).

    >>> forest_in_order(np.arange(4), np.array([0, 1, 0, 2]), np.array([1, 2, 2, 2]), 4).tolist()
    [True, True, False, False]
    """
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        while parent.get(x, x) != x:
            parent[x] = parent.get(parent[x], parent[x])
            x = parent[x]
        return x

    keep = np.zeros(n, dtype=bool)
    for row, a, b in zip(tested.tolist(), z_q.tolist(), z_x.tolist()):
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[ra] = rb
            keep[row] = True
    return keep


def nullspace_mod_p(A: np.ndarray, p: int = P1) -> np.ndarray:
    """Basis of {x : A x = 0 (mod p)} as columns (int64 in 0..p-1), by dense Gauss-Jordan."""
    A = A.astype(np.int64) % p
    rows, cols = A.shape
    pivots: list[int] = []
    r = 0
    for c in range(cols):
        if r == rows:
            break
        nz = np.flatnonzero(A[r:, c])
        if len(nz) == 0:
            continue
        k = r + int(nz[0])
        A[[r, k]] = A[[k, r]]
        A[r] = A[r] * pow(int(A[r, c]), p - 2, p) % p
        f = A[:, c].copy()
        f[r] = 0
        A = (A - (f[:, None] * A[r][None, :]) % p) % p
        pivots.append(c)
        r += 1
    free = [c for c in range(cols) if c not in set(pivots)]
    N = np.zeros((cols, len(free)), dtype=np.int64)
    for j, c in enumerate(free):
        N[c, j] = 1
        for i, pc in enumerate(pivots):
            N[pc, j] = (-A[i, c]) % p
    return N


def rational_reconstruction(c: int, p: int = P1) -> Fraction | None:
    """The fraction a/b with a = b c (mod p), |a| and b at most sqrt(p/2), if there is one (it
    is then unique); None otherwise. Half of the extended Euclidean algorithm on (p, c).

    >>> rational_reconstruction(pow(3, -1, 7919) * -2 % 7919, 7919)
    Fraction(-2, 3)
    >>> rational_reconstruction(3960, 7919), rational_reconstruction(1000, 7919)
    (Fraction(1, 2), None)
    """
    bound = isqrt(p // 2)
    r0, r1, s0, s1 = p, c % p, 0, 1
    while r1 > bound:
        q = r0 // r1
        r0, r1, s0, s1 = r1, r0 - q * r1, s1, s0 - q * s1
    if s1 == 0 or abs(s1) > bound or gcd(r1, abs(s1)) != 1:
        return None
    return Fraction(r1, s1)
