"""deah-complete on a network whose core is a layer DAG (branches, concatenations, BatchNorm over a
concatenation, grouped and depthwise convs): DEAH's Steps 1-3 with an ear decomposition.

docs/deah-complete.md ("Layer DAGs") has the argument; in short:

1. **Step 1** (``layer_dag``): G^S is the core's layer DAG; P_ind^S is p_0 (a longest
   source-sink path) and one substructure per ear: the route in to the ear's first layer a, its
   segment S of new connections (new layers between them) to a covered layer b, the route out.
2. **Step 2**: Subroutine on a selected substructure r, a chain of layers along its route, with
   the choice rule of each connection (``skeleton.designated_neighbour``: neuron 0 on a dense
   one, the same neuron on a diagonal one, the first of the group on a grouped one; tap 0).
   Every weight e = (u, v, t) of r gives the row R_r(e) = in_r(u) + e + out_r(v) (walks along
   r's connections) and B_r is these rows, distinct: one per weight r's walks do not use, and
   T_r(z) = in_r(z) + out_r(z), one per chain of weights that are a direct edge and a
   predecessor edge at once. |B_r| = m_r - H_r.
3. **Step 3, ear rule**: p_0 keeps all of B_0; ear r keeps the rows of its segment's weights.
   Along the route in and out r's walks are those of the layers' designations (the routes the
   layers were covered by), so the kept rows are in(u) + e + out(v) with the designated walks:
   the skeleton of these designations (``skeleton.skeleton_of``). Every other row of B_r is
   discarded: *prefix* (its weight, or its chain, lies on the route in) or *suffix*.
   On S's weights the kept rows of r are Subroutine's basis of the chain a .. b (m_S - H_S
   paths) and no path kept before uses them, so they are independent of everything before;
   (m_0 - H_0) + sum (m_S - H_S) = m - H_N, plus the identity forest's H_N - H: no repair.
4. **Certificates** (``dag_discards``): a discarded path q is sum over its weights e of S(e) minus sum over its
   hidden neurons z of T(z), S(e) = in(u) + e + out(v) and T(z) = in(z) + out(z) kept paths (the
   walks telescope); made when asked for (``certificate``), never listed.

The kept basis is held described and certified exactly (``certify_described``); the discards
are counted per ear in O(route length) and made on demand (``dag_discards``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..verify import Verdict
from .described import DescribedBasis, certify_described
from .layer_dag import EarDecomposition, dag_core, ear_decomposition
from .model import GeneralNetwork
from .skeleton import Walks, designated_edges, skeleton_of, walks_forest, walks_of

__all__ = ["DagRun", "EarSummary", "HopCounts", "hop_counts", "plan_dag_run", "run_dag_deah"]

@dataclass(frozen=True)
class HopCounts:
    """Of one connection along any route: weights that are neither a source neuron's direct edge
    nor a target neuron's predecessor edge (one row of B_r each), and weights that are both (they
    join two neurons' T_r rows into one)."""

    undesignated: int
    mutual: int


def hop_counts(net: GeneralNetwork, k: int) -> HopCounts:
    """Connection k's ``HopCounts`` under the per-kind choice rule (``designated_neighbour``)."""
    direct, pred = (np.unique(ids) for ids in designated_edges(net, k))
    both = int(np.intersect1d(direct, pred, assume_unique=True).size)
    return HopCounts(int(net.connection_weights(net.connections[k])) - (direct.size + pred.size - both), both)


@dataclass(frozen=True)
class EarSummary:
    """One selected substructure's B_r: its size, rows kept, discards by reason."""

    layers: tuple[int, ...]  # the route's layers
    segment: tuple[int, int]  # positions in ``layers`` of a and b (p_0: the whole route)
    rows: int  # |B_r| = m_r - H_r
    kept: int  # m_S - H_S
    prefix: int
    suffix: int


