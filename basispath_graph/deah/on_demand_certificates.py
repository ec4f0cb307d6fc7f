"""Certificates of discards made when one is read: a described deah-complete run's by the ear
recursion (``OnDemandCertificates``), faithful deah's and any repaired run's by global
elimination (``ExpressedCertificates``).

A described run (``guards.DESCRIBED_ABOVE``: every block p_0 or an ear, the B_r held as
``SubroutineRows``) has millions of discards (ResNet-18's core: 4.1 M); listing a certificate for
each cost more than the run. Here discard k's certificate is made when it is read
(``DiscardedList._item``, so ``why``, ``show``, iteration): the ear recursion
(``ear_recursion.EarRecursion``, its tables of B_0 and of the ears' owners by index arithmetic,
set up on the first request, O(m) numbers) expands the one path, and the terms are re-added by
vector addition over the basis paths they name, each made alone: a wrong certificate raises
``CertificateMismatchError`` instead of being shown.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..linalg.sparse import combine
from ..verify.express import CertificateMismatchError, Expresser
from .ear_recursion import EarRecursion

__all__ = ["OnDemandCertificates", "ExpressedCertificates"]


class OnDemandCertificates:
    """``certificate(k)``: (basis index, coefficient) pairs of discard k, checked."""

    def __init__(self, network, deah, basis: list):
        self.network, self.deah, self.basis = network, deah, basis
        self.starts = np.concatenate([[0], np.cumsum([len(b) for b in basis])]).astype(np.int64)
        self._ears: EarRecursion | None = None

    def express(self, layers, nodes) -> list[tuple[int, int]]:
        """(basis index, coefficient) of one path of the network (``nodes``: one row along
        ``layers``) over the kept set, by the ear recursion (any path, not only a discard);
        not re-added here (callers check the sum)."""
        deah, net = self.deah, self.network
        if self._ears is None:
            self._ears = EarRecursion(net, deah.bases, deah.step3, next(iter(deah.bases.values())).rule)
        rows, idx, coef = combine(self._ears.expand(tuple(layers), nodes, distinct=True), 1, self._ears.size)
        return sorted(zip(idx.tolist(), coef.tolist()))

    def certificate(self, k: int) -> list[tuple[int, int]]:
        deah, net = self.deah, self.network
        sub, row = deah.step3.discards.locate(k)
        path = deah.bases[sub].take([row])
        terms = self.express(path.layers, path.nodes)
        total: Counter = Counter()
        for i, c in terms:  # re-added by vector addition: every basis path it names, made alone
            b = int(np.searchsorted(self.starts, i, side="right")) - 1
            for w in net.weight_ids(self.basis[b].take([i - int(self.starts[b])]))[0].tolist():
                total[w] += c
        if +total != Counter(net.weight_ids(path)[0].tolist()) or -total:
            raise CertificateMismatchError(f"certificate of discarded path {k} does not sum to the path")
        return terms


class ExpressedCertificates:
    """Certificates of faithful deah's discards, and of any repaired run's, made when read: each
    by global elimination over the basis (``verify.Expresser``, prepared on the first request:
    the basis peeled by holders, O(m) numbers) and re-added by vector addition before it is
    returned. Listing one for each of ResNet-18's 4.1 M discards took 82% of the solve and its
    CSR arrays most of ResNet-34's memory; the certificate is unique (the basis is independent),
    so one made now is the one a listing would have held."""

    def __init__(self, network, bases: dict, table, basis: list):
        self.network, self.bases, self.table, self.basis = network, bases, table, basis
        self._expresser = None

    def certificate(self, k: int) -> list[tuple[int, int]]:
        sub, row = self.table.locate(k)
        return self.block_certificates(self.bases[sub].take([row]))[0]

    def block_certificates(self, block) -> list[list[tuple[int, int]]]:
        """Every path of a made block expressed at once (``DiscardedList``'s iteration: a run of
        discards at a time, re-added together)."""
        if self._expresser is None:
            self._expresser = Expresser(self.network, self.basis)
        return self._expresser.express_block(block)
