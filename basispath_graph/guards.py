"""Resource guards: estimate what an engine will need and refuse before allocating it.

Being refused with the estimate beats being killed by the operating system halfway. Peak memory
and time are modelled per engine as ``fixed + per_weight * m + per_candidate * candidates``
(``CostModel``; candidates are the paths in the B_r of the selected substructures, known after
Step 1, before any B_r exists, and candidate layers those paths times their layers; on a general
network Step 1 runs on its core), and for the skeleton ``fixed + per_weight * m + per_connection *
connections + per_neuron_depth * H x depth``, fitted by bench/fit_estimates.py to the calibration
runs of ``make calibrate`` (bench/calibration.json: every engine on densenet and resnet 8xW, W
32-512; the skeleton also over depth, on the torchvision networks of bench/specs/).
tests/test_guards.py holds every estimate there within 2x of the measurement. A limit refuses
only when even the lowest estimate (``CostModel.lowest`` times the estimate: no calibration run
needed less) is over it, so a network measured to fit is never refused. Time limits apply only
when set (``--max-seconds`` or ``BASISPATH_MAX_SECONDS``): by default long work is allowed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import LimitExceeded
from .network import Network

__all__ = [
    "ResourceLimit", "MachineLimit", "memory_limit_bytes", "model_engine", "describes", "DESCRIBED_ABOVE", "time_limit_seconds", "candidate_paths", "candidate_layers", "candidate_features", "check_memory", "check_time", "check_repair", "REPAIRED", "check_basis_file", "check_streamed_basis_file",
    "MEMORY_ENV", "TIME_ENV", "CostModel", "MEMORY", "SECONDS", "features", "skeleton_features", "check_skeleton",
    "out_of_memory_message",
]

MEMORY_ENV = "BASISPATH_MAX_MEMORY_GB"
TIME_ENV = "BASISPATH_MAX_SECONDS"


@dataclass(frozen=True)
class CostModel:
    """``fixed + per_weight * m + per_candidate * candidates + per_connection * connections +
    per_neuron_depth * neuron_depth + per_candidate_layer * candidate_layers + per_later_candidate
    * later_candidates + per_later_candidate_layer * later_candidate_layers`` (bytes or seconds);
    ``lowest``: the smallest measured / estimated on the calibration runs, so ``lowest * estimate``
    is a bound no calibration run went under. Connections and H x depth are the skeleton's
    features (``skeleton_features``): one weight family per connection, and designated walks and
    explicit paths of O(H x depth) numbers. The later candidates are those of the substructures
    after p_0 (``candidate_features``): faithful deah's SDVChain discards and certifies among them,
    so a network with p_0 alone (VGG) costs little for its candidates. Call layers are faithful
    deah's on a layer DAG (``dag_substructures.call_layers``): over Step 3's SDVChain calls, the rows
    times the layers of the two B_r each call keys, a hop at a time; Inception-v3's 138
    substructures make some 1,600 calls, and its Step 3 grew with them, not with candidate
    layers (the model over candidate layers was 1.8x short at x1/4, over 2x on whole
    Inception-v3), while SqueezeNet's 9 make a few. Substructure pairs (selected substructures squared)
    are faithful deah's on a layer DAG too: once the repair's passes were compiled and Step 3 read
    a hop at a time, Inception-v3's time went to its ~1,600 SDVChain calls (chain links and
    chain heads against Q_t, about 1 ms each over small B_r), which grow with the pairs."""

    fixed: float
    per_weight: float
    per_candidate: float = 0.0
    lowest: float = 1.0
    per_connection: float = 0.0
    per_neuron_depth: float = 0.0
    per_candidate_layer: float = 0.0
    per_later_candidate: float = 0.0
    per_later_candidate_layer: float = 0.0
    per_call_layer: float = 0.0
    per_substructure_pair: float = 0.0

    def __call__(self, m: int, candidates: int = 0, connections: int = 0, neuron_depth: int = 0,
                 candidate_layers: int = 0, later_candidates: int = 0, later_candidate_layers: int = 0,
                 call_layers: int = 0, substructure_pairs: int = 0) -> float:
        return (self.fixed + self.per_weight * m + self.per_candidate * candidates
                + self.per_connection * connections + self.per_neuron_depth * neuron_depth
                + self.per_candidate_layer * candidate_layers + self.per_later_candidate * later_candidates
                + self.per_later_candidate_layer * later_candidate_layers
                + self.per_call_layer * call_layers
                + self.per_substructure_pair * substructure_pairs)


# The skeleton, described (general/described.py; layered networks too): fitted by
# bench/fit_estimates.py to the skeleton runs of bench/calibration.json (2026-11-25, 2 cores, the
# median of 3 solves each): densenet and resnet 8xW (W 32-512), resnet-32x128, deep-32x16, the
# CIFAR ResNet-20 and VGG-11 presets and the torchvision networks of bench/specs/ (ResNet-18 to
# 152, wide ResNet-50, DenseNet-121, Inception-v3, VGG-16/19): a sweep over depth and width.
# m alone is off by up to 2.1x on memory and 10x on time (DenseNet-121: 8 M weights, 1,910
# connections, 44,576 hidden neurons on paths of up to 184 layers); with the connections and
# H x depth every run is within 2x. Arguments: fixed, per weight, 0, lowest, per connection, per
# H x depth.
SKELETON_MEMORY = CostModel(4.267e7, 17.76, 0, 0.92, 0, 76.69)
SKELETON_SECONDS = CostModel(5.687e-3, 7.469e-9, 0, 0.55, 1.695e-4, 2.828e-7)
# The DEAH engines, on layered networks and on the core of a general one: fitted by
# bench/fit_estimates.py to bench/calibration.json (2 cores): densenet and resnet 8xW (W 32-512,
# 2026-11-23) and, for deah-complete, over depth too (2026-11-26, issue 26): resnet-32x128 and the
# general resnet20, resnet18, resnet34 and VGG-11 (133 M weights, 16.6 GB). A B_r is held as
# |B_r| rows of its layers' neurons, so the candidates times their layers is a feature: with
# candidates alone ResNet-50 was estimated at 20.8 GB and killed past 24 GB. The general m pays
# for the tap lift (made on demand) and the checks of the union. Measured / estimated on the
# calibration: deah-complete memory 0.68-1.47, time 0.62-1.61. Arguments: fixed, per weight, per
# candidate, lowest, 0, 0, per candidate layer.
# Faithful deah (layered cores) over depth as well as width, two models. Since 2026-11-28 its
# discards stay Step 3's arrays (a repaired run's too), its B_r described, its certificates made
# when read, and the repair eliminates only the union's core (after peeling): ResNet-18 0.65 GB
# (was 17.7), a repaired ResNet-50 x1/8 0.40 GB (was 6.9). ``DEAH_MEMORY`` / ``DEAH_SECONDS``
# are checked before the run, and ``check_repair`` checks the repaired models once the union is
# known not to certify, before the repair starts. Fitted by bench/fit_estimates.py to the records
# of bench/calibration.json (densenet and resnet 8xW: all repaired) and
# bench/calibration-faithful.json (torchvision networks at channel level: ResNet-18 at widths
# x1/16 to x1, ResNet-34 to x1, VGG-16/19; ResNet-50 repaired), re-measured 2026-11-28 at
# 678e8cc, every one again at 27a63a6 (the repair's core held compactly: ResNet-50 x1/4 1.34 GiB
# -> 510 MB; Step 3's keys ranked by tables and sorts in kept orders: ResNet-18 25 -> 11 s),
# ResNet-50 x1/4 added, the ResNet-50 ones again at 14b2ed3 (the repair's greedy choice one
# prime at a time, the discards int32) with whole ResNet-50 added (704 s, 3.45 GB, repaired:
# without it the repaired model gave it 10.4 GB), every one again at 7aa2324 (Step 3's keys
# int32, free heap handed back per stage, drops spelled when read: whole ResNet-50 682 s,
# 1.91 GB, which the model before estimated at 5.75 GB; the repaired memory is now per later
# candidate layer), the repaired ones again at b6d8d70 (the repair reuses the raw certification's
# elimination: whole ResNet-50 522 s, dense-8x128 9.7 s; the repaired time now per candidate),
# ResNet-50 x1/8 and x1/4 again on 2026-11-29 (their cores' greedy elimination in C: x1/4 23.7 ->
# 17.7 s; the repaired time now per later candidate), and every torchvision one again at bf56ba6
# (2026-11-29: the certifier's core and the repair's passes fed to the compiled elimination a run
# at a time, the re-admissions compiled: whole ResNet-50 428 s, 1.87 GB), and again at b88ad11
# (2026-11-29: one int32 index per candidate path; whole ResNet-50 447 s, 1.82 GB), and every
# one again at e9f3907 (2026-11-29: SDVChain keys only B'_to's live rows; whole ResNet-50 419 s,
# 1.82 GB; dense-8x128 2.3 s, its record last taken at 7aa2324, 9.7 s: the repaired time is now
# per candidate and candidate layer), and every one again at aeea2dc (2026-11-29: the repair on
# the certifier's peel, its choice and keeps as bits; ResNet-50 again at 69a7a76, where the
# certifier no longer holds the peel's order through its elimination: 440 s, 1.83 GiB;
# dense-8x128 1.7 s), and every one again at 12baae4 (2026-11-29: Step 3's discard table as bits
# and codes, ``linalg.sparse.BitIds``; whole ResNet-50 461 s, 1.54 GiB, with whole Inception-v3
# running beside it). Measured / estimated: no repair, memory 0.55-1.80, time 0.64-1.56;
# repaired, memory 0.54-1.83, time 0.75-1.33.
# Arguments: fixed, per weight, per candidate, lowest, 0, 0, per candidate layer, per later
# candidate, per later candidate layer.
# DEAH_MEMORY's and DEAH_SECONDS' lowest are the repaired runs' smallest ratios (resnet-8x32's
# memory 0.51, the fit's 0.55; ResNet-50 x1/8's time 0.55, the fit's 0.64), since they let them
# start: a run measured within a limit is never refused under it.
DEAH_MEMORY = CostModel(8.689e07, 42.97, 0, 0.51, 0, 0, 0, 0, 0)
DEAH_SECONDS = CostModel(0.06844, 0, 0, 0.55, 0, 0, 1.557e-07, 0, 0)
REPAIRED = "deah repaired"
REPAIRED_MEMORY = CostModel(8.25e07, 0, 0, 0.54, 0, 0, 0, 0, 1.179)
REPAIRED_SECONDS = CostModel(0.05032, 0, 9.823e-07, 0.75, 0, 0, 9.354e-08, 0, 0)
# deah-complete described (deah/engine.py, DESCRIBED_ABOVE: every block p_0 or an ear, the B_r
# held as SubroutineRows, certified from the description): no candidate layers are held; per
# candidate Step 3's kept masks; B_0 is proved independent, not listed (ear_certificate: before,
# its H x depth rows cost ResNet-152 0.9 GB), so H x depth is left in the walks only. Fitted
# (relative least squares, bench/fit_estimates.py on bench/calibration.json, 2026-11-26, 2 cores)
# to the described runs: dense-8x256/512 and the general ResNet-18/34/50/152, VGG-11/19. Measured /
# estimated: memory 0.80-1.25, time 0.70-1.42. Arguments: fixed, per weight, per candidate, lowest,
# 0, per H x depth.
DESCRIBED_MEMORY = CostModel(5.991e7, 0.2794, 1.25, 0.80, 0, 0.2222)
DESCRIBED_SECONDS = CostModel(0.02501, 0, 4.486e-9, 0.70)
#: Faithful deah on a layer DAG core (general/dag_sdvchain.py: the B_r of its ears described, the
#: raw union certified and repaired by exact elimination), its own models (first over candidate
#: layers, sum |B_r| x the layers of each, ``DagRun.candidate_features``). The layered models
#: overestimated it 2.1x (memory) and 3.4x (time) on SqueezeNet 1.1. Fitted by
#: bench/fit_estimates.py to bench/calibration-layer-dag.json (2026-11-27, 2 cores): SqueezeNet 1.1
#: at widths x0.25 to x1, 0.24 to 3.8 M candidates, and (refitted the same day) to
#: bench/calibration-faithful.json's Inception-v3 at widths x1/32 and x1/16 (0.5 and 2.1 M
#: candidates of 35 layers each on average: the SqueezeNet-only model gave it half its time).
#: Whole DenseNet-121 stays refused (whole GoogLeNet runs since 2026-11-29). Every record re-measured
#: 2026-11-28 at 0daa575 (the repair's core held compactly: SqueezeNet 1.1 7.47 -> 5.81 GB), the
#: Inception-v3 ones again at 27a63a6, every one again at e272572 (the discards kept as Step 3's
#: table, records made when read: Inception-v3 x1/16 8.56 -> 1.46 GB, SqueezeNet 1.1 5.81 -> 2.72
#: GB) and at b6d8d70 (B_r int32, the raw certification's elimination reused by the repair:
#: Inception-v3 x1/16 0.86 GB, SqueezeNet 1.1 65 s, 1.70 GB) and on 2026-11-29 (the cores'
#: greedy elimination in C, the raw union certified as views, each B_r described: SqueezeNet 1.1
#: 14.2 s, 553 MB; Inception-v3 x1/16 116 s, 301 MB), with whole WRN-16-4 added (39 s, 1.40 GB;
#: refused before). Then SqueezeNet's time per candidate layer fell 5x and Inception-v3's, spent
#: where each of its 138 substructures meets the union, did not: no time model on candidate
#: layers was within 2.8x of both, so time was also put on substructure candidates (selected
#: substructures x candidates, ``features``); memory, the B_r described, per weight and per
#: candidate. Every record again at bf56ba6 (2026-11-29: the core streamed, the basis held as
#: views, Step 3 a hop at a time, the re-admissions compiled: SqueezeNet 1.1 10.8 s, 272 MB;
#: WRN-16-4 29 s, 554 MB; Inception-v3 x1/16 50 s, 179 MB) with GoogLeNet x0.25 added (35 s, 601
#: MB): Inception-v3's time is now its ~1,600 SDVChain calls, so time is also put on selected
#: substructures squared (``features``: no model without it was within 2.25x). Every record
#: again at b88ad11 (2026-11-29: one int32 index per candidate path, where the repair held two
#: int64 copies of its drops and the raw union's rows twice: GoogLeNet x0.25 601 -> 284 MB,
#: SqueezeNet 1.1 222 MB, WRN-16-4 474 MB); memory is now best fitted per candidate layer (per
#: candidate instead: 0.81-1.23). Whole GoogLeNet then: 636 s, 3.69 GiB, estimated 487 s and
#: 3.81 GB (1.31x, 1.04x). Every record again at 310998b (2026-11-29: Step 3's hop reader makes
#: each node column once, int32: Inception-v3 x1/16 44 -> 34 s) with Inception-v3 x1/8 and x1/4
#: added (112 s, 483 MB; 444 s, 1.56 GB): the time model over candidate layers was 1.5x and 1.8x
#: short there, as it was over 2x on whole Inception-v3, since Step 3 grows with its SDVChain
#: calls' rows x layers (``dag_substructures.call_layers``), now the time's feature. Measured /
#: estimated then: memory 0.86-1.16, time 0.93-1.08. Every record again at e9f3907 (SDVChain keys
#: only B'_to's live rows: Inception-v3 x1/4 444 -> 307 s, GoogLeNet x0.25 26 -> 21 s). Measured /
#: estimated: memory 0.86-1.17, time 0.93-1.07. Every record again at aeea2dc (2026-11-29: the
#: raw union's views, its core and the repair's drops held as the ids they lack,
#: ``linalg.sparse.AllBut``; GoogLeNet x0.25 285 -> 133 MB, whole GoogLeNet 3.69 GiB -> 1.13
#: GiB): nothing held is per candidate path any more but Step 3's masks, and memory is best
#: fitted per weight, per SDVChain call layer and per substructure pair (what Step 3 holds while
#: it keys). Measured / estimated: memory 0.89-1.12, time 0.92-1.09. The Inception-v3, GoogLeNet
#: x0.25, SqueezeNet 1.1 and WRN-16-4 records again at 1b3aa17 (2026-11-29: the repair's
#: re-admissions held as runs of rows spelled when read, ``deah.repair_list.SpelledRun``:
#: Inception-v3 x1/4 1.57 GiB -> 732 MiB, x1/8 464 -> 245 MiB), with Inception-v3 x1/2 added
#: (1,238 s, 2.36 GiB): memory is now best fitted per weight, candidate layer, SDVChain call
#: layer and substructure pair. Measured / estimated: memory 0.85-1.18, time 0.90-1.11. Every
#: record again at 12baae4 (2026-11-29: Step 3's discard table as bits and codes,
#: ``linalg.sparse.BitIds``: Inception-v3 x1/4 732 -> 528 MiB, x1/8 245 -> 193 MiB; whole
#: Inception-v3 running beside them), x1/2 dropped (its 20 minutes not re-run). Measured /
#: estimated: memory 0.88-1.13, time 0.81-1.23 (DenseNet-121, 33.5 GB estimated, was far beyond
#: these records: its substructure pairs weigh). DenseNet-121 x1/16 and x1/8 added at 48dafb5
#: (2026-11-30; 140 s, 392 MB; 367 s, 713 MB: its 536 ears' raw union is 141-147x a basis, so
#: memory is now fitted per candidate too). Measured / estimated: memory 0.86-1.16, time
#: 0.81-1.24; whole DenseNet-121 37 GB and 14,800 s, whole Inception-v3 7.1 GB and 5,030 s.
#: Every record again at e48aab3 (2026-11-30: the repair's echelon one int32 pool, a row of
#: ones stored without its values, ``linalg.greedy_mod_p``; Step 3's B'_r masks as bits,
#: ``linalg.sparse.PackedMask``: Inception-v3 x1/4 528 -> 347 MiB, x1/8 193 -> 163 MiB): memory
#: no longer per candidate. Inception-v3 x1/2 added at b0e40bb (1,402 s, 1.08 GiB; a CI run
#: beside it). Measured / estimated: memory 0.84-1.19, time 0.88-1.14; whole Inception-v3
#: 4.91 GB and 5,130 s, whole DenseNet-121 22.6 GB and 15,870 s (refused).
#: Arguments: fixed, per weight, per candidate, lowest, 0, 0, per candidate layer, 0, 0, per
#: SDVChain call layer, per substructure pair.
LAYER_DAG_DEAH = "deah layer dag"
LAYER_DAG_DEAH_MEMORY = CostModel(5.312e7, 118.5, 0, 0.84, 0, 0, 0.1081, 0, 0, 0, 898.8)
LAYER_DAG_DEAH_SECONDS = CostModel(0.1204, 1.141e-6, 0, 0.87, 0, 0, 6.059e-8, 0, 0, 8.442e-9, 3.179e-4)
MEMORY = {
    "skeleton": SKELETON_MEMORY,
    "deah-complete described": DESCRIBED_MEMORY,
    "deah-complete": CostModel(1.246e8, 70.69, 175.6, 0.68, 0, 0, 20.1),
    "deah": DEAH_MEMORY,
    REPAIRED: REPAIRED_MEMORY,
    LAYER_DAG_DEAH: LAYER_DAG_DEAH_MEMORY,
}
SECONDS = {
    "skeleton": SKELETON_SECONDS,
    "deah-complete described": DESCRIBED_SECONDS,
    "deah-complete": CostModel(0.226, 0, 1.224e-6, 0.62, 0, 0, 1.486e-7),
    "deah": DEAH_SECONDS,
    REPAIRED: REPAIRED_SECONDS,
    LAYER_DAG_DEAH: LAYER_DAG_DEAH_SECONDS,
}


def skeleton_features(network) -> tuple[int, int]:
    """(connections, H x depth) of a layered or general network: its trainable-or-not connections
    (a layered network: one per pair of layers joined, skips included) and its hidden neurons
    times the layers on its longest input-to-output path."""
    if getattr(network, "connections", None) is not None:  # a general network
        n, edges = len(network.layers), [(c.source, c.target) for c in network.connections]
    else:
        n = network.L + 1
        edges = [(a, b) for a in range(n) for b in network.successors[a]]
    succ: dict[int, list[int]] = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
    longest = [1] * n
    for a in reversed(_topological(n, succ)):
        if a not in succ:
            continue
        longest[a] = max(1 + longest[b] for b in succ[a])
    return len(edges), network.H * max(longest, default=1)


def _topological(n: int, succ: dict[int, list[int]]) -> list[int]:
    """The layers in an order where every connection goes forward."""
    indegree = [0] * n
    for targets in succ.values():
        for b in targets:
            indegree[b] += 1
    order, ready = [], [a for a in range(n) if indegree[a] == 0]
    while ready:
        a = ready.pop()
        order.append(a)
        for b in succ.get(a, ()):
            indegree[b] -= 1
            if indegree[b] == 0:
                ready.append(b)
    return order


#: deah-complete holds its B_r as their description (``deah.subroutine_rows.SubroutineRows``)
#: when every selected substructure is p_0 or an ear and listing them would take more than this
#: many numbers (candidate paths times their layers): ResNet-18's core has 105 M, dense-8x128 9.9 M.
DESCRIBED_ABOVE = 20_000_000


def describes(network, step1) -> bool:
    """Whether deah-complete runs described on the layered ``network`` (see ``DESCRIBED_ABOVE``)."""
    from .deah.step3_complete import plan_blocks

    selected = [step1.paths[i].layers for i in step1.selected]
    if candidate_layers(network, selected) <= DESCRIBED_ABOVE:
        return False
    plans = plan_blocks({idx: step1.paths[idx].layers for idx in step1.selected}, list(step1.selected))
    return all(plan.rule in ("p0", "ear") for plan in plans)


def features(network, engine: str) -> tuple[int, int, int, int, int, int, int, int, int]:
    """(m, candidates, connections, H x depth, candidate layers, later candidates, later candidate
    layers, call layers, substructure pairs) of a layered or general network for
    ``engine``'s estimates:
    the skeleton uses m, connections and H x depth; the DEAH engines m, candidates (the paths of
    the B_r of the selected substructures) and candidate layers (those paths times the layers
    each visits: a B_r is held as |B_r| rows of its layers' neurons, so its memory grows with
    depth as well as width), faithful deah on a layered core also those of the substructures
    after p_0 (``candidate_features``), on a layer DAG its SDVChain call layers
    (``dag_substructures.call_layers``) and selected substructures squared.
    Step 1 runs for them; on a general network on its core (``paper_setting``: a network the
    engine does not read raises UnsupportedFeature)."""
    if engine == "skeleton":
        return (network.m, 0, *skeleton_features(network), 0, 0, 0, 0, 0)
    if model_engine(network, engine) == LAYER_DAG_DEAH:
        from .general.dag_deah import plan_dag_run

        from .general.dag_substructures import call_layers

        plan = plan_dag_run(network)
        candidates, layers = plan.candidate_features()
        return network.m, candidates, 0, 0, layers, 0, 0, call_layers(plan), len(plan.ears) ** 2
    from .deah.step1_substructures import run_step1

    core = network
    if getattr(network, "connections", None) is not None:  # a general network: DEAH runs on its core
        from .general.paper_setting import paper_setting

        core = paper_setting(network, engine).core
    step1 = run_step1(core)
    candidates, layers, later, later_layers = candidate_features(core, step1)
    if engine == "deah-complete":
        if describes(core, step1):  # the B_r described: no candidate layers held; B_0's certificate lists H x depth
            return network.m, candidates, 0, skeleton_features(network)[1], 0, 0, 0, 0, 0
        return network.m, candidates, 0, 0, layers, 0, 0, 0, 0
    return network.m, candidates, 0, 0, layers, later, later_layers, 0, 0


def candidate_features(network: Network, step1) -> tuple[int, int, int, int]:
    """(candidates, candidate layers) of Step 1's selected substructures on the layered
    ``network``, then (later candidates, later candidate layers): the same of those after p_0
    (``CostModel``)."""
    selected = [step1.paths[i].layers for i in step1.selected]
    later = [step1.paths[i].layers for i in step1.selected if i != step1.p0]
    return (candidate_paths(network, selected), candidate_layers(network, selected),
            candidate_paths(network, later), candidate_layers(network, later))


def model_engine(network, engine: str) -> str:
    """The key of ``engine``'s cost models on ``network``: "deah-complete described" where
    deah-complete holds its B_r described (``deah.engine.describes``), ``LAYER_DAG_DEAH`` for deah
    on a general network whose core is a layer DAG, else ``engine``."""
    if engine == "deah" and getattr(network, "connections", None) is not None:
        from .general.paper_setting import reads_as_layer_dag

        return LAYER_DAG_DEAH if reads_as_layer_dag(network) else engine
    if engine != "deah-complete":
        return engine
    from .deah.step1_substructures import run_step1

    core = network
    if getattr(network, "connections", None) is not None:
        from .general.paper_setting import paper_setting

        core = paper_setting(network, engine).core
    return "deah-complete described" if describes(core, run_step1(core)) else engine


#: deah-complete on a layer DAG core (general/dag_deah.py) holds a skeleton's paths along the
#: walks of its ears, which run along longer routes than the skeleton's: its cost is the
#: skeleton's model times these factors (bench/results-issue28.md and the census, 2 cores: time
#: 1.2-1.3x the skeleton's in the bench, 1.9-2.1x in whole processes on DenseNet-121/201; peak
#: memory 1.0-1.06x, DenseNet-121/201 1.69x).
LAYER_DAG_FACTORS = {"time": 2.0, "memory": 1.7}


def _scaled(model: CostModel, factor: float) -> CostModel:
    """``model`` times ``factor``, its lowest bound the unscaled one (a layer-DAG run never took less
    than the skeleton's own run)."""
    return CostModel(model.fixed * factor, model.per_weight * factor, model.per_candidate * factor, model.lowest / factor,
                     model.per_connection * factor, model.per_neuron_depth * factor, model.per_candidate_layer * factor,
                     model.per_later_candidate * factor, model.per_later_candidate_layer * factor)


def check_skeleton(network, memory_limit: int | None, time_limit: float | None, engine: str = "skeleton") -> None:
    """The skeleton engine's guards on a layered or general network (``ResourceLimit``);
    ``engine`` "deah-complete": a layer-DAG run, named in a refusal, its estimates the
    skeleton's times ``LAYER_DAG_FACTORS``."""
    m, _, connections, neuron_depth, *_ = features(network, "skeleton")
    time_model, memory_model = SECONDS["skeleton"], MEMORY["skeleton"]
    if engine != "skeleton":
        time_model, memory_model = _scaled(time_model, LAYER_DAG_FACTORS["time"]), _scaled(memory_model, LAYER_DAG_FACTORS["memory"])
    check_time(engine, time_model, m, 0, time_limit, f"raise --max-seconds / {TIME_ENV}",
               connections=connections, neuron_depth=neuron_depth)
    if memory_limit is not None:
        name = f" on {network.name}" if getattr(network, "name", "") else ""
        check_memory(engine, memory_model, m, 0, memory_limit, f"raise --max-memory-gb / {MEMORY_ENV}",
                     connections=connections, neuron_depth=neuron_depth, subject=f"{engine}{name}")


class ResourceLimit(LimitExceeded):
    """The estimated memory or time is over the limit, or a limit is not valid (one-line message
    with the estimate)."""


class MachineLimit(int):
    """The default memory limit (80% of this machine's memory): nobody vouched for more, so
    ``check_memory`` holds it to the estimate itself, not to its lowest bound; a run the models
    say will not fit is refused rather than killed by the kernel (deah-complete on VGG-19:
    estimated 24.8 GB, at least 16.9 GB; killed at 24.4 GB on a 24 GB machine)."""


def memory_limit_bytes(limit_gb: float | None = None) -> int:
    """--max-memory-gb, else $BASISPATH_MAX_MEMORY_GB, else 80% of this machine's memory
    (a ``MachineLimit``)."""
    if limit_gb is None and os.environ.get(MEMORY_ENV):
        try:
            limit_gb = float(os.environ[MEMORY_ENV])
        except ValueError:
            raise ResourceLimit(f"{MEMORY_ENV} must be a number of GB, got {os.environ[MEMORY_ENV]!r}") from None
    if limit_gb is not None:
        if not limit_gb > 0:
            raise ResourceLimit(f"the memory limit must be > 0 GB, got {limit_gb}")
        return int(limit_gb * 1e9)
    try:
        return MachineLimit(0.8 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return MachineLimit(16 * 10**9)


def time_limit_seconds(limit_s: float | None = None) -> float | None:
    """--max-seconds, else $BASISPATH_MAX_SECONDS, else None (no time limit)."""
    if limit_s is None and os.environ.get(TIME_ENV):
        try:
            limit_s = float(os.environ[TIME_ENV])
        except ValueError:
            raise ResourceLimit(f"{TIME_ENV} must be a number of seconds, got {os.environ[TIME_ENV]!r}") from None
    if limit_s is not None and not 0 < limit_s < float("inf"):
        raise ResourceLimit(f"the time limit must be a finite number of seconds > 0, got {limit_s}")
    return limit_s


def _size(n: float) -> str:
    """Bytes in the unit that shows them: 1.6 GB, 352 MB, 100 kB."""
    if n >= 1e9:
        return f"{n / 1e9:.1f} GB"
    if n >= 1e6:
        return f"{n / 1e6:.0f} MB"
    return f"{n / 1e3:.0f} kB"


def _seconds(x: float) -> str:
    return f"{x:,.0f}" if x >= 10 else f"{x:.2g}"


def check_time(what: str, model: CostModel, m: int, candidates: int, limit: float | None, hint: str,
               connections: int = 0, neuron_depth: int = 0, candidate_layers: int = 0, later: tuple[int, ...] = (0, 0)) -> None:
    """Refuse when even the lowest estimate of ``model`` is over ``limit`` seconds (None: no limit).
    ``later``: the later candidates and their layers (``candidate_features``), then the substructure
    candidates where they count (``features``)."""
    seconds = model(m, candidates, connections, neuron_depth, candidate_layers, *later)
    lowest = model.lowest * seconds
    if limit is not None and lowest > limit:
        raise ResourceLimit(
            f"{what} would take about {_seconds(seconds)} s (at least {_seconds(lowest)} s), over the limit of {limit:g} s; {hint}"
        )


def check_repair(network: Network, step1, memory_limit: int | None, time_limit: float | None) -> None:
    """Faithful deah whose union did not certify: refuse the repair (the exact elimination over
    the union, ``REPAIRED_MEMORY``) before it starts when its estimate is over a limit. Only now is
    it known to be needed; the run so far was held to ``DEAH_MEMORY``, which a union that
    certifies stays within."""
    candidates, layers, *later = candidate_features(network, step1)
    what = f"deah's repair ({candidates:,} candidate paths in the B_r of {len(step1.selected)} substructures; the union is not a basis)"
    other = "use --engine deah-complete (certified with no repair) or --engine skeleton"
    check_time(what, REPAIRED_SECONDS, network.m, candidates, time_limit, f"{other}, or raise --max-seconds / {TIME_ENV}",
               candidate_layers=layers, later=tuple(later))
    if memory_limit is not None:
        check_memory(what, REPAIRED_MEMORY, network.m, candidates, memory_limit, f"{other}, or raise --max-memory-gb / {MEMORY_ENV}",
                     candidate_layers=layers, later=tuple(later))


def candidate_paths(network: Network, substructures) -> int:
    """Sum of |B_r| = m_r - H_r over the given substructure layer sequences."""
    w = network.widths
    total = 0
    for layers in substructures:
        total += sum(w[a] * w[b] for a, b in zip(layers, layers[1:])) - sum(w[l] for l in layers[1:-1])
    return total


def candidate_layers(network: Network, substructures) -> int:
    """Sum of |B_r| x (layers r visits) over the given substructure layer sequences."""
    return sum(candidate_paths(network, [layers]) * len(layers) for layers in substructures)


#: The last memory estimate this process made (``check_memory``): (what, bytes, limit), so that a
#: MemoryError later can be reported with it (``out_of_memory_message``, the CLI's main).
_last_estimate: tuple[str, float, int] | None = None


def out_of_memory_message() -> str:
    """One line for a MemoryError: what ran out, the last estimate, and the flag."""
    if _last_estimate is None:
        head = "out of memory: this run needed more than this machine gave (no estimate was made)"
    else:
        what, needed, limit = _last_estimate
        head = (f"out of memory: {what} needed more than this machine gave (estimated {_size(needed)},"
                f" under the limit of {_size(limit)})")
    return (f"{head}; free memory or run it where more is available, and set --max-memory-gb / {MEMORY_ENV}"
            " to what this process may really use so that such a run is refused before it starts")


#: Reading a basis file (``basispath verify``): json.load holds it as Python lists and dicts and
#: the check makes a tuple a path of them, about 20 bytes for each byte of the file (measured: a
#: 259 MB paths export of faithful deah on ResNet-18 x1/4 peaked at 5.06 GB; the 4.2 GB one of
#: ResNet-18 was killed by the kernel at 24.4 GB). ``m`` is the file's size in bytes.
BASIS_FILE_MEMORY = CostModel(1e8, 20.0, lowest=0.5)


#: Reading a general network's paths file one path at a time and certifying it
#: (``general.streamed_verify``): rows of 2-byte integers, a file index per path, a count and a sum
#: of holders per weight, about half a byte a byte of file. ``m`` is the file's size in bytes
#: (measured, bench verify-paths: ResNet-18 x1/4's 217 MB skeleton export peaked at 272 MB;
#: faithful deah's 4.24 GB export of ResNet-18 at 2.0 GB, where json.load was killed at 24.4 GB).
STREAMED_BASIS_FILE_MEMORY = CostModel(2e8, 0.6, lowest=0.5)


def check_streamed_basis_file(path, limit: int) -> None:
    """``check_basis_file`` for a paths file read one path at a time (``STREAMED_BASIS_FILE_MEMORY``)."""
    _check_file(path, limit, STREAMED_BASIS_FILE_MEMORY)


def check_basis_file(path, limit: int) -> None:
    """Refuse to read the basis file ``path`` when its estimate (``BASIS_FILE_MEMORY``) is over
    ``limit``: one line naming the file's size and the way on."""
    _check_file(path, limit, BASIS_FILE_MEMORY)


def _check_file(path, limit: int, model: CostModel) -> None:
    try:
        size = os.path.getsize(path)
    except OSError:
        return  # reading it says what is wrong with it
    check_memory(f"reading {path} ({_size(size)} of JSON)", model, size, 0, limit,
                 f"export a described basis (solve --export of deah-complete or the skeleton: a few numbers per neuron)"
                 f" or raise --max-memory-gb / {MEMORY_ENV}")


def check_memory(what: str, model: CostModel, m: int, candidates: int, limit: int, hint: str,
                 connections: int = 0, neuron_depth: int = 0, subject: str | None = None, candidate_layers: int = 0,
                 later: tuple[int, ...] = (0, 0)) -> None:
    """Refuse when even the lowest estimate of ``model`` is over ``limit`` bytes, or the estimate
    itself over a ``MachineLimit`` (``subject``: what a later out-of-memory message calls the run,
    default ``what``; ``later`` as ``check_time``'s)."""
    global _last_estimate
    needed = model(m, candidates, connections, neuron_depth, candidate_layers, *later)
    _last_estimate = (subject or what, needed, limit)
    lowest = model.lowest * needed
    if lowest > limit:
        raise ResourceLimit(
            f"{what} would need about {_size(needed)} (at least {_size(lowest)}), over the limit of {_size(limit)}; {hint}"
        )
    if isinstance(limit, MachineLimit) and needed > limit:
        raise ResourceLimit(
            f"{what} would need about {_size(needed)}, over this machine's limit of {_size(limit)} (80% of its memory); {hint}"
        )
