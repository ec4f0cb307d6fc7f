"""Coordinates of any path of a general network over a basis of it (``why`` on a general run).

The layered ``coordinates`` (``analysis/coordinates.py``) for general networks: the same
``verify.Expresser`` (peel the basis, exact elimination of its core) on the general weight ids
(``general.blocks.block_weight_ids``), and the same independent re-check by plain vector addition
(``check_general_certificate``): each trainable hop is the weight (connection, i, j, tap), counted
without the numbering the solver used; identity hops carry no weight.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..general.described import DescribedBasis
from ..general.blocks import GeneralBlock, block_general_paths, block_weight_ids, general_path_json
from ..general.model import GeneralNetwork
from ..general.paths import GeneralPath, block_problem, format_general_path, path_block
from ..linalg.checks import combination_equals
from ..verify.express import CertificateMismatchError, Expresser, InvalidPathError

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
            i, j, tap = net.weight_ends(c, w - start)
            return f"{net.layers[c.source].name}:{i} -[{tap}]-> {net.layers[c.target].name}:{j}"
    return f"weight {w}"


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
        problem = block_problem(net, block)
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
        self._prepare(lambda b: block_weight_ids(net, b), net.m)

    def _weight_text(self, w: int) -> str:
        return weight_text(self.network, w)

    def _describe(self, i: int) -> str:
        return f"path {i} ({format_general_path(self.network, block_path(self.network, self.blocks, i))})"

    def express_path(self, path: GeneralPath) -> list[tuple[int, int]]:
        """``[(basis index, coef), ...]`` of a valid path, verified by re-adding the vectors."""
        q = block_weight_ids(self.network, path_block(self.network, path))[0].tolist()
        return self.express_weights(q, lambda: format_general_path(self.network, path))


class DescribedExpresser(GeneralExpresser):
    """Coordinates over a described basis (``general/described.py``) without listing it: a
    weight e of the path that a family holds lies on e's family path alone, so that path's
    coefficient is the path's entry on e (1); the rest of the path, minus those family paths,
    lies on walk weights and is expressed over the explicit paths (peeling and elimination of
    those only)."""

    def __init__(self, net: GeneralNetwork, basis) -> None:
        self.described = basis
        super().__init__(net, basis.explicit)

    def _describe(self, i: int) -> str:
        return f"path {self.described.explicit_index(i)} ({format_general_path(self.network, block_path(self.network, self.blocks, i))})"

    def express_path(self, path: GeneralPath) -> list[tuple[int, int]]:
        basis, net = self.described, self.network
        q = block_weight_ids(net, path_block(net, path))[0].tolist()
        res: dict[int, int] = dict.fromkeys(q, 1)
        out: dict[int, int] = {}
        for w in q:
            index = basis.family_index(w)
            if index is None:
                continue
            out[index] = 1
            for v in block_weight_ids(net, basis.path_at(index))[0].tolist():
                res[v] = res.get(v, 0) - 1
                if not res[v]:
                    del res[v]
        for i, c in self._solve_vector(res, lambda: format_general_path(net, path)):
            out[basis.explicit_index(i)] = out.get(basis.explicit_index(i), 0) + c
        coefs = sorted((b, c) for b, c in out.items() if c)
        if not combination_equals(q, ((c, block_weight_ids(net, basis.path_at(b))[0].tolist()) for b, c in coefs)):
            raise CertificateMismatchError(f"path {format_general_path(net, path)}: coefficients do not add up to the path")
        return coefs


def general_coordinates(net: GeneralNetwork, blocks: list[GeneralBlock], path: GeneralPath,
                        expresser: GeneralExpresser | None = None) -> dict:
    """``{"path", "text", "coordinates": [{"coef", "path", "text", "index"}, ...], "verified"}``
    of a valid path over the basis ``blocks`` (a list, or a ``DescribedBasis``: then nothing is
    listed); ``verified`` is the independent re-check."""
    described = isinstance(blocks, DescribedBasis)
    expresser = expresser or (DescribedExpresser(net, blocks) if described else GeneralExpresser(net, blocks))
    coefs = expresser.express_path(path)
    one = (lambda b: block_general_paths(net, blocks.path_at(b))[0]) if described else (lambda b: block_path(net, blocks, b))
    terms = [(c, one(b)) for b, c in coefs]
    return {
        "path": general_path_json(net, path),
        "text": format_general_path(net, path),
        "coordinates": [
            {"coef": c, "path": general_path_json(net, p), "text": format_general_path(net, p), "index": b}
            for (b, c), (_, p) in zip(coefs, terms)
        ],
        "verified": check_general_certificate(net, path, terms),
    }
