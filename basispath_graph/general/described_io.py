"""The described-basis file (``basispath solve --export`` of a big network): a basis in
O(neurons + connections) numbers, read back and certified from the description.

Format ``basispath-described/1`` (docs/general-networks.md, "Described bases"), JSON::

    {"format": "basispath-described/1", "spec": {...}, "engine": "skeleton", "m": .., "H": ..,
     "certified": true, "basis_size": ..,
     "walks": {"in":  [{"layer": NAME, "connection": K, "from": [i_0, i_1, ...]}, ...],
               "out": [{"layer": NAME, "connection": K, "to":   [j_0, j_1, ...]}, ...]},
     "explicit": {"head": [BLOCK, ...], "tail": [BLOCK, ...]},
     "families": [{"connection": K, "excluded": [local weight id, ...]}, ...]}

- ``walks.in``: for every layer that is not an input, its designated connection K (an index into
  the spec's ``connections``) and for each of its neurons the neuron of K's source it comes from
  (tap 0); ``walks.out`` likewise towards the outputs. in(z) and out(z) follow them.
- ``explicit``: paths listed as blocks ``{"layers": [NAME, ...], "hops": [K, ...], "nodes": [[..],
  ..], "taps": [[..], ..]}`` (one row a path; tap 0 on identity hops): the T paths before the
  families, the identity forest's after.
- ``families``: for connection K, one path in(u) + e + out(v) for each weight e = (u, v, tap) of K
  whose local id ((u * size(target) + v) * taps + tap for a dense connection, u * taps + tap for
  a diagonal one) is not in ``excluded``, in id order.

The basis is the explicit head, the families in order, then the explicit tail.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import BadInput
from .blocks import GeneralBlock
from .described import DescribedBasis, Family
from .model import GeneralNetwork
from .skeleton import walks_from

__all__ = ["DESCRIBED_FORMAT", "described_document", "is_described_document", "read_described"]

DESCRIBED_FORMAT = "basispath-described/1"


def _block_json(net: GeneralNetwork, block: GeneralBlock) -> dict:
    return {"layers": [net.layers[l].name for l in block.layers], "hops": [int(k) for k in block.hops],
            "nodes": block.nodes.tolist(), "taps": block.taps.tolist()}


def described_document(result) -> dict:
    """The described-basis document of a result whose basis is a ``DescribedBasis``."""
    basis: DescribedBasis = result.basis
    net, w = result.network, basis.walks
    return {
        "format": DESCRIBED_FORMAT, "spec": net.to_dict(), "engine": result.engine, "m": net.m, "H": net.H,
        "certified": result.certified, "basis_size": basis.path_count,
        "walks": {
            "in": [{"layer": net.layers[l].name, "connection": int(k), "from": w.pred_from[l].tolist()} for l, k in sorted(w.pred.items())],
            "out": [{"layer": net.layers[l].name, "connection": int(k), "to": w.succ_to[l].tolist()} for l, k in sorted(w.succ.items())],
        },
        "explicit": {"head": [_block_json(net, b) for b in basis.explicit[:basis.head]],
                     "tail": [_block_json(net, b) for b in basis.explicit[basis.head:]]},
        "families": [{"connection": f.connection, "excluded": f.excluded.tolist()} for f in basis.families],
    }


def is_described_document(data: object) -> bool:
    return isinstance(data, Mapping) and data.get("format") == DESCRIBED_FORMAT


def _ints(value: object, where: str, length: int | None = None, below: int | None = None) -> np.ndarray:
    """A list of non-negative integers (of ``length``, each below ``below``) as int64; BadInput naming ``where``."""
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        raise BadInput(f"{where}: expected a list of integers")
    arr = np.asarray(value, dtype=np.int64) if all(-(2**63) <= v < 2**63 for v in value) else None
    if arr is None or (len(arr) and arr.min() < 0) or (below is not None and len(arr) and arr.max() >= below):
        raise BadInput(f"{where}: integers must lie in 0 .. {'' if below is None else below - 1}")
    if length is not None and len(arr) != length:
        raise BadInput(f"{where}: {len(arr)} entries, expected {length}")
    return arr


def _connection(net: GeneralNetwork, value: object, where: str) -> int:
    if type(value) is not int or not 0 <= value < len(net.connections):
        raise BadInput(f"{where}: not a connection index (0 .. {len(net.connections) - 1})")
    return value


def _walk_side(net: GeneralNetwork, entries: object, side: str, source: str):
    """{layer: connection}, {layer: neuron per neuron} of one side of ``walks``."""
    ends, key = (net.inputs, "from") if side == "in" else (net.outputs, "to")
    if not isinstance(entries, list):
        raise BadInput(f"{source}: walks.{side} is not a list")
    connections, neurons = {}, {}
    for n, e in enumerate(entries):
        where = f"{source}: walks.{side}[{n}]"
        if not isinstance(e, Mapping) or set(e) != {"layer", "connection", key}:
            raise BadInput(f"{where}: expected {{\"layer\", \"connection\", \"{key}\"}}")
        layer = net.index.get(e["layer"]) if isinstance(e["layer"], str) else None
        if layer is None or layer in ends or layer in connections:
            raise BadInput(f"{where}: layer {e['layer']!r} is not a {'non-input' if side == 'in' else 'non-output'} layer named once")
        k = _connection(net, e["connection"], where)
        c = net.connections[k]
        if (c.target if side == "in" else c.source) != layer:
            raise BadInput(f"{where}: connection {k} does not go {'into' if side == 'in' else 'out of'} {e['layer']}")
        other = c.source if side == "in" else c.target
        connections[layer] = k
        neurons[layer] = _ints(e[key], f"{where}.{key}", net.layers[layer].size, net.layers[other].size)
    missing = [net.layers[l].name for l in range(len(net.layers)) if l not in ends and l not in connections]
    if missing:
        raise BadInput(f"{source}: walks.{side} has no entry for layer {missing[0]}")
    return connections, neurons


def _block(net: GeneralNetwork, raw: object, where: str) -> GeneralBlock:
    if not isinstance(raw, Mapping) or set(raw) != {"layers", "hops", "nodes", "taps"}:
        raise BadInput(f"{where}: expected a block {{\"layers\", \"hops\", \"nodes\", \"taps\"}}")
    if not isinstance(raw["layers"], list) or not all(isinstance(x, str) and x in net.index for x in raw["layers"]):
        raise BadInput(f"{where}: layers are names of the spec's layers")
    layers = tuple(net.index[x] for x in raw["layers"])
    hops = tuple(_connection(net, k, f"{where}.hops") for k in raw["hops"]) if isinstance(raw["hops"], list) else None
    if hops is None or len(hops) != len(layers) - 1:
        raise BadInput(f"{where}: hops must be a list of {len(layers) - 1} connection indices")
    rows = [raw["nodes"], raw["taps"]]
    if not all(isinstance(r, list) for r in rows) or len(rows[0]) != len(rows[1]):
        raise BadInput(f"{where}: nodes and taps are lists of rows, one per path")
    nodes = np.stack([_ints(r, f"{where}.nodes[{n}]", len(layers)) for n, r in enumerate(rows[0])]) if rows[0] \
        else np.zeros((0, len(layers)), dtype=np.int64)
    taps = np.stack([_ints(r, f"{where}.taps[{n}]", len(hops)) for n, r in enumerate(rows[1])]) if rows[1] \
        else np.zeros((0, len(hops)), dtype=np.int64)
    return GeneralBlock(layers, hops, nodes, taps)


def read_described(net: GeneralNetwork, data: Mapping, source: str) -> DescribedBasis:
    """The described basis of a ``basispath-described/1`` document over ``net``; BadInput (one line
    naming the file and the entry) when it is not in that form. Whether it is a basis is
    ``certify_described``'s to say."""
    for key in ("walks", "explicit", "families"):
        if key not in data:
            raise BadInput(f"{source}: a {DESCRIBED_FORMAT} document needs '{key}'")
    walks, explicit, families = data["walks"], data["explicit"], data["families"]
    if not isinstance(walks, Mapping) or set(walks) != {"in", "out"}:
        raise BadInput(f"{source}: walks must be {{\"in\": [...], \"out\": [...]}}")
    pred, pred_from = _walk_side(net, walks["in"], "in", source)
    succ, succ_to = _walk_side(net, walks["out"], "out", source)
    if not isinstance(explicit, Mapping) or set(explicit) != {"head", "tail"} or not all(isinstance(explicit[k], list) for k in ("head", "tail")):
        raise BadInput(f"{source}: explicit must be {{\"head\": [blocks], \"tail\": [blocks]}}")
    head = [_block(net, b, f"{source}: explicit.head[{n}]") for n, b in enumerate(explicit["head"])]
    tail = [_block(net, b, f"{source}: explicit.tail[{n}]") for n, b in enumerate(explicit["tail"])]
    if not isinstance(families, list):
        raise BadInput(f"{source}: families is not a list")
    fams = []
    for n, f in enumerate(families):
        where = f"{source}: families[{n}]"
        if not isinstance(f, Mapping) or set(f) != {"connection", "excluded"}:
            raise BadInput(f"{where}: expected {{\"connection\", \"excluded\"}}")
        k = _connection(net, f["connection"], where)
        if not net.connections[k].trainable:
            raise BadInput(f"{where}: connection {k} is an identity connection (no weights)")
        family = Family(net, k, np.zeros(0, dtype=np.int64))
        fams.append(Family(net, k, _ints(f["excluded"], f"{where}.excluded", None, family.weights)))
    return DescribedBasis(net, walks_from(net, pred, pred_from, succ, succ_to), head, fams, tail=tail)
