"""Certificates of discarded B_r rows, assembled from per-route and per-hop tables
(docs/deah-complete.md, "Certificates of B_r rows: one split").

Every row of a Subroutine basis B_r is q = in_r(u) + f + out_r(v) for one weight f = (u, v) of r
(its cross edge; an all-direct row splits at any of its edges). With p_0's walks in_0 / out_0,

    q = Pre_r(u) + Z(f) + Suf_r(v),
    Pre_r(u) = [in_r(u) + out_0(u)] - T_0(u),   Suf_r(v) = [in_0(v) + out_r(v)] - T_0(v),

Z(f) = in_0(u) + f + out_0(v) (the *spliced* path; S_0(f), a path of B_0, on a hop of p_0) and
T_0(z) = in_0(z) + out_0(z) (a path of B_0; zero for an input or output neuron). Both brackets
extend along r's route one hop at a time: if route R' is R followed by hop (a, b) and p is u's
designated predecessor at a, then in_R'(u) = in_R(p) + (p, u), and as vectors

    Pre_R'(u) = Pre_R(p) + Z(p, u) - T_0(u),   and likewise   Suf_R'(v) = Suf_R(d) + Z(v, d) - T_0(v)

for R' = hop (b, c) followed by R and d = v's direct successor. So every bracket is a sum of
spliced paths and paths of B_0, table by table, with no path walked twice. The spliced paths of a
skip hop (a, b) are factored as Z(u, v) = Mid(u, v) + A(u) + B(v):

- owned by a block with one new hop (an ear, or a local block with one new hop: it keeps all its
  X_r(f)): X_r(u, v) = Pre_o(u) + Z(u, v) + Suf_o(v) for the owner's routes o, so Mid = Y(u, v)
  (the kept X_r(f), one path), A = -Pre_o, B = -Suf_o;
- owned by a block with several new hops: Mid = the certificate of the rectangle f_uv - f_u0 -
  f_0v + f_00, A(u) = Z(u, 0) - Z(0, 0), B(v) = Z(0, v), from the witness peel
  (``WitnessCertificates.spliced_table``), each checked by vector addition.

A row split on hop (a, b) then has the certificate [Pre_r + A](u) + Mid(u, v) + [Suf_r + B](v):
three table rows, the first and last precombined once per (route, neuron).

Why this is exact: the identities above hold as vectors; the only certificates computed by
linear algebra (the witness peel's) are checked by vector addition; every other piece is a kept
path named by its nodes (B_0's S_0 and T_0 looked up node by node, the X_r(f) compared with r's
walks node by node). Each discarded row is checked to really be in_r(u) + f + out_r(v) (its nodes
equal r's walks before u and after v). Rows that do not split that way (not produced by
Subroutine) fall back to the recursion of ``EarRecursion`` and a full check. ``solve`` also
re-adds a sample of the finished certificates by vector addition, as a guard.
"""

from __future__ import annotations

import numpy as np

from ..network import Network, PathBlock
from ..verify.checks import check_certificates
from ..linalg.sparse import Table, Terms, as_table, combine, concat_terms, empty_terms, take_rows
from .ear_recursion import EarRecursion
from .walks import ChoiceWalks

__all__ = ["SplitCertificates"]

def _zero_table(n: int) -> Table:
    return np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)


def _negated(table: Table) -> Table:
    ptr, idx, coef = table
    return ptr, idx, -coef


def _shared_terms(terms: Terms, n: int) -> tuple[Terms, Terms]:
    """Split merged terms of rows 0..n-1 into (the terms not in every row, the terms every row has
    with the same coefficient, once, as row 0)."""
    rows, idx, coef = terms
    if n < 2 or len(rows) == 0:
        return terms, empty_terms()
    # Rows hold distinct basis indices, so a (basis index, coef) pair seen n times is in every row.
    _, inverse, count = np.unique(np.stack([idx, coef]), axis=1, return_inverse=True, return_counts=True)
    everywhere = (count == n)[inverse.ravel()]
    first = everywhere & (rows == 0)
    return (rows[~everywhere], idx[~everywhere], coef[~everywhere]), (np.zeros(int(first.sum()), dtype=np.int64), idx[first], coef[first])


