"""Basis path values as coordinates: free and fixed weights, and the two triangular solves of G-SGD.

The functional core of :class:`~basispath_graph.gsgd.GSGD` (``../shared/notes/gsgd.md``, and
docs/gsgd.md for what is ours). A certified basis B of m - H paths is peeled
(``linalg.peeling``): each path b_l, in peeling order, holds a weight f_l that no later path
holds. f_l is b_l's **free** weight; the other H weights are **fixed** (never changed). Then

- path gradient, forward in peeling order (an equation per free weight of the inverse chain
  rule ``g_j = sum_{b in B, j in b} dL/dv_b * prod_{b minus j} w``):
  ``dL/dv_l = g_{f_l} / q_l - Y_{f_l} / v_l`` with ``q_l = prod_{b_l minus f_l} w`` and
  ``Y_j = sum over the paths b before l through j of dL/dv_b * v_b`` (0 in the first round,
  where a zero free weight is no trouble);
- allocation, backward: ``w_{f_l} = v_l / q_l``, last peeled first (q_l holds fixed weights and
  free weights of later paths only).

Each peeling round is one batched step (a level of a level-scheduled sparse solve). Products are
taken as sums of log |w| with a sign count, so a deep path's product does not underflow.

A skeleton-style basis (``general/described.DescribedBasis``) is not listed: its **family**
paths in(u) + e + out(v), one per non-designated weight e, peel first and alone, with
``q_e = Pin[u] * Pout[v]`` (the products over each neuron's designated walks in and out), so
both solves are a gather per weight, and the sums Y over the designated weights are
scatter-adds along the walks: O(m + neurons x depth) per step. Only its explicit paths
(one per rescaling class and input/output neuron) go through the sparse levels.
"""

from __future__ import annotations

import numpy as np

from ..general.blocks import GeneralBlock, block_weight_ids, flatten_general
from ..general.described import DescribedBasis
from ..linalg.gf2 import independent_columns_mod2
from ..linalg.peeling import peel
from ..network import Network
from .parameters import GSGDError

__all__ = ["PathSpace", "MAX_CORE"]

#: Most paths of an unpeeled core G-SGD solves densely (a 4000 x 4000 inverse: 128 MB in float64).
MAX_CORE = 4000


def _walk_entries(net: Network, walks, into: bool) -> tuple[np.ndarray, np.ndarray]:
    """(neuron id, weight id) of every trainable hop on every neuron's designated walk in (out)."""
    neurons, weights = [], []
    layers, hops, nodes = (walks.in_layers, walks.in_hops, walks.in_nodes) if into else \
        (walks.out_layers, walks.out_hops, walks.out_nodes)
    for layer in range(len(net.layers)):
        block = GeneralBlock(layers[layer], hops[layer], nodes[layer], np.zeros((len(nodes[layer]), len(hops[layer])), dtype=np.int64))
        ids = block_weight_ids(net, block)
        own = net.neuron_offset[layer] + np.arange(len(ids), dtype=np.int64)
        neurons.append(np.repeat(own, ids.shape[1]))
        weights.append(ids.ravel())
    return np.concatenate(neurons), np.concatenate(weights)


