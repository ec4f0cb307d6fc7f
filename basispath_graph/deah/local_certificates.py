"""Local certificates of deah-complete, computed in numpy batches (docs/deah-complete.md, "Certificates").

For an ear order every skip hop h has one owner r(h) whose kept paths are Y(f) = X_r(f) for all
weights f of h, and p_0's Subroutine basis B_0 is kept whole. Any path p is then written over
kept paths by recursion on the owner that comes last in the order among p's skip hops:

    p = Y(f) + [p_pre + t - in_r(u) - t] + [h + p_suf - h - out_r(v)]

where f = (u, v) is p's weight on h, p_pre / p_suf its parts before u / after v, in_r(u) and
out_r(v) the owner's predecessor and direct walks, t p_0's direct walk from u to layer L and h its
predecessor walk from layer 0 to v. The four completed paths only use skip hops owned earlier,
so the recursion ends; paths of p_0 telescope over B_0:

    p = sum over edges e of p of S_0(e) - sum over hidden neurons z of p of T_0(z).

Every call handles all paths that share one layer sequence at once (unique rows first).

``solve`` does not walk this recursion for the discards: ``split_certificates`` assembles them
from tables. This module provides what both need: p_0's tables (``mlp_tables``), the owner
tables Y of blocks with one new hop (ears, and local blocks with one new hop, which keep all
their X_r(f)), and for the hops of blocks with several new hops the spliced paths' certificates
in factored form (``SplicedTable``, from the witness peel, checked by vector addition). The
recursion remains for paths that are not rows of a B_r.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..choices import ChoiceRule
from ..network import Network, PathBlock
from ..rowkeys import RowIndex
from ..linalg.sparse import gather
from ..verify.checks import Checker
from .step1_substructures import Step1Result
from .step3_complete import Chains, CompleteStep3, _owner_rows

if TYPE_CHECKING:
    from .witness_certificates import WitnessCertificates

__all__ = ["LocalCertificates", "SplicedTable", "as_table", "combine", "mlp_tables", "take_rows"]

Terms = tuple[np.ndarray, np.ndarray, np.ndarray]  # (row, basis index, coefficient)


def _empty() -> Terms:
    z = np.zeros(0, dtype=np.int64)
    return z, z, z


def _concat(parts: list[Terms]) -> Terms:
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return _empty()
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))  # type: ignore[return-value]


def _radix_keys(nodes: np.ndarray, widths: list[int]) -> list[np.ndarray]:
    """Each row as mixed-radix int64 keys over consecutive column groups (a group is closed
    before its product of widths would reach 2^62): equal rows <=> equal keys."""
    keys, key, span = [], np.zeros(len(nodes), dtype=np.int64), 1
    for k, w in enumerate(widths):
        if span * w >= 2**62:
            keys.append(key)
            key, span = np.zeros(len(nodes), dtype=np.int64), 1
        key = key * w + nodes[:, k]
        span *= w
    keys.append(key)
    return keys


def mlp_tables(network: Network, chains: Chains, b0: PathBlock, start: int):
    """p_0's walks and the basis indices of its telescoping paths (B_0 starts at ``start``).

    Returns (in0, out0, S0, T0): in0[b] / out0[a] are p_0's predecessor walks to / direct walks
    from every neuron of a layer; S0[a][u, v] indexes S_0(e) = in_0(u) + e + out_0(v) for the
    weight e = (u, v) of hop (a, a + 1); T0[z][x] indexes T_0(x) = in_0(x) + out_0(x) for a
    neuron x of hidden layer z (T0[0] is None). Every path p of p_0 telescopes over B_0 as
    p = sum over weights e of p of S_0(e) - sum over hidden neurons x of p of T_0(x).
    """
    w, L = network.widths, network.L
    mlp = tuple(range(L + 1))
    rows = RowIndex(b0.nodes)
    out0 = [chains.forward(mlp[a:], np.arange(w[a])) for a in range(L + 1)]
    in0 = [chains.backward(mlp[: b + 1], np.arange(w[b])) for b in range(L + 1)]
    S0, T0 = [], [None]
    for a in range(L):
        u, v = np.divmod(np.arange(w[a] * w[a + 1]), w[a + 1])
        paths = np.concatenate([in0[a][u], out0[a + 1][v]], axis=1)
        S0.append(start + rows.find(paths).reshape(w[a], w[a + 1]))
    for z in range(1, L):
        paths = np.concatenate([in0[z], out0[z][:, 1:]], axis=1)
        T0.append(start + rows.find(paths))
    return in0, out0, S0, T0


def _owner_table(network: Network, block: PathBlock, step3: CompleteStep3, idx: int, start: int, chains: Chains) -> np.ndarray | None:
    """Y[u, v]: basis index of the kept X_r(f) for every weight f = (u, v) of the block's one new
    hop: an ear keeps exactly these rows; a local block with one new hop keeps them all too (their
    witnesses are the identity on the hop) plus rows for its debts. None for any other block."""
    if len(step3.new_hops[idx]) != 1:
        return None
    (a, b), = step3.new_hops[idx]
    w = network.widths
    alive = step3.alive[idx]
    j, owners = _owner_rows(block, (a, b), chains)
    rows = np.flatnonzero(owners & alive)
    if len(rows) != w[a] * w[b]:
        return None
    Y = np.full((w[a], w[b]), -1, dtype=np.int64)
    Y[block.nodes[rows, j], block.nodes[rows, j + 1]] = start + (np.cumsum(alive) - 1)[rows]
    return None if (Y < 0).any() else Y


def as_table(terms: Terms, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Terms sorted by row (``combine`` output) of rows 0..n-1 as a CSR table (ptr, idx, coef)."""
    rows, idx, coef = terms
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=ptr[1:])
    return ptr, idx, coef


