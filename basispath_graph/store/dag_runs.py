"""A deah-complete run of a layer DAG core in the store (``general/dag_deah.py``): its kept basis as a
skeleton's description (``described_rows``), plus what its DEAH steps are:

- Step 1's selected substructures (p_0 and the ears) as ``SubstructurePath`` nodes: ``idx`` and
  ``position`` their place in the selection, ``layers`` the route's layer positions, ``alpha``
  its edge codes (a x n + b over positions), ``beta``, ``u_size`` -1 (no U_r on a DAG: the
  selection is an ear decomposition), ``selected`` true. ``SUBDIVIDES`` and ``SHARES_EDGE`` are
  not derived: Step 3 on a DAG does not read them, and on DenseNet-121 (536 substructures whose
  routes share most of their up to 183 hops) the Cypher took 96 s of a 119 s run;
- one ``DescribedBlock`` per selected substructure: ``rule`` (``p0`` or ``ear``), ``hop`` the
  ear's segment as layer positions a .. b (p_0: its route), ``kept_count`` (m_S - H_S),
  ``kept_first`` -1 (the kept paths are the skeleton's, in its order, not by block),
  ``discard_first`` / ``discard_count`` its discards' ids, ``prefix_count``.

Every discard, its rule and its certificate is a function of the network: ``load_dag_run``
rebuilds the plan (``dag_deah.plan_dag_run``) and checks it against these rows; ``why`` answers
from it (``analysis/why_dag.py``).
"""

from __future__ import annotations

from ..general.dag_deah import DagRun, plan_dag_run
from ..general.model import GeneralNetwork
from . import resume
from .base import Store, StoreError
from .relations import StoreRelations

__all__ = ["substructure_columns", "block_rows", "write_dag_run", "write_sdvchain_run", "load_dag_run"]


def substructure_columns(run_id: str, run: DagRun) -> dict[str, list]:
    """The SubstructurePath columns of a layer-DAG run's selected substructures."""
    n = len(run.network.layers)
    rows = len(run.ears)
    return {
        "uid": [f"{run_id}:s{k}" for k in range(rows)],
        "run": [run_id] * rows,
        "idx": list(range(rows)),
        "layers": [list(map(int, e.layers)) for e in run.ears],
        "alpha": [[int(a) * n + int(b) for a, b in zip(e.layers, e.layers[1:])] for e in run.ears],
        "beta": [[1 if l in on else 0 for l in range(n)] for on in (set(e.layers) for e in run.ears)],
        "u_size": [-1] * rows,
        "selected": [True] * rows,
        "position": list(range(rows)),
    }


def block_rows(run_id: str, run: DagRun, basis_size: int) -> list[dict]:
    """The DescribedBlock rows of a layer-DAG run: p_0, then the ears."""
    firsts = run.discard_firsts(basis_size)
    return [{"uid": f"{run_id}:b{k}", "run": run_id, "position": k, "substructure": k, "rule": "p0" if k == 0 else "ear",
             "hop": list(map(int, e.layers[e.segment[0]:e.segment[1] + 1])), "kept_first": -1, "kept_count": e.kept,
             "discard_first": firsts[k], "discard_count": e.prefix + e.suffix, "prefix_count": e.prefix}
            for k, e in enumerate(run.ears)]


def write_dag_run(store: Store, run_id: str, run: DagRun, basis_size: int, committed=None, on_stage=None, on_batch=None) -> None:
    """Store the substructures and blocks of a layer-DAG run (its basis is written by
    ``described_rows.write_described``), with the writer's stages and resume."""
    stage, bulk = resume.writer(store, run_id, committed, on_stage, on_batch)
    stage("substructures")
    bulk("insert_substructure_paths", substructure_columns(run_id, run))
    blocks = block_rows(run_id, run, basis_size)
    stage("blocks")
    bulk("insert_described_blocks", {k: [r[k] for r in blocks] for k in blocks[0]})


def write_sdvchain_run(store: Store, run_id: str, result, committed=None, on_stage=None, on_batch=None) -> None:
    """Store faithful deah's run on a layer DAG core (``general/dag_sdvchain.py``): its selected
    substructures, between which Cypher derives SUBDIVIDES and SHARES_EDGE (checked against the
    relations Step 3 read: StoreError when they differ), then U_r sets, chains, kept and
    discarded paths, discard records and certificates by the one writer (``store/artifacts.py``,
    spelled by ``DagForm``)."""
    from .artifacts import write_artifacts  # artifacts reads the solver, which reads the general engines
    from .path_forms import DagForm

    run = result.sdvchain
    stage, bulk = resume.writer(store, run_id, committed, on_stage, on_batch)
    stage("substructures")
    bulk("insert_substructure_paths", substructure_columns(run_id, run.plan))
    resume.derive(store, "compute_subdivides", committed, run=run_id)
    resume.derive(store, "compute_shares_edge", committed, run=run_id)
    _check_relations(store, run_id, run)
    write_artifacts(store, run_id, result, on_stage, on_batch, committed, form=DagForm(result.network), basis=result.blocks)


def _check_relations(store: Store, run_id: str, run) -> None:
    """Cypher's SUBDIVIDES and SHARES_EDGE of a faithful layer-DAG run equal those Step 3 read
    (``dag_substructures.RouteSubstructure``): the graph holds the relations the run was made with."""
    net = run.network
    stored = StoreRelations.read(store, run_id, len(net.layers) - 1)
    paths = run.substructures.paths
    for a in range(len(paths)):
        for b in range(len(paths)):
            shared = tuple(sorted(net.hop[(x, y, True)] for x, y in stored.shared_pairs(a, b)))
            if a != b and (stored.subdivides(a, b) != paths[a].subdivides(paths[b]) or shared != tuple(sorted(set(paths[a].edges) & set(paths[b].edges)))):
                raise StoreError(f"run {run_id}: Cypher's relations between substructures {a} and {b} differ from the ones Step 3 read; not stored")


def load_dag_run(store: Store, run_id: str, network: GeneralNetwork, row: dict) -> DagRun:
    """The plan of a stored layer-DAG run, rebuilt from its network and checked against its
    blocks; StoreError when they differ (a damaged store, or one written by another version)."""
    if row.get("status") != "complete":
        raise StoreError(f"run {run_id} is {row.get('status')}: its blocks are not complete (basispath run --resume {run_id})")
    run = plan_dag_run(network)
    expected = block_rows(run_id, run, int(row["basis_size"]))
    stored = store.run("run_described_blocks", run=run_id)
    keys = ("position", "rule", "hop", "kept_count", "discard_first", "discard_count", "prefix_count")
    if [tuple(_plain(r[k]) for k in keys) for r in stored] != [tuple(_plain(r[k]) for k in keys) for r in expected]:
        raise StoreError(f"run {run_id}: its stored blocks are not those of its network's layer DAG; it was written by another version")
    return run


def _plain(value):
    """A stored list (a backend's list type) as a list of ints, to compare with a row made now."""
    return [int(x) for x in value] if isinstance(value, (list, tuple)) else value