class SplitCertificates:
    """Certificates of rows of the B_r, over the kept set that ``ears`` numbers."""

    def __init__(self, network: Network, ears: EarRecursion, chains: ChoiceWalks, flat_basis):
        self.network, self.ears, self.chains, self.flat_basis = network, ears, chains, flat_basis
        self.mlp = ears.mlp
        self._pre: dict[tuple[int, ...], Table] = {}
        self._suf: dict[tuple[int, ...], Table] = {}
        self._hops: dict[tuple[int, int], tuple] = {}
        self._pieces: dict[tuple, tuple] = {}
        self._packed_tables: dict[tuple, np.ndarray] = {}
        self.packing = Packing.for_size(ears.size)
        self._walks: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def _checked(self, layers: tuple[int, ...], nodes: np.ndarray) -> Terms:
        """Certificates of distinct paths by the recursion, checked by vector addition."""
        terms = self.ears.expand(layers, nodes, distinct=True)
        check_certificates(self.network, self.flat_basis, [PathBlock(layers, nodes)], terms)
        return terms

    def _t0(self, layer: int, z: np.ndarray, rows: np.ndarray) -> Terms:
        """-T_0(z) for neurons z of ``layer`` (nothing for an input or output neuron)."""
        if layer in (0, self.network.L):
            return empty_terms()
        return rows, self.ears.T0[layer][z], -np.ones(len(z), dtype=np.int64)

    def hop(self, a: int, b: int) -> tuple[Table | None, object, Table | None]:
        """(A, Mid, B) of Z(u, v) = Mid(u, v) + A(u) + B(v) for hop (a, b); Mid is a table over
        u * w_b + v, A over u, B over v (None: zero)."""
        factors = self._hops.get((a, b))
        if factors is not None:
            return factors
        w, lc = self.network.widths, self.ears
        n = w[a] * w[b]
        if b == a + 1:  # S_0(f) itself
            factors = (None, (np.arange(n + 1, dtype=np.int64), lc.S0[a].ravel(), np.ones(n, dtype=np.int64)), None)
        else:
            h = lc.hop[(a, b)]
            if "Y" in h:  # Z = X_o(f) - Pre_o(u) - Suf_o(v)
                Y = h["Y"].ravel()
                mid = (np.arange(n + 1, dtype=np.int64), Y, np.ones(n, dtype=np.int64))
                factors = (_negated(self._bracket(h["pre"], "pre")), mid, _negated(self._bracket(h["suf"], "suf")))
            else:  # the witness peel's factored table
                z = h["Zf"]
                factors = (z.a, z.rect, z.b)
        self._hops[(a, b)] = factors
        return factors

    def _spliced_terms(self, a: int, b: int, u: np.ndarray, v: np.ndarray, rows: np.ndarray) -> list[Terms]:
        A, mid, B = self.hop(a, b)
        parts = [take_rows(mid, u * self.network.widths[b] + v, rows)]
        if A is not None:
            parts.append(take_rows(A, u, rows))
        if B is not None:
            parts.append(take_rows(B, v, rows))
        return parts

    def _bracket(self, route: tuple[int, ...], side: str) -> Table:
        """Pre_R(u) for every neuron u of the route's last layer (side "pre", route from layer 0)
        or Suf_R(v) for every v of its first layer (side "suf", route to layer L), by extending the
        route one hop at a time (module docstring). Zero on p_0's own route."""
        cache = self._pre if side == "pre" else self._suf
        table = cache.get(route)
        if table is not None:
            return table
        w = self.network.widths
        layer = route[-1] if side == "pre" else route[0]
        n = w[layer]
        if len(route) == 1 or route == (self.mlp[: layer + 1] if side == "pre" else self.mlp[layer:]):
            table = _zero_table(n)
        else:
            z = np.arange(n, dtype=np.int64)
            if side == "pre":  # Pre_R'(u) = Pre_R(p) + Z(p, u) - T_0(u)
                a = route[-2]
                p = self.chains.pred(a, layer)
                parts = [take_rows(self._bracket(route[:-1], "pre"), p, z)] + self._spliced_terms(a, layer, p, z, z)
            else:  # Suf_R'(v) = Suf_R(d) + Z(v, d) - T_0(v)
                c = route[1]
                d = self.chains.direct(layer, c)
                parts = [take_rows(self._bracket(route[1:], "suf"), d, z)] + self._spliced_terms(layer, c, z, d, z)
            parts.append(self._t0(layer, z, z))
            table = as_table(combine(concat_terms(parts), n, self.ears.size), n)
        cache[route] = table
        return table

    def _hop_pieces(self, route_pre: tuple[int, ...], route_suf: tuple[int, ...]) -> tuple[Table, Table, Table, Table]:
        """For rows split on hop (a, b) between r's routes ``route_pre`` (ending at a) and
        ``route_suf`` (starting at b): [Pre_r + A] per u, Mid per weight, [Suf_r + B] per v, with
        the terms every u (every v) shares moved into one constant row (table of one key), merged
        once here instead of in every row: most of them cancel."""
        key = (route_pre, route_suf)
        pieces = self._pieces.get(key)
        if pieces is None:
            w, size = self.network.widths, self.ears.size
            a, b = route_pre[-1], route_suf[0]
            A, mid, B = self.hop(a, b)
            u, v = np.arange(w[a], dtype=np.int64), np.arange(w[b], dtype=np.int64)
            pre = [take_rows(self._bracket(route_pre, "pre"), u, u)] + ([take_rows(A, u, u)] if A is not None else [])
            suf = [take_rows(self._bracket(route_suf, "suf"), v, v)] + ([take_rows(B, v, v)] if B is not None else [])
            pre_rest, pre_shared = _shared_terms(combine(concat_terms(pre), w[a], size), w[a])
            suf_rest, suf_shared = _shared_terms(combine(concat_terms(suf), w[b], size), w[b])
            shared = combine(concat_terms([pre_shared, suf_shared]), 1, size)
            pieces = self._pieces[key] = (
                as_table(pre_rest, w[a]), mid, as_table(suf_rest, w[b]), as_table(shared, 1),
            )
        return pieces

    def split(self, layers: tuple[int, ...], nodes: np.ndarray) -> np.ndarray:
        """Per row, a hop j with nodes[:j+1] = in_r(nodes[j]) and nodes[j+1:] = out_r(nodes[j+1])
        (r's route ``layers``), or -1 when there is none."""
        n, k = nodes.shape
        pre = np.ones((n, k), dtype=bool)  # pre[:, j]: the row follows predecessors back from column j
        suf = np.ones((n, k), dtype=bool)  # suf[:, j]: the row follows direct edges on from column j
        for j in range(1, k):
            pre[:, j] = pre[:, j - 1] & (self.chains.pred(layers[j - 1], layers[j])[nodes[:, j]] == nodes[:, j - 1])
        for j in range(k - 2, -1, -1):
            suf[:, j] = suf[:, j + 1] & (self.chains.direct(layers[j], layers[j + 1])[nodes[:, j]] == nodes[:, j + 1])
        ok = pre[:, :-1] & suf[:, 1:]
        return np.where(ok.any(axis=1), np.argmax(ok, axis=1), -1)

    def _walk_tables(self, layers: tuple[int, ...], j: int) -> tuple[np.ndarray, np.ndarray]:
        key = (layers, j)
        tables = self._walks.get(key)
        if tables is None:
            w = self.network.widths
            tables = self._walks[key] = (
                self.chains.backward(layers[: j + 1], np.arange(w[layers[j]])),
                self.chains.forward(layers[j + 1 :], np.arange(w[layers[j + 1]])),
            )
        return tables

    def split_subroutine_rows(self, layers: tuple[int, ...], nodes: np.ndarray, block_rows: np.ndarray) -> np.ndarray:
        """``split`` for rows numbered as Subroutine makes them: a path keeps its row number when
        it is extended by a direct edge and rows made by the cross edges of hop k come after all
        earlier ones, so row i's cross edge is on the hop whose range holds i (the first w_0 rows
        are all-direct: hop 0). The guess is checked against r's walks; rows where it fails get
        ``split``."""
        w = self.network.widths
        bounds = np.cumsum([w[layers[0]]] + [w[a] * (w[b] - 1) for a, b in zip(layers, layers[1:])])
        at = np.maximum(np.searchsorted(bounds, block_rows, side="right") - 1, 0)
        ok = np.zeros(len(nodes), dtype=bool)
        for j in np.unique(at).tolist():
            if j >= len(layers) - 1:
                continue
            rows = np.flatnonzero(at == j)
            walk_in, walk_out = self._walk_tables(layers, j)
            ok[rows] = np.all(nodes[rows, : j + 1] == walk_in[nodes[rows, j]], axis=1) & np.all(
                nodes[rows, j + 1 :] == walk_out[nodes[rows, j + 1]], axis=1
            )
        bad = np.flatnonzero(~ok)
        if len(bad):
            at[bad] = self.split(layers, nodes[bad])
        return at

    def certificates(self, layers: tuple[int, ...], nodes: np.ndarray, block_rows: np.ndarray | None = None) -> Terms:
        """Certificates (row, basis index, coef; merged, sorted by row) of distinct rows ``nodes``
        of a B_r along ``layers``; ``block_rows``: their row numbers in B_r, when known."""
        layers = tuple(layers)
        nodes = np.asarray(nodes, dtype=np.int64)
        if len(nodes) == 0:
            return empty_terms()
        if block_rows is None:
            at = self.split(layers, nodes)
        else:
            at = self.split_subroutine_rows(layers, nodes, np.asarray(block_rows, dtype=np.int64))
        try:
            return self._assemble(layers, nodes, at)
        except OverflowError:  # a coefficient too large for the narrow packing: widen, redo
            self.packing = Packing.wide()
            self._packed_tables.clear()
            return self._assemble(layers, nodes, at)

    def _assemble(self, layers: tuple[int, ...], nodes: np.ndarray, at: np.ndarray) -> Terms:
        w, pk = self.network.widths, self.packing
        groups: list[tuple[np.ndarray, np.ndarray]] = []  # (rows, packed terms: one row each)
        for j in np.unique(at).tolist():
            rows = np.flatnonzero(at == j)
            if j < 0:  # not a Subroutine row: the recursion, checked in full
                r, i, c = self._checked(layers, nodes[rows])
                groups.append((rows, pk.dense(as_table((r, i, c), len(rows)))))
                continue
            a, b = layers[j], layers[j + 1]
            u, v = nodes[rows, j], nodes[rows, j + 1]
            key = (layers[: j + 1], layers[j + 1 :])
            pre = self._dense(("pre", key), lambda: self._hop_pieces(*key)[0])
            mid = self._dense(("mid", (a, b)), lambda: self._hop_pieces(*key)[1])
            suf = self._dense(("suf", key), lambda: self._hop_pieces(*key)[2])
            shared = self._dense(("shared", key), lambda: self._hop_pieces(*key)[3])
            pieces = [pre[u], mid[u * w[b] + v], suf[v], np.broadcast_to(shared, (len(rows), shared.shape[1]))]
            groups.append((rows, np.concatenate(pieces, axis=1)))
        parts = []
        for rows, packed in groups:
            r, i, c = pk.merge_rows(packed)
            parts.append((rows[r], i, c))
        terms = concat_terms(parts)
        if len(groups) > 1 and not all(g[0][-1] < h[0][0] for g, h in zip(groups, groups[1:])):
            order = np.argsort(terms[0], kind="stable")  # groups interleave: back to row order
            terms = tuple(t[order] for t in terms)
        return terms

    def _dense(self, key, make) -> np.ndarray:
        table = self._packed_tables.get(key)
        if table is None:
            table = self._packed_tables[key] = self.packing.dense(make())
        return table