class PathSpace:
    """The coordinates of one certified basis of ``network``, on ``device`` in ``dtype``.

    ``free[b]``: the free weight of basis path b (basis index order); ``fixed``: the H others.
    :meth:`gradient` gives (v, dL/dv) from weights and their gradient, :meth:`allocate` the
    weights of new path values (the fixed ones kept), both in basis index order.
    """

    def __init__(self, network: Network, basis, device="cpu", dtype=None):
        import torch

        self.torch, self.network, self.device = torch, network, device
        self.dtype = dtype or torch.float64
        t = lambda a: torch.as_tensor(np.asarray(a, dtype=np.int64), device=device)  # noqa: E731
        m = network.m
        n_paths = sum(len(b) for b in basis)
        if n_paths != network.basis_size:
            raise GSGDError(f"the basis has {n_paths} paths, not m - H = {network.basis_size}: not a basis of this network")
        free = np.full(n_paths, -1, dtype=np.int64)
        # -- families (a described basis): peeled first, one gather per weight -----------------
        fam_index, fam_weight, fam_src, fam_tgt = [], [], [], []
        if isinstance(basis, DescribedBasis):
            before = basis.head_paths
            for fam in basis.families:
                c = network.connections[fam.connection]
                local = fam.local_ids(0, fam.size)
                i, j, _ = network.weight_ends(c, local)
                fam_index.append(before + np.arange(fam.size, dtype=np.int64))
                fam_weight.append(network.connection_offsets[fam.connection] + local)
                fam_src.append(network.neuron_offset[c.source] + i)
                fam_tgt.append(network.neuron_offset[c.target] + j)
                before += fam.size
            explicit = list(basis.explicit)
            explicit_index = np.array([basis.explicit_index(i) for i in range(sum(len(b) for b in explicit))], dtype=np.int64)
            in_n, in_w = _walk_entries(network, basis.walks, True)
            out_n, out_w = _walk_entries(network, basis.walks, False)
        else:
            explicit = list(basis)
            explicit_index = np.arange(n_paths, dtype=np.int64)
            in_n = in_w = out_n = out_w = np.zeros(0, dtype=np.int64)
        cat = lambda parts: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)  # noqa: E731
        fam_index, fam_weight, fam_src, fam_tgt = map(cat, (fam_index, fam_weight, fam_src, fam_tgt))
        free[fam_index] = fam_weight
        self.families = len(fam_index) > 0
        # -- explicit paths: peeled (the family weights lie on no explicit path: certified) ------
        ptr, wids = flatten_general(network, explicit)
        peeled = peel(ptr, wids, m)
        order, pivots = peeled.order, peeled.private
        free[explicit_index[order]] = pivots
        self._core(ptr, wids, peeled.core, explicit_index, free, t)
        if (free < 0).any() or len(np.unique(free)) != n_paths:
            raise GSGDError("internal error: free weights not one per basis path")
        # explicit entries in peeling order, without each path's free weight ("others")
        lengths = np.diff(ptr)[order]
        starts = ptr[:-1][order]
        slot = np.repeat(np.arange(len(order), dtype=np.int64), lengths)  # position in peeling order
        ent = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths) + np.arange(lengths.sum(), dtype=np.int64)
        ent_w = wids[ent]
        other = ent_w != pivots[slot]
        self.level_ends = [int(e) for e in peeled.round_ends]
        ent_ends = np.concatenate([[0], np.cumsum(lengths)])[np.asarray([0] + self.level_ends)]
        oth_ends = np.concatenate([[0], np.cumsum(other)])[ent_ends]
        self._levels = [
            (int(a), int(b), int(ea), int(eb), int(oa), int(ob))
            for a, b, ea, eb, oa, ob in zip([0] + self.level_ends[:-1], self.level_ends, ent_ends[:-1], ent_ends[1:],
                                            oth_ends[:-1], oth_ends[1:])
        ]
        self.free = free
        fixed = np.ones(m, dtype=bool)
        fixed[free] = False
        self.fixed = np.flatnonzero(fixed)
        if len(self.fixed) != network.H:
            raise GSGDError(f"internal error: {len(self.fixed)} fixed weights, not H = {network.H}")
        # -- tensors --------------------------------------------------------------------------
        self.n_paths, self.n_neurons = n_paths, int(network.neuron_offset[-1])
        self.fam_index, self.fam_weight, self.fam_src, self.fam_tgt = map(t, (fam_index, fam_weight, fam_src, fam_tgt))
        self.in_n, self.in_w, self.out_n, self.out_w = map(t, (in_n, in_w, out_n, out_w))
        self.exp_index = t(explicit_index[order])  # basis index of the explicit paths, in peeling order
        self.exp_free = t(pivots)
        self.ent_w, self.ent_slot = t(ent_w), t(slot)
        self.oth_w, self.oth_slot = t(ent_w[other]), t(slot[other])
        self.n_explicit = len(order)

    def _core(self, ptr, wids, core, explicit_index, free, t) -> None:
        """What never peels (a DEAH union's core may): its free weights are columns independent
        mod 2 (so invertible over Q too, ``linalg.gf2``), solved densely after the peeled paths
        (forward) and before them (allocation). Core paths hold no peeled path's free weight."""
        self.n_core = r = len(core)
        if not r:
            return
        if r > MAX_CORE:
            raise GSGDError(f"the basis does not peel: {r} of its paths are left after peeling, more than the {MAX_CORE} G-SGD"
                            " solves densely (use the skeleton basis)")
        rows = [wids[ptr[c]:ptr[c + 1]] for c in core]
        held = np.unique(np.concatenate(rows))
        dense = np.zeros((r, len(held)), dtype=np.uint8)
        slot = np.repeat(np.arange(r, dtype=np.int64), [len(x) for x in rows])
        col = np.searchsorted(held, np.concatenate(rows))
        dense[slot, col] = 1
        found = independent_columns_mod2(dense)
        if found is None:
            raise GSGDError(f"the basis' unpeeled core of {r} paths has no set of free weights invertible mod 2 (the signs of"
                            " its free weights would not follow from the path values): not supported")
        cols, inverse2 = found
        square = dense[:, cols].astype(np.float64)
        inverse = np.linalg.inv(square)
        if np.abs(square @ inverse - np.eye(r)).max() > 1e-8:
            raise GSGDError(f"the basis' unpeeled core of {r} paths is too ill-conditioned to solve in floating point")
        core_free = held[cols]
        free[explicit_index[core]] = core_free
        other = ~np.isin(held[col], core_free)
        torch = self.torch
        self.core_index, self.core_free = t(explicit_index[core]), t(core_free)
        self.core_all_w, self.core_all_slot = t(held[col]), t(slot)
        self.core_oth_w, self.core_oth_slot = t(held[col][other]), t(slot[other])
        self.core_inverse = torch.as_tensor(inverse, dtype=self.dtype, device=self.device)
        self.core_inverse2 = torch.as_tensor(inverse2.astype(np.float64), dtype=self.dtype, device=self.device)

    # -- products -------------------------------------------------------------------------------

    def _logs(self, w):
        return self.torch.log(w.abs()), (w < 0).to(self.dtype)

    def _products(self, logw, neg, weights, slots, n):
        """Per slot 0..n-1: sum of log|w| and count of negative weights over (weights, slots)."""
        torch = self.torch
        lg = torch.zeros(n, dtype=self.dtype, device=self.device)
        ng = torch.zeros(n, dtype=self.dtype, device=self.device)
        lg.index_add_(0, slots, logw[weights])
        ng.index_add_(0, slots, neg[weights])
        return lg, ng

    def _value(self, log, neg):
        return (1.0 - 2.0 * self.torch.remainder(neg, 2.0)) * self.torch.exp(log)

    def _walk_products(self, logw, neg):
        """Pin and Pout per neuron: products over the designated walks in and out."""
        pin = self._value(*self._products(logw, neg, self.in_w, self.in_n, self.n_neurons))
        pout = self._value(*self._products(logw, neg, self.out_w, self.out_n, self.n_neurons))
        return pin, pout

    # -- the two solves -------------------------------------------------------------------------

    def gradient(self, w, g):
        """(v, dL/dv): the basis path values and the path gradient, basis index order, from the
        weights ``w`` and the loss gradient ``g`` (both in weight id order)."""
        torch = self.torch
        v = torch.empty(self.n_paths, dtype=self.dtype, device=self.device)
        dv = torch.empty_like(v)
        logw, neg = self._logs(w)
        Y = torch.zeros_like(w)  # sum of dL/dv_b * v_b over the paths b solved so far through each weight
        if self.families:
            pin, pout = self._walk_products(logw, neg)
            q = pin[self.fam_src] * pout[self.fam_tgt]
            wf, gf = w[self.fam_weight], g[self.fam_weight]
            v[self.fam_index] = wf * q
            dv[self.fam_index] = gf / q
            y = wf * gf  # dL/dv * v
            yin = torch.zeros(self.n_neurons, dtype=self.dtype, device=self.device).index_add_(0, self.fam_src, y)
            yout = torch.zeros_like(yin).index_add_(0, self.fam_tgt, y)
            Y.index_add_(0, self.in_w, yin[self.in_n])
            Y.index_add_(0, self.out_w, yout[self.out_n])
        lq, nq = self._products(logw, neg, self.oth_w, self.oth_slot, self.n_explicit)
        q = self._value(lq, nq)
        wf, gf = w[self.exp_free], g[self.exp_free]
        ve = wf * q
        de = torch.empty_like(ve)
        for a, b, ea, eb, _, _ in self._levels:
            Yf = Y[self.exp_free[a:b]]
            d = gf[a:b] / q[a:b] - torch.where(Yf != 0, Yf / ve[a:b], torch.zeros_like(Yf))
            de[a:b] = d
            Y.index_add_(0, self.ent_w[ea:eb], (d * ve[a:b])[self.ent_slot[ea:eb] - a])
        v[self.exp_index] = ve
        dv[self.exp_index] = de
        if self.n_core:  # after every peeled path: sum over core paths through f of y = w_f g_f - Y_f, densely
            vc = self._value(*self._products(logw, neg, self.core_all_w, self.core_all_slot, self.n_core))
            f = self.core_free
            y = self.core_inverse.T @ (w[f] * g[f] - Y[f])
            v[self.core_index] = vc
            dv[self.core_index] = y / vc
        return v, dv

    def values(self, w):
        """The basis path values (basis index order)."""
        return self.gradient(w, self.torch.zeros_like(w))[0]

    def allocate(self, v, w):
        """New weights: ``w`` with each free weight set so that every basis path's value is ``v``
        (basis index order); the fixed weights are ``w``'s, untouched."""
        torch = self.torch
        w = w.clone()
        if self.n_core:  # first: the core holds fixed weights and its own free ones only
            vc = v[self.core_index]
            logw, neg = self._logs(w)
            lo, no = self._products(logw, neg, self.core_oth_w, self.core_oth_slot, self.n_core)
            logs = self.core_inverse @ (torch.log(vc.abs()) - lo)
            signs = torch.remainder(self.core_inverse2 @ torch.remainder((vc < 0).to(self.dtype) + no, 2.0), 2.0)
            w[self.core_free] = (1.0 - 2.0 * signs) * torch.exp(logs)
        ve = v[self.exp_index]
        lq = torch.zeros(self.n_explicit, dtype=self.dtype, device=self.device)
        nq = torch.zeros_like(lq)
        for a, b, _, _, oa, ob in reversed(self._levels):  # last peeled first: its q holds no free weight left to set
            held = w[self.oth_w[oa:ob]]
            slots = self.oth_slot[oa:ob] - a
            lq[a:b].index_add_(0, slots, torch.log(held.abs()))
            nq[a:b].index_add_(0, slots, (held < 0).to(self.dtype))
            w[self.exp_free[a:b]] = ve[a:b] / self._value(lq[a:b], nq[a:b])
        if self.families:
            logw, neg = self._logs(w)
            pin, pout = self._walk_products(logw, neg)
            w[self.fam_weight] = v[self.fam_index] / (pin[self.fam_src] * pout[self.fam_tgt])
        return w

    def zero_divisors(self, w) -> np.ndarray:
        """Weight ids that must not be 0 for the solves (they divide: on a designated walk, or
        on an explicit path besides its free weight) and are."""
        parts = [self.in_w, self.out_w, self.oth_w] + ([self.core_all_w] if self.n_core else [])
        held = np.unique(np.concatenate([p.cpu().numpy() for p in parts]))
        return held[(w[self.torch.as_tensor(held, device=w.device)] == 0).cpu().numpy()]
