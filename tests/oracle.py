"""Brute-force oracle for small networks, written independently of basispath_graph.verify.

Everything here is dense and exact: paths are enumerated recursively, turned into integer
vectors with the oracle's own edge numbering, and ranks / spans are computed by
fraction-free integer elimination (solving uses fractions.Fraction). Only the network's
plain data (widths and connected layer pairs) is taken from the project.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import gcd

Path = tuple[tuple[int, int], ...]  # ((layer, neuron), ...)


def count_paths(widths, pairs) -> int:
    """Number of paths from layer 0 to layer L (dynamic programming over layers)."""
    L = len(widths) - 1
    ways = [0] * (L + 1)  # paths from layer 0 ending at one fixed neuron of layer l
    ways[0] = 1
    for b in range(1, L + 1):
        ways[b] = sum(ways[a] * widths[a] for a, bb in pairs if bb == b)
    return ways[L] * widths[L]


def enumerate_paths(widths, pairs) -> list[Path]:
    L = len(widths) - 1
    nxt: dict[int, list[int]] = {}
    for a, b in sorted(pairs):
        nxt.setdefault(a, []).append(b)
    out: list[Path] = []

    def walk(prefix: list[tuple[int, int]]) -> None:
        l = prefix[-1][0]
        if l == L:
            out.append(tuple(prefix))
            return
        for b in nxt.get(l, []):
            for j in range(widths[b]):
                prefix.append((b, j))
                walk(prefix)
                prefix.pop()

    for i in range(widths[0]):
        walk([(0, i)])
    return out


class Oracle:
    """All paths of a network as dense integer vectors."""

    def __init__(self, widths, pairs) -> None:
        self.widths = tuple(widths)
        self.pairs = tuple(sorted(pairs))
        self.L = len(widths) - 1
        # The oracle's own edge numbering (deliberately different from the project's:
        # edges enumerated from the target side).
        self.edge: dict[tuple[tuple[int, int], tuple[int, int]], int] = {}
        for a, b in sorted(self.pairs, key=lambda p: (p[1], -p[0])):
            for j in range(widths[b]):
                for i in range(widths[a]):
                    self.edge[((a, i), (b, j))] = len(self.edge)
        self.m = len(self.edge)
        self.H = sum(widths[1:-1])
        self.paths = enumerate_paths(widths, pairs)

    def vec(self, path: Path) -> list[int]:
        v = [0] * self.m
        for u, w in zip(path, path[1:]):
            v[self.edge[(u, w)]] += 1
        return v

    def rank(self, paths) -> int:
        s = Span(self.m)
        for p in paths:
            s.add(self.vec(p))
        return s.rank

    def greedy(self, paths) -> list[bool]:
        """Keep each path iff independent of the kept ones before it."""
        s = Span(self.m)
        return [s.add(self.vec(p)) for p in paths]

    def solve(self, basis, q) -> list[Fraction] | None:
        """The rational coefficients c with vec(q) = sum c_i vec(basis[i]) (basis assumed
        independent), or None if there are none."""
        n = len(basis)
        cols = [self.vec(b) for b in basis]
        # augmented matrix: m equations, n unknowns
        rows = [[Fraction(cols[j][e]) for j in range(n)] + [Fraction(x)] for e, x in enumerate(self.vec(q))]
        r = 0
        where = [-1] * n
        for c in range(n):
            piv = next((k for k in range(r, len(rows)) if rows[k][c] != 0), None)
            if piv is None:
                continue
            rows[r], rows[piv] = rows[piv], rows[r]
            pr = rows[r]
            inv = 1 / pr[c]
            rows[r] = pr = [x * inv for x in pr]
            for k in range(len(rows)):
                if k != r and rows[k][c] != 0:
                    f = rows[k][c]
                    rows[k] = [x - f * y for x, y in zip(rows[k], pr)]
            where[c] = r
            r += 1
        if any(all(x == 0 for x in row[:n]) and row[n] != 0 for row in rows):
            return None
        return [rows[where[c]][n] if where[c] >= 0 else Fraction(0) for c in range(n)]


class Span:
    """Dense fraction-free integer echelon form (pivot = first non-zero column)."""

    def __init__(self, m: int) -> None:
        self.m = m
        self.piv: dict[int, list[int]] = {}

    @property
    def rank(self) -> int:
        return len(self.piv)

    def residual(self, v: list[int]) -> list[int]:
        v = list(v)
        for c in range(self.m):
            if v[c] and c in self.piv:
                p = self.piv[c]
                a, b = p[c], v[c]
                v = [a * x - b * y for x, y in zip(v, p)]
                g = 0
                for x in v:
                    g = gcd(g, x)
                if g > 1:
                    v = [x // g for x in v]
        return v

    def contains(self, v: list[int]) -> bool:
        return not any(self.residual(v))

    def add(self, v: list[int]) -> bool:
        r = self.residual(v)
        lead = next((c for c, x in enumerate(r) if x), None)
        if lead is None:
            return False
        self.piv[lead] = r
        return True


@lru_cache(maxsize=256)
def oracle_for(widths: tuple[int, ...], pairs: tuple[tuple[int, int], ...]) -> Oracle:
    return Oracle(widths, pairs)


def skeleton_basis(widths, pairs) -> list[Path]:
    """The tree-walk basis (the skeleton engine, basispath_graph/skeleton.py) with neuron 0 as every designated end:
    for each weight (a, i) -> (b, j): layers 0..a-1 at neuron 0, (a, i), (b, j), then
    layers b+1..L at neuron 0. Distinct paths only, in first-seen order."""
    L = len(widths) - 1
    seen: dict[Path, None] = {}
    for a, b in sorted(pairs):
        for i in range(widths[a]):
            for j in range(widths[b]):
                p = tuple((l, 0) for l in range(a)) + ((a, i), (b, j)) + tuple((l, 0) for l in range(b + 1, L + 1))
                seen.setdefault(p, None)
    return list(seen)
