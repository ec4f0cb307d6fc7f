"""A basis held as its description, in O(neurons + connections) numbers, not m x depth.

A skeleton-style basis (``general/skeleton.py``, math notes sections 3 and 7) is

- a few **explicit** paths: T(z) = in(z) + out(z), one per distinct designated through-walk, and
  the identity forest's paths, O(neurons) paths of the network's depth;
- one **weight family** per trainable connection k: the paths in(u) + e + out(v) for every weight
  e = (u, v, tap) of k that lies on no designated walk (k minus its *designated* weights).

``DescribedBasis`` keeps the designated walks, the explicit blocks and the families, and is a
sequence of ``GeneralBlock`` whose family blocks are materialised on demand, at most
``CHUNK_ROWS`` paths at a time: code that walks a basis block by block (export, store, peeling
of small networks) works unchanged, in bounded memory.

Certification from the description (``certify_described``), exact, without listing a family:

1. every designated walk is valid (it starts at an input, ends at an output, follows connections
   with neuron indices in range) and so is every explicit path;
2. every weight on a walk or on an explicit path is one a family leaves out (its designated
   weights): so the weight e of a family path lies on that path only;
3. a path holding a weight no other path holds is independent of the others: peel every family
   path; what is left is the explicit set, certified exactly (peeling, then elimination);
4. the count: the families' paths plus the explicit ones are m - H.

The explicit exact certifier (``paths.certify_blocks`` over the materialised paths) stays the
judge: tests/test_described.py compares the two on random general networks small enough to list.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..verify import Verdict
from .blocks import GeneralBlock, block_general_paths, block_weight_ids
from .lazy_blocks import CHUNK_ROWS, LazyBlocks, iter_chunks, path_count
from .model import GeneralNetwork
from .paths import block_problem, certify_blocks, find_general_path, path_block

__all__ = ["CHUNK_ROWS", "DescribedBasis", "DescribedPaths", "Family", "certify_described", "path_count", "family_block"]

class Family:
    """The paths in(u) + e + out(v) of connection ``k``'s weights, minus ``excluded`` (sorted
    local weight ids: the designated ones), in weight id order."""

    def __init__(self, net: GeneralNetwork, k: int, excluded: np.ndarray):
        self.connection = k
        self.excluded = np.unique(np.asarray(excluded, dtype=np.int64))
        c = net.connections[k]
        self.weights = net.connection_weights(c)
        self.size = self.weights - len(self.excluded)
        # kept row r is local weight r + (number of excluded ids x with x - rank(x) <= r)
        self._shift = self.excluded - np.arange(len(self.excluded), dtype=np.int64)

    def local_ids(self, start: int, stop: int) -> np.ndarray:
        """Local weight ids (offset in the connection) of kept rows start .. stop - 1."""
        return self.local_of(np.arange(start, stop, dtype=np.int64))

    def local_of(self, rows: np.ndarray) -> np.ndarray:
        """Local weight ids of the kept rows ``rows``."""
        r = np.asarray(rows, dtype=np.int64)
        return r + np.searchsorted(self._shift, r, side="right")


def family_block(net: GeneralNetwork, walks, family: Family, start: int = 0, stop: int | None = None) -> GeneralBlock:
    """Rows start .. stop - 1 of a family as a block: in(u) + e + out(v)."""
    stop = family.size if stop is None else stop
    return family_rows(net, walks, family, np.arange(start, stop, dtype=np.int64))


def family_rows(net: GeneralNetwork, walks, family: Family, rows: np.ndarray) -> GeneralBlock:
    """The family's kept rows ``rows`` as a block: in(u) + e + out(v)."""
    k = family.connection
    c = net.connections[k]
    a, b = c.source, c.target
    local = family.local_of(rows)
    i, j, t = net.weight_ends(c, local)
    # int32: the largest blocks (a 512 x 512 x 9 conv) hold millions of rows
    nodes = np.concatenate([walks.in_nodes[a][i], walks.out_nodes[b][j]], axis=1).astype(np.int32)
    hops = walks.in_hops[a] + (k,) + walks.out_hops[b]
    taps = np.zeros((len(local), len(hops)), dtype=np.int32)
    taps[:, len(walks.in_hops[a])] = t
    return GeneralBlock(walks.in_layers[a] + walks.out_layers[b], hops, nodes, taps)


class _FamilyPart:
    """A family as a part of a ``LazyBlocks``: its rows made by ``family_block``."""

    def __init__(self, net: GeneralNetwork, walks, family: Family):
        self.net, self.walks, self.family, self.size = net, walks, family, family.size

    def block(self, start: int, stop: int) -> GeneralBlock:
        return family_block(self.net, self.walks, self.family, start, stop)

    def chunk(self, start: int, stop: int) -> "FamilyChunk":
        return FamilyChunk(self, start, stop)


