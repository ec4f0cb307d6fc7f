"""Faithful DEAH (engine "deah") on a network whose core is a layer DAG: the paper's SDVChain on
the ear decomposition's substructures, its raw verdict, and a visible repair.

Steps 1 and 2 are deah-complete's on a layer DAG (``layer_dag``, ``dag_deah``): P_ind^S is p_0 and
one substructure per ear, and B_r is Subroutine's rows along each selected route, described
(``dag_discards.RouteRows``: each row made when read). Step 3 is the paper's
(``deah.step3_sdvchain``, unchanged): path subdivision chains over the selected substructures in
selection order, SDVChain from each member to the next and from the last to p_0, then each chain
head against Q_t. On a layer DAG:

- an **edge** of G^S is a core connection (a spec joins two layers by one trainable connection
  at most, so it is also a layer pair), and the shared part of two substructures is the
  connections both routes run over;
- p_a **subdivides** p_b when p_a visits every layer of p_b and more (Definition 6: p_a replaces
  edges of p_b by paths through new layers), as Cypher's ``SUBDIVIDES`` reads it.

The raw union (every B'_r, plus one path per weight of the extra connections and the identity
forest's paths, both as deah-complete makes them) is certified exactly; where it is not a basis
the exact repair (``deah.repair``) runs on it, every change recorded (drop, readmit, add), and the
repaired basis is certified again. Every discard gets its certificate over the final basis by
exact elimination. docs/deah-interpretation.md (D.5) has the readings.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..deah.repair import BlockRows, exact_repair, taken_views
from ..deah.step3_sdvchain import InMemoryRelations, Relations, Step3Result, run_step3
from ..deah.repair_list import ReadmittedRows, repairs_that_drop
from ..deah.repaired_discards import RepairedDiscards
from ..discarded import ITER_ROWS
from ..linalg.sparse import present_ids
from ..guards import LAYER_DAG_DEAH, MEMORY, MEMORY_ENV, SECONDS, TIME_ENV, check_memory, check_time
from ..result import Repair, Result
from ..verify.rank import CoreChoice
from .blocks import GeneralBlock, block_weight_ids, general_path_keys
from .dag_deah import DagRun, plan_dag_run
from .dag_discards import LISTED_DAG_DISCARDS, RouteRows
from .dag_substructures import DagSubstructures, call_layers, substructures_of
from .described import Family, family_block
from .lazy_blocks import LazyBlocks
from .model import GeneralNetwork
from .paths import certify_blocks
from .sdvchain_discards import SdvChainDiscards
from .skeleton import skeleton_of, walks_forest

__all__ = ["outside_core", "SdvChainRun", "solve_dag_sdvchain"]


class _GeneralWeights:
    """``run_step3`` reads weight ids through ``network.weight_ids(block)``: a general network's."""

    def __init__(self, net: GeneralNetwork):
        self.net = net

    def weight_ids(self, block) -> np.ndarray:
        if isinstance(block, RouteRows):  # a whole B_r: made a chunk of rows at a time
            return block.weight_ids()
        return block_weight_ids(self.net, block)


@dataclass
class SdvChainRun:
    """Faithful DEAH's artifacts on a layer DAG core: Steps 1-2 (``plan``: the decomposition, the
    walks, every B_r's counts), Step 1 as Step 3 reads it, the B_r (described), Step 3's chains,
    Q_t, discards and survivors."""

    plan: DagRun
    substructures: DagSubstructures
    bases: dict[int, RouteRows]
    step3: Step3Result
    parts: dict = field(default_factory=dict)

    @property
    def network(self) -> GeneralNetwork:
        return self.plan.network

    @property
    def step1(self) -> DagSubstructures:
        """Step 1 as a layered run's ``DeahResult.step1`` reads (the store's one writer uses it)."""
        return self.substructures

    def kept_blocks(self) -> list[tuple[int, BlockRows]]:
        """(substructure, B'_r) in selection order: the core part of the raw union, as views of
        the B_r (``materialise()``: a block); SqueezeNet 1.1's copies held some 250 MB while the
        union was certified."""
        return [(n, BlockRows(self.bases[n], present_ids(self.step3.alive[n]))) for n in self.substructures.selected]


