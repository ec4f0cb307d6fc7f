"""Certificates of discarded B_r rows, split at their cross edge (docs/deah-complete.md,
"Certificates of B_r rows: one split").

Every row of a Subroutine basis B_r is q = in_r(u) + f + out_r(v) for one weight f = (u, v) of r
(its cross edge; an all-direct row splits at any of its edges). With p_0's walks in_0 / out_0,

    q = [in_r(u) + out_0(u)] - T_0(u) + Z(f) - T_0(v) + [in_0(v) + out_r(v)],

Z(f) = in_0(u) + f + out_0(v) (a path of B_0 when f is on a hop of p_0) and T_0(z) = in_0(z) +
out_0(z). The bracket terms depend on r's route on one side of f and on one neuron only, and Z(f)
on the weight only, so their certificates are computed once (by the ear recursion and the witness
peel of ``LocalCertificates``) and every row's certificate is the exact sum of three table rows.

Why this is verified, without re-adding every row's certificate weight by weight: each table row
is checked by vector addition against its own path when the table is built; each discarded row is
checked to really be in_r(u) + f + out_r(v) (its nodes equal r's walks before u and after v); the
identity above then holds as vectors, and the row's certificate is the exact integer sum of checked
certificates, so it sums to q. Rows that do not split that way (not produced by Subroutine) fall back
to the recursion and a full check.
"""

from __future__ import annotations

import numpy as np

from ..network import Network, PathBlock
from ..verify.rank import _gather
from .local_certificates import LocalCertificates, Terms, _concat, _empty, check_certificates, combine, take_rows
from .step3_complete import Chains

__all__ = ["SplitCertificates"]

Table = tuple[np.ndarray, np.ndarray, np.ndarray]  # CSR over keys: (ptr, basis index, coef)


def _as_table(terms: Terms, n: int) -> Table:
    rows, idx, coef = terms  # ``combine`` output: sorted by row
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=ptr[1:])
    return ptr, idx, coef


