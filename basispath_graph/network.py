"""The network model: layer widths, connected layer pairs, weight ids and path blocks.

A network has layers 0..L with widths w_l. Every consecutive pair (l, l+1) is connected,
and each skip (a, b) with a < b adds one more fully connected layer pair. A *weight* is one
neuron pair of a connected layer pair; weights are numbered pair by pair (pairs sorted),
row-major inside a pair: ``offset[(a, b)] + i * w_b + j``.

Paths are kept in *blocks*: all paths of one block visit the same layer sequence, so a block
is a layer tuple plus an integer array of neuron indices with one column per visited layer.
This keeps millions of paths as a few numpy arrays instead of Python objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

__all__ = ["Network", "PathBlock", "paths_to_json", "blocks_from_json"]


@dataclass(frozen=True)
class Network:
    """A layered ReLU network with optional skip connections.

    ``pairs`` holds every connected layer pair (a, b), a < b, sorted and without duplicates;
    consecutive pairs are always present.
    """

    widths: tuple[int, ...]
    pairs: tuple[tuple[int, int], ...]
    name: str = ""

    @classmethod
    def build(cls, widths, skips=(), name: str = "") -> "Network":
        """Make a network from widths and skips (consecutive pairs are added, duplicates merged)."""
        widths = tuple(int(w) for w in widths)
        L = len(widths) - 1
        pairs = {(l, l + 1) for l in range(L)}
        pairs.update((int(a), int(b)) for a, b in skips)
        return cls(widths=widths, pairs=tuple(sorted(pairs)), name=name)

    @property
    def L(self) -> int:
        return len(self.widths) - 1

    @property
    def skips(self) -> tuple[tuple[int, int], ...]:
        """The connected pairs that are not consecutive."""
        return tuple((a, b) for a, b in self.pairs if b > a + 1)

    @cached_property
    def m(self) -> int:
        """Number of weights."""
        return sum(self.widths[a] * self.widths[b] for a, b in self.pairs)

    @cached_property
    def H(self) -> int:
        """Number of hidden neurons (layers 1..L-1)."""
        return sum(self.widths[1:-1])

    @property
    def basis_size(self) -> int:
        """|B| = m - H for every basis path set (notes section 1)."""
        return self.m - self.H

    @cached_property
    def offsets(self) -> dict[tuple[int, int], int]:
        """First weight id of each connected pair."""
        out, base = {}, 0
        for a, b in self.pairs:
            out[(a, b)] = base
            base += self.widths[a] * self.widths[b]
        return out

    @cached_property
    def successors(self) -> dict[int, tuple[int, ...]]:
        nxt: dict[int, list[int]] = {l: [] for l in range(self.L + 1)}
        for a, b in self.pairs:
            nxt[a].append(b)
        return {l: tuple(v) for l, v in nxt.items()}

    def weight_ids(self, block: "PathBlock") -> np.ndarray:
        """Weight ids of every path in a block, shape (n, hops), int64."""
        layers, nodes = block.layers, block.nodes
        if len(layers) < 2:
            return np.zeros((len(nodes), 0), dtype=np.int64)
        hops = list(zip(layers, layers[1:]))
        width_b = np.array([self.widths[b] for _, b in hops], dtype=np.int64)
        offset = np.array([self.offsets[h] for h in hops], dtype=np.int64)
        # All hops at once (broadcast over columns): a few passes over contiguous memory.
        ids = nodes[:, :-1] * width_b
        ids += nodes[:, 1:]
        ids += offset
        return ids

    def to_dict(self) -> dict:
        return {"name": self.name, "widths": list(self.widths), "skips": [list(p) for p in self.skips]}


@dataclass
class PathBlock:
    """Paths that all visit ``layers``; ``nodes[i, k]`` is the neuron of path i at layers[k]."""

    layers: tuple[int, ...]
    nodes: np.ndarray = field(repr=False)

    def __post_init__(self):
        self.layers = tuple(int(l) for l in self.layers)
        self.nodes = np.asarray(self.nodes, dtype=np.int64).reshape(-1, len(self.layers))

    def __len__(self) -> int:
        return len(self.nodes)

    def take(self, index) -> "PathBlock":
        return PathBlock(self.layers, self.nodes[index])

    def as_lists(self) -> list[list[list[int]]]:
        """Paths as lists of [layer, neuron] pairs (the export format)."""
        ls = self.layers
        return [[[ls[k], int(i)] for k, i in enumerate(row)] for row in self.nodes.tolist()]


def paths_to_json(blocks) -> list[list[list[int]]]:
    out = []
    for b in blocks:
        out.extend(b.as_lists())
    return out


def blocks_from_json(paths) -> list[PathBlock]:
    """Paths ([[layer, index], ...]) as blocks, in file order: a new block starts whenever the
    layer sequence changes, so path k of the file is path k of the blocks (error messages count
    the way the user does)."""
    blocks: list[PathBlock] = []
    run_layers, rows = None, []
    for p in paths:
        layers = tuple(int(l) for l, _ in p)
        if layers != run_layers and rows:
            blocks.append(PathBlock(run_layers, np.array(rows, dtype=np.int64)))
            rows = []
        run_layers = layers
        rows.append([int(i) for _, i in p])
    if rows:
        blocks.append(PathBlock(run_layers, np.array(rows, dtype=np.int64)))
    return blocks


def weight_endpoints(network: Network, weight_ids) -> list[list[int]]:
    """Each weight id as [layer_a, index_a, layer_b, index_b] (inverse of the numbering)."""
    starts = sorted((off, pair) for pair, off in network.offsets.items())
    offs = [o for o, _ in starts]
    out = []
    import bisect

    for wid in weight_ids:
        wid = int(wid)
        k = bisect.bisect_right(offs, wid) - 1
        off, (a, b) = starts[k]
        i, j = divmod(wid - off, network.widths[b])
        out.append([a, i, b, j])
    return out