def _guard(net: GeneralNetwork, plan: DagRun, memory_limit: int | None, time_limit: float | None) -> None:
    """Faithful deah on a layer DAG: its own models (``guards.LAYER_DAG_DEAH``: per weight,
    candidate, candidate layer, SDVChain call layer and substructure pair; fitted on SqueezeNet
    1.1, GoogLeNet, Inception-v3 and WRN-16-4)."""
    candidates, layers = plan.candidate_features()
    what = f"deah ({candidates:,} candidate paths in the B_r of {len(plan.ears)} substructures of a layer DAG)"
    later = (0, 0, call_layers(plan), len(plan.ears) ** 2)  # as guards.features has them
    check_time(what, SECONDS[LAYER_DAG_DEAH], net.m, candidates, time_limit,
               f"use --engine deah-complete (described) or raise --max-seconds / {TIME_ENV}", candidate_layers=layers, later=later)
    if memory_limit is not None:
        check_memory(what, MEMORY[LAYER_DAG_DEAH], net.m, candidates, memory_limit,
                     f"use --engine deah-complete (described) or raise --max-memory-gb / {MEMORY_ENV}", candidate_layers=layers, later=later)


def outside_core(net: GeneralNetwork, plan: DagRun) -> list[GeneralBlock]:
    """One path per weight of every extra connection, in(u) + e + out(v) over the designated
    walks, and the identity forest's paths: the parts of the basis outside the core, as
    deah-complete has them (``dag_deah``)."""
    walks = plan.walks
    extra = [family_block(net, walks, Family(net, k, np.zeros(0, dtype=np.int64))) for k in plan.decomposition.core.extra_connections]
    shortcuts = walks_forest(net, walks)
    return [b for b in extra + shortcuts if len(b)]


def _repair(net: GeneralNetwork, run: SdvChainRun, kept: list[tuple[int, BlockRows]], outside: list[GeneralBlock],
            certified: CoreChoice | None = None):
    """The exact repair (``deah.repair``) of the raw union: its B'_r (``kept``: ``kept_blocks()``,
    the views the certifier read, so their rows are held once) and the paths outside the core,
    SDVChain's discards, then the skeleton of the same walks (``certified``: the raw
    certification's choice on the same union, reused). Returns the basis as (substructure or
    None, view: ``BlockRows``) pairs, the re-admitted (substructure, row) and the repairs."""
    out = exact_repair(
        net.basis_size, net.m,
        [(n, view.source, view.rows) for n, view in kept] + [(None, b, np.arange(len(b))) for b in outside],
        lambda: ((n, run.bases[n], rows) for n, rows in run.step3.discards.row_runs(ITER_ROWS)),
        lambda: skeleton_of(net, run.plan.walks, outside), lambda block: block_weight_ids(net, block), lambda block, row: general_path_keys(net, block.take([row]))[0],
        certified,
    )
    basis = [(n, b) for n, rows in out.kept.items() for b in taken_views(rows)] + [(None, b) for b in taken_views(out.added)]
    return basis, out.readmitted, out.repairs


def _certificates(net: GeneralNetwork, basis: list[GeneralBlock], discarded: SdvChainDiscards) -> list:
    """Each discard's coordinates over ``basis`` by exact elimination, re-added vector by vector
    (``GeneralExpresser``), in order."""
    from ..analysis.general_coordinates import GeneralExpresser

    expresser = GeneralExpresser(net, basis)
    return [expresser.express_path((tuple(zip(d.layers, d.indices)), d.taps)) for d in discarded]


