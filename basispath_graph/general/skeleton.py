"""The skeleton basis of a general network: designated walks, one path per trainable weight.

As for layered networks (math notes, section 3), every neuron gets a designated incoming hop
(``pred``) and a designated outgoing one (``succ``); ``in(z)`` follows preds back to an input,
``out(z)`` succs forward to an output, and each trainable weight e = (u, v, tap) gives the path
``in(u) + e + out(v)``. Designations are per layer, so every walk of a layer runs along the
same layers and the paths come out as arrays (``GeneralBlock``), connection by connection:

- a layer's designated hop is an **identity** connection when it has one (so neurons joined by
  identity edges share their walks: T(z) = in(z) + out(z) is the same path along a chain of
  identity edges, one path per rescaling class), else its first trainable connection in spec
  order, at neuron 0 (dense), the first neuron of the same group (grouped) or the same neuron
  (diagonal), tap 0;
- a weight that is nobody's designated hop lies on no walk: its path holds it alone (it peels);
- a designated weight gives T(z) of the neuron it is designated for; these are deduplicated as
  vectors (two that differ only in identity hops are one vector).

The count is (m - |designated|) + |distinct T| and must be m - H; the result is then certified
exactly (peeling, elimination on the core). Where the identity edges of a class branch and merge
so that the per-layer walks do not give one path per class, the count is off; then the skeleton
of N (the network without identity connections: designations among trainable connections) plus
one path per edge of a spanning forest of the identity edges (``identity_forest``) is used, which
needs every layer to keep a trainable connection in and out; otherwise ``UnsupportedIdentity``
says so in one line (never a wrong basis).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..choices import ChoiceRule
from ..errors import BadInput
from .blocks import GeneralBlock, block_weight_ids
from .described import DescribedBasis, Family, family_block
from .identity_forest import forest_blocks, identity_free_problem
from .model import GeneralNetwork

__all__ = ["Walks", "designated_walks", "designated_neighbour", "designated_edges", "walks_of", "walks_from", "through_paths", "weight_paths", "walks_forest", "skeleton_of", "skeleton_blocks", "designated_weights", "weight_family", "UnsupportedIdentity"]


class UnsupportedIdentity(BadInput):
    """The designated walks do not give m - H distinct paths on this identity structure."""


@dataclass
class Walks:
    """Per layer: the designated connection in and out, and the walks of its neurons."""

    pred: dict[int, int]  # layer -> connection index (non-input layers)
    succ: dict[int, int]  # layer -> connection index (non-output layers)
    in_layers: dict[int, tuple[int, ...]]
    in_hops: dict[int, tuple[int, ...]]
    in_nodes: dict[int, np.ndarray]  # (size, len(in_layers)) neurons of each neuron's in-walk
    out_layers: dict[int, tuple[int, ...]]
    out_hops: dict[int, tuple[int, ...]]
    out_nodes: dict[int, np.ndarray]
    rule: ChoiceRule | None = None  # a layered network's seeded choice of designated neurons
    pred_from: dict[int, np.ndarray] | None = None  # layer -> neuron of the pred's source, per neuron
    succ_to: dict[int, np.ndarray] | None = None  # layer -> neuron of the succ's target, per neuron


def _designated(net: GeneralNetwork, into: bool, identities: bool, rule: ChoiceRule | None) -> dict[int, int]:
    """Each layer's designated connection in (``into``) or out. With a choice rule (a layered
    network) the connection from the previous layer / to the next one, else (see the module doc)
    an identity connection when the layer has one, else its first trainable one in spec order."""
    chosen: dict[int, int] = {}
    if rule is not None:
        for k, c in enumerate(net.connections):
            if c.target == c.source + 1:
                chosen[c.target if into else c.source] = k
        return chosen
    for k, c in enumerate(net.connections):
        if c.kind == "identity" and not identities:
            continue
        layer = c.target if into else c.source
        prev = chosen.get(layer)
        if prev is None or (c.kind == "identity" and net.connections[prev].kind != "identity"):
            chosen[layer] = k
    return chosen


def designated_neighbour(net: GeneralNetwork, c_idx: int, index: np.ndarray, into: bool, rule: ChoiceRule | None) -> np.ndarray:
    """Neuron on the other side of designated connection ``c_idx`` for neurons ``index`` (of its
    target when ``into``, else of its source): the same neuron on a diagonal or identity
    connection; on a dense one neuron 0, or with a choice rule (a layered network, seeded) the
    rule's predecessor / direct target."""
    c = net.connections[c_idx]
    if c.kind in ("diagonal", "identity"):
        return index
    if c.kind == "grouped":  # the first neuron of the same group on the other side
        ga, gb = net.group_sizes(c)
        return (index // gb) * ga if into else (index // ga) * gb
    if rule is None:
        return np.zeros_like(index)
    return rule.predecessor(c.source, c.target, index) if into else rule.direct(c.source, c.target, index)


def designated_walks(net: GeneralNetwork, identities: bool = True, rule: ChoiceRule | None = None) -> Walks:
    """Every neuron's walks; ``identities=False``: designations among trainable connections only
    (the walks of N, the network without identity connections). ``rule``: a layered network's
    seeded choice rule (``skeleton.skeleton_basis``), which designates consecutive layers."""
    return walks_of(net, _designated(net, True, identities, rule), _designated(net, False, identities, rule), rule)


def walks_of(net: GeneralNetwork, pred: dict[int, int], succ: dict[int, int], rule: ChoiceRule | None = None) -> Walks:
    """The walks of designated connections per layer (``pred`` in, ``succ`` out), each neuron
    following its connection's choice (``designated_neighbour``)."""
    sizes = [np.arange(layer.size, dtype=np.int64) for layer in net.layers]
    pred_from = {layer: designated_neighbour(net, k, sizes[layer], True, rule) for layer, k in pred.items()}
    succ_to = {layer: designated_neighbour(net, k, sizes[layer], False, rule) for layer, k in succ.items()}
    return walks_from(net, pred, pred_from, succ, succ_to, rule)


def designated_edges(net: GeneralNetwork, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Local ids (tap 0) of connection k's direct edges (one per source neuron) and predecessor
    edges (one per target neuron) under the per-kind choice (``designated_neighbour``, no rule)."""
    c = net.connections[k]
    i = np.arange(net.layers[c.source].size, dtype=np.int64)
    j = np.arange(net.layers[c.target].size, dtype=np.int64)
    return (np.asarray(net.local_weight(c, i, designated_neighbour(net, k, i, False, None), 0)),
            np.asarray(net.local_weight(c, designated_neighbour(net, k, j, True, None), j, 0)))


def walks_from(net: GeneralNetwork, pred: dict[int, int], pred_from: dict[int, np.ndarray], succ: dict[int, int],
               succ_to: dict[int, np.ndarray], rule: ChoiceRule | None = None) -> Walks:
    """The walks of designations given per layer: the connection in (``pred``) and, for each of
    the layer's neurons, the neuron it comes from over it (``pred_from``); likewise out
    (``succ``, ``succ_to``). A file's description (``described_io``) is read back through here."""
    in_layers, in_hops, in_nodes = {}, {}, {}
    for layer in range(len(net.layers)):  # topological order: a pred's source comes first
        idx = np.arange(net.layers[layer].size, dtype=np.int64)
        if layer in net.inputs:
            in_layers[layer], in_hops[layer], in_nodes[layer] = (layer,), (), idx[:, None]
            continue
        k = pred[layer]
        a = net.connections[k].source
        prev = in_nodes[a][pred_from[layer]]
        in_layers[layer], in_hops[layer] = in_layers[a] + (layer,), in_hops[a] + (k,)
        in_nodes[layer] = np.concatenate([prev, idx[:, None]], axis=1)
    out_layers, out_hops, out_nodes = {}, {}, {}
    for layer in reversed(range(len(net.layers))):
        idx = np.arange(net.layers[layer].size, dtype=np.int64)
        if layer in net.outputs:
            out_layers[layer], out_hops[layer], out_nodes[layer] = (layer,), (), idx[:, None]
            continue
        k = succ[layer]
        b = net.connections[k].target
        nxt = out_nodes[b][succ_to[layer]]
        out_layers[layer], out_hops[layer] = (layer,) + out_layers[b], (k,) + out_hops[b]
        out_nodes[layer] = np.concatenate([idx[:, None], nxt], axis=1)
    return Walks(pred, succ, in_layers, in_hops, in_nodes, out_layers, out_hops, out_nodes, rule, pred_from, succ_to)


def designated_weights(net: GeneralNetwork, w: Walks, k: int) -> np.ndarray:
    """Local ids (offsets in connection k) of k's designated weights: the pred hops of k's target
    layer and the succ hops of its source layer that go over k, all at tap 0."""
    c = net.connections[k]
    a, b = c.source, c.target
    ids = []
    if w.pred.get(b) == k:  # pred of (b, j) is (a, pred_from[j]) with tap 0
        j = np.arange(net.layers[b].size, dtype=np.int64)
        ids.append(net.local_weight(c, w.pred_from[b], j, 0))
    if w.succ.get(a) == k:  # succ of (a, i) is (b, succ_to[i]) with tap 0
        i = np.arange(net.layers[a].size, dtype=np.int64)
        ids.append(net.local_weight(c, i, w.succ_to[a], 0))
    return np.unique(np.concatenate(ids)) if ids else np.zeros(0, dtype=np.int64)


def weight_family(net: GeneralNetwork, w: Walks, k: int) -> Family:
    """The paths in(u) + e + out(v) of connection k's weights that are nobody's designated hop."""
    return Family(net, k, designated_weights(net, w, k))


def weight_paths(net: GeneralNetwork, w: Walks, k: int) -> GeneralBlock | None:
    """The paths of ``weight_family`` as one block (None when every weight of k is designated)."""
    family = weight_family(net, w, k)
    return family_block(net, w, family) if family.size else None


def through_paths(net: GeneralNetwork, w: Walks) -> list[GeneralBlock]:
    """T(z) = in(z) + out(z) of every neuron with a trainable designated hop, each distinct path once."""
    seen: set = set()
    blocks = []
    for layer in range(len(net.layers)):
        has_trainable = (layer in w.pred and net.connections[w.pred[layer]].trainable) or (
            layer in w.succ and net.connections[w.succ[layer]].trainable
        )
        if not has_trainable:
            continue
        layers = w.in_layers[layer] + w.out_layers[layer][1:]
        hops = w.in_hops[layer] + w.out_hops[layer]
        nodes = np.concatenate([w.in_nodes[layer], w.out_nodes[layer][:, 1:]], axis=1)
        block = GeneralBlock(layers, hops, nodes, np.zeros((len(nodes), len(hops)), dtype=np.int64))
        # Distinct as vectors, not as node sequences: two through-paths that differ only in
        # identity hops are the same vector (then the count check refuses, never a dependent set).
        fresh = []
        for row, key in enumerate(map(tuple, np.sort(block_weight_ids(net, block), axis=1).tolist())):
            if key not in seen:
                seen.add(key)
                fresh.append(row)
        if fresh:
            rows = np.asarray(fresh, dtype=np.int64)
            blocks.append(GeneralBlock(layers, hops, nodes[rows], block.taps[rows]))
    return blocks


def walks_forest(net: GeneralNetwork, w: Walks) -> list[GeneralBlock]:
    """The identity forest's paths (``identity_forest``) over the designated walks ``w``."""
    return forest_blocks(
        net,
        lambda layer, rows: (w.in_layers[layer], w.in_hops[layer], w.in_nodes[layer][rows]),
        lambda layer, rows: (w.out_layers[layer], w.out_hops[layer], w.out_nodes[layer][rows]),
    )


def skeleton_of(net: GeneralNetwork, w: Walks, extra: list[GeneralBlock] = ()) -> DescribedBasis:
    """The T paths first, then the paths of the non-designated weights by connection, then the
    ``extra`` explicit blocks (the identity forest's), described (``general/described.py``)."""
    families = [weight_family(net, w, k) for k, c in enumerate(net.connections) if c.trainable]
    return DescribedBasis(net, w, through_paths(net, w), [f for f in families if f.size], tail=list(extra))


def skeleton_blocks(net: GeneralNetwork) -> DescribedBasis:
    """m - H paths (see the module doc). Where identity edges branch or merge so that the walks
    with identity designations miss the count, the skeleton of N (walks over trainable
    connections only) plus the identity forest (``identity_forest``); UnsupportedIdentity when
    N does not keep the inputs and outputs either."""
    basis = skeleton_of(net, designated_walks(net))
    size = basis.path_count
    if size == net.basis_size:
        return basis
    problem = identity_free_problem(net)
    if problem is None:
        w = designated_walks(net, identities=False)
        basis = skeleton_of(net, w, walks_forest(net, w))
        if basis.path_count == net.basis_size:
            return basis
    raise UnsupportedIdentity(
        f"{net.name or 'network'}: the skeleton's designated walks give {size} paths, not m - H = {net.basis_size}: "
        f"identity edges branch or merge within a rescaling class, and {problem or 'the identity forest does not make up the count'}"
    )