def take_rows(table: tuple[np.ndarray, np.ndarray, np.ndarray], keys: np.ndarray, rows: np.ndarray) -> Terms:
    """Rows ``keys`` of a CSR certificate table, as terms of the target rows ``rows``."""
    ptr, idx, coef = table
    take = gather(ptr, keys)
    return np.repeat(rows, ptr[keys + 1] - ptr[keys]), idx[take], coef[take]


class SplicedTable:
    """Certificates of the spliced paths Z(u, v) of one hop in factored form:
    Z(u, v) = R(u, v) + A(u) + B(v), with R the rectangles' certificates,
    A(u) = Z(u, 0) - Z(0, 0) and B(v) = Z(0, v); each a CSR table (``as_table``)."""

    def __init__(self, wb: int, rect, a, b):
        self.wb, self.rect, self.a, self.b = wb, rect, a, b

    @classmethod
    def build(cls, wa: int, wb: int, cross: Terms, f: np.ndarray, rect: Terms, size: int) -> "SplicedTable":
        """``cross``: certificates of Z(u, 0) (rows 0..wa-1) then Z(0, v) (rows wa..wa+wb-1);
        ``rect``: of the rectangles of the weights ``f`` (rows in that order; u, v > 0);
        ``size``: the number of kept paths (basis indices)."""
        rows, idx, coef = cross
        first = rows < wa
        o = rows == 0  # Z(0, 0), subtracted from every Z(u, 0)
        u = np.arange(wa, dtype=np.int64)
        a_terms = (
            np.concatenate([rows[first], np.repeat(u, int(o.sum()))]),
            np.concatenate([idx[first], np.tile(idx[o], wa)]),
            np.concatenate([coef[first], np.tile(-coef[o], wa)]),
        )
        a = as_table(combine(a_terms, wa, size), wa)
        b = as_table((rows[~first] - wa, idx[~first], coef[~first]), wb)
        r, i, c = rect
        return cls(wb, as_table((f[r], i, c), wa * wb), a, b)

    def terms(self, u: np.ndarray, v: np.ndarray, rows: np.ndarray) -> list[Terms]:
        return [take_rows(self.rect, u * self.wb + v, rows), take_rows(self.a, u, rows), take_rows(self.b, v, rows)]