def solve_dag_sdvchain(net: GeneralNetwork, seed: int = 0, repair: bool = True, memory_limit: int | None = None,
                       time_limit: float | None = None, certificates: bool = True) -> Result:
    """Faithful DEAH on ``net`` read as a layer DAG core (the module doc): the certified basis
    (repaired visibly when the raw union is not one; ``repair=False`` returns the raw union), the
    raw verdict, SDVChain's discards with their records and certificates, and the run's artifacts
    as ``result.sdvchain``. Step 3 reads its relations in memory (``RouteSubstructure``); a stored
    run checks Cypher's against them (``store/dag_runs.write_sdvchain_run``). ``seed`` is recorded: the choice rule of a layer DAG is per kind
    (neuron 0, the same neuron, the group's first), as deah-complete's."""
    t0 = time.perf_counter()
    plan = plan_dag_run(net, "deah")
    _guard(net, plan, memory_limit, time_limit)
    substructures = substructures_of(plan)
    unused: dict = {}  # each connection's unused weights, shared by the routes over it
    bases = {n: RouteRows(net, s.layers, s.connections, unused) for n, s in enumerate(substructures.paths)}
    t1 = time.perf_counter()
    rel: Relations = InMemoryRelations(substructures)
    t2 = time.perf_counter()
    step3 = run_step3(_GeneralWeights(net), substructures, bases, rel)
    run = SdvChainRun(plan, substructures, bases, step3)
    outside = outside_core(net, plan)
    kept = run.kept_blocks()
    raw = [(n, b) for n, b in kept + [(None, BlockRows(b, np.arange(len(b)))) for b in outside] if len(b)]  # (substructure, view)
    t3 = time.perf_counter()
    choice = CoreChoice()  # the certifier's choice on the union's core, reused by the repair
    raw_verdict = certify_blocks(net, [b for _, b in raw], record=choice)
    t4 = time.perf_counter()
    timings = {"step1-2": t1 - t0, "relations": t2 - t1, "step3": t3 - t2, "certify": t4 - t3}
    repairs: list[Repair] = []
    readmitted = ReadmittedRows()
    needed = 0
    basis, verdict = None, raw_verdict
    if not raw_verdict.certified:
        repaired, readmitted, repairs = _repair(net, run, kept, outside, choice)
        needed = len(repairs)
        kept = choice = None  # numbers per candidate path: freed before the basis is certified
        if repair:
            basis, raw = repaired, None
            verdict = certify_blocks(net, [b for _, b in basis])
        else:
            readmitted, repairs = ReadmittedRows(), []
        timings["repair"] = time.perf_counter() - t4
    if basis is None:  # the raw union, its rows as arrays (readers of a basis take them so)
        basis = [(n, BlockRows(b.source, np.asarray(b.rows))) for n, b in raw]
    # Step 3's table less the re-admitted rows, then the drops: a record made when read
    table = RepairedDiscards(step3.discards, readmitted, []) if readmitted else step3.discards
    discarded = SdvChainDiscards(net, bases, table, repairs_that_drop(repairs))
    t5 = time.perf_counter()
    listed = certificates and verdict.certified and 0 < len(discarded) <= LISTED_DAG_DISCARDS  # above, each made when asked for (Result.why)
    if listed:
        discarded.certificates = _certificates(net, [b.materialise() for _, b in basis], discarded)
    timings["certificates"] = time.perf_counter() - t5
    run.parts = {
        "core": "layer DAG", "core_layers": len(plan.decomposition.core.layers), "core_connections": len(plan.decomposition.core.connections),
        "substructure_paths": substructures.total, "selected": len(substructures.paths), "chains": len(step3.chains),
        "sdvchain_calls": step3.calls, "candidates": sum(len(b) for b in bases.values()),
        "raw_kept": sum(int(a.sum()) for a in step3.alive.values()),
        "discarded": {s: step3.discards.step_counts().get(s, 0) for s in ("chain", "head")},
        "outside_core": sum(map(len, outside)),
    }
    # held as views of the B_r, each block made when read (WRN-16-4's basis listed: some 400 MB)
    result = Result.of_general(net, "deah", seed, LazyBlocks([b for _, b in basis]), verdict, timings, run.parts)
    result.basis_substructures = [n for n, _ in basis]
    result.raw_verdict, result.discarded, result.repairs, result.repairs_needed = raw_verdict, discarded, repairs, needed
    result.certificate_method = "global elimination" if listed else "global elimination, when asked" if discarded and verdict.certified else None
    result.certificates_rechecked = len(discarded) if listed else 0
    result.sdvchain = run
    return result

