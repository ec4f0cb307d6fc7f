"""Certificates of deah-complete for any selection, read off each block's own witness system
(docs/deah-complete.md, "Certificates by witness peeling").

Every block t of the order has *witness functionals* that vanish on every path kept before it
and whose values on t's kept rows are independent: its new weights, and for a local block also
phi_z of the debts it pays and its alpha functional (``step3_complete``). Write K_<t for the span
of the paths kept before t. Then the witness map of t, restricted to K_<=t, has kernel exactly
K_<t (it vanishes on K_<t and has rank |kept rows of t| = dim K_<=t / K_<t). So any x in
K_<=t splits uniquely:

    x = sum_i c_i k_i + x',   witness_t(x) = sum_i c_i witness_t(k_i),   x' in K_<t,

with k_i the kept rows of t. Starting from a discarded path q of block r (its witnesses of every
later block are zero, so the peel really starts at r, with the system of the rule that discarded
it) and going down the order, each block solves its own small system; what is left after the last
block lies in the span of p_0's paths and telescopes over B_0. For an ear the system is the
identity on its new hop (c = x's value on the weight), so this reproduces the ear recursion of
``ear_recursion``; certificates over a basis are unique, so both give the same numbers.

Arithmetic is modulo P1; coefficients are lifted to (-P1/2, P1/2) and every certificate is then
checked by exact integer vector addition (``verify.checks.check_certificates``), so a non-integral or too
large coefficient can only show up as a failed check, never as a wrong certificate.
"""

from __future__ import annotations

import numpy as np

from ..choices import ChoiceRule
from ..network import Network, PathBlock
from ..linalg.sparse import Terms, combine, empty_terms, gather
from ..linalg.elimination import P1, NotInSpan, nullspace_mod_p
from ..linalg.sparse_inverse import DependentRows, inverse_on_pivots
from .certificate_tables import SplicedTable, mlp_tables
from .step3_complete import CompleteStep3
from .walks import ChoiceWalks

__all__ = ["WitnessCertificates", "WitnessPeelError", "alpha_functional"]

P = P1


class WitnessPeelError(ValueError):
    """A block's witness system could not express what was left: the kept set is not a basis
    (so no certificate exists), or a bug; ``solve`` reports it rather than guessing."""


def alpha_functional(earlier: np.ndarray, mine: np.ndarray) -> np.ndarray:
    """lambda over hops (mod P) with lambda . alpha_s = 0 for each row alpha_s of ``earlier`` and
    lambda . ``mine`` = 1. Exists because Step 1 selects substructures with independent alpha
    vectors (paper, Section 4, Step 1)."""
    N = nullspace_mod_p(earlier, P) if len(earlier) else np.eye(len(mine), dtype=np.int64)
    d = (mine.astype(np.int64) @ N) % P if N.shape[1] else np.zeros(0, dtype=np.int64)
    nz = np.flatnonzero(d)
    if len(nz) == 0:
        raise WitnessPeelError("alpha vector in the span of earlier ones: Step 1's selection is not independent")
    j = int(nz[0])
    return N[:, j] * pow(int(d[j]), P - 2, P) % P


def _merge(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, width: int) -> Terms:
    """Sum equal (row, col) entries modulo P and drop zeros; sorted by row, then col."""
    return combine((rows, cols, vals), 0, width, modulus=P)


def _sparse_inverse_checked(r: np.ndarray, c: np.ndarray, v: np.ndarray, n: int, width: int):
    """``linalg.sparse_inverse.inverse_on_pivots`` of a block's kept witness vectors (mod P)."""
    try:
        return inverse_on_pivots(r, c, v, n, width, P)
    except (DependentRows, NotInSpan) as exc:  # the rule kept them as independent: cannot happen
        raise WitnessPeelError(f"kept witness vectors: {exc}") from None


