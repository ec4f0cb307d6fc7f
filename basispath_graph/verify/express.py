"""Certificates for discarded paths: integer coefficients c with q = sum_b c_b * b.

``Expresser(network, blocks)`` does the one-off work: peel the basis (a unit-triangular
system: the i-th peeled path b_i owns a private weight e_i held by no later-peeled path and
no core path) and eliminate the core exactly over Q (``fractions.Fraction``), remembering
how each echelon row was formed. Then each query:

1. walks the peeled paths touched by the residual in increasing peel index (a heap):
   c_i = residual[e_i], residual -= c_i * b_i;
2. expresses what is left (supported on core weights only) in the core echelon rows and
   maps those coefficients back to core paths;
3. checks integrality and re-adds the vectors (sparse integer sum == q) before returning.

Basis paths are identified by their global index in the concatenation of ``blocks``.
"""

from __future__ import annotations

import heapq
from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np

from ..network import Network, PathBlock
from .certify import describe_weight, find_invalid, format_path
from .rank import flatten_blocks, peel

__all__ = [
    "Expresser",
    "ExpressError",
    "InvalidPathError",
    "DependentBasisError",
    "NotInSpanError",
    "NonIntegralError",
    "CertificateMismatchError",
]


class ExpressError(ValueError):
    """Base class of everything :class:`Expresser` raises on purpose."""


class InvalidPathError(ExpressError):
    """The query path (or a basis path) is not a valid path of the network."""


class DependentBasisError(ExpressError):
    """The given basis paths are linearly dependent, so coefficients are not unique."""


class NotInSpanError(ExpressError):
    """The query path is not a linear combination of the basis paths."""


class NonIntegralError(ExpressError):
    """The (unique) rational combination has a non-integer coefficient."""


class CertificateMismatchError(ExpressError):
    """Internal check failed: the coefficients do not add up to the query (a bug)."""


