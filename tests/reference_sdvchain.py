"""The literal, loop-by-loop SDVChain pair step (Appendix C), kept as an oracle for the
vectorised one in basispath_graph.deah.step3_sdvchain."""

from __future__ import annotations

from collections import Counter, defaultdict

from basispath_graph.network import Network, PathBlock

import numpy as np


def _split(network: Network, block: PathBlock, shared: set[tuple[int, int]]):
    """Per path: (shared weights, unshared weights) as tuples, hops in ascending layer order."""
    wid = network.weight_ids(block)
    hops = list(zip(block.layers, block.layers[1:]))
    sh = [k for k, h in enumerate(hops) if h in shared]
    un = [k for k, h in enumerate(hops) if h not in shared]
    return [tuple(r) for r in wid[:, sh].tolist()], [tuple(r) for r in wid[:, un].tolist()]


def sdvchain_pair_reference(
    network: Network,
    shared_pairs: tuple[tuple[int, int], ...],
    base: PathBlock,
    target: PathBlock,
    alive: np.ndarray,
):
    """One SDVChain iteration: discard from B'_to (``alive`` rows of ``target``) based on B_from.

    For each unique unshared part Ep_j of the B_from paths: UCP_j = the shared parts that occur
    with Ep_j, UCP_j* = the one occurring most often in all of B_from (ties: smallest weight ids).
    IEp_j = unshared parts of the B'_to paths whose shared part is in UCP_j, kept only when they
    occur at least twice; those paths are discarded unless their shared part is UCP_j*.

    Returns a list of (row, ep, ucp_star, iep, shared) for the rows to discard; ``alive`` is not
    changed (the caller applies all discards of one call at once, as the pseudo-code does).
    Running time O(|B_from| + |B_to| * k) for k = the number of groups a shared part belongs to.
    """
    shared = set(shared_pairs)
    sk_from, uk_from = _split(network, base, shared)
    sk_to, uk_to = _split(network, target, shared)
    freq = Counter(sk_from)
    ucp: dict[tuple, set] = defaultdict(set)
    for s, u in zip(sk_from, uk_from):
        ucp[u].add(s)
    rows_by_shared: dict[tuple, list[int]] = defaultdict(list)
    for row in np.flatnonzero(alive).tolist():
        rows_by_shared[sk_to[row]].append(row)

    out, taken = [], set()
    for ep in sorted(ucp):
        group = ucp[ep]
        star = min(group, key=lambda s: (-freq[s], s))
        candidates = [row for s in group for row in rows_by_shared.get(s, ())]
        by_unshared: dict[tuple, list[int]] = defaultdict(list)
        for row in candidates:
            by_unshared[uk_to[row]].append(row)
        for iep, rows in by_unshared.items():
            if len(rows) < 2:
                continue  # an unshared part seen once cannot cancel (paper's comment)
            for row in rows:
                if sk_to[row] != star and row not in taken:
                    taken.add(row)
                    out.append((row, ep, star, iep, sk_to[row]))
    return out


