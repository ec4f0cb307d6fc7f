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

Each peeling round is one batched step (a level of a level-scheduled sparse solve): a gather of
its paths' weights and a product along rows.

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


def _padded(slots: np.ndarray, weights: np.ndarray, n: int, pad: int) -> np.ndarray:
    """Entries (slot, weight) as an n x (longest row) matrix of weight ids, short rows filled
    with ``pad`` (the index of a constant 1: a product over a row is the product of its entries)."""
    counts = np.bincount(slots, minlength=n)
    width = int(counts.max()) if n else 0
    out = np.full((n, width), pad, dtype=np.int64)
    order = np.argsort(slots, kind="stable")
    s = slots[order]
    col = np.arange(len(s), dtype=np.int64) - np.concatenate([[0], np.cumsum(counts)[:-1]])[s]
    out[s, col] = weights[order]
    return out


class PathSpace:
    """The coordinates of one certified basis of ``network``, on ``device`` in ``dtype``.

    ``free[b]``: the free weight of basis path b (basis index order); ``fixed``: the H others.
    :meth:`gradient` gives (v, dL/dv) from weights and their gradient, :meth:`allocate` the
    weights of new path values (the fixed ones kept), both in basis index order.

    Products over paths are gathers into a padded (paths x length) matrix of weight ids and a
    product along rows, in ``dtype`` (float64 by default: a path of 50 weights near 0.05 is
    about 1e-65); index ``m`` of the weight vector is a constant 1 that pads short rows and
    stands in for each row's own free weight. Scatters (the sums Y) touch only the entries whose
    weight is the free weight of a path solved later.
    """

    def __init__(self, network: Network, basis, device="cpu", dtype=None):
        import torch

        self.torch, self.network, self.device = torch, network, device
        self.dtype = dtype or torch.float64
        t = lambda a: torch.as_tensor(np.asarray(a, dtype=np.int64), device=device)  # noqa: E731
        m = self.m = network.m
        n_paths = sum(len(b) for b in basis)
        if n_paths != network.basis_size:
            raise GSGDError(f"the basis has {n_paths} paths, not m - H = {network.basis_size}: not a basis of this network")
        free = np.full(n_paths, -1, dtype=np.int64)
        self.n_neurons = n_neurons = int(network.neuron_offset[-1])
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
            walks = [_walk_entries(network, basis.walks, into) for into in (True, False)]
        else:
            explicit = list(basis)
            explicit_index = np.arange(n_paths, dtype=np.int64)
            walks = []
        cat = lambda parts: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)  # noqa: E731
        fam_index, fam_weight, fam_src, fam_tgt = map(cat, (fam_index, fam_weight, fam_src, fam_tgt))
        free[fam_index] = fam_weight
        self.families = len(fam_index) > 0
        # -- explicit paths: peeled (the family weights lie on no explicit path: certified) ------
        ptr, wids = flatten_general(network, explicit)
        peeled = peel(ptr, wids, m)
        order, pivots = peeled.order, peeled.private
        free[explicit_index[order]] = pivots
        core_free, core_weights = self._core(ptr, wids, peeled.core, explicit_index, free, t)
        if (free < 0).any() or len(np.unique(free)) != n_paths:
            raise GSGDError("internal error: free weights not one per basis path")
        self.free = free
        fixed = np.ones(m, dtype=bool)
        fixed[free] = False
        self.fixed = np.flatnonzero(fixed)
        if len(self.fixed) != network.H:
            raise GSGDError(f"internal error: {len(self.fixed)} fixed weights, not H = {network.H}")
        # when each weight's path is solved: -1 fixed or a family's, else its level (the core last)
        ends = [int(e) for e in peeled.round_ends]
        solved_at = np.full(m + 1, -1, dtype=np.int64)
        solved_at[pivots] = np.searchsorted(np.asarray(ends), np.arange(len(order)), side="right")
        solved_at[core_free] = len(ends)
        # explicit entries in peeling order (slot: position in that order)
        lengths = np.diff(ptr)[order]
        slot = np.repeat(np.arange(len(order), dtype=np.int64), lengths)
        ent = np.repeat(ptr[:-1][order] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths) + \
            np.arange(int(lengths.sum()), dtype=np.int64)
        ent_w = wids[ent]
        level_of = np.searchsorted(np.asarray(ends), slot, side="right")
        own = ent_w == pivots[slot]
        self._levels = []
        for lvl, (a, b) in enumerate(zip([0] + ends[:-1], ends)):
            rows = (level_of == lvl)
            others = rows & ~own
            ids = _padded(slot[others] - a, ent_w[others], b - a, m)  # row product: q, without the free weight
            later = rows & (solved_at[ent_w] > lvl)  # Y feeds only paths solved later
            self._levels.append((a, b, t(ids), t(ent_w[later]), t(slot[later] - a)))
        self.n_explicit = len(order)
        self.exp_index = t(explicit_index[order])  # basis index of the explicit paths, in peeling order
        self.exp_free = t(pivots)
        # weights the solves divide by (checked for 0): a listed path's other weights (a free weight
        # that earlier paths hold is among those: its own path's value divides Y there)
        self.held = [ent_w[~own]]
        # -- tensors of the families and walks ------------------------------------------------------
        self.n_paths = n_paths
        self.fam_index, self.fam_weight, self.fam_src, self.fam_tgt = map(t, (fam_index, fam_weight, fam_src, fam_tgt))
        self.walks = []
        # weights on the designated walks of a described basis (the official code's "skeleton weights")
        self.walk_weights = np.unique(np.concatenate([w for _, w in walks])) if walks else np.zeros(0, dtype=np.int64)
        for (neurons, weights), ends in zip(walks, (fam_src, fam_tgt)):
            later = solved_at[weights] >= 0
            self.walks.append((t(_padded(neurons, weights, n_neurons, m)), t(weights[later]), t(neurons[later])))
            used = np.zeros(n_neurons, dtype=bool)
            used[ends] = True  # only the walks of a family's ends divide (an input's out-walk does not)
            self.held.append(weights[used[neurons]])
        self.held.append(core_weights)

    def _core(self, ptr, wids, core, explicit_index, free, t) -> np.ndarray | None:
        """What never peels (a DEAH union's core may): its free weights are columns independent
        mod 2 (so invertible over Q too, ``linalg.gf2``), solved densely after the peeled paths
        (forward) and before them (allocation). Core paths hold no peeled path's free weight.
        Returns (the core's free weights, every weight on its paths)."""
        self.n_core = r = len(core)
        if not r:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
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
        weights = held[col]
        other = ~np.isin(weights, core_free)
        torch = self.torch
        self.core_index, self.core_free = t(explicit_index[core]), t(core_free)
        self.core_all = t(_padded(slot, weights, r, self.m))
        self.core_other = t(_padded(slot[other], weights[other], r, self.m))
        self.core_inverse = torch.as_tensor(inverse, dtype=self.dtype, device=self.device)
        self.core_inverse2 = torch.as_tensor(inverse2.astype(np.float64), dtype=self.dtype, device=self.device)
        return core_free, weights

    # -- the two solves -------------------------------------------------------------------------
    # Gathers and scatters go through index_select / index_copy_: several times faster on a CPU
    # than advanced indexing (x[idx], x[idx] = y) on these sizes (a profile of ResNet-20's step).

    def _extended(self, w):
        """w with a constant 1 at index m (pads rows; stands for a row's own free weight)."""
        return self.torch.cat([w, w.new_ones(1)])

    @staticmethod
    def _rows(x, ids):
        """x gathered at a (rows x length) matrix of indices, as that matrix's shape."""
        return x.index_select(0, ids.reshape(-1)).view(ids.shape)

    def _walk_products(self, we):
        """Pin and Pout per neuron: products over the designated walks in and out."""
        return [self._rows(we, ids).prod(dim=1) for ids, _, _ in self.walks]

    def _family_q(self, we):
        pin, pout = self._walk_products(we)
        return pin.index_select(0, self.fam_src) * pout.index_select(0, self.fam_tgt)

    def gradient(self, w, g):
        """(v, dL/dv): the basis path values and the path gradient, basis index order, from the
        weights ``w`` and the loss gradient ``g`` (both in weight id order)."""
        torch = self.torch
        v = torch.empty(self.n_paths, dtype=self.dtype, device=self.device)
        dv = torch.empty_like(v)
        we = self._extended(w)
        Y = torch.zeros_like(we)  # sum of dL/dv_b * v_b over the paths b solved so far through each weight
        if self.families:
            q = self._family_q(we)
            wf, gf = w.index_select(0, self.fam_weight), g.index_select(0, self.fam_weight)
            v.index_copy_(0, self.fam_index, wf * q)
            dv.index_copy_(0, self.fam_index, gf / q)
            y = wf * gf  # dL/dv * v
            for (_, weights, neurons), ends in zip(self.walks, (self.fam_src, self.fam_tgt)):
                per_neuron = torch.zeros(self.n_neurons, dtype=self.dtype, device=self.device).index_add_(0, ends, y)
                Y.index_add_(0, weights, per_neuron.index_select(0, neurons))
        wf, gf = w.index_select(0, self.exp_free), g.index_select(0, self.exp_free)
        ve, de = torch.empty_like(wf), torch.empty_like(wf)
        for a, b, ids, later_w, later_slot in self._levels:
            q = self._rows(we, ids).prod(dim=1)
            vl = wf[a:b] * q
            Yf = Y.index_select(0, self.exp_free[a:b])
            d = gf[a:b] / q - torch.where(Yf != 0, Yf / vl, torch.zeros_like(Yf))  # Y = 0 first: a free weight may be 0
            ve[a:b], de[a:b] = vl, d
            if len(later_w):
                Y.index_add_(0, later_w, (d * vl).index_select(0, later_slot))
        v.index_copy_(0, self.exp_index, ve)
        dv.index_copy_(0, self.exp_index, de)
        if self.n_core:  # after every peeled path: sum over core paths through f of y = w_f g_f - Y_f, densely
            vc = self._rows(we, self.core_all).prod(dim=1)
            f = self.core_free
            y = self.core_inverse.T @ (w.index_select(0, f) * g.index_select(0, f) - Y.index_select(0, f))
            v.index_copy_(0, self.core_index, vc)
            dv.index_copy_(0, self.core_index, y / vc)
        return v, dv

    def values(self, w):
        """The basis path values (basis index order)."""
        return self.gradient(w, self.torch.zeros_like(w))[0]

    def allocate(self, v, w):
        """New weights: ``w`` with each free weight set so that every basis path's value is ``v``
        (basis index order); the fixed weights are ``w``'s, untouched."""
        torch = self.torch
        we = self._extended(w)
        if self.n_core:  # first: the core holds fixed weights and its own free ones only
            vc = v.index_select(0, self.core_index)
            others = self._rows(we, self.core_other).prod(dim=1)
            logs = self.core_inverse @ (torch.log(vc.abs()) - torch.log(others.abs()))
            signs = torch.remainder(self.core_inverse2 @ ((vc < 0).to(self.dtype) + (others < 0).to(self.dtype)), 2.0)
            we.index_copy_(0, self.core_free, (1.0 - 2.0 * signs) * torch.exp(logs))
        ve = v.index_select(0, self.exp_index)
        for a, b, ids, _, _ in reversed(self._levels):  # last peeled first: its q holds no free weight left to set
            we.index_copy_(0, self.exp_free[a:b], ve[a:b] / self._rows(we, ids).prod(dim=1))
        if self.families:
            we.index_copy_(0, self.fam_weight, v.index_select(0, self.fam_index) / self._family_q(we))
        return we[:-1]

    def divisors(self) -> np.ndarray:
        """Weight ids the solves divide by (on a designated walk, or on a listed basis path
        besides its free weight): they must not be 0."""
        return np.unique(np.concatenate(self.held))

    def zero_divisors(self, w) -> np.ndarray:
        """The weight ids of ``divisors`` that are 0 in ``w``."""
        held = self.divisors()
        return held[(w[self.torch.as_tensor(held, device=w.device)] == 0).cpu().numpy()]