class WitnessCertificates:
    """Certificates over the kept set of any ``CompleteStep3`` (basis order: ``order``)."""

    def __init__(self, network: Network, bases: dict[int, PathBlock], step3: CompleteStep3, rule: ChoiceRule):
        self.network = network
        m, w = network.m, network.widths
        order = step3.order
        self.order = order
        hops = list(network.pairs)
        hop_id = {h: k for k, h in enumerate(hops)}
        # Per weight: its hop, source and target neuron.
        self.hop_of = np.repeat(np.arange(len(hops), dtype=np.int64), [w[a] * w[b] for a, b in hops])
        self.local_w = np.arange(m, dtype=np.int64) - np.repeat([network.offsets[h] for h in hops], [w[a] * w[b] for a, b in hops])
        width_b = np.repeat([w[b] for _, b in hops], [w[a] * w[b] for a, b in hops])
        self.src, self.dst = self.local_w // width_b, self.local_w % width_b
        # Owner (position in the order) of every hop and weight: p_0's hops 0, a skip hop the
        # block that brought it.
        self.hop_id = hop_id
        self.new_hops = {k: [hop_id[h] for h in step3.new_hops[idx]] for k, idx in enumerate(order)}
        self.hop_owner = np.zeros(len(hops), dtype=np.int64)
        for k, hs in self.new_hops.items():
            self.hop_owner[hs] = k
        self.owner = self.hop_owner[self.hop_of]
        self.layers = [bases[idx].layers for idx in order]
        # Kept rows per block as weight ids, and their basis indices.
        self.kept_w, self.start = [], []
        base = 0
        for idx in order:
            rows = np.flatnonzero(step3.alive[idx])
            self.kept_w.append(network.weight_ids(bases[idx].take(rows)))
            self.start.append(base)
            base += len(rows)
        self.size = base
        # Ears: the kept row owning each new weight. Local blocks: witness functional and solver.
        self.Y: dict[int, np.ndarray] = {}
        self.witness: dict[int, dict] = {}
        alphas = np.zeros((len(order), len(hops)), dtype=np.int64)
        for k, idx in enumerate(order):
            alphas[k, [hop_id[h] for h in zip(bases[idx].layers, bases[idx].layers[1:])]] = 1
        for k, idx in enumerate(order[1:], start=1):
            if step3.rules[idx] == "ear":
                # Each kept row X_r(f) holds exactly one weight of the new hop: f.
                (a, b), = step3.new_hops[idx]
                kw = self.kept_w[k]
                rr, cc = np.nonzero(self.owner[kw] == k)
                Y = np.full(w[a] * w[b], -1, dtype=np.int64)
                Y[kw[rr, cc] - network.offsets[(a, b)]] = rr
                self.Y[k] = (network.offsets[(a, b)], Y)
            else:
                self.witness[k] = self._local_system(k, idx, step3, hop_id, alphas)
        # p_0's telescoping paths by weight: S_0(e) for every weight e of a hop (a, a + 1), and
        # T_0 of e's target neuron when that neuron is hidden (-1 otherwise).
        self.in0, self.out0, S0, T0 = mlp_tables(network, ChoiceWalks(network, rule), bases[order[0]], 0)
        self.S_of = np.full(m, -1, dtype=np.int64)
        self.T_of = np.full(m, -1, dtype=np.int64)
        for a in range(network.L):
            lo = network.offsets[(a, a + 1)]
            self.S_of[lo : lo + w[a] * w[a + 1]] = S0[a].ravel()
            if a + 1 < network.L:
                self.T_of[lo : lo + w[a] * w[a + 1]] = np.tile(T0[a + 1], w[a])

    def hops_of(self, layers) -> list[int]:
        return [self.hop_id[h] for h in zip(layers, layers[1:])]

    def spliced_table(self, a: int, b: int, checker=None) -> SplicedTable:
        """Certificates of the spliced paths Z(f) = in_0(u) + f + out_0(v) of the skip hop (a, b),
        factored (``SplicedTable``): the 2w - 1 cross paths Z(u, 0), Z(0, v) by the peel down the
        whole order, and every rectangle f_uv - f_u0 - f_0v + f_00 by the peel from the hop's owner
        down (every later block's witnesses vanish on it: it has no hop totals and no flow through
        any neuron). ``checker`` (a ``verify.checks.Checker``): re-add both by vector addition."""
        w, mlp = self.network.widths, tuple(range(self.network.L + 1))
        u = np.r_[np.arange(w[a]), np.zeros(w[b], dtype=np.int64)]
        v = np.r_[np.zeros(w[a], dtype=np.int64), np.arange(w[b])]
        layers, nodes = mlp[: a + 1] + mlp[b:], np.concatenate([self.in0[a][u], self.out0[b][v]], axis=1)
        cross = self.expand_blocks([PathBlock(layers, nodes)])
        if checker is not None:
            checker.paths(layers, nodes, cross)
        n = w[a] * w[b]
        f = np.flatnonzero((np.arange(n) // w[b] > 0) & (np.arange(n) % w[b] > 0))
        u, v = np.divmod(f, w[b])
        lo = self.network.offsets[(a, b)]
        k = np.arange(len(f), dtype=np.int64)
        rows = np.concatenate([k, k, k, k])
        wids = lo + np.concatenate([f, u * w[b], v, np.zeros(len(f), dtype=np.int64)])
        vals = np.concatenate([np.ones(len(f)), -np.ones(len(f)), -np.ones(len(f)), np.ones(len(f))]).astype(np.int64)
        rect = self.expand_vectors(rows, wids, vals, len(f), int(self.hop_owner[self.hop_id[(a, b)]]))
        if checker is not None:
            checker.vectors(rows, wids, vals, rect)
        return SplicedTable.build(w[a], w[b], cross, f, rect, self.size)

    def _local_system(self, k: int, idx: int, step3: CompleteStep3, hop_id, alphas) -> dict:
        w = self.network.widths
        # Witness coordinates: the new weights hop by hop, then phi_z per paid debt, then alpha.
        new_base = np.full(len(self.network.pairs), -1, dtype=np.int64)
        base = 0
        for h in self.new_hops[k]:
            a, b = self.network.pairs[h]
            new_base[h] = base
            base += w[a] * w[b]
        debts = []
        for layer, into, out_of in step3.paid_debts.get(idx, []):
            debts.append((base, np.array([hop_id[h] for h in into]), np.array([hop_id[h] for h in out_of])))
            base += w[layer]
        system = {
            "new_base": new_base,
            "debts": debts,
            "alpha_coord": base,
            "lam": alpha_functional(alphas[:k], alphas[k]),
        }
        kw = self.kept_w[k]
        rows = np.repeat(np.arange(len(kw), dtype=np.int64), kw.shape[1])
        r, c, v = self._evaluate(system, rows, kw.ravel(), np.ones(kw.size, dtype=np.int64))
        # The kept witness vectors are independent; on a set P of pivot coordinates they form an
        # invertible square matrix W[:, P]. For any w in their span, the coefficients are
        # c = w[P] . W[:, P]^-1, so the inverse (very sparse here: a few terms per coordinate) is
        # computed once and applied to every row with array operations.
        system["inv_ptr"], system["inv_kept"], system["inv_coef"] = _sparse_inverse_checked(r, c, v, len(kw), system["alpha_coord"] + 1)
        return system

    def _evaluate(self, system: dict, rows: np.ndarray, wids: np.ndarray, vals: np.ndarray) -> Terms:
        """The block's witness functionals on the vectors given as entries (row, weight, value):
        merged entries (row, witness coordinate, value mod P)."""
        parts_r, parts_c, parts_v = [], [], []
        hop = self.hop_of[wids]
        base = system["new_base"][hop]
        on = base >= 0
        parts_r.append(rows[on]), parts_c.append(base[on] + self.local_w[wids[on]]), parts_v.append(vals[on])
        for base, into, out_of in system["debts"]:
            m_in = np.isin(hop, into)
            parts_r.append(rows[m_in]), parts_c.append(base + self.dst[wids[m_in]]), parts_v.append(vals[m_in])
            m_out = np.isin(hop, out_of)
            parts_r.append(rows[m_out]), parts_c.append(base + self.src[wids[m_out]]), parts_v.append(-vals[m_out])
        lam = system["lam"][hop]
        on = lam != 0
        parts_r.append(rows[on])
        parts_c.append(np.full(int(on.sum()), system["alpha_coord"], dtype=np.int64))
        parts_v.append((vals[on] % P) * lam[on] % P)
        width = system["alpha_coord"] + 1
        return _merge(np.concatenate(parts_r), np.concatenate(parts_c), np.concatenate(parts_v) % P, width)

    def expand(self, layers: tuple[int, ...], nodes: np.ndarray) -> Terms:
        """Certificates of the paths ``nodes`` along ``layers``: (row, basis index, coef), coef
        lifted from mod P to the symmetric range (checked afterwards by vector addition)."""
        return self.expand_blocks([PathBlock(tuple(layers), np.asarray(nodes, dtype=np.int64))])

    def expand_blocks(self, blocks: list[PathBlock]) -> Terms:
        """Certificates of all paths of ``blocks``, numbered in order across the blocks: one peel
        down the order for all of them (each block's system is set up once per call)."""
        n = sum(len(b) for b in blocks)
        if n == 0:
            return empty_terms()
        state = _Residual(self, n)
        first = 0
        for block in blocks:
            rows = np.arange(first, first + len(block), dtype=np.int64)
            state.add(self.network.weight_ids(block), block.layers, rows, np.ones(len(block), dtype=np.int64))
            first += len(block)
        return self._peel(state, len(self.order) - 1)

    def expand_vectors(self, rows: np.ndarray, wids: np.ndarray, vals: np.ndarray, n: int, top: int) -> Terms:
        """Certificates of vectors given as entries (row, weight, integer value), peeled from block
        ``top`` (a position in the order) down. Only right when every block after ``top`` has
        witnesses vanishing on the vectors and their hop totals are zero (e.g. a "rectangle"
        f_uv - f_uv' - f_u'v + f_u'v' on one hop owned by ``top``: every flow through a neuron and
        every hop total is 0); every certificate is checked by vector addition."""
        state = _Residual(self, n)
        hops = self.hop_of[wids]
        for hop in np.unique(hops).tolist():
            on = hops == hop
            state.buckets.setdefault(hop, []).append((rows[on], wids[on], vals[on] % P))
        return self._peel(state, top)

    def _peel(self, state: "_Residual", top: int) -> Terms:
        out: list[Terms] = []
        for k in range(top, 0, -1):
            if k in self.witness:
                coefs = self._solve_local(k, state)
            else:
                (hop,) = self.new_hops[k]
                r, wk, v = state.pop(hop)
                lo, Y = self.Y[k]
                coefs = (r, Y[wk - lo], v)
            for hop in self.new_hops[k]:
                state.clear(hop)
            if len(coefs[0]) == 0:
                continue
            out.append((coefs[0], self.start[k] + coefs[1], coefs[2]))
            # x -= sum coef x kept row; on block k's own new hops that cancels x exactly (that is
            # what the solve is for), so only the hops owned earlier receive entries.
            r, kept, c = coefs
            state.add(self.kept_w[k][kept], self.layers[k], r, (P - c) % P, below=k)
        out.append(self._telescope(state.pop_all()))
        rows, idx, coef = _merge(*(np.concatenate([p[j] for p in out]) for j in range(3)), self.size)
        return rows, idx, np.where(coef > P // 2, coef - P, coef)

    def _solve_local(self, k: int, state: "_Residual") -> Terms:
        """Coefficients on block k's kept rows, c = witness_k(x)[P] . W[:, P]^-1, for every row
        at once. Only right when witness_k(x) is in the span of the kept witness vectors, which
        holds when the kept set is a basis; every certificate is checked by vector addition."""
        system = self.witness[k]
        parts_r, parts_c, parts_v = [], [], []
        for hop in self.new_hops[k]:
            r, wk, v = state.pop(hop)
            parts_r.append(r), parts_c.append(system["new_base"][hop] + self.local_w[wk]), parts_v.append(v)
        for base, into, out_of in system["debts"]:
            for hops, sign, end in ((into, 1, self.dst), (out_of, -1, self.src)):
                for hop in hops.tolist():
                    r, wk, v = state.peek(hop)
                    parts_r.append(r), parts_c.append(base + end[wk]), parts_v.append(v if sign > 0 else (P - v) % P)
        r, a = state.functional(system["lam"])
        parts_r.append(r), parts_c.append(np.full(len(r), system["alpha_coord"], dtype=np.int64)), parts_v.append(a)
        r, c, v = _merge(np.concatenate(parts_r), np.concatenate(parts_c), np.concatenate(parts_v), system["alpha_coord"] + 1)
        ptr = system["inv_ptr"]
        take = gather(ptr, c)
        n = ptr[c + 1] - ptr[c]
        return _merge(
            np.repeat(r, n), system["inv_kept"][take], np.repeat(v, n) * system["inv_coef"][take] % P, len(self.kept_w[k])
        )

    def _telescope(self, left: Terms) -> Terms:
        """What is left lies in the span of p_0's paths: x = sum_e x_e S_0(e) - sum_z flow_z T_0(z)."""
        r, wk, v = left
        S = self.S_of[wk]
        if np.any(S < 0):
            raise WitnessPeelError("a skip weight is left after every block was peeled")
        T = self.T_of[wk]
        hidden = T >= 0
        return np.concatenate([r, r[hidden]]), np.concatenate([S, T[hidden]]), np.concatenate([v, (P - v[hidden]) % P])


class _Residual:
    """What is left of the target vectors during the peel, kept as unmerged entries
    (row, weight, value mod P) filed by hop, plus every row's hop totals when some block has an
    alpha functional (a functional of the hop totals: kept current instead of re-summed)."""

    def __init__(self, peel: WitnessCertificates, n_rows: int):
        self.peel, self.n = peel, n_rows
        self.buckets: dict[int, list[Terms]] = {}
        self.totals = np.zeros((n_rows, len(peel.network.pairs)), dtype=np.int64) if peel.witness else None

    def add(self, wids: np.ndarray, layers, rows: np.ndarray, coef: np.ndarray, below: int | None = None) -> None:
        """Add coef[i] x the path wids[i] to row rows[i]; with ``below``, only on hops owned by
        blocks before that one."""
        hops = []
        for j, hop in enumerate(self.peel.hops_of(layers)):
            if below is None or self.peel.hop_owner[hop] < below:
                parts = self.buckets.setdefault(hop, [])
                parts.append((rows, wids[:, j], coef))
                if sum(len(p[0]) for p in parts) > 4 * self.n + 100_000:
                    # Most entries cancel (p_0's hops receive some from every block): merging
                    # now and then keeps memory proportional to what is really left.
                    self.buckets[hop] = [self._merged(parts)]
                hops.append(hop)
        if self.totals is not None and hops and len(rows):
            # Every hop of the path gets the same total: coef summed per row.
            order = np.argsort(rows, kind="stable")
            starts = np.flatnonzero(np.r_[True, np.diff(rows[order]) != 0])
            urows = rows[order][starts]
            sums = np.add.reduceat(coef[order] % P, starts) % P
            block = self.totals[np.ix_(urows, hops)]
            self.totals[np.ix_(urows, hops)] = (block + sums[:, None]) % P

    def _merged(self, parts: list[Terms]) -> Terms:
        if not parts:
            return empty_terms()
        return _merge(*(np.concatenate([p[j] for p in parts]) for j in range(3)), self.peel.network.m)

    def pop(self, hop: int) -> Terms:
        return self._merged(self.buckets.pop(hop, []))

    def peek(self, hop: int) -> Terms:
        merged = self._merged(self.buckets.get(hop, []))
        if len(merged[0]):
            self.buckets[hop] = [merged]
        return merged

    def clear(self, hop: int) -> None:
        """The hop's entries are gone (its owner was peeled): its totals are zero too."""
        self.buckets.pop(hop, None)
        if self.totals is not None:
            self.totals[:, hop] = 0

    def pop_all(self) -> Terms:
        parts = [p for ps in self.buckets.values() for p in ps]
        self.buckets.clear()
        return self._merged(parts)

    def functional(self, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows, value mod P) of sum over hops of lam_h x total_h, for rows where it is not 0."""
        hs = np.flatnonzero(lam)
        value = np.zeros(self.n, dtype=np.int64)
        for h in hs.tolist():
            value = (value + self.totals[:, h] * int(lam[h])) % P
        rows = np.flatnonzero(value)
        return rows, value[rows]