@dataclass
class DagRun:
    """The DEAH artifacts of a run on a layer DAG core: Step 1's decomposition, every selected
    substructure's B_r summarised (``ears``: p_0 first), the designated walks of the kept paths."""

    decomposition: EarDecomposition
    walks: Walks
    ears: list[EarSummary] = field(default_factory=list)

    @property
    def network(self) -> GeneralNetwork:
        return self.decomposition.core.network

    @property
    def routes(self) -> list[tuple[int, ...]]:
        """Connections of each selected substructure, p_0 first (as ``ears``)."""
        return [self.decomposition.p0] + [e.route for e in self.decomposition.ears]

    def rule_counts(self) -> dict[str, int]:
        """Discards by reason, over every ear."""
        return {"prefix": sum(e.prefix for e in self.ears), "suffix": sum(e.suffix for e in self.ears)}

    @property
    def discard_count(self) -> int:
        return sum(e.prefix + e.suffix for e in self.ears)

    def candidate_features(self) -> tuple[int, int]:
        """(candidates, candidate layers): the paths of every B_r (p_0's and the ears'), and those
        paths times the layers each visits: what faithful deah lists (``guards.LAYER_DAG_DEAH``)."""
        return sum(e.rows for e in self.ears), sum(e.rows * len(e.layers) for e in self.ears)

    @cached_property
    def hops(self) -> dict[int, HopCounts]:
        """Every core connection's ``HopCounts`` (what B_r's sizes and the discards' parts sum)."""
        return {k: hop_counts(self.network, k) for k in self.decomposition.core.connections}

    def discard_firsts(self, basis_size: int = 0) -> list[int]:
        """The id of each selected substructure's first discard (p_0's: none, the first ear's),
        discards numbered from ``basis_size`` ear after ear; one more entry: the end."""
        out = [basis_size]
        for e in self.ears:
            out.append(out[-1] + e.prefix + e.suffix)
        return out

    def parts(self) -> dict:
        """The run's ``parts`` (``solve --json``): the core's size, Step 1's selection, Step 3's counts."""
        net, d = self.network, self.decomposition
        return {
            "core": "layer DAG", "core_layers": len(d.core.layers), "core_connections": len(d.core.connections),
            "substructure_paths": d.substructure_count, "selected": len(self.ears), "ears": len(d.ears),
            "p0": [net.layers[l].name for l in self.ears[0].layers],
            "kept": sum(e.kept for e in self.ears), "discarded": self.rule_counts(),
            "extra_and_identity": net.basis_size - sum(e.kept for e in self.ears),
        }


def _designations(d: EarDecomposition) -> tuple[dict[int, int], dict[int, int]]:
    """Every layer's designated connection in and out: the decomposition's on the core; an extra
    input's first trainable connection out, an extra output's first in (spec order)."""
    core = d.core
    net = core.network
    pred, succ = dict(d.pred), dict(d.succ)
    for k in core.extra_connections:
        c = net.connections[k]
        if c.source not in core.layers:
            succ.setdefault(c.source, k)
        if c.target not in core.layers:
            pred.setdefault(c.target, k)
    return pred, succ


def _summaries(run: DagRun) -> list[EarSummary]:
    net, d, hops = run.network, run.decomposition, run.hops
    width = [layer.size for layer in net.layers]

    def side(route: tuple[int, ...], end: int) -> int:
        """Rows of B_r on one side of the segment (``end``: the side's layer at the segment, a or
        b): the weights there the walks do not use, and the chains of T_r rows that do not reach
        the segment (a chain is a path of weights both direct and predecessor edges: one row per
        chain, neurons - chain edges, less the w_end chains through the segment's end)."""
        if not route:
            return 0
        layers = d.route_layers(route)
        return (sum(hops[k].undesignated for k in route) + sum(width[l] for l in layers)
                - sum(hops[k].mutual for k in route) - width[end])

    def rows(route: tuple[int, ...]) -> int:
        layers = d.route_layers(route)
        return sum(int(net.connection_weights(net.connections[k])) for k in route) - sum(width[l] for l in layers[1:-1])

    out = [EarSummary(d.route_layers(d.p0), (0, len(d.p0)), rows(d.p0), rows(d.p0), 0, 0)]
    for ear in d.ears:
        a, b = net.connections[ear.segment[0]].source, net.connections[ear.segment[-1]].target
        out.append(EarSummary(d.route_layers(ear.route), (len(ear.route_in), len(ear.route_in) + len(ear.segment)),
                              rows(ear.route), rows(ear.segment), side(ear.route_in, a), side(ear.route_out, b)))
    return out


def plan_dag_run(net: GeneralNetwork, engine: str = "deah-complete") -> DagRun:
    """Steps 1-2 on ``net``'s layer DAG core: the decomposition, the designated walks and every
    B_r's counts (what a stored run is rebuilt from: it is a function of the network). ``engine``
    names the engine in a refusal (faithful deah plans the same Steps 1-2)."""
    core = dag_core(net, engine)
    d = ear_decomposition(core)
    run = DagRun(d, walks_of(net, *_designations(d)))
    run.ears = _summaries(run)
    return run


def run_dag_deah(net: GeneralNetwork) -> tuple[DagRun, DescribedBasis, Verdict, dict[str, float]]:
    """deah-complete on ``net`` read as a layer DAG core (``layer_dag.dag_core``; UnsupportedFeature
    otherwise): the run's artifacts, the kept basis (described) with its exact verdict, and the
    times (``general.solve.solve_dag_deah`` makes the Result)."""
    t0 = time.perf_counter()
    run = plan_dag_run(net)
    walks = run.walks
    t1 = time.perf_counter()
    shortcuts = walks_forest(net, walks)
    basis = skeleton_of(net, walks, shortcuts)
    t2 = time.perf_counter()
    verdict = certify_described(basis)
    t3 = time.perf_counter()
    return run, basis, verdict, {"step1": t1 - t0, "materialise": t2 - t1, "certify": t3 - t2}