class LocalCertificates:
    """Certificates over the kept set of an ear-ordered ``CompleteStep3`` (basis order: ``order``)."""

    def __init__(
        self,
        network: Network,
        step1: Step1Result,
        bases: dict[int, PathBlock],
        step3: CompleteStep3,
        rule: ChoiceRule,
        peel: Callable[[], "WitnessCertificates"] | None = None,
        checker: "Checker | None" = None,
    ):
        self.network = network
        w, L = network.widths, network.L
        chains = Chains(network, rule)
        self.mlp = tuple(range(L + 1))
        rank = {idx: k for k, idx in enumerate(step3.order)}
        # Basis index of every kept path: blocks in ``order``, kept rows ascending.
        base, starts = 0, {}
        for idx in step3.order:
            starts[idx] = base
            base += int(step3.alive[idx].sum())
        p0 = step3.order[0]
        self.in0, self.out0, self.S0, self.T0 = mlp_tables(network, chains, bases[p0], starts[p0])
        # Owned skip hops: Y table, owner rank, owner walks.
        self.hop: dict[tuple[int, int], dict] = {}
        spliced: list[tuple[int, int]] = []
        for idx in step3.order[1:]:
            Y = _owner_table(network, bases[idx], step3, idx, starts[idx], chains)
            if Y is None:
                # A block with several new hops keeps only part of their X_r(f) (the local rule):
                # its hops use the spliced paths Z(f) = in_0(u) + f + out_0(v) instead, certified
                # by ``spliced_expander`` (the witness peel).
                for a, b in step3.new_hops[idx]:
                    self.hop[(a, b)] = {
                        "rank": rank[idx],
                        "pre": self.mlp[: a + 1],
                        "suf": self.mlp[b:],
                        "in": self.in0[a],
                        "out": self.out0[b],
                    }
                    spliced.append((a, b))
                continue
            (a, b), = step3.new_hops[idx]
            route = bases[idx].layers
            j = route.index(a)
            self.hop[(a, b)] = {
                "rank": rank[idx],
                "Y": Y,
                "pre": route[: j + 1],
                "suf": route[j + 1 :],
                "in": chains.backward(route[: j + 1], np.arange(w[a])),
                "out": chains.forward(route[j + 1 :], np.arange(w[b])),
            }
        if spliced and peel is None:
            raise ValueError("a selection with a block of several new hops needs the witness peel (peel)")
        self.uses_peel = bool(spliced)
        self.size = base
        self.checker = checker
        self._walks: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        if spliced:
            witness = peel()
            for a, b in spliced:
                self.hop[(a, b)]["Zf"] = self._peeled_table(witness, a, b, self.hop[(a, b)]["rank"])

    def _check(self, layers, nodes, terms: Terms) -> Terms:
        if self.checker is not None:
            self.checker.paths(layers, nodes, terms)
        return terms

    def _cross_paths(self, a: int, b: int) -> tuple[tuple[int, ...], np.ndarray]:
        """Z(u, 0) for every u of layer a, then Z(0, v) for every v of layer b (spliced paths)."""
        w = self.network.widths
        u = np.r_[np.arange(w[a]), np.zeros(w[b], dtype=np.int64)]
        v = np.r_[np.zeros(w[a], dtype=np.int64), np.arange(w[b])]
        return self.mlp[: a + 1] + self.mlp[b:], np.concatenate([self.in0[a][u], self.out0[b][v]], axis=1)

    def _peeled_table(self, witness, a: int, b: int, owner: int) -> "SplicedTable":
        """Certificates of Z(f) for a hop of a block with several new hops, factored: the 2w - 1
        cross paths Z(u, 0), Z(0, v) by the witness peel down the whole order, and every
        rectangle f_uv - f_u0 - f_0v + f_00 by the peel from the hop's owner down (every later
        block's witnesses vanish on it: it has no hop totals and no flow through any neuron)."""
        w = self.network.widths
        layers, nodes = self._cross_paths(a, b)
        cross = self._check(layers, nodes, witness.expand_blocks([PathBlock(layers, nodes)]))
        n = w[a] * w[b]
        f = np.flatnonzero((np.arange(n) // w[b] > 0) & (np.arange(n) % w[b] > 0))
        u, v = np.divmod(f, w[b])
        lo = self.network.offsets[(a, b)]
        k = np.arange(len(f), dtype=np.int64)
        rows = np.concatenate([k, k, k, k])
        wids = lo + np.concatenate([f, u * w[b], v, np.zeros(len(f), dtype=np.int64)])
        vals = np.concatenate([np.ones(len(f)), -np.ones(len(f)), -np.ones(len(f)), np.ones(len(f))]).astype(np.int64)
        rect = witness.expand_vectors(rows, wids, vals, len(f), owner)
        if self.checker is not None:
            self.checker.vectors(rows, wids, vals, rect)
        return SplicedTable.build(w[a], w[b], cross, f, rect, self.size)

    def _walk_terms(self, side: str, hop: tuple[int, int], keys: np.ndarray) -> Terms:
        """Certificates of the owner's walk completed by p_0 (``side`` "pre": in_r(u) + p_0's
        direct walk from u; "suf": p_0's predecessor walk to v + out_r(v)) for each key neuron.
        They depend on the neuron only, so each hop's are expanded once and reused."""
        cached = self._walks.get((side, hop))
        if cached is None:
            a, b = hop
            h = self.hop[hop]
            if side == "pre":
                layers = h["pre"] + self.mlp[a + 1 :]
                nodes = np.concatenate([h["in"], self.out0[a][:, 1:]], axis=1)
            else:
                layers = self.mlp[:b] + h["suf"]
                nodes = np.concatenate([self.in0[b][:, :-1], h["out"]], axis=1)
            rows, idx, coef = self.expand(layers, nodes)
            order = np.argsort(rows, kind="stable")
            ptr = np.zeros(len(nodes) + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows, minlength=len(nodes)), out=ptr[1:])
            cached = self._walks[(side, hop)] = (ptr, idx[order], coef[order])
        ptr, idx, coef = cached
        take = gather(ptr, keys)
        return np.repeat(np.arange(len(keys), dtype=np.int64), ptr[keys + 1] - ptr[keys]), idx[take], coef[take]

    def expand(self, layers: tuple[int, ...], nodes: np.ndarray, distinct: bool = False) -> Terms:
        """Certificates of the paths ``nodes`` (rows) along ``layers``: (row, basis index, coef);
        ``distinct``: the caller knows the rows are distinct paths."""
        nodes = np.asarray(nodes, dtype=np.int64)
        if len(nodes) == 0:
            return _empty()
        if distinct:  # e.g. rows of one B_r: nothing to de-duplicate
            return combine(self._expand_unique(tuple(layers), nodes), len(nodes), self.size)
        # Rows as mixed-radix integers (a few, when one would overflow): sorting them is far
        # cheaper than unique(axis=0). Any representative of a group will do.
        keys = _radix_keys(nodes, [self.network.widths[l] for l in layers])
        order = np.argsort(keys[0]) if len(keys) == 1 else np.lexsort(keys[::-1])
        starts = np.zeros(len(nodes), dtype=bool)
        starts[0] = True
        for key in keys:
            sk = key[order]
            starts[1:] |= sk[1:] != sk[:-1]
        inverse = np.empty(len(nodes), dtype=np.int64)
        inverse[order] = np.cumsum(starts) - 1
        uniq = nodes[order[starts]]
        # Merge terms here: most of the recursion's terms cancel, and keeping them costs memory.
        rows, idx, coef = combine(self._expand_unique(tuple(layers), uniq), len(uniq), self.size)
        if len(uniq) == len(nodes):  # all distinct: unique row k is original row original[k]
            original = np.empty(len(nodes), dtype=np.int64)
            original[inverse] = np.arange(len(nodes), dtype=np.int64)
            return original[rows], idx, coef
        # Replicate each unique row's terms for every original row that maps to it (``combine``
        # returns the terms sorted by row).
        ptr = np.zeros(len(uniq) + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=len(uniq)), out=ptr[1:])
        take = gather(ptr, inverse)
        counts = ptr[inverse + 1] - ptr[inverse]
        return np.repeat(np.arange(len(nodes), dtype=np.int64), counts), idx[take], coef[take]

    def _telescope(self, N: np.ndarray) -> Terms:
        """Paths of p_0 over B_0: p = sum of S_0(e) - sum of T_0(z). Where p leaves z by its
        direct edge, S_0 of that edge *is* T_0(z) (likewise where it enters z from its
        designated predecessor), so those pairs cancel before they are emitted: the walks that
        complete the recursion's paths follow exactly these edges."""
        n, L = N.shape[0], N.shape[1] - 1
        S = np.stack([self.S0[l][N[:, l], N[:, l + 1]] for l in range(L)], axis=1)
        keep_s = np.ones((n, L), dtype=bool)
        parts = []
        for z in range(1, L):
            t = self.T0[z][N[:, z]]
            out = keep_s[:, z] & (S[:, z] == t)  # leaves z by its direct edge
            keep_s[:, z] &= ~out
            inc = ~out & keep_s[:, z - 1] & (S[:, z - 1] == t)  # enters z from its predecessor
            keep_s[:, z - 1] &= ~inc
            left = np.flatnonzero(~(out | inc))
            parts.append((left, t[left], -np.ones(len(left), dtype=np.int64)))
        rows, cols = np.nonzero(keep_s)
        parts.append((rows, S[rows, cols], np.ones(len(rows), dtype=np.int64)))
        return _concat(parts)

    def _expand_unique(self, lam: tuple[int, ...], N: np.ndarray) -> Terms:
        n = len(N)
        ar = np.arange(n, dtype=np.int64)
        skips = [i for i in range(len(lam) - 1) if lam[i + 1] > lam[i] + 1]
        if not skips:
            return self._telescope(N)
        i = max(skips, key=lambda k: self.hop[(lam[k], lam[k + 1])]["rank"])
        a, b = lam[i], lam[i + 1]
        h = self.hop[(a, b)]
        u, v = N[:, i], N[:, i + 1]
        if "Y" in h:
            parts = [(ar, h["Y"][u, v], np.ones(n, dtype=np.int64))]
        else:  # a hop of a block with several new hops: the spliced path's certificate
            parts = h["Zf"].terms(u, v, ar)
        # Prefix difference, completed by p_0's direct walk from u.
        pre_r = h["in"][u]
        differ = ar if lam[: i + 1] != h["pre"] else np.flatnonzero(np.any(N[:, : i + 1] != pre_r, axis=1))
        if len(differ):
            tail = self.out0[a][u[differ]][:, 1:]
            tail_layers = self.mlp[a + 1 :]
            r, k, c = self.expand(lam[: i + 1] + tail_layers, np.concatenate([N[differ, : i + 1], tail], axis=1))
            parts.append((differ[r], k, c))
            r, k, c = self._walk_terms("pre", (a, b), u[differ])
            parts.append((differ[r], k, -c))
        # Suffix difference, completed by p_0's predecessor walk to v.
        suf_r = h["out"][v]
        differ = ar if lam[i + 1 :] != h["suf"] else np.flatnonzero(np.any(N[:, i + 1 :] != suf_r, axis=1))
        if len(differ):
            head = self.in0[b][v[differ]][:, :-1]
            head_layers = self.mlp[:b]
            r, k, c = self.expand(head_layers + lam[i + 1 :], np.concatenate([head, N[differ, i + 1 :]], axis=1))
            parts.append((differ[r], k, c))
            r, k, c = self._walk_terms("suf", (a, b), v[differ])
            parts.append((differ[r], k, -c))
        return _concat(parts)


