"""Coordinates of any path of a general network over a basis of it (``why`` on a general run).

The layered ``coordinates`` (``analysis/coordinates.py``) for general networks: the same
``verify.Expresser`` (peel the basis, exact elimination of its core) on the general weight ids
(``general.blocks.flatten_general``), and the same independent re-check by plain vector addition
(``check_general_certificate``): each trainable hop is the weight (connection, i, j, tap), counted
without the numbering the solver used; identity hops carry no weight.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..general.blocks import GeneralBlock, block_general_paths, block_weight_ids, flatten_general, general_path_json
from ..general.model import GeneralNetwork
from ..general.paths import GeneralPath, format_general_path, path_block
from ..linalg.checks import combination_equals
from ..verify.express import Expresser, InvalidPathError

__all__ = ["GeneralExpresser", "general_coordinates", "general_path_weights", "check_general_certificate",
           "blocks_from_stored", "stored_general_path", "weight_text"]


def general_path_weights(net: GeneralNetwork, path: GeneralPath) -> Counter:
    """A valid path as the multiset of its trainable weights (connection, i, j, tap)."""
    nodes, taps = path
    out: Counter = Counter()
    for (a, i), (b, j), t in zip(nodes, nodes[1:], taps):
        if t is not None:
            out[(net.hop[(a, b, True)], i, j, t)] += 1
    return out


def check_general_certificate(net: GeneralNetwork, target: GeneralPath, terms: list[tuple[int, GeneralPath]]) -> bool:
    """Does sum(coef * path) equal the target path, weight by weight?"""
    return combination_equals(
        general_path_weights(net, target).elements(),
        ((coef, general_path_weights(net, p).elements()) for coef, p in terms),
    )


def stored_general_path(net: GeneralNetwork, row: dict) -> GeneralPath:
    """A stored path (``layers``: positions, ``nodes``: global neuron ids, ``taps``: -1 on an
    identity hop) as a GeneralPath."""
    offsets = net.neuron_offset
    nodes = tuple((int(l), int(g) - int(offsets[int(l)])) for l, g in zip(row["layers"], row["nodes"]))
    return nodes, tuple(None if int(t) < 0 else int(t) for t in row["taps"])


def weight_text(net: GeneralNetwork, w: int) -> str:
    """Weight id ``w`` as ``conv1:2 -[4]-> conv2:0``."""
    for k, start in net.connection_offsets.items():
        c = net.connections[k]
        if start <= w < start + net.connection_weights(c):
            r = w - start
            if c.kind == "dense":
                cell, tap = divmod(r, c.taps)
                i, j = divmod(cell, net.layers[c.target].size)
            else:
                i, tap = divmod(r, c.taps)
                j = i
            return f"{net.layers[c.source].name}:{i} -[{tap}]-> {net.layers[c.target].name}:{j}"
    return f"weight {w}"


def _block_problem(net: GeneralNetwork, block: GeneralBlock) -> str | None:
    """What makes some path of a (stored) block not a path of ``net``, checked on the arrays."""
    if block.layers[0] not in net.inputs or block.layers[-1] not in net.outputs:
        return "does not run from an input layer to an output layer"
    for k, layer in enumerate(block.layers):
        col = block.nodes[:, k]
        if len(col) and (col.min() < 0 or col.max() >= net.layers[layer].size):
            return f"neuron out of range in layer {net.layers[layer].name}"
    for k, c_idx in enumerate(block.hops):
        c = net.connections[c_idx]
        if c.kind != "dense" and np.any(block.nodes[:, k] != block.nodes[:, k + 1]):
            return f"a {c.kind} hop changes the neuron index"
        if c.trainable and len(block) and (block.taps[:, k].min() < 0 or block.taps[:, k].max() >= c.taps):
            return f"tap out of range on {net.layers[c.source].name} -> {net.layers[c.target].name}"
    return None


def blocks_from_stored(net: GeneralNetwork, rows: list[dict]) -> list[GeneralBlock]:
    """Stored paths (``layers``: positions, ``nodes``: global neuron ids, ``taps``: -1 on
    identity hops), in order, as blocks of consecutive paths along one route; InvalidPathError
    names a stored path that is not a path of ``net`` (a damaged store)."""
    blocks: list[GeneralBlock] = []
    run: list[dict] = []

    def flush() -> None:
        if not run:
            return
        layers = tuple(int(l) for l in run[0]["layers"])
        trainable = tuple(int(t) >= 0 for t in run[0]["taps"])
        try:
            hops = tuple(net.hop[(a, b, tr)] for a, b, tr in zip(layers, layers[1:], trainable))
        except KeyError:
            raise InvalidPathError(f"stored path {run[0]['id']}: its layers are not connected that way") from None
        offsets = net.neuron_offset[list(layers)]
        nodes = np.asarray([r["nodes"] for r in run], dtype=np.int64) - offsets
        taps = np.maximum(np.asarray([r["taps"] for r in run], dtype=np.int64).reshape(len(run), len(hops)), 0)
        block = GeneralBlock(layers, hops, nodes, taps)
        problem = _block_problem(net, block)
        if problem:
            raise InvalidPathError(f"stored path {run[0]['id']} or one after it: {problem}")
        blocks.append(block)
        run.clear()

    key = None
    for row in rows:
        k = (tuple(row["layers"]), tuple(int(t) < 0 for t in row["taps"]))
        if k != key:
            flush()
            key = k
        run.append(row)
    flush()
    return blocks


def block_path(net: GeneralNetwork, blocks: list[GeneralBlock], index: int) -> GeneralPath:
    """Path ``index`` of the concatenation of ``blocks``."""
    for b in blocks:
        if index < len(b):
            one = GeneralBlock(b.layers, b.hops, b.nodes[index : index + 1], b.taps[index : index + 1])
            return block_general_paths(net, one)[0]
        index -= len(b)
    raise IndexError(index)


class GeneralExpresser(Expresser):
    """``verify.Expresser`` over a basis of a general network (blocks of valid paths)."""

    def __init__(self, net: GeneralNetwork, blocks: list[GeneralBlock]) -> None:
        self.network = net
        self.blocks = list(blocks)
        self._prepare(*flatten_general(net, self.blocks), net.m)

    def _weight_text(self, w: int) -> str:
        return weight_text(self.network, w)

    def _describe(self, i: int) -> str:
        return f"path {i} ({format_general_path(self.network, block_path(self.network, self.blocks, i))})"

    def express_path(self, path: GeneralPath) -> list[tuple[int, int]]:
        """``[(basis index, coef), ...]`` of a valid path, verified by re-adding the vectors."""
        q = block_weight_ids(self.network, path_block(self.network, path))[0].tolist()
        return self.express_weights(q, lambda: format_general_path(self.network, path))


def general_coordinates(net: GeneralNetwork, blocks: list[GeneralBlock], path: GeneralPath,
                        expresser: GeneralExpresser | None = None) -> dict:
    """``{"path", "text", "coordinates": [{"coef", "path", "text", "index"}, ...], "verified"}``
    of a valid path over the basis ``blocks``; ``verified`` is the independent re-check."""
    expresser = expresser or GeneralExpresser(net, blocks)
    coefs = expresser.express_path(path)
    terms = [(c, block_path(net, blocks, b)) for b, c in coefs]
    return {
        "path": general_path_json(net, path),
        "text": format_general_path(net, path),
        "coordinates": [
            {"coef": c, "path": general_path_json(net, p), "text": format_general_path(net, p), "index": b}
            for (b, c), (_, p) in zip(coefs, terms)
        ],
        "verified": check_general_certificate(net, path, terms),
    }
