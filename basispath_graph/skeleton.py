"""The skeleton engine: a basis path set in O(m * L) for any network.

Every neuron not in layer 0 has a designated incoming weight from the previous layer
(``ChoiceRule.predecessor``), every neuron not in layer L a designated outgoing weight to the
next layer (``ChoiceRule.direct``). in(v) walks designated incoming weights back to layer 0,
out(v) walks designated outgoing weights forward to layer L. For every weight e = (u, v) the
path in(u) + e + out(v) is taken; exactly m - H of these m paths are distinct and they form a
basis. Paths of a skip pair are all distinct (no designated weight is a skip). On consecutive
pairs only *designated* weights give repeated paths: in(u) + e + out(v) is then the canonical
path in(x) + out(x) of u or v, so only those few rows need de-duplication.
"""

from __future__ import annotations

import numpy as np

from .choices import ChoiceRule
from .network import Network, PathBlock

__all__ = ["skeleton_basis"]


def _walks(network: Network, rule: ChoiceRule):
    """in-walks IN[l] (w_l, l+1) and out-walks OUT[l] (w_l, L-l+1), neurons per visited layer."""
    w, L = network.widths, network.L
    IN = [np.arange(w[0], dtype=np.int64)[:, None]]
    for l in range(1, L + 1):
        pred = rule.predecessor(l - 1, l, np.arange(w[l]))
        IN.append(np.concatenate([IN[l - 1][pred], np.arange(w[l], dtype=np.int64)[:, None]], axis=1))
    OUT = [None] * (L + 1)
    OUT[L] = np.arange(w[L], dtype=np.int64)[:, None]
    for l in range(L - 1, -1, -1):
        nxt = rule.direct(l, l + 1, np.arange(w[l]))
        OUT[l] = np.concatenate([np.arange(w[l], dtype=np.int64)[:, None], OUT[l + 1][nxt]], axis=1)
    return IN, OUT


def skeleton_basis(network: Network, seed: int = 0) -> list[PathBlock]:
    """A basis path set of ``network`` with exactly m - H paths.

    Running time O(m * L). Returns one block for the full layer sequence (consecutive pairs)
    and one per skip pair.

    Examples
    --------
    >>> net = Network.build([2, 2, 3, 2, 2], skips=[(0, 2), (2, 4)])
    >>> sum(len(b) for b in skeleton_basis(net)) == net.m - net.H
    True
    """
    rule = ChoiceRule(network.widths, seed)
    w, L = network.widths, network.L
    IN, OUT = _walks(network, rule)
    full_rows, designated_rows, blocks = [], [], []
    for a, b in network.pairs:
        i, j = np.divmod(np.arange(w[a] * w[b], dtype=np.int64), w[b])
        nodes = np.concatenate([IN[a][i], OUT[b][j]], axis=1)
        if b > a + 1:
            layers = tuple(range(a + 1)) + tuple(range(b, L + 1))
            blocks.append(PathBlock(layers, nodes))
            continue
        designated = (rule.direct(a, b, i) == j) | (rule.predecessor(a, b, j) == i)
        full_rows.append(nodes[~designated])
        designated_rows.append(nodes[designated])
    canonical = np.unique(np.concatenate(designated_rows, axis=0), axis=0)
    full = PathBlock(tuple(range(L + 1)), np.concatenate(full_rows + [canonical], axis=0))
    return [full] + blocks
