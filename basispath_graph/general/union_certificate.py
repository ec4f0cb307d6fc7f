"""Exact certification of a DEAH engine's basis of a general network from its parts, without
flattening m paths (``general/deah_solve.py``: core, tap lift, extra layers, identity forest).

Flattening the union of m paths for the exact certifier cost more than the DEAH run itself (on
ResNet-18: 75 s and 9.3 GB of 99 s and 12.6 GB). The union's structure gives the same answer:

1. **Core.** The layered engine's verdict on the core is exact (peeling and elimination); its
   paths, spelled in the general network, hold tap 0 of core connections only.
2. **Private weights.** Each tap-lift path holds one weight at a tap >= 1 and each extra-layer
   path one weight of a connection outside the core; these *private* weights are distinct, and
   every other hop of every path of the union is at tap 0 on a core connection (or an identity
   hop of a forest path). So a private weight lies on its own path only, and a dependency has
   coefficient 0 on every such path.
3. **Identity forest.** Each forest path is in-walk + one identity hop a -> b + out-walk, every
   other hop at tap 0 on a core connection. On the flow functional of a hidden core neuron
   (weights in minus weights out), which vanishes on span(core), such a path is e_a - e_b
   (ground terms dropped: neurons of input and output layers). The edges (a, b) form a forest
   over the hidden neurons plus one ground vertex (checked here by union-find), so these vectors
   are independent and no combination of forest paths lies in span(core) unless it is 0.
4. **Count.** The parts hold m - H paths.

(1)-(4) prove the union independent and of the right size, i.e. a basis. Every block is also
checked to be paths of the network (``block_problem``). tests/test_general_deah.py compares the
verdict with the explicit certifier's on random networks in the paper's setting.
"""

from __future__ import annotations

import numpy as np

from ..verify import Verdict
from .blocks import GeneralBlock, block_weight_ids
from .model import GeneralNetwork
from .lazy_blocks import path_count
from .paths import block_problem

__all__ = ["certify_union"]


def _hop_ids(net: GeneralNetwork, block: GeneralBlock, h: int) -> np.ndarray:
    """Weight ids of hop h of every path of a block (a trainable hop)."""
    one = GeneralBlock(block.layers[h:h + 2], block.hops[h:h + 1], block.nodes[:, h:h + 2], block.taps[:, h:h + 1])
    return block_weight_ids(net, one)[:, 0]


def _private_hop(block: GeneralBlock, core: set[int], lift: bool) -> int | None:
    """The hop of a lift block (the one at a tap >= 1) or of an extra block (the one off the core)."""
    if lift:
        cols = [h for h in range(len(block.hops)) if len(block) and block.taps[:, h].any()]
    else:
        cols = [h for h, k in enumerate(block.hops) if k not in core]
    return cols[0] if len(cols) == 1 else None


def certify_union(net: GeneralNetwork, core_verdict: Verdict, core_connections: set[int], core: list[GeneralBlock],
                  lifted: list[GeneralBlock], extra: list[GeneralBlock], forest: list[GeneralBlock], described=None) -> Verdict:
    """The exact verdict on core + lifted + extra + forest (see the module doc). ``described``:
    for a described DEAH run, a check of the core and the lift from their description (a defect
    or None, ``deah_solve.described_lift_problem``) instead of making their paths: the core's
    verdict already proves its paths valid, and each lifted path is a core path with one hop at
    its own weight (u, v, t), t >= 1, one per weight of the lifted pairs."""
    expected = net.basis_size
    size = sum(path_count(part) for part in (core, lifted, extra, forest))

    def refuse(defect: str) -> Verdict:
        return Verdict(False, defect, size, expected, None)

    parts = {"core": core, "tap lift": lifted, "extra layers": extra, "identity forest": forest}
    private = []
    if described is not None:  # the core and its lift by their description: neither is listed
        problem = described(core, lifted)
        if problem:
            return refuse(problem)
        private.append(np.zeros(0, dtype=np.int64))
        parts = {"extra layers": extra, "identity forest": forest}
    for name, blocks in parts.items():
        for n, block in enumerate(blocks):  # each block made once (a lazy part's are made here)
            problem = block_problem(net, block)
            if problem:
                return refuse(f"{name} block {n}: {problem}")
            special = None
            if name in ("tap lift", "extra layers"):
                special = _private_hop(block, core_connections, name == "tap lift")
                if special is None or (name == "tap lift" and block.hops[special] not in core_connections):
                    return refuse(f"{name} block {n}: not one private weight per path")
                if name == "tap lift" and (block.taps[:, special] < 1).any():
                    return refuse(f"{name} block {n}: a lifted hop at tap 0")
                private.append(_hop_ids(net, block, special))
            zero = []  # every other trainable hop: tap 0 on a core connection
            for h, k in enumerate(block.hops):
                if h == special:
                    continue
                if not net.connections[k].trainable:
                    if name != "identity forest":
                        return refuse(f"{name} block {n}: an identity hop")
                    continue
                if k not in core_connections:
                    return refuse(f"{name} block {n}: hop {h} is not on a core connection")
                zero.append(h)
            if zero and block.taps[:, zero].any():
                return refuse(f"{name} block {n}: a hop off the private one is not at tap 0")
    if size != expected:  # as the explicit certifier orders its defects: validity, size, independence
        return refuse(f"size {size} != m - H = {expected}")
    if not core_verdict.certified:
        return refuse(f"the core's paths: {core_verdict.defect}")
    ids = np.sort(np.concatenate(private)) if private else np.zeros(0, dtype=np.int64)
    if (ids[1:] == ids[:-1]).any():  # sorted: a repeat sits next to itself
        return refuse("two paths share a private weight (tap lift or extra layers)")
    problem = _forest_problem(net, forest)
    if problem:
        return refuse(problem)
    return Verdict(True, None, size, expected, size)


def _forest_problem(net: GeneralNetwork, forest: list[GeneralBlock]) -> str | None:
    """Each forest path has one identity hop a -> b, and the edges (a, b) form a forest over the
    hidden neurons plus one ground vertex (input and output layers' neurons)."""
    ends = set(net.inputs) | set(net.outputs)
    parent: dict[int, int] = {}
    ground = -1

    def find(x: int) -> int:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while parent.get(x, x) != root:
            parent[x], x = root, parent[x]
        return root

    for n, block in enumerate(forest):
        identity = [h for h, k in enumerate(block.hops) if not net.connections[k].trainable]
        if len(identity) != 1:
            return f"identity forest block {n}: {len(identity)} identity hops per path, not 1"
        h = identity[0]
        a_layer, b_layer = block.layers[h], block.layers[h + 1]
        for a, b in zip(block.nodes[:, h].tolist(), block.nodes[:, h + 1].tolist()):
            ra = ground if a_layer in ends else find(int(net.neuron_offset[a_layer]) + a)
            rb = ground if b_layer in ends else find(int(net.neuron_offset[b_layer]) + b)
            if ra == rb:
                return (f"identity forest block {n}: the edge {net.layers[a_layer].name}:{a} -> "
                        f"{net.layers[b_layer].name}:{b} closes a cycle")
            parent[max(ra, rb)] = min(ra, rb)  # ground (-1) stays a root
    return None
