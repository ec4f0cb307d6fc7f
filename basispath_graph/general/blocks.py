"""Many paths of a general network at once: blocks of paths along one route, as arrays.

A ``GeneralBlock`` holds paths that visit the same layers over the same connections (``hops``:
connection indices, one per hop); ``nodes[p, k]`` is path p's neuron in its k-th layer and
``taps[p, k]`` its tap on hop k (0 on identity hops, where there is no weight). The single-path
form of ``general.paths`` converts to and from it.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass

import numpy as np

from .model import GeneralNetwork

__all__ = ["GeneralBlock", "block_weight_ids", "flatten_general", "block_paths", "block_paths_text", "block_general_paths", "general_path_json",
           "connection_weights", "general_weight_endpoints", "general_path_keys", "general_rows_named"]


@dataclass(frozen=True)
class GeneralBlock:
    layers: tuple[int, ...]
    hops: tuple[int, ...]  # connection index of each hop
    nodes: np.ndarray  # (paths, len(layers)) integers (int32 where the engine builds them: memory)
    taps: np.ndarray  # (paths, len(hops)) integers

    def __len__(self) -> int:
        return int(self.nodes.shape[0])

    def take(self, rows) -> "GeneralBlock":
        """The paths at ``rows`` (indices, a mask or a slice), as a block."""
        return GeneralBlock(self.layers, self.hops, self.nodes[rows], self.taps[rows])


def connection_weights(net: GeneralNetwork, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, tap) of every weight of trainable connection k, in weight id order."""
    c = net.connections[k]
    return net.weight_ends(c, np.arange(net.connection_weights(c), dtype=np.int64))


def block_weight_ids(net: GeneralNetwork, block: GeneralBlock) -> np.ndarray:
    """(paths, trainable hops) weight ids of a valid block (identity hops have none)."""
    cols = []
    for k, c_idx in enumerate(block.hops):
        c = net.connections[c_idx]
        if not c.trainable:
            continue
        i, j, t = (a.astype(np.int64) for a in (block.nodes[:, k], block.nodes[:, k + 1], block.taps[:, k]))
        cols.append(net.connection_offsets[c_idx] + net.local_weight(c, i, j, t))
    if not cols:
        return np.zeros((len(block), 0), dtype=np.int64)
    return np.stack(cols, axis=1).astype(np.int64)


def flatten_general(net: GeneralNetwork, blocks: list[GeneralBlock]) -> tuple[np.ndarray, np.ndarray]:
    """CSR (ptr, weight ids) of every path of ``blocks``, in order (what ``linalg.peel`` takes)."""
    parts = [block_weight_ids(net, b) for b in blocks]
    lengths = np.concatenate([np.full(len(w), w.shape[1], dtype=np.int64) for w in parts]) if parts else np.zeros(0, dtype=np.int64)
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    wids = np.concatenate([w.ravel() for w in parts]) if parts else np.zeros(0, dtype=np.int64)
    return ptr, wids


def block_general_paths(net: GeneralNetwork, block: GeneralBlock) -> list:
    """Every path of ``block`` as a GeneralPath (``((layer, index), ...), taps``, None on identity hops)."""
    trainable = [net.connections[k].trainable for k in block.hops]
    return [
        (tuple(zip(block.layers, row)), tuple(t if tr else None for t, tr in zip(trow, trainable)))
        for row, trow in zip(block.nodes.tolist(), block.taps.tolist())
    ]


def general_path_keys(net: GeneralNetwork, block: GeneralBlock) -> list[tuple]:
    """Every path of ``block`` as (layers, neurons, taps), taps None on identity hops: how a
    ``Repair`` or ``DiscardedPath`` names a general path."""
    return [(tuple(l for l, _ in nodes), tuple(i for _, i in nodes), taps) for nodes, taps in block_general_paths(net, block)]


def general_rows_named(net: GeneralNetwork, key: tuple):
    """``matches`` for ``discarded.first_named`` on a general network: the rows of ``block`` (a
    ``GeneralBlock`` or a described one, made here) that are the path ``key``, (layers, neurons,
    taps) with taps None on identity hops, as ``general_path_keys`` names it."""
    layers, want = tuple(int(l) for l in key[0]), np.asarray(key[1], dtype=np.int64)
    tapped = np.array([t is not None for t in key[2]], dtype=bool)
    want_taps = np.asarray([t for t in key[2] if t is not None], dtype=np.int64)

    def matches(block, rows: np.ndarray) -> np.ndarray:
        if tuple(int(l) for l in block.layers) != layers or len(block.hops) != len(tapped):
            return rows[:0]
        if any(net.connections[k].trainable != t for k, t in zip(block.hops, tapped.tolist())):
            return rows[:0]
        made = block.take(rows)
        hit = (made.nodes == want).all(axis=1) & (made.taps[:, tapped] == want_taps).all(axis=1)
        return np.flatnonzero(hit)

    return matches


def general_path_json(net: GeneralNetwork, path) -> dict:
    """The JSON form ``{"nodes": [[name, index], ...], "taps": [...]}`` (null on identity hops)."""
    nodes, taps = path
    return {"nodes": [[net.layers[l].name, int(i)] for l, i in nodes], "taps": [None if t is None else int(t) for t in taps]}


def block_paths(net: GeneralNetwork, block: GeneralBlock) -> list[dict]:
    """The paths of a block in the export form ``{"nodes": [[name, index], ...], "taps": [...]}``."""
    return [general_path_json(net, p) for p in block_general_paths(net, block)]


def block_paths_text(net: GeneralNetwork, block: GeneralBlock) -> str:
    """``json.dumps(block_paths(net, block))`` without its brackets, the same bytes, made by one
    format per block (its layers and hops are fixed) instead of a dict per path: streamed exports
    of millions of paths were bound by the dicts (about 68 us a path on ResNet-18 x1/4)."""
    if len(block) == 0:
        return ""
    trainable = [net.connections[k].trainable for k in block.hops]
    nodes = ", ".join(f"[{json.dumps(net.layers[l].name)}, %d]" for l in block.layers)
    taps = ", ".join("%d" if tr else "null" for tr in trainable)
    template = f'{{"nodes": [{nodes}], "taps": [{taps}]}}'
    values = np.hstack([block.nodes, block.taps[:, np.flatnonzero(trainable)]]) if any(trainable) else block.nodes
    return ", ".join(template % tuple(row) for row in values.tolist())


def general_weight_endpoints(net: GeneralNetwork, ids) -> list[list]:
    """Each general weight id as ``[layer_a, index_a, layer_b, index_b, tap]`` (layer names)."""
    starts = sorted((off, k) for k, off in net.connection_offsets.items())
    offs = [o for o, _ in starts]
    out = []
    for w in ids or []:
        off, k = starts[bisect.bisect_right(offs, int(w)) - 1]
        c = net.connections[k]
        i, j, tap = net.weight_ends(c, int(w) - off)
        out.append([net.layers[c.source].name, i, net.layers[c.target].name, j, tap])
    return out
