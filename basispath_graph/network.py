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

import bisect
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .errors import BadInput
from .values import is_int, show_int, show_value

__all__ = ["Network", "InvalidNetwork", "check_structure", "PathBlock", "paths_to_json", "blocks_from_json", "MAX_LAYERS"]

#: Most layers a network may have (layers 0..L, so L <= MAX_LAYERS - 1).
MAX_LAYERS = 1000


class InvalidNetwork(BadInput):
    """Widths, skips or name that do not make a network; str() is one line (``spec.SpecError``
    adds the file name in front)."""


def check_structure(widths, skips, name) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...], str]:
    """(widths, sorted connected pairs, name) or InvalidNetwork naming the first problem.

    The one home of the structural rules: specs, presets, imports and ``Network(...)`` all
    come through here, so every refusal reads the same."""
    if name is None:
        name = ""
    if not isinstance(name, str):
        raise InvalidNetwork(f"name must be a string, got {show_value(name)}")
    bad = next((c for c in name if "\ud800" <= c <= "\udfff"), None)
    if bad is not None:  # a "\ud800" JSON escape: not Unicode text, cannot be printed or stored
        raise InvalidNetwork(f"name contains a lone surrogate U+{ord(bad):04X}, which is not valid Unicode text")
    if isinstance(widths, np.ndarray):
        widths = widths.tolist()
    if not isinstance(widths, (list, tuple)):
        raise InvalidNetwork(f"widths must be a list of integers, got {show_value(widths)}")
    if len(widths) < 2:
        raise InvalidNetwork(f"widths must have at least 2 entries (input and output layer), got {len(widths)}")
    if len(widths) > MAX_LAYERS:
        raise InvalidNetwork(f"widths has {len(widths)} entries, more than the limit of {MAX_LAYERS}")
    checked: list[int] = []
    for i, w in enumerate(widths):
        if not is_int(w) or int(w) < 1:
            raise InvalidNetwork(f"widths[{i}] must be an integer >= 1, got {show_value(w)}")
        checked.append(int(w))
    L = len(checked) - 1
    if skips is None:
        skips = []
    if isinstance(skips, np.ndarray):
        skips = skips.tolist()
    if not isinstance(skips, (list, tuple)):
        raise InvalidNetwork(f"skips must be a list of [a, b] pairs, got {show_value(skips)}")
    pairs = {(l, l + 1) for l in range(L)}
    for i, s in enumerate(skips):
        if not isinstance(s, (list, tuple)) or len(s) != 2:
            raise InvalidNetwork(f"skips[{i}] must be a pair [a, b] of layer indices, got {show_value(s)}")
        for j, v in enumerate(s):
            if not is_int(v):
                raise InvalidNetwork(f"skips[{i}][{j}] must be an integer, got {show_value(v)}")
        a, b = int(s[0]), int(s[1])
        where = f"skips[{i}] = [{show_int(a)}, {show_int(b)}]"
        if not (0 <= a <= L and 0 <= b <= L):
            raise InvalidNetwork(f"{where} is out of range: layers are 0..{L}")
        if a == b:
            raise InvalidNetwork(f"{where} connects layer {a} to itself: need a < b")
        if a > b:
            raise InvalidNetwork(f"{where} goes backwards: need a < b")
        pairs.add((a, b))
    return tuple(checked), tuple(sorted(pairs)), name


@dataclass(frozen=True, init=False, repr=False)
class Network:
    """A layered ReLU network with optional skip connections; checked when it is made.

    Parameters
    ----------
    widths : sequence of int
        Widths w_0..w_L of the layers (each >= 1, at least 2 layers).
    skips : sequence of (a, b), optional
        Extra fully connected layer pairs, 0 <= a < b <= L. Consecutive pairs are always
        connected; duplicates are merged and a skip (a, a+1) is harmless.
    name : str, optional

    Raises
    ------
    InvalidNetwork
        (a :class:`~basispath_graph.errors.BadInput`) naming the first problem, in the words
        ``basispath`` prints for a spec file.

    Notes
    -----
    ``pairs`` holds every connected layer pair (a, b), a < b, sorted and without duplicates.
    Making a network costs O(L + number of skips); ``m`` and ``H`` are computed once.

    Examples
    --------
    >>> net = Network([2, 2, 3, 2, 2], skips=[(0, 2), (1, 3)], name="fig1b")
    >>> net
    Network(name='fig1b', widths=(2, 2, 3, 2, 2), skips=((0, 2), (1, 3)))
    >>> net.m, net.H, net.basis_size
    (30, 7, 23)
    >>> Network([2, 0, 2])
    Traceback (most recent call last):
    ...
    basispath_graph.network.InvalidNetwork: widths[1] must be an integer >= 1, got 0
    """

    widths: tuple[int, ...]
    pairs: tuple[tuple[int, int], ...]
    name: str

    def __init__(self, widths, skips=(), name: str = ""):
        widths, pairs, name = check_structure(widths, skips, name)
        object.__setattr__(self, "widths", widths)
        object.__setattr__(self, "pairs", pairs)
        object.__setattr__(self, "name", name)

    @classmethod
    def build(cls, widths, skips=(), name: str = "") -> "Network":
        """Same as ``Network(widths, skips, name)`` (the name older code uses)."""
        return cls(widths, skips, name)

    def __repr__(self) -> str:
        widths = self.widths if len(self.widths) <= 12 else f"({', '.join(map(str, self.widths[:6]))}, ... {len(self.widths)} layers)"
        skips = self.skips if len(self.skips) <= 8 else f"({len(self.skips)} skips)"
        return f"Network(name={self.name!r}, widths={widths}, skips={skips})"

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
        """|B| = m - H for every basis path set: the path vectors span a space of dimension m - H
        (each hidden neuron's rescaling invariance removes one dimension; the paper, Section 2)."""
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
    for wid in weight_ids:
        wid = int(wid)
        k = bisect.bisect_right(offs, wid) - 1
        off, (a, b) = starts[k]
        i, j = divmod(wid - off, network.widths[b])
        out.append([a, i, b, j])
    return out
