"""The peeled vectors of a peel as a unit-triangular system: subtract them from a vector.

A peel (``peeling.PeelResult``) orders its peeled vectors so that the i-th holds a private
coordinate held by no later-peeled vector and no core vector. Walking the peeled vectors a
vector touches in increasing peel index and subtracting ``residual[private_i]`` times the i-th
zeroes every private coordinate: what is left is the vector modulo the peeled ones, supported
off their private coordinates (a normal form: zero iff the vector is in their span, once the
core is dealt with too). ``verify.Expresser`` reads the coefficients (a certificate's peeled
part); the repair (``deah.repair``) reads the residual (independence modulo the peeled paths).
"""

from __future__ import annotations

import heapq

import numpy as np

from .peeling import PeelResult

__all__ = ["PeeledTriangle"]


class PeeledTriangle:
    """``reduce(res)``: the peeled vectors' coefficients in the integer vector ``res``, which is
    left as its residual. Vector i's coordinates are ``wids[ptr[i]:ptr[i + 1]]`` (every vector
    of the peel, core ones included: indices are the peel's)."""

    def __init__(self, result: PeelResult, ptr: np.ndarray, wids: np.ndarray, m: int) -> None:
        self.order, self.private = result.order, result.private  # peel index -> vector, its private coordinate
        self.ptr, self.wids = ptr, wids
        self.owner = np.full(m, -1, dtype=np.int64)  # coordinate -> peel index of the vector it is private to, else -1
        self.owner[result.private] = np.arange(len(result.order), dtype=np.int64)

    def vector(self, i: int) -> list[int]:
        """Coordinates of vector ``i`` (its entries are 1)."""
        return self.wids[self.ptr[i] : self.ptr[i + 1]].tolist()

    def reduce(self, res: dict[int, int]) -> dict[int, int]:
        """Subtract from ``res`` (coordinate -> entry, changed in place) the multiple of each
        peeled vector that zeroes its private coordinate, in increasing peel index; returns
        {vector: coefficient} of the non-zero multiples. Only vectors owning a coordinate on
        which the residual is (or becomes) non-zero can get one."""
        owner, private, order = self.owner, self.private, self.order
        out: dict[int, int] = {}
        heap = [o for o in owner[np.fromiter(res, dtype=np.int64, count=len(res))].tolist() if o >= 0]
        heapq.heapify(heap)
        queued = set(heap)
        while heap:
            i = heapq.heappop(heap)
            c = res.get(int(private[i]), 0)
            if not c:
                continue
            b = int(order[i])
            out[b] = c
            ws = self.vector(b)
            for w in ws:
                nv = res.get(w, 0) - c
                if nv:
                    res[w] = nv
                else:
                    del res[w]
            for o in owner[np.asarray(ws, dtype=np.int64)].tolist():
                if o > i and o not in queued:  # owners of b's coordinates come later (triangular)
                    queued.add(o)
                    heapq.heappush(heap, o)
        return out
