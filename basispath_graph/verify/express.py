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

from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np

from ..errors import BadInput, BasispathError, NotCertified
from ..network import Network, PathBlock
from .certify import describe_weight, find_invalid, format_path
from ..linalg.checks import combination_equals, first_mismatch, path_entries
from ..linalg.elimination import Echelon, NotInSpan
from ..linalg.peeled_triangle import PeeledTriangle
from ..linalg.peeling import peel_result_by_holders
from .rank import compact_csr, flatten_blocks

__all__ = [
    "Expresser",
    "ExpressError",
    "InvalidPathError",
    "DependentBasisError",
    "NotInSpanError",
    "NonIntegralError",
    "CertificateMismatchError",
]


class ExpressError(BasispathError, ValueError):
    """Base class of everything :class:`Expresser` raises on purpose."""


class InvalidPathError(ExpressError, BadInput):
    """The query path (or a basis path) is not a valid path of the network."""


class DependentBasisError(ExpressError, NotCertified):
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
        self._prepare(network.weight_ids, network.m)

    def _prepare(self, weight_ids, m: int) -> None:
        """Peel the basis (``weight_ids(block)``: its paths' weight ids over m weights) and
        eliminate its core: the work every query shares, whatever kind of network the weight ids
        come from. Peeled by holders and held as int32 weight ids (``compact_csr``), so a basis
        of m paths costs O(m) plus its entries once (faithful deah's certificates on ResNet-18:
        the flattened basis with its argsort was the run's peak)."""
        self._ptr, self._wids = compact_csr(self.blocks, weight_ids, m)
        self.size = len(self._ptr) - 1
        pr = peel_result_by_holders(self.blocks, weight_ids, m)
        self._peeled = PeeledTriangle(pr, self._ptr, self._wids, m)
        self.core = pr.core  # basis indices of the core, ascending
        self._build_core()

    # -- construction ------------------------------------------------------------------

    def _path(self, i: int) -> list[int]:
        return self._peeled.vector(i)

    def _weight_text(self, w: int) -> str:
        return describe_weight(self.network, w)

    def _describe(self, i: int) -> str:
        start = 0
        for b in self.blocks:
            if i < start + len(b):
                return f"path {i} ({format_path(b.layers, b.take([i - start]).nodes[0].tolist())})"
            start += len(b)
        raise IndexError(i)

    def _build_core(self) -> None:
        """Exact echelon form of the core over Q, pivot = highest weight id, remembering how
        each echelon row was formed (``linalg.Echelon`` with recipes), so core coefficients
        come out by back substitution."""
        self._core = Echelon(modulus=None, recipes=True)
        self._ech_path: list[int] = []  # echelon index -> basis index
        for i in self.core.tolist():
            if not self._core.add_vector({w: Fraction(1) for w in self._path(i)}):
                raise DependentBasisError(
                    f"basis is dependent: {self._describe(i)} is in the span of other basis paths"
                )
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
        coefs = self._solve(q, lambda: text)
        self._verify(q, coefs, text)
        return coefs

    def express_weights(self, q: list[int], name) -> list[tuple[int, int]]:
        """``express`` of a path given by its weight ids ``q`` (a general network's, say);
        ``name()`` names it in an error. Verified by re-adding the vectors."""
        coefs = self._solve(q, name)
        self._verify(q, coefs, name())
        return coefs

    def express_block(self, block: PathBlock) -> list[list[tuple[int, int]]]:
        """``express`` of every path of a block, in order: validated, turned into weights and
        re-added (vector addition) once for the whole block instead of path by path."""
        bad = find_invalid(self.network, [block])
        if bad is not None:
            raise InvalidPathError(f"query {bad}")
        out = [
            self._solve(q, lambda i=i: format_path(block.layers, block.nodes[i].tolist()))
            for i, q in enumerate(self.network.weight_ids(block).tolist())
        ]
        lengths = np.fromiter((len(c) for c in out), dtype=np.int64, count=len(out))
        flat = [t for c in out for t in c]
        terms = (
            np.repeat(np.arange(len(out), dtype=np.int64), lengths),
            np.fromiter((b for b, _ in flat), dtype=np.int64, count=len(flat)),
            np.fromiter((c for _, c in flat), dtype=np.int64, count=len(flat)),
        )
        targets = path_entries(*flatten_blocks(self.network, [block]))
        row = first_mismatch((self._ptr, self._wids), self.network.m, targets, terms)
        if row is not None:
            text = format_path(block.layers, block.nodes[int(row)].tolist())
            raise CertificateMismatchError(f"path {text}: coefficients do not add up to the path")
        return out

    def _solve(self, q: list[int], name) -> list[tuple[int, int]]:
        """Coefficients of the path with weights ``q``; ``name()`` names it in an error."""
        return self._solve_vector(dict.fromkeys(q, 1), name)

    def _solve_vector(self, res: dict[int, int], name) -> list[tuple[int, int]]:
        """Coefficients of the integer vector ``res`` (weight id -> entry, consumed)."""
        # 1. Peeled paths (a unit-triangular system): their coefficients, the rest left in res.
        out = self._peeled.reduce(res)

        # 2. Core: coordinates of the rest in the exact echelon rows, by back substitution.
        if res:
            try:
                core = self._core.coordinates({w: Fraction(c) for w, c in res.items()})
            except NotInSpan as exc:
                raise NotInSpanError(
                    f"path {name()} is not in the span of the basis "
                    f"(residual left on weight {exc.coordinate} = {self._weight_text(exc.coordinate)})"
                ) from None
            for k in sorted(core, reverse=True):
                t, b = core[k], self._ech_path[k]
                if t.denominator != 1:
                    raise NonIntegralError(
                        f"path {name()}: coefficient {t} on basis {self._describe(b)} is not an integer"
                    )
                out[b] = int(t)
        return sorted((b, c) for b, c in out.items() if c)

    def _verify(self, q: list[int], coefs: list[tuple[int, int]], text: str) -> None:
        if not combination_equals(q, ((c, self._path(b)) for b, c in coefs)):
            raise CertificateMismatchError(f"path {text}: coefficients do not add up to the path")