class Packing:
    """Terms packed into one integer each, basis index above a small offset coefficient, so that
    a plain sort of each row (fast) both groups equal basis indices and keeps their coefficients.
    Narrow (int32, |coef| < 256) when the basis indices allow it: half the memory traffic."""

    def __init__(self, bits: int, dtype):
        self.bits, self.dtype = bits, np.dtype(dtype)
        self.offset = 1 << (bits - 1)
        self.empty = np.iinfo(self.dtype).max  # above every packed term: empty slots sort last

    @classmethod
    def for_size(cls, size: int) -> "Packing":
        return cls(9, np.int32) if size < (1 << 22) - 1 else cls.wide()

    @classmethod
    def wide(cls) -> "Packing":
        return cls(16, np.int64)

    def dense(self, table: Table) -> np.ndarray:
        """A CSR table as a dense (keys x longest row) array of packed terms, empty slots last."""
        ptr, idx, coef = table
        n = len(ptr) - 1
        counts = np.diff(ptr)
        width = int(counts.max()) if n else 0
        if len(coef) and int(np.abs(coef).max()) >= self.offset:
            raise OverflowError(f"a certificate coefficient {int(np.abs(coef).max())} does not fit {self.bits} bits")
        out = np.full((n, width), self.empty, dtype=self.dtype)
        pos = np.arange(len(idx), dtype=np.int64) - np.repeat(ptr[:-1], counts)
        out[np.repeat(np.arange(n, dtype=np.int64), counts), pos] = (idx << self.bits) | (coef + self.offset)
        return out

    def merge_rows(self, packed: np.ndarray) -> Terms:
        """Sum each row's packed terms: every row is sorted on its own, so equal basis indices sit
        side by side (at most four: one per piece); out come (row, basis index, coef) sorted by
        row, then basis index, zero sums dropped."""
        n, width = packed.shape
        if width == 0:
            return empty_terms()
        packed = np.sort(packed, axis=1)
        valid = packed != self.empty
        idx = packed >> self.bits
        coef = (packed & ((1 << self.bits) - 1)).astype(np.int64) - self.offset
        same = idx[:, 1:] == idx[:, :-1]  # continues the run to its left
        total = coef.copy()
        run = np.ones_like(same)
        for k in range(1, min(width, 4)):  # runs of up to four: one term per piece
            run = run[:, : width - k] & same[:, k - 1 :]
            total[:, :-k] += np.where(run, coef[:, k:], 0)
        head = valid
        head[:, 1:] &= ~same
        head &= total != 0
        rows, _ = np.nonzero(head)
        return rows, idx[head].astype(np.int64), total[head]
