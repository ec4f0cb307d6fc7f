"""Certificates of deah-complete by the ear recursion, in numpy batches (docs/deah-complete.md,
"Certificates by the ear recursion").

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
from tables (``certificate_tables``: p_0's tables, the owner tables Y of blocks with one new
hop, the spliced tables of blocks with several, from the witness peel and checked by vector
addition). The recursion here serves the pieces that are not table rows (the owners' walks
completed by p_0) and the rows that are not Subroutine rows of a B_r.
"""

from __future__ import annotations

import numpy as np

from ..choices import ChoiceRule
from ..linalg.sparse import Terms, combine, concat_terms, empty_terms, gather
from ..network import Network, PathBlock
from ..rowkeys import radix_keys
from ..verify.checks import Checker
from .certificate_tables import mlp_tables, owner_table
from .step3_complete import CompleteStep3
from .walks import ChoiceWalks
from .witness_certificates import WitnessCertificates

__all__ = ["EarRecursion"]


class EarRecursion:
    """Certificates over the kept set of a ``CompleteStep3`` (basis order: ``order``) by the ear
    recursion; the hops of blocks with several new hops take their spliced tables from the
    witness peel (``WitnessCertificates.spliced_table``), set up only when there are such hops."""

    def __init__(
        self,
        network: Network,
        bases: dict[int, PathBlock],
        step3: CompleteStep3,
        rule: ChoiceRule,
        checker: Checker | None = None,
    ):
        self.network = network
        w, L = network.widths, network.L
        chains = ChoiceWalks(network, rule)
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
            Y = owner_table(network, bases[idx], step3, idx, starts[idx], chains)
            if Y is None:
                # A block with several new hops keeps only part of their X_r(f) (the local rule):
                # its hops use the spliced paths Z(f) = in_0(u) + f + out_0(v) instead, certified
                # by the witness peel (``WitnessCertificates.spliced_table``).
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
        self.uses_peel = bool(spliced)
        self.size = base
        self._walks: dict[tuple, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        if spliced:
            witness = WitnessCertificates(network, bases, step3, rule)
            for a, b in spliced:
                self.hop[(a, b)]["Zf"] = witness.spliced_table(a, b, checker)

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
            return empty_terms()
        if distinct:  # e.g. rows of one B_r: nothing to de-duplicate
            return combine(self._expand_unique(tuple(layers), nodes), len(nodes), self.size)
        # Rows as mixed-radix integers (a few, when one would overflow): sorting them is far
        # cheaper than unique(axis=0). Any representative of a group will do.
        keys = radix_keys(nodes, [self.network.widths[l] for l in layers])
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
        return concat_terms(parts)

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
        return concat_terms(parts)