class Expresser:
    """Express paths in a fixed basis; build once, query many times.

    Raises InvalidPathError if a basis path is invalid and DependentBasisError (naming a
    path in the span of the others) if the basis is not independent over Q.
    """

    def __init__(self, network: Network, blocks: Iterable[PathBlock]) -> None:
        self.network = network
        self.blocks = list(blocks)
        bad = find_invalid(network, self.blocks)
        if bad is not None:
            raise InvalidPathError(f"basis {bad}")
        self._ptr, self._wids = flatten_blocks(network, self.blocks)
        self.size = len(self._ptr) - 1
        pr = peel(self._ptr, self._wids, network.m)
        self.peeled = pr.order  # peel index -> basis index
        self.private = pr.private  # peel index -> its private weight
        self.core = pr.core  # basis indices of the core, ascending
        # owner[w] = peel index of the path whose private weight is w, else -1
        self._owner = np.full(network.m, -1, dtype=np.int64)
        self._owner[pr.private] = np.arange(len(pr.order), dtype=np.int64)
        self._build_core()

    # -- construction ------------------------------------------------------------------

    def _path(self, i: int) -> list[int]:
        return self._wids[self._ptr[i] : self._ptr[i + 1]].tolist()

    def _describe(self, i: int) -> str:
        start = 0
        for b in self.blocks:
            if i < start + len(b):
                return f"path {i} ({format_path(b.layers, b.nodes[i - start].tolist())})"
            start += len(b)
        raise IndexError(i)

    def _build_core(self) -> None:
        """Exact echelon form of the core over Q, pivot = highest weight id.

        Echelon row k = (core path - sum_j f_j * echelon row j) * scale_k, stored as
        ``recipe[k] = [(j, f_j), ...]`` so core coefficients can be recovered by back
        substitution without storing a dense transform.
        """
        self._pivot: dict[int, int] = {}  # leading weight -> echelon index
        self._ech: list[dict[int, Fraction]] = []  # normalised rows (leading coef 1)
        self._scale: list[Fraction] = []
        self._recipe: list[list[tuple[int, Fraction]]] = []
        self._ech_path: list[int] = []  # echelon index -> basis index
        for i in self.core.tolist():
            v: dict[int, Fraction] = {w: Fraction(1) for w in self._path(i)}
            recipe: list[tuple[int, Fraction]] = []
            while v:
                e = max(v)
                k = self._pivot.get(e)
                if k is None:
                    break
                f = v[e]
                recipe.append((k, f))
                _axpy(v, -f, self._ech[k])
            if not v:
                raise DependentBasisError(
                    f"basis is dependent: {self._describe(i)} is in the span of other basis paths"
                )
            e = max(v)
            s = 1 / v[e]
            self._pivot[e] = len(self._ech)
            self._ech.append({w: c * s for w, c in v.items()})
            self._scale.append(s)
            self._recipe.append(recipe)
            self._ech_path.append(i)

    # -- queries -----------------------------------------------------------------------

    def weight_ids(self, layers: Sequence[int], indices: Sequence[int]) -> list[int]:
        """Weight ids of one path; raises InvalidPathError naming the defect."""
        block = PathBlock(tuple(layers), np.asarray(indices, dtype=np.int64).reshape(1, -1))
        bad = find_invalid(self.network, [block])
        if bad is not None:
            raise InvalidPathError(f"query {bad.replace('path 0 ', '', 1)}")
        return self.network.weight_ids(block)[0].tolist()

    def express(self, layers: Sequence[int], indices: Sequence[int]) -> list[tuple[int, int]]:
        """Integer coefficients ``[(basis_index, coef), ...]`` (ascending index, non-zero)
        with q = sum coef * basis path, verified by re-adding the vectors.

        Raises InvalidPathError, NotInSpanError, NonIntegralError (and
        CertificateMismatchError if the final check fails, which would be a bug).
        """
        text = format_path(layers, indices)
        q = self.weight_ids(layers, indices)
        coefs = self._solve(q, text)
        self._verify(q, coefs, text)
        return coefs

    def express_ids(self, q: Sequence[int]) -> list[tuple[int, int]]:
        """Like :meth:`express` for a path given by its weight ids (distinct, in 0..m-1)."""
        q = [int(w) for w in q]
        text = f"weights {q}"
        if len(set(q)) != len(q) or any(not 0 <= w < self.network.m for w in q):
            raise InvalidPathError(f"{text}: weight ids must be distinct and in 0..{self.network.m - 1}")
        coefs = self._solve(q, text)
        self._verify(q, coefs, text)
        return coefs

    def _solve(self, q: list[int], text: str) -> list[tuple[int, int]]:
        owner, private, peeled = self._owner, self.private, self.peeled
        res: dict[int, int] = dict.fromkeys(q, 1)
        out: dict[int, int] = {}

        # 1. Peeled paths, increasing peel index. Only paths owning a weight on which the
        #    residual is (or becomes) non-zero can get a non-zero coefficient.
        heap = [o for o in owner[np.asarray(q, dtype=np.int64)].tolist() if o >= 0]
        heapq.heapify(heap)
        queued = set(heap)
        while heap:
            i = heapq.heappop(heap)
            c = res.get(int(private[i]), 0)
            if not c:
                continue
            b = int(peeled[i])
            out[b] = c
            ws = self._path(b)
            for w in ws:
                nv = res.get(w, 0) - c
                if nv:
                    res[w] = nv
                else:
                    del res[w]
            for o in owner[np.asarray(ws, dtype=np.int64)].tolist():
                if o > i and o not in queued:  # owners of b's weights come later (triangular)
                    queued.add(o)
                    heapq.heappush(heap, o)

        # 2. Core: reduce the rest against the exact echelon rows.
        if res:
            r: dict[int, Fraction] = {w: Fraction(c) for w, c in res.items()}
            g: dict[int, Fraction] = {}
            while r:
                e = max(r)
                k = self._pivot.get(e)
                if k is None:
                    raise NotInSpanError(
                        f"path {text} is not in the span of the basis "
                        f"(residual left on weight {e} = {describe_weight(self.network, e)})"
                    )
                f = r[e]
                g[k] = f
                _axpy(r, -f, self._ech[k])
            # Back substitution: echelon k = scale_k * (core_k - sum f_j echelon_j).
            hk = [-k for k in g]
            heapq.heapify(hk)
            while hk:
                k = -heapq.heappop(hk)
                gk = g.pop(k)
                if not gk:
                    continue
                t = gk * self._scale[k]
                b = self._ech_path[k]
                if t.denominator != 1:
                    raise NonIntegralError(
                        f"path {text}: coefficient {t} on basis {self._describe(b)} is not an integer"
                    )
                out[b] = int(t)
                for j, fj in self._recipe[k]:
                    if j not in g:
                        g[j] = Fraction(0)
                        heapq.heappush(hk, -j)
                    g[j] -= t * fj
        return sorted((b, c) for b, c in out.items() if c)

    def _verify(self, q: list[int], coefs: list[tuple[int, int]], text: str) -> None:
        acc: dict[int, int] = {}
        for b, c in coefs:
            for w in self._path(b):
                acc[w] = acc.get(w, 0) + c
        acc = {w: c for w, c in acc.items() if c}
        if acc != dict.fromkeys(q, 1):
            raise CertificateMismatchError(f"path {text}: coefficients do not add up to the path")


def _axpy(v: dict[int, Fraction], a: Fraction, x: dict[int, Fraction]) -> None:
    """v += a * x in place, dropping zeros."""
    for w, c in x.items():
        nv = v.get(w, 0) + a * c
        if nv:
            v[w] = nv
        else:
            v.pop(w, None)
