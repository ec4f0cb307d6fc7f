"""Walks of the shared choice rule: designated predecessors back, direct edges forward.

Subroutine (Step 2) and deah-complete's rules use one choice rule (``choices.py``): every neuron
v of layer b has a designated predecessor at layer a, and every neuron u of layer a a direct
successor at layer b. Along a route (a substructure's layers) that gives each neuron u a
*predecessor walk* in_r(u) back to layer 0 and a *direct walk* out_r(v) forward to layer L; the
path X_r(f) = in_r(u) + f + out_r(v) of B_r *owns* the weight f = (u, v) (docs/deah-complete.md).
These are choice-rule walks, not the chains U_t1 > U_t2 > ... of the paper's Step 3.
"""

from __future__ import annotations

import numpy as np

from ..choices import ChoiceRule
from ..network import Network, PathBlock
from ..rowkeys import RowIndex

__all__ = ["ChoiceWalks", "owner_rows", "route_hops"]


def route_hops(layers) -> list[tuple[int, int]]:
    """The hops (layer pairs) of a route: ``route_hops((0, 2, 3)) == [(0, 2), (2, 3)]``."""
    return list(zip(layers, layers[1:]))


class ChoiceWalks:
    """Designated-predecessor and direct-edge walks of the shared choice rule along any route."""

    def __init__(self, network: Network, rule: ChoiceRule):
        self.network, self.rule = network, rule
        self._pred: dict[tuple[int, int], np.ndarray] = {}
        self._direct: dict[tuple[int, int], np.ndarray] = {}

    def pred(self, a: int, b: int) -> np.ndarray:
        if (a, b) not in self._pred:
            self._pred[(a, b)] = self.rule.predecessor(a, b, np.arange(self.network.widths[b]))
        return self._pred[(a, b)]

    def direct(self, a: int, b: int) -> np.ndarray:
        if (a, b) not in self._direct:
            self._direct[(a, b)] = self.rule.direct(a, b, np.arange(self.network.widths[a]))
        return self._direct[(a, b)]

    def backward(self, route: tuple[int, ...], end) -> np.ndarray:
        """in(end): neurons of the predecessor walk along ``route`` (layers ascending, ending at
        end's layer) for each neuron in ``end``; shape (len(end), len(route))."""
        end = np.asarray(end, dtype=np.int64)
        cols = [end]
        for a, b in reversed(route_hops(route)):
            cols.append(self.pred(a, b)[cols[-1]])
        return np.stack(cols[::-1], axis=1)

    def forward(self, route: tuple[int, ...], start) -> np.ndarray:
        """out(start): neurons of the direct-edge walk along ``route`` from each start neuron."""
        start = np.asarray(start, dtype=np.int64)
        cols = [start]
        for a, b in route_hops(route):
            cols.append(self.direct(a, b)[cols[-1]])
        return np.stack(cols, axis=1)


def owner_rows(block: PathBlock, hop: tuple[int, int], chains: ChoiceWalks, index: RowIndex | None = None) -> tuple[int, np.ndarray]:
    """Position j of ``hop`` in the block's layers, and the mask of rows equal to X_r(their f):
    every X_r(f) is built from r's walks and looked up among the rows (``index``: the block's
    ``RowIndex``, when the caller already has one)."""
    layers = block.layers
    j = layers.index(hop[0])
    wa, wb = chains.network.widths[hop[0]], chains.network.widths[hop[1]]
    u, v = np.divmod(np.arange(wa * wb, dtype=np.int64), wb)
    prefix = chains.backward(layers[: j + 1], np.arange(wa))
    suffix = chains.forward(layers[j + 1 :], np.arange(wb))
    found = (index or RowIndex(block.nodes)).find(np.concatenate([prefix[u], suffix[v]], axis=1), missing_ok=True)
    mask = np.zeros(len(block), dtype=bool)
    mask[found[found >= 0]] = True
    return j, mask