class FamilyChunk:
    """Rows start .. stop - 1 of a family, made only as far as asked: ``column(k)`` gives the
    neurons at the k-th layer from the designated walks alone (O(rows), where the whole block is
    O(rows x depth): ``paths_through`` filters on one column), ``take(rows)`` those rows as a
    block; ``nodes`` and ``taps`` make the whole block."""

    def __init__(self, part: _FamilyPart, start: int, stop: int):
        self.part, self.start, self.stop = part, start, stop
        c = part.net.connections[part.family.connection]
        w = part.walks
        self.layers = w.in_layers[c.source] + w.out_layers[c.target]
        self.hops = w.in_hops[c.source] + (part.family.connection,) + w.out_hops[c.target]

    def __len__(self) -> int:
        return self.stop - self.start

    def column(self, k: int) -> np.ndarray:
        net, w, family = self.part.net, self.part.walks, self.part.family
        c = net.connections[family.connection]
        i, j, _ = net.weight_ends(c, family.local_ids(self.start, self.stop))
        before = len(w.in_layers[c.source])
        return w.in_nodes[c.source][i, k] if k < before else w.out_nodes[c.target][j, k - before]

    def take(self, rows) -> GeneralBlock:
        return family_rows(self.part.net, self.part.walks, self.part.family, self.start + np.asarray(rows, dtype=np.int64))

    @property
    def nodes(self) -> np.ndarray:
        return self.part.block(self.start, self.stop).nodes

    @property
    def taps(self) -> np.ndarray:
        return self.part.block(self.start, self.stop).taps


class DescribedBasis(LazyBlocks):
    """A basis as its description (see the module doc): a sequence of blocks, the explicit ones
    first, then each family in chunks of at most ``chunk_rows`` paths, made when asked for, then
    the ``tail`` blocks (explicit too: the identity forest's paths come last, as they always have)."""

    def __init__(self, net: GeneralNetwork, walks, explicit: list[GeneralBlock], families: list[Family],
                 chunk_rows: int = CHUNK_ROWS, tail: list[GeneralBlock] = ()):
        self.network, self.walks, self.families = net, walks, list(families)
        self.explicit, self.head = list(explicit) + list(tail), len(explicit)
        super().__init__(list(explicit) + [_FamilyPart(net, walks, f) for f in self.families] + list(tail), chunk_rows)

    def replaced(self, **changes) -> "DescribedBasis":
        """The same description with some of ``walks``, ``explicit`` (head and tail together, split
        as here), ``families``, ``chunk_rows`` changed."""
        explicit = changes.get("explicit", self.explicit)
        return DescribedBasis(self.network, changes.get("walks", self.walks), explicit[:self.head],
                              changes.get("families", self.families), changes.get("chunk_rows", self.chunk_rows),
                              tail=explicit[self.head:])

    def family_index(self, weight: int) -> int | None:
        """Basis index of the family path of weight id ``weight``, or None (a designated weight)."""
        net, before = self.network, self.head_paths
        for fam in self.families:
            offset = net.connection_offsets[fam.connection]
            if offset <= weight < offset + fam.weights:
                local = weight - offset
                at = int(np.searchsorted(fam.excluded, local))
                if at < len(fam.excluded) and fam.excluded[at] == local:
                    return None
                return before + local - at
            before += fam.size
        return None

    def index_of(self, path) -> int | None:
        """Basis index of a valid general path, or None. A path holding a weight of a family can
        only be that weight's family path (explicit paths hold walk weights only: certified);
        any other can only be explicit."""
        net = self.network
        for w in block_weight_ids(net, path_block(net, path))[0].tolist():
            index = self.family_index(w)
            if index is not None:
                return index if find_general_path(net, [self.path_at(index)], path) == 0 else None
        i = find_general_path(net, self.explicit, path)
        return None if i is None else self.explicit_index(i)

    @property
    def head_paths(self) -> int:
        return sum(len(b) for b in self.explicit[:self.head])

    def explicit_index(self, i: int) -> int:
        """Basis index of path ``i`` of the explicit blocks (head, then tail) taken together."""
        return i if i < self.head_paths else i + sum(f.size for f in self.families)

    def walk_blocks(self) -> list[tuple[str, GeneralBlock]]:
        """The designated walks the families use, as ("in" | "out", block) with taps 0: the
        in-walks of their connections' sources and the out-walks of their targets, row i the
        walk of neuron i."""
        w, net = self.walks, self.network
        out, seen = [], set()
        for fam in self.families:
            c = net.connections[fam.connection]
            for side, layer in (("in", c.source), ("out", c.target)):
                if (side, layer) in seen:
                    continue
                seen.add((side, layer))
                layers, hops, nodes = ((w.in_layers, w.in_hops, w.in_nodes) if side == "in"
                                       else (w.out_layers, w.out_hops, w.out_nodes))
                out.append((side, GeneralBlock(layers[layer], hops[layer], nodes[layer],
                                               np.zeros((len(nodes[layer]), len(hops[layer])), dtype=np.int64))))
        return out


