"""Algorithm Subroutine (paper, Appendix C): a basis path set of a layered network without skips.

For each hop k -> k+1, every neuron of layer k gets one *direct* edge (``ChoiceRule.direct``);
its other edges are *cross* edges. Every path that reaches a neuron v is extended by v's direct
edge, and one chosen prefix p*(v) is extended by each of v's cross edges. The result has
exactly m - H paths and is independent (order paths by the last cross edge they contain).

p*(v) follows the rule's designated predecessors back to layer 0 (``ChoiceRule.predecessor``):
p*(u) = p*(pred(u)) + (pred(u), u). That path is always among those reaching u, because either
(pred(u), u) is pred(u)'s direct edge (all paths reaching pred(u) were extended by it) or it is a
cross edge (then exactly p*(pred(u)) was extended by it).
"""

from __future__ import annotations

import numpy as np

from ..choices import ChoiceRule
from ..network import Network, PathBlock

__all__ = ["subroutine"]


def subroutine(network: Network, layers, rule: ChoiceRule) -> PathBlock:
    """Basis path set of the skip-free sub-network G_r that visits ``layers``.

    Running time O(|B| * k) for k = len(layers) - 1 hops, vectorised per hop.

    Parameters
    ----------
    network : the whole network (only widths are used; hops need not be consecutive layers).
    layers : ascending layer sequence from 0 to L (a substructure path of G^S).
    rule : the shared choice rule.

    Returns
    -------
    PathBlock with ``m_r - H_r`` rows, where m_r, H_r count the weights and hidden neurons of
    G_r.

    Examples
    --------
    >>> net = Network.build([2, 2, 3, 2, 2], skips=[(0, 2), (2, 4)])
    >>> len(subroutine(net, (0, 2, 4), ChoiceRule(net.widths)))  # 2*3 + 3*2 - 3
    9
    """
    layers = tuple(int(l) for l in layers)
    w = network.widths
    first = w[layers[0]]
    # Paths are built hop by hop as (parent row at the previous hop, new neuron) and written out
    # column by column at the end: concatenating growing path arrays would copy O(|B| k^2).
    n = first
    last = np.arange(first, dtype=np.int64)  # last neuron of every path so far
    pstar = np.arange(first, dtype=np.int64)  # row of p*(v) among the paths so far, per neuron v
    parents: list[np.ndarray] = []
    heads: list[np.ndarray] = []
    for a, b in zip(layers, layers[1:]):
        wa, wb = w[a], w[b]
        sources = np.arange(wa, dtype=np.int64)
        direct = rule.direct(a, b, sources)

        # Every path reaching v continues over v's direct edge (same row number) ...
        # ... and p*(v) continues over each cross edge (v, u), u != direct(v); cross edges are
        # listed source by source, targets ascending: position v*(wb-1) + (u if u < d else u-1).
        targets = np.tile(np.arange(wb, dtype=np.int64), (wa, 1))
        keep = targets != direct[:, None]
        cross_src = np.repeat(sources, wb - 1)
        parents.append(np.concatenate([np.arange(n, dtype=np.int64), pstar[cross_src]]))
        heads.append(np.concatenate([direct[last], targets[keep]]))

        # p* at layer b: extend p*(pred(u)) by (pred(u), u), found among the rows just made.
        ends = np.arange(wb, dtype=np.int64)
        pred = rule.predecessor(a, b, ends)
        is_direct = direct[pred] == ends
        cross_pos = pred * (wb - 1) + np.where(ends < direct[pred], ends, ends - 1)
        pstar = np.where(is_direct, pstar[pred], n + cross_pos)

        last = heads[-1]
        n = len(last)
    columns = np.empty((len(layers), n), dtype=np.int64)  # column-major while filling: contiguous writes
    row = np.arange(n, dtype=np.int64)
    for k in range(len(layers) - 1, 0, -1):
        columns[k] = heads[k - 1][row]
        row = parents[k - 1][row]
    columns[0] = row
    return PathBlock(layers, np.ascontiguousarray(columns.T))
