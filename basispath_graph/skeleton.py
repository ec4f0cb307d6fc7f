"""The skeleton engine on a layered network: the one skeleton engine (``general/skeleton.py``) with
the layered designations, spelled as path blocks. A basis path set in O(m * L).

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
from .general.skeleton import designated_walks, through_paths, weight_paths
from .network import Network, PathBlock

__all__ = ["skeleton_basis"]


def skeleton_basis(network: Network, seed: int = 0) -> list[PathBlock]:
    """A basis path set of a layered ``network`` with exactly m - H paths: the one skeleton
    engine (``general.skeleton``) with the layered designations (consecutive layers, neurons
    chosen by the seeded ``ChoiceRule``), spelled as path blocks.

    Running time O(m * L). Returns one block for the full layer sequence (the paths of the
    consecutive pairs' weights in pair order, then the canonical paths in(x) + out(x), sorted)
    and one per skip pair.

    Examples
    --------
    >>> net = Network.build([2, 2, 3, 2, 2], skips=[(0, 2), (2, 4)])
    >>> sum(len(b) for b in skeleton_basis(net)) == net.m - net.H
    True
    """
    walks = designated_walks(network, rule=ChoiceRule(network.widths, seed))
    canonical = np.unique(np.concatenate([b.nodes for b in through_paths(network, walks)]).astype(np.int64), axis=0)
    consecutive, skips = [], []
    for k, c in enumerate(network.connections):
        block = weight_paths(network, walks, k)
        if block is None:
            continue
        if c.target == c.source + 1:
            consecutive.append(block.nodes)
        else:
            skips.append(PathBlock(block.layers, block.nodes))
    return [PathBlock(tuple(range(network.L + 1)), np.concatenate(consecutive + [canonical]))] + skips