class DescribedPaths(Sequence):
    """The paths of a basis held as blocks (a ``LazyBlocks``: a described basis, a DEAH union) as a
    read-only sequence, each path made when asked for, in the form ``form`` gives a block's paths
    (default ``block_general_paths``: ``((layer, index), ...), taps``; ``block_paths``: JSON
    objects): ``StoredRun.basis_paths`` and ``Result.basis_paths`` of a big network without a
    Python object per path."""

    def __init__(self, basis: LazyBlocks, form=block_general_paths, network: GeneralNetwork | None = None):
        self.basis, self.form = basis, form
        self.network = network if network is not None else basis.network  # a DescribedBasis knows its own

    def __len__(self) -> int:
        return self.basis.path_count

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        return self.form(self.network, self.basis.path_at(index))[0]

    def __iter__(self):
        for block in self.basis:
            yield from self.form(self.network, block)

    def iter_blocks(self):
        """The paths as blocks in order, at most ``CHUNK_ROWS`` each, made when reached."""
        return iter_chunks(self.basis)


def _walk_problem(net: GeneralNetwork, side: str, block: GeneralBlock) -> str | None:
    """A walk of layer l's neurons is valid when row i starts (out-walk) or ends (in-walk) at
    neuron i of l, reaches an input (in-walk) or an output (out-walk), and follows connections
    with indices in range."""
    layer = block.layers[-1] if side == "in" else block.layers[0]
    end = block.layers[0] if side == "in" else block.layers[-1]
    name = net.layers[layer].name
    if (end not in net.inputs) if side == "in" else (end not in net.outputs):
        return f"the designated {side}-walks of {name} {'start' if side == 'in' else 'end'} at {net.layers[end].name}"
    own = block.nodes[:, -1 if side == "in" else 0]
    if len(own) != net.layers[layer].size or not np.array_equal(own, np.arange(len(own))):
        return f"the designated {side}-walks of {name} are not one per neuron, in order"
    return block_problem(net, block, ends=False)


def certify_described(basis: DescribedBasis) -> Verdict:
    """Decide exactly whether a described basis is a basis path set (see the module doc), in
    O(neurons x depth + explicit paths), never listing a family."""
    net = basis.network
    expected, size = net.basis_size, basis.path_count
    walks = basis.walk_blocks()
    for side, block in walks:
        problem = _walk_problem(net, side, block)
        if problem:
            return Verdict(False, problem, size, expected, None)
    for n, block in enumerate(basis.explicit):
        problem = block_problem(net, block)
        if problem:
            return Verdict(False, f"explicit block {n}: {problem}", size, expected, None)
    on_walks = np.unique(np.concatenate([block_weight_ids(net, b).ravel() for b in [b for _, b in walks] + basis.explicit]
                                        or [np.zeros(0, dtype=np.int64)]))
    seen_connections = set()
    for fam in basis.families:
        k = fam.connection
        if k in seen_connections or not net.connections[k].trainable:
            return Verdict(False, f"connection {k} has two families or no weights", size, expected, None)
        seen_connections.add(k)
        start = net.connection_offsets[k]
        inside = on_walks[(on_walks >= start) & (on_walks < start + fam.weights)] - start
        stray = np.setdiff1d(inside, fam.excluded, assume_unique=True)
        if len(stray):
            return Verdict(False, f"weight {int(stray[0]) + start} lies on a walk and in the family of connection {k}",
                           size, expected, None)
    if size != expected:
        return Verdict(False, f"size {size} != m - H = {expected}", size, expected, None)
    listed = sum(len(b) for b in basis.explicit)
    explicit = certify_blocks(net, basis.explicit, expected_size=listed)
    if not explicit.certified:  # every family path is independent of the rest: its rank adds
        rank = explicit.rank + (size - listed)
        return Verdict(False, f"dependent: rank {rank} < {size}", size, expected, rank)
    return Verdict(True, None, size, expected, size)
