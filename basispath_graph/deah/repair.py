"""The exact repair of a DEAH union that is not a basis, one for every network: greedy exact
elimination in three passes, every change recorded as a ``Repair`` (layered runs: ``solver``;
faithful deah on a layer DAG core: ``general/dag_sdvchain.py``; docs/deah-interpretation.md, "The
repair").

1. the union's kept paths in order: one dependent on the paths before it is dropped;
2. while the rank is short, the discards in the order Step 3 made them: one that raises the
   rank is re-admitted;
3. while the rank is still short, the fallback paths (a skeleton's) in order: one that raises
   the rank is added.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field

import numpy as np

from ..result import Repair
from ..linalg.peeled_triangle import PeeledTriangle
from ..linalg.peeling import peel_result_by_holders, rows_weight_ids
from ..linalg.sparse import PackedMask, narrow_index, search_index, where
from ..verify import IncrementalBasis
from ..linalg.elimination import PRIMES
from ..linalg.greedy_mod_p import COMPILED, GreedyModP
from ..verify.rank import CoreChoice, compact_csr, csr_of_run, greedy_choice
from .repair_list import ReadmittedRows, RepairList, SpelledRun

__all__ = ["BlockRows", "RepairOutcome", "exact_repair", "taken_blocks", "taken_views"]


@dataclass
class RepairOutcome:
    kept: dict = field(default_factory=dict)  # group key -> [(block, rows)] kept: the union's runs, then each re-admitted row
    readmitted: ReadmittedRows = field(default_factory=ReadmittedRows)  # (key, rows) of the discards re-admitted
    dropped: list = field(default_factory=list)  # (key, rows, their Repair records) per union run, in order
    added: list = field(default_factory=list)  # (block, row) of the fallback paths added
    repairs: RepairList = field(default_factory=RepairList)  # the drops and the compiled pass's re-admissions spelled when read


def exact_repair(target: int, m: int, union: Iterable[tuple[Hashable, object, np.ndarray]],
                 discards: Callable[[], Iterable[tuple[Hashable, object, np.ndarray]]], fallback: Callable[[], Iterable], weight_ids: Callable,
                 spell: Callable, certified: CoreChoice | None = None) -> RepairOutcome:
    """The three passes (the module doc) up to rank ``target`` (m - H, over ``m`` weights).
    ``union``: (key, block, rows) in order (key: the substructure, or None); ``discards()``:
    (key, block, rows), runs in the order Step 3 made them, made again at each call
    (``PartTable.row_runs``: a described B_r's rows made a run at a time, not one by one; the
    passes below read them up to three times, and Inception-v3 x1/8's 8.0 M discards held as
    int64 rows were 64 MB); ``fallback()``: blocks, made only if the third
    pass starts (a skeleton's m - H paths: ResNet-50 x1/8's took 120 MB); ``weight_ids(block)``:
    (paths, hops) weight ids; ``spell(block, k)``: (layers, indices, taps) of row ``k`` of a
    made block, as a ``Repair`` names a path (the union's and the discards' runs pass the run
    made, the fallback its block); ``certified``: the ``CoreChoice`` the certifier kept on this
    same union (the same paths in the same order), whose passes the greedy choice then reuses.

    The union is peeled first (by holders, O(m)): the i-th peeled path holds a weight that no
    later-peeled path and no core path holds. In any dependence among union paths, the peeled
    path of smallest index with a non-zero coefficient would be the only one holding its private
    weight, so there is none: every peeled path is independent of all the others (over Q and
    modulo every prime), is kept, and the greedy choice among the rest (the core) is the same
    without them; only the core goes through elimination (ResNet-50 x1/8: 27,068 of 251,440
    paths). Re-admissions and additions, when
    needed, are decided modulo the peeled paths (``PeeledTriangle``): a path is independent of
    the kept ones iff its residual is independent of theirs."""
    union = list(union)
    views = [BlockRows(block, rows) for _, block, rows in union]
    starts = np.concatenate([[0], np.cumsum([len(v) for v in views])]).astype(np.int64)
    # what the certifier's peel of this same union left, when it kept it, else peeled here; the
    # peel's order and pivots only where the second pass needs them (below)
    reused = certified.peel_for(int(starts[-1])) if certified is not None else None
    peel = peel_result_by_holders(views, weight_ids, m) if reused is None else None
    n_peeled, core, held = reused if peel is None else (peel.n_peeled, peel.core, peel.held)
    cut = search_index(core, starts)  # view r's core rows: core[cut[r]:cut[r + 1]] - starts[r]

    def local(r: int, a: int, b: int) -> np.ndarray:  # made when read: 4 bytes a core row less
        return core[cut[r] + a : min(cut[r] + b, cut[r + 1])] - core.dtype.type(starts[r])

    # The core's rows, made a chunk at a time for each pass of the greedy choice (a described
    # B_r makes one row alone in tens of microseconds, a chunk of them at once): (view, first, end) among its core rows.
    chunks = [(r, a, min(a + _CORE_ROWS, int(cut[r + 1] - cut[r]))) for r in range(len(views)) for a in range(0, int(cut[r + 1] - cut[r]), _CORE_ROWS)]
    # the certifier's passes over this same core, in this order, when it kept them
    known = certified.runs_for(core, int(starts[-1]), [b - a for _, a, b in chunks]) if certified is not None else None
    choice = greedy_choice(lambda: (rows_weight_ids(views[r], local(r, a, b), weight_ids) for r, a, b in chunks), known=known, held=held)
    decided = iter(choice)  # a mask per chunk, in the chunks' order: view by view
    keeps = []  # per view, which of its rows are kept, as a PackedMask (a bool a union row was held for every view at once)
    out, core_kept = RepairOutcome(), []  # arrays of union ids (a list of ints held WRN-16-4's 2.7 M at 36 bytes each)
    for r, (key, block, rows) in enumerate(union):
        keep, kept_core = np.ones(len(rows), dtype=bool), [np.zeros(0, dtype=np.int64)]
        for a in range(0, int(cut[r + 1] - cut[r]), _CORE_ROWS):  # the view's core a chunk at a time
            core_r, kept = local(r, a, a + _CORE_ROWS), next(decided)
            keep[core_r[~kept]] = False
            kept_core.append(core_r[kept])
        keeps.append(PackedMask.of(keep))
        core_kept.append(starts[r] + np.concatenate(kept_core))
        out.kept.setdefault(key, []).append((block, where(rows, keep)))
        # one array, as small as it fits (GoogLeNet drops 140 M paths), or the rows it lacks (``AllBut``)
        lost = narrow_index(where(rows, ~keep))
        if len(lost):  # spelled when read, from the dropped rows made together
            drops = SpelledRun(block, lost, lambda made, k, key=key: _repair("drop", spell(made, k), key))
            out.dropped.append((key, lost, drops))
            out.repairs.add_run(drops)
    core_kept = np.concatenate(core_kept) if core_kept else np.zeros(0, dtype=np.int64)
    rank = n_peeled + len(core_kept)
    if rank >= target:
        return out
    if peel is None:  # the order and pivots of the certifier's peel: the same peel made again
        peel = peel_result_by_holders(views, weight_ids, m)
    greedy = _greedy_readmissions(peel, views, keeps, weight_ids, m, discards, target - rank)
    if greedy is not None:  # the compiled elimination decided, modulo both primes alike, up to the target
        for key, block, rows in greedy:  # each run's records spelled when read
            out.kept.setdefault(key, []).append((block, rows))
            out.readmitted.add(key, rows)
            out.repairs.add_run(SpelledRun(block, rows, lambda made, k, key=key: _repair("readmit", spell(made, k), key), "readmit"))
        return out
    # Short of rank: the kept paths modulo the peeled ones, then each candidate's residual.
    ptr, wids = compact_csr(views, weight_ids, m)
    peeled = PeeledTriangle(peel, ptr, wids, m)
    span = IncrementalBasis(None)
    for i in core_kept.tolist():  # independent as kept: the same primes' state as the first pass had
        if not span.add_vector(_residual(peeled, peeled.vector(i))):
            raise AssertionError(f"union path {i}, kept, is dependent modulo the peeled paths")

    def raises_rank(w) -> bool:
        return span.add_vector(_residual(peeled, w.tolist()))

    for key, block, rows in discards():
        if rank >= target:
            break
        made = block.take(rows)
        for k, (row, w) in enumerate(zip(rows.tolist(), weight_ids(made))):
            if rank >= target:
                break
            if raises_rank(w):
                rank += 1
                out.kept.setdefault(key, []).append((block, np.array([row], dtype=np.int64)))
                out.readmitted.add(key, [row])
                out.repairs.append(_repair("readmit", spell(made, k), key))
    for block in fallback() if rank < target else ():
        if rank >= target:
            break
        for row, w in enumerate(weight_ids(block)):
            if rank >= target:
                break
            if raises_rank(w):
                rank += 1
                out.added.append((block, row))
                out.repairs.append(_repair("add", spell(block, row), None))
    return out


def _greedy_readmissions(peel, views: list, keeps: list[PackedMask], weight_ids: Callable, m: int,
                         discards: Callable[[], Iterable], room: int) -> list | None:
    """The second pass by the compiled greedy elimination: the discards (``discards()``: (key,
    block, rows) runs in order) that raise the rank of the union's kept paths, the first
    ``room`` of them, as [(key, block, rows re-admitted)] per run (``keeps``: per view, which
    rows the first pass kept, as ``PackedMask``). The same choice as the
    Python pass (``IncrementalBasis`` over residuals modulo the peeled paths, one discard at a
    time: Inception-v3 x1/16 tested 1.35 M discards in 122 s, each rejected modulo both primes),
    found as ``greedy_choice`` finds the first pass's: modulo each prime over the whole kept
    rows, peeled ones included, then the discards; kept when both primes choose alike. None
    (the Python pass decides) where the loop was not built, the primes disagree, or the
    discards leave the rank short (the third pass needs the Python span).

    The peeled paths cost no elimination: coordinates are ranked with the private ones highest,
    the first peeled path's the very highest, so a peeled path's own private coordinate is its
    highest (it holds no earlier-peeled path's) and no pivot yet: it is stored as it is. The
    choice does not depend on the ranking (a row is kept iff independent of the rows before it)."""
    if not COMPILED or room <= 0:
        return None
    ranks = np.empty(m, dtype=np.int32)
    private = np.zeros(m, dtype=bool)
    private[peel.private] = True
    others = np.flatnonzero(~private)
    ranks[others] = np.arange(len(others), dtype=np.int32)
    ranks[peel.private] = m - 1 - np.arange(len(peel.private), dtype=np.int32)
    del private, others
    choices = []
    for p in PRIMES[:2]:
        greedy = GreedyModP(m, p, compiled=True)
        for view, keep in zip(views, keeps):  # which rows are kept (exact_repair), unpacked a run at a time
            for at in range(0, len(view), _CORE_ROWS):
                rows = at + np.flatnonzero(keep[at : at + _CORE_ROWS])
                ptr, w = csr_of_run(rows_weight_ids(view, rows, weight_ids))
                if not greedy.feed(ptr, ranks[w]).all():
                    return None  # the kept union dependent modulo p: the Python pass says so
        chosen, found = [], 0
        for key, block, rows in discards():
            ptr, w = csr_of_run(rows_weight_ids(block, rows, weight_ids))
            kept = np.flatnonzero(greedy.feed(ptr, ranks[w]))[: room - found]
            chosen.append((key, block, rows[kept]))
            found += len(kept)
            if found >= room:
                break
        if found < room:
            return None
        choices.append(chosen)
    first, second = choices
    same = len(first) == len(second) and all(a[0] == b[0] and a[1] is b[1] and np.array_equal(a[2], b[2]) for a, b in zip(first, second))
    return [run for run in first if len(run[2])] if same else None


_CORE_ROWS = 1 << 16  # core rows made at once for the greedy choice


def _residual(peeled: PeeledTriangle, weights: list[int]) -> dict[int, int]:
    """A path (its weight ids) modulo the peeled paths."""
    res = dict.fromkeys(weights, 1)
    peeled.reduce(res)
    return res


class BlockRows:
    """Rows ``rows`` of a block, read as a block (``len``, ``take``): what peeling and the
    certifier read, without a copy of the rows (``materialise()`` makes one when a block is
    needed). Also a ``LazyBlocks`` part (``size``, ``block``; one block, not chunked, as a basis
    block of the same rows was): a basis held as views makes a block only when it is read."""

    chunked = False

    def __init__(self, block, rows: np.ndarray):
        self.source, self.rows = block, rows

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def size(self) -> int:
        return len(self.rows)

    def take(self, index):
        return self.source.take(self.rows[index])

    @property
    def weight_ids_at(self):
        """The source's own weight ids of rows (``linalg.peeling.rows_weight_ids``), read through
        this view's rows; None where the source has none."""
        own = getattr(self.source, "weight_ids_at", None)
        return None if own is None else (lambda index: own(self.rows[index]))

    def block(self, start: int, stop: int):
        """Rows start .. stop - 1 as a block (``LazyBlocks``)."""
        return self.source.take(self.rows[start:stop])

    def materialise(self):
        return self.source.take(np.asarray(self.rows))  # (rows held as an ``AllBut`` made whole)


def _repair(action: str, spelled: tuple, key) -> Repair:
    layers, indices, taps = spelled
    return Repair(action, layers, indices, key, taps)


def taken_blocks(runs: list[tuple[object, np.ndarray]]) -> list:
    """(block, rows) runs as blocks: consecutive runs of one block taken at once, in order."""
    return [view.materialise() for view in taken_views(runs)]


def taken_views(runs: list[tuple[object, np.ndarray]]) -> list[BlockRows]:
    """(block, rows) runs as views (``BlockRows``): consecutive runs of one block joined, in
    order; those with no row left out."""
    out, start = [], 0
    for k in range(1, len(runs) + 1):
        if k == len(runs) or runs[k][0] is not runs[start][0]:
            rows = np.concatenate([np.asarray(r, dtype=np.int64).reshape(-1) for _, r in runs[start:k]])
            if len(rows):
                out.append(BlockRows(runs[start][0], rows))
            start = k
    return out
