"""DEAH Step 3 (paper, Section 4 "Step 3" and Appendix C "SDVChain"): path subdivision chains
and the elimination of dependent paths from the union of the B_r.

Chains are stretched greedily over the selected substructures in selection order; every chain
implicitly ends in U_0 (the underlying path p_0). Inside each chain SDVChain discards paths of
B'_{t_{j+1}} based on the *original* B_{t_j}, and the chain's last set discards from B'_0. Each
chain head then discards based on Q_t: from every other chain the last non-head member that shares
an edge with the head (minus the chain's own members). Every discard keeps the record of the call
that made it: the pair, Ep, UCP*, IEp.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np

from ..network import Network, PathBlock
from .step1_substructures import Step1Result

__all__ = [
    "Discard",
    "Step3Result",
    "Relations",
    "InMemoryRelations",
    "build_chains",
    "build_q_sets",
    "sdvchain_pair",
    "run_step3",
]


class Relations:
    """The two relations Step 3 needs between selected substructure paths.

    ``subdivides(a, b)``: p_a is a path subdivision of p_b. ``shared_pairs(a, b)``: the G^S edges
    (layer pairs) both paths have. A graph store answers them with Cypher (``SUBDIVIDES`` and
    ``SHARES_EDGE``); ``InMemoryRelations`` computes them from the layer sets.
    """

    def subdivides(self, a: int, b: int) -> bool:
        raise NotImplementedError

    def shared_pairs(self, a: int, b: int) -> tuple[tuple[int, int], ...]:
        raise NotImplementedError


class InMemoryRelations(Relations):
    def __init__(self, step1: "Step1Result"):
        self._paths = step1.paths

    def subdivides(self, a: int, b: int) -> bool:
        return self._paths[a].subdivides(self._paths[b])

    def shared_pairs(self, a: int, b: int) -> tuple[tuple[int, int], ...]:
        return tuple(sorted(set(self._paths[a].edges) & set(self._paths[b].edges)))


@dataclass
class Discard:
    """One path removed by SDVChain, with the call that removed it.

    Weight lists are weight ids (see ``network.weight_endpoints`` to show them as neurons).
    step: "chain" (pair r -> r+1 inside chain t, or last member -> p_0) or "head" (chain head
    t_1 against a member of Q_t).
    """

    substructure: int  # idx of the substructure whose B' lost the path
    row: int  # row of the path in that substructure's B_r block
    step: str
    chain: int  # t, 1-based
    pair: tuple[int, int]  # (from idx, to idx): based on original B_from, discarding from B'_to
    shared_pairs: tuple[tuple[int, int], ...]  # shared layer pairs E(p_from) & E(p_to)
    ep: tuple[int, ...]  # Ep_j: unshared weights of the B_from paths of this group
    ucp_star: tuple[int, ...]  # UCP_j*: the shared weights kept
    iep: tuple[int, ...]  # the discarded path's unshared weights (its IEp_j element)
    shared: tuple[int, ...]  # the discarded path's shared weights (an element of UCP_j, not UCP_j*)


@dataclass
class Step3Result:
    chains: list[list[int]]  # substructure idx per chain, head first; p_0 implied at the end
    q_sets: list[list[int]]  # Q_t per chain
    alive: dict[int, np.ndarray]  # idx -> bool mask over B_r rows (B'_r)
    discards: list[Discard] = field(default_factory=list)
    calls: int = 0  # SDVChain pair calls made


def build_chains(step1: Step1Result, rel: Relations) -> list[list[int]]:
    """Path subdivision chains U_{t_1} > U_{t_2} > ... (> U_0), stretched as long as possible.

    Scans the selected sets (p_0 excluded) in selection order; a set not yet in any chain starts
    a new chain, which takes every later set that subdivides its current tail (members may be
    shared by several chains; heads may not).
    """
    order = step1.selected[1:]
    in_a_chain: set[int] = set()
    chains = []
    for i, head in enumerate(order):
        if head in in_a_chain:
            continue
        chain = [head]
        for cand in order[i + 1 :]:
            if rel.subdivides(cand, chain[-1]):
                chain.append(cand)
        in_a_chain.update(chain)
        chains.append(chain)
    return chains


def build_q_sets(chains: list[list[int]], rel: Relations) -> list[list[int]]:
    """Q_t: for each other chain, its last non-head member sharing an edge with head t_1; minus Y_t."""
    out = []
    for t, chain in enumerate(chains):
        head, own = chain[0], set(chain)
        q = []
        for u, other in enumerate(chains):
            if u == t:
                continue
            sharing = [idx for idx in other[1:] if rel.shared_pairs(head, idx)]
            if sharing and sharing[-1] not in own and sharing[-1] not in q:
                q.append(sharing[-1])
        out.append(q)
    return out


def _split(network: Network, block: PathBlock, shared: set[tuple[int, int]]):
    """Per path: (shared weights, unshared weights) as tuples, hops in ascending layer order."""
    wid = network.weight_ids(block)
    hops = list(zip(block.layers, block.layers[1:]))
    sh = [k for k, h in enumerate(hops) if h in shared]
    un = [k for k, h in enumerate(hops) if h not in shared]
    return [tuple(r) for r in wid[:, sh].tolist()], [tuple(r) for r in wid[:, un].tolist()]


def sdvchain_pair(
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


def run_step3(
    network: Network, step1: Step1Result, bases: dict[int, PathBlock], rel: Relations | None = None
) -> Step3Result:
    """DEAH Step 3 over the chains, then the chain heads against Q_t. See module docstring.

    ``rel`` answers subdivision and shared edges (default: computed in memory).
    """
    rel = rel or InMemoryRelations(step1)
    p0 = step1.p0
    chains = build_chains(step1, rel)
    q_sets = build_q_sets(chains, rel)
    alive = {idx: np.ones(len(block), dtype=bool) for idx, block in bases.items()}
    result = Step3Result(chains, q_sets, alive)

    def call(step: str, t: int, src: int, dst: int):
        shared_pairs = rel.shared_pairs(src, dst)
        found = sdvchain_pair(network, shared_pairs, bases[src], bases[dst], alive[dst])
        result.calls += 1
        for row, ep, star, iep, shared in found:
            alive[dst][row] = False
            result.discards.append(Discard(dst, row, step, t, (src, dst), shared_pairs, ep, star, iep, shared))

    for t, (chain, q) in enumerate(zip(chains, q_sets), start=1):
        sequence = chain + [p0]
        for src, dst in zip(sequence, sequence[1:]):
            call("chain", t, src, dst)
        for src in q:
            call("head", t, src, chain[0])
    return result
