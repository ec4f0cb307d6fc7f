"""Paths for identity shortcuts: one per edge of a spanning forest (docs/general-networks.md).

Let N be the network without its identity connections, with every layer keeping a trainable
connection in (unless an input) and out (unless an output), so N has the same inputs and outputs.
A basis of N has m - H_N paths (H_N: N's hidden neurons). Take the graph whose vertices are N's
hidden neurons plus one *ground* vertex standing for every input and output neuron, and whose
edges are the identity edges a_i -> b_i. For each edge of a spanning forest (union-find, in spec
order) the path ``walk to a_i + identity hop + walk from b_i`` (walks in N). On the flow
functional of a hidden neuron of N (weights in minus weights out), which vanishes on every path
of N, such a path is e_a - e_b (a ground term dropped); those of a forest's edges are independent,
and a spanning forest has H_N - H edges. So a basis of N plus these paths is a basis of the
network: (m - H_N) + (H_N - H) = m - H paths.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .blocks import GeneralBlock
from .model import GeneralNetwork

__all__ = ["Walk", "forest_rows", "forest_blocks", "identity_free_problem"]

#: (layer, neuron indices) -> (layers, hops, nodes): a walk in N ending (in-walk) or starting
#: (out-walk) at ``layer``, one row of ``nodes`` per neuron index.
Walk = Callable[[int, np.ndarray], tuple[tuple[int, ...], tuple[int, ...], np.ndarray]]


def identity_free_problem(net: GeneralNetwork) -> str | None:
    """Why N (the network without identity connections) does not keep the network's inputs and
    outputs (a layer reached or left only through identity connections), or None."""
    trained_in = {c.target for c in net.connections if c.trainable}
    trained_out = {c.source for c in net.connections if c.trainable}
    for k, layer in enumerate(net.layers):
        if k not in net.inputs and k not in trained_in:
            return f"{layer.name} is reached only through identity connections"
        if k not in net.outputs and k not in trained_out:
            return f"{layer.name} is left only through identity connections"
    return None


def forest_rows(net: GeneralNetwork) -> dict[int, list[int]]:
    """Identity connection index -> the neuron indices i whose edge a_i -> b_i is in the forest."""
    ground = -1
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    hidden = [k not in net.inputs and k not in net.outputs for k in range(len(net.layers))]
    chosen: dict[int, list[int]] = {}
    for k, c in enumerate(net.connections):
        if c.kind != "identity":
            continue
        a0, b0 = int(net.neuron_offset[c.source]), int(net.neuron_offset[c.target])
        for i in range(net.layers[c.source].size):
            ra = find(a0 + i) if hidden[c.source] else ground
            rb = find(b0 + i) if hidden[c.target] else ground
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)  # ground (-1) stays a root
                chosen.setdefault(k, []).append(i)
    return chosen


def forest_blocks(net: GeneralNetwork, in_walk: Walk, out_walk: Walk) -> list[GeneralBlock]:
    """The forest's paths, one block per identity connection: in-walk, identity hop, out-walk."""
    out = []
    for k, rows in forest_rows(net).items():
        c = net.connections[k]
        idx = np.asarray(rows, dtype=np.int64)
        in_layers, in_hops, in_nodes = in_walk(c.source, idx)
        out_layers, out_hops, out_nodes = out_walk(c.target, idx)
        hops = in_hops + (k,) + out_hops
        nodes = np.concatenate([in_nodes, out_nodes], axis=1).astype(np.int32)
        out.append(GeneralBlock(in_layers + out_layers, hops, nodes, np.zeros((len(idx), len(hops)), dtype=np.int32)))
    return out