class SplitCertificates:
    """Certificates of rows of the B_r, over the kept set that ``local`` numbers."""

    def __init__(self, network: Network, local: LocalCertificates, chains: Chains, flat_basis):
        self.network, self.local, self.chains, self.flat_basis = network, local, chains, flat_basis
        self.mlp = local.mlp
        self._pre: dict[tuple[int, ...], Table] = {}
        self._suf: dict[tuple[int, ...], Table] = {}
        self._pieces: dict[tuple, tuple] = {}
        self._packed_tables: dict[tuple, np.ndarray] = {}
        self._walks: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def _checked(self, layers: tuple[int, ...], nodes: np.ndarray, terms: Terms | None = None) -> Terms:
        """Certificates of distinct paths, checked by vector addition before use."""
        terms = self.local.expand(layers, nodes, distinct=True) if terms is None else terms
        check_certificates(self.network, self.flat_basis, [PathBlock(layers, nodes)], terms)
        return terms

    def _bracket(self, cache: dict, route: tuple[int, ...], side: str) -> Table:
        """pre: in_r(u) + out_0(u) - T_0(u) for every neuron u of route's last layer;
        suf: in_0(v) + out_r(v) - T_0(v) for every v of route's first layer. Zero where the route
        is p_0's own (the two paths are the same) or the neuron is an input or output."""
        table = cache.get(route)
        if table is not None:
            return table
        lc, L = self.local, self.network.L
        layer = route[-1] if side == "pre" else route[0]
        n = self.network.widths[layer]
        own = route == (self.mlp[: layer + 1] if side == "pre" else self.mlp[layer:])
        if own or layer in (0, L):
            table = (np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        else:
            z = np.arange(n, dtype=np.int64)
            if side == "pre":
                layers = route + self.mlp[layer + 1 :]
                nodes = np.concatenate([self.chains.backward(route, z), lc.out0[layer][:, 1:]], axis=1)
            else:
                layers = self.mlp[:layer] + route
                nodes = np.concatenate([lc.in0[layer][:, :-1], self.chains.forward(route, z)], axis=1)
            r, i, c = self._checked(layers, nodes)
            terms = (np.concatenate([r, z]), np.concatenate([i, lc.T0[layer]]), np.concatenate([c, -np.ones(n, dtype=np.int64)]))
            table = _as_table(combine(terms, n, lc.size), n)
        cache[route] = table
        return table

    def _hop_pieces(self, route_pre: tuple[int, ...], route_suf: tuple[int, ...]) -> tuple[Table, object, Table]:
        """For rows split on the skip hop (a, b) between r's routes ``route_pre`` (ending at a)
        and ``route_suf`` (starting at b): the prefix bracket plus Z(u, 0) - Z(0, 0) per u, the
        rectangles, and the suffix bracket plus Z(0, v) per v (``SplicedTable``)."""
        key = (route_pre, route_suf)
        pieces = self._pieces.get(key)
        if pieces is None:
            w, lc = self.network.widths, self.local
            a, b = route_pre[-1], route_suf[0]
            z = lc.spliced_table((a, b))
            u, v = np.arange(w[a], dtype=np.int64), np.arange(w[b], dtype=np.int64)
            oi, oc = z.origin
            pre = [take_rows(self._bracket(self._pre, route_pre, "pre"), u, u), take_rows(z.row, u, u)]
            pre.append((np.repeat(u, len(oi)), np.tile(oi, len(u)), np.tile(-oc, len(u))))
            suf = [take_rows(self._bracket(self._suf, route_suf, "suf"), v, v), take_rows(z.col, v, v)]
            pieces = self._pieces[key] = (
                _as_table(combine(_concat(pre), w[a], lc.size), w[a]),
                z,
                _as_table(combine(_concat(suf), w[b], lc.size), w[b]),
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
            return _empty()
        w = self.network.widths
        if block_rows is None:
            at = self.split(layers, nodes)
        else:
            at = self.split_subroutine_rows(layers, nodes, np.asarray(block_rows, dtype=np.int64))
        blocks: list[tuple[np.ndarray, np.ndarray]] = []  # (rows, packed terms: one row each)
        for j in np.unique(at).tolist():
            rows = np.flatnonzero(at == j)
            if j < 0:  # not a Subroutine row: the recursion, checked in full
                r, i, c = self._checked(layers, nodes[rows])
                blocks.append((rows, _packed(_as_table((r, i, c), len(rows)))))
                continue
            a, b = layers[j], layers[j + 1]
            u, v = nodes[rows, j], nodes[rows, j + 1]
            if b == a + 1:  # a hop of p_0: Z(f) is S_0(f), a path of B_0
                pre = self._dense(("pre", layers[: j + 1]), lambda: self._bracket(self._pre, layers[: j + 1], "pre"))
                suf = self._dense(("suf", layers[j + 1 :]), lambda: self._bracket(self._suf, layers[j + 1 :], "suf"))
                mid = ((self.local.S0[a][u, v] << PACK_BITS) | (1 + PACK_OFFSET))[:, None]
                blocks.append((rows, np.concatenate([pre[u], mid, suf[v]], axis=1)))
            else:
                key = (layers[: j + 1], layers[j + 1 :])
                pieces = lambda: self._hop_pieces(*key)  # noqa: E731
                pre = self._dense(("pre'", key), lambda: pieces()[0])
                rect = self._dense(("rect", (a, b)), lambda: pieces()[1].rect)
                suf = self._dense(("suf'", key), lambda: pieces()[2])
                blocks.append((rows, np.concatenate([pre[u], rect[u * w[b] + v], suf[v]], axis=1)))
        return _merge_packed(blocks, len(nodes))

    def _dense(self, key, make) -> np.ndarray:
        table = self._packed_tables.get(key)
        if table is None:
            table = self._packed_tables[key] = _packed(make())
        return table


# Terms packed into one int64 each, basis index above a small coefficient, so that a plain sort
# of each row (fast) both groups equal basis indices and keeps their coefficients.
PACK_BITS = 16
PACK_OFFSET = 1 << (PACK_BITS - 1)
_EMPTY_SLOT = np.iinfo(np.int64).max


def _packed(table: Table) -> np.ndarray:
    """A CSR table as a dense (keys x longest row) array of packed terms, empty slots at the end
    holding a value above every packed term."""
    ptr, idx, coef = table
    n = len(ptr) - 1
    counts = np.diff(ptr)
    width = int(counts.max()) if n else 0
    if len(coef) and int(np.abs(coef).max()) >= PACK_OFFSET:
        raise OverflowError(f"a certificate coefficient {int(np.abs(coef).max())} does not fit the packed form")
    out = np.full((n, width), _EMPTY_SLOT, dtype=np.int64)
    pos = np.arange(len(idx), dtype=np.int64) - np.repeat(ptr[:-1], counts)
    out[np.repeat(np.arange(n, dtype=np.int64), counts), pos] = (idx << PACK_BITS) | (coef + PACK_OFFSET)
    return out


def _merge_packed(blocks: list[tuple[np.ndarray, np.ndarray]], n: int) -> Terms:
    """Sum each row's packed terms (rows given per block, together 0..n-1): every row is sorted
    on its own, so equal basis indices sit side by side and the output comes out sorted by row,
    then basis index, without a global sort."""
    width = max((m.shape[1] for _, m in blocks), default=0)
    if width == 0:
        return _empty()
    packed = np.full((n, width), _EMPTY_SLOT, dtype=np.int64)
    for rows, m in blocks:
        packed[rows, : m.shape[1]] = m
    packed.sort(axis=1)
    flat = packed.ravel()
    used = np.flatnonzero(flat != _EMPTY_SLOT)
    rows = used // width
    flat = flat[used]
    idx = flat >> PACK_BITS
    coef = (flat & ((1 << PACK_BITS) - 1)) - PACK_OFFSET
    starts = np.flatnonzero(np.r_[True, (rows[1:] != rows[:-1]) | (idx[1:] != idx[:-1])])
    total = np.add.reduceat(coef, starts) if len(starts) else coef[:0]
    keep = total != 0
    return rows[starts][keep], idx[starts][keep], total[keep]