def combine(terms: Terms, n_rows: int, size: int, modulus: int | None = None) -> Terms:
    """Merge equal (row, basis index) terms, drop zero coefficients; sorted by row, then index.
    With ``modulus``, coefficients are summed modulo it (values in 0..modulus-1)."""
    rows, idx, coef = terms
    if len(rows) == 0:
        return _empty()
    key = rows * size + idx
    packed = _packed_sort(key, coef) if modulus is None else None
    if packed is not None:
        key, coef_sorted = packed
    else:
        order = np.argsort(key)
        key, coef_sorted = key[order], coef[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    if modulus is None:
        total = np.add.reduceat(coef_sorted, starts)
    else:
        total = np.add.reduceat(coef_sorted % modulus, starts) % modulus
    keep = total != 0
    uniq, total = key[starts][keep], total[keep]
    return uniq // size, uniq % size, total


def _packed_sort(key: np.ndarray, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Sort (key, coef) pairs by key with one value sort: small coefficients ride in the low bits
    of the key (a plain sort is several times faster than an argsort). None when they do not fit."""
    lo, hi = int(coef.min()), int(coef.max())
    span = hi - lo + 1
    bits = max(1, (span - 1).bit_length())
    if span > 1 << 16 or int(key.max()) >= 1 << (62 - bits):
        return None
    packed = np.sort((key << bits) | (coef - lo))
    return packed >> bits, (packed & ((1 << bits) - 1)) + lo
