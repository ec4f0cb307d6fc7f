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

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ..linalg.sparse import BitIds, CodedValues, PackedMask, compact_ids, compact_values
from ..network import Network, PathBlock
from ..rowkeys import fold_keys
from .discard_table import PartTable
from .subroutine_rows import SubroutineRows
from .step1_substructures import Step1Result

__all__ = [
    "Discard",
    "SdvDiscards",
    "Step3Result",
    "Relations",
    "InMemoryRelations",
    "build_chains",
    "build_q_sets",
    "sdvchain_pair",
    "run_step3",
    "sdvchain_calls",
    "hop_keys",
]


class Relations:
    """The two relations Step 3 needs between selected substructure paths.

    ``subdivides(a, b)``: p_a is a path subdivision of p_b. ``shared_pairs(a, b)``: the G^S edges
    both paths have, as ``hop_keys`` (layer pairs; connections on a layer DAG). A graph store answers them with Cypher (``SUBDIVIDES`` and
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


SDVCHAIN_STEPS = ("chain", "head")  # the values of Discard.step in faithful DEAH


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
    shared_pairs: tuple  # shared G^S edges E(p_from) & E(p_to): layer pairs (connections on a layer DAG: hop_keys)
    ep: tuple[int, ...]  # Ep_j: unshared weights of the B_from paths of this group
    ucp_star: tuple[int, ...]  # UCP_j*: the shared weights kept
    iep: tuple[int, ...]  # the discarded path's unshared weights (its IEp_j element)
    shared: tuple[int, ...]  # the discarded path's shared weights (an element of UCP_j, not UCP_j*)


@dataclass
class _Call:
    """The discards of one SDVChain call: target rows (ascending), and for each the row of
    B_from whose shared part is its group's UCP_j* (and whose unshared part, as for every row of
    the group, is its Ep_j)."""

    step: str
    chain: int
    src: int
    idx: int  # dst: the substructure whose B' lost the rows
    shared_pairs: tuple
    rows: np.ndarray | BitIds
    star_rows: np.ndarray | CodedValues

    def __len__(self) -> int:
        return len(self.rows)

    def rows_of(self, which: slice) -> np.ndarray:
        return self.rows[which].astype(np.int64)


class SdvDiscards(PartTable):
    """SDVChain's discards, call after call, kept as arrays: a ``Discard`` (its weight tuples
    Ep_j, UCP_j*, IEp, shared part) is built only when read. As objects they cost about 1.6 kB a
    discard (ResNet-18's core: 4.1 M of them), the arrays at most 8 bytes: the discarded row and
    its group's UCP_j* row, int32 (whole ResNet-50's 48 M discards held 1.17 GB as three int64
    rows from Step 3 to the end of the run), or less as bits and codes (``add_call``). The UCP_j* row also gives Ep_j: it is a row of group j,
    whose unshared part is Ep_j, as is the row ``sdvchain_pair`` names for it."""

    def add_call(self, step: str, chain: int, src: int, dst: int, shared_pairs: tuple, rows, star_rows) -> None:
        # as bits of B_to and codes of the call's few UCP_j* rows where smaller (Inception-v3 x1/8:
        # 62 MB as int32, 10.5 MB so; Step 3 discards 96% of its candidates)
        self._add(_Call(step, chain, src, dst, shared_pairs, compact_ids(rows), compact_values(star_rows)))

    def _materialise(self, call: _Call, which: slice):
        network, base, target = self.network, self.bases[call.src], self.bases[call.idx]
        rows, star_rows = call.rows[which], call.star_rows[which]
        shared = set(call.shared_pairs)
        sh_b, un_b = _columns(base, shared)
        sh_t, un_t = _columns(target, shared)
        w_b = network.weight_ids(base.take(star_rows))
        w_t = network.weight_ids(target.take(rows))
        eps, stars = w_b[:, un_b].tolist(), w_b[:, sh_b].tolist()
        ieps, shs = w_t[:, un_t].tolist(), w_t[:, sh_t].tolist()
        pair = (call.src, call.idx)
        for k, row in enumerate(rows.tolist()):
            yield Discard(call.idx, row, call.step, call.chain, pair, call.shared_pairs, tuple(eps[k]), tuple(stars[k]), tuple(ieps[k]), tuple(shs[k]))

    def step_counts(self) -> Counter:
        out: Counter = Counter()
        for call in self._parts:
            out[call.step] += len(call)
        return out


@dataclass
class Step3Result:
    chains: list[list[int]]  # substructure idx per chain, head first; p_0 implied at the end
    q_sets: list[list[int]]  # Q_t per chain
    alive: dict  # idx -> bool mask over B_r rows (B'_r): a PackedMask here, a bool array from step3_complete
    discards: PartTable | list = field(default_factory=list)  # SdvDiscards here; step3_complete's DiscardTable
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


def sdvchain_pair(network, shared_pairs, base, target, alive):
    """One SDVChain iteration: discard from B'_to (``alive`` rows of ``target``) based on B_from.

    For each unique unshared part Ep_j of the B_from paths: UCP_j = the shared parts that occur
    with Ep_j, UCP_j* = the one occurring most often in all of B_from (ties: smallest weight ids).
    IEp_j = unshared parts of the B'_to paths whose shared part is in UCP_j, kept only when they
    occur at least twice; those paths are discarded unless their shared part is UCP_j*.

    Returns (rows, ep_rows, star_rows) for the discarded target rows, in ascending row order:
    ``ep_rows[k]`` / ``star_rows[k]`` are rows of ``base`` whose unshared part is the Ep_j and
    whose shared part is the UCP_j* of the first group j (in lexicographic order of Ep) that
    discards target row ``rows[k]``. ``alive`` is not changed (the caller applies all discards of
    one call at once, as the pseudo-code does).

    Running time O((|B_from| + |B_to| + J) log) with J = sum over shared parts k of
    #B_from(k) * #B'_to(k), the (target path, Ep group) pairs that meet on a shared part.
    """
    shared = set(shared_pairs)
    empty = np.zeros(0, dtype=np.int64)
    if not shared:
        return empty, empty, empty  # all paths are distinct: no unshared part repeats
    sh_b, un_b = _columns(base, shared)
    sh_t, un_t = _columns(target, shared)
    # B'_to's live rows: only they are keyed (a target B_r has lost most of its rows by its later
    # calls: on Inception-v3, 81% of the rows its calls' targets held)
    rows_t = np.flatnonzero(alive).astype(np.int32)
    n_b, n_t = len(base), len(rows_t)
    if n_t == 0:
        return empty, empty, empty
    # Parts keyed a hop's weight ids at a time: the (paths, hops) matrices of two B_r were most
    # of Step 3's memory (ResNet-18: 1.5 GB over the B_r themselves).
    col_b = _weight_columns(network, base)
    col_t = _weight_columns(network, target, None if n_t == len(target) else rows_t)
    sk_all, _ = fold_keys((np.concatenate([col_b(i), col_t(k)]) for i, k in zip(sh_b, sh_t)), n_b + n_t)
    sk_b, sk_t = sk_all[:n_b], sk_all[n_b:]  # sk_t, iep_t: of the live rows, by position in rows_t
    ep_b, n_ep = fold_keys(map(col_b, un_b), n_b)
    iep_t, _ = fold_keys(map(col_t, un_t), n_t)

    # UCP_j*: per Ep group, the shared part most frequent in all of B_from (ties: smallest key,
    # keys being in lexicographic order of the weight ids).
    freq = np.bincount(sk_b).astype(np.int32)
    order = np.lexsort((sk_b, -freq[sk_b], ep_b))
    del freq
    first = order[np.r_[True, ep_b[order][1:] != ep_b[order][:-1]]]
    del order
    star_row = np.empty(n_ep, dtype=np.int32)
    star_row[ep_b[first]] = first
    star_key = sk_b[star_row]

    # Join the live target rows with the (Ep_j, shared part) pairs of B_from on the shared part.
    # A group with a single shared part can discard nothing (its only member is UCP_j*), so only
    # the pairs of groups with two or more shared parts take part: this keeps the join small.
    # Rows and dense keys are int32 and every temporary is dropped once used: a call over two
    # B_r of whole ResNet-50 (13 M rows each) held about 97 bytes a row.
    group_size = np.bincount(ep_b, minlength=n_ep)
    useful = np.flatnonzero(group_size[ep_b] >= 2).astype(np.int32)
    del group_size
    by_shared = useful[np.argsort(sk_b[useful], kind="stable")]
    del useful
    sorted_sk = sk_b[by_shared]
    lo = np.searchsorted(sorted_sk, sk_t, side="left")
    hits = np.searchsorted(sorted_sk, sk_t, side="right") - lo
    del sorted_sk
    q = np.repeat(np.arange(n_t, dtype=np.int32), hits)  # live positions, ascending
    if len(q) == 0:
        return empty, empty, empty
    # the k-th hit of target row q sits at by_shared[lo + k]
    at = np.repeat(lo - (np.cumsum(hits) - hits), hits)
    del lo, hits
    at += np.arange(len(q))
    base_row = by_shared[at]
    del at, by_shared
    j = ep_b[base_row]

    # IEp_j: (group j, unshared part of the target path) seen at least twice.
    discard = _repeated(j.astype(np.int64) * (int(iep_t.max()) + 1) + iep_t[q])
    discard &= sk_t[q] != star_key[j]
    if not discard.any():
        return empty, empty, empty
    q, j, base_row = rows_t[q[discard]], j[discard], base_row[discard]  # q: target rows now
    del discard, rows_t
    # One record per discarded row: the first group (smallest Ep key) that discards it. q is
    # ascending and (q, j) pairs are distinct (a path of B_from is its Ep and shared parts).
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    lengths = np.diff(np.r_[starts, len(q)])
    keep = np.flatnonzero(j == np.repeat(np.minimum.reduceat(j, starts), lengths))
    return q[keep].astype(np.int64), base_row[keep].astype(np.int64), star_row[j[keep]].astype(np.int64)


def _repeated(keys: np.ndarray) -> np.ndarray:
    """Mask of the keys that occur at least twice (``np.unique``'s counts without its inverse:
    a third of the memory)."""
    perm = np.argsort(keys)
    ordered = keys[perm]
    same = ordered[1:] == ordered[:-1]
    del ordered
    twice = np.zeros(len(perm), dtype=bool)
    twice[1:] = same
    twice[:-1] |= same
    out = np.empty(len(perm), dtype=bool)
    out[perm] = twice
    return out


def hop_keys(block) -> list:
    """What Step 3 compares between substructures, one per hop of ``block``: the layer pair of a
    layered network's hop (G^S edges are layer pairs), the connection index of a general one's
    (``GeneralBlock.hops``: faithful deah on a layer DAG, ``general/dag_sdvchain.py``)."""
    hops = getattr(block, "hops", None)
    return list(hops) if hops is not None else list(zip(block.layers, block.layers[1:]))


def _weight_columns(network, block, rows: np.ndarray | None = None):
    """``read(k)``: the weight ids of hop k of every path of ``block`` (of ``rows``, ascending,
    when given). A layered block's hop is made alone from its two neuron columns
    (``network.weight_ids`` of that hop; a described B_r's columns made from the choice rule), so
    is a layer DAG's described B_r's (its trainable hops numbered as its hops), a general block's
    (taps, identity hops) read from its weight ids, made once."""
    if getattr(block, "hop_reader", None) is not None and all(block.net.connections[c].trainable for c in block.hops):
        return block.hop_reader(rows)  # a layer DAG's described B_r (``general.dag_discards.RouteRows``)
    which = slice(None) if rows is None else rows
    if isinstance(block, SubroutineRows):  # described: each neuron column made alone
        return lambda k: network.weight_ids(PathBlock(block.layers[k : k + 2], np.stack([block.column(k, which), block.column(k + 1, which)], axis=1)))[:, 0]
    if getattr(block, "hops", None) is None:
        return lambda k: network.weight_ids(PathBlock(block.layers[k : k + 2], block.nodes[which, k : k + 2]))[:, 0]
    w = network.weight_ids(block)[which]
    return lambda k: w[:, k]


def _columns(block, shared):
    hops = hop_keys(block)
    return [k for k, h in enumerate(hops) if h in shared], [k for k, h in enumerate(hops) if h not in shared]


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
    alive = {idx: PackedMask(len(block)) for idx, block in bases.items()}  # B'_r, a bit a candidate
    result = Step3Result(chains, q_sets, alive, SdvDiscards(network, bases))

    for step, t, src, dst in sdvchain_calls(chains, q_sets, p0):
        shared_pairs = rel.shared_pairs(src, dst)
        rows, _, star_rows = sdvchain_pair(network, shared_pairs, bases[src], bases[dst], alive[dst])
        result.calls += 1
        if len(rows):
            alive[dst][rows] = False
            result.discards.add_call(step, t, src, dst, shared_pairs, rows, star_rows)
    return result


def sdvchain_calls(chains: list[list[int]], q_sets: list[list[int]], p0: int) -> Iterator[tuple[str, int, int, int]]:
    """Step 3's SDVChain calls in order, as (step, chain t, from, to): along each chain t (p_0
    implied at its end), then its head against each member of Q_t."""
    for t, (chain, q) in enumerate(zip(chains, q_sets), start=1):
        sequence = chain + [p0]
        for src, dst in zip(sequence, sequence[1:]):
            yield "chain", t, src, dst
        for src in q:
            yield "head", t, src, chain[0]
