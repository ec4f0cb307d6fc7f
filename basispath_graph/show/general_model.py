"""What ``basispath show`` draws for a general run, at layer level, read from the store: one
node per layer (name, size, kept paths through it), one edge per connection (kind, taps); for a
DEAH run also which layers are its core and the core's counts (P^S, R, discarded paths)."""

from __future__ import annotations

from dataclasses import dataclass

from ..network import kind_counts
from ..store import Store
from ..store.general_networks import load_general_network
from ..store.path_forms import stored_form
from ..general.paper_setting import reads_as_layer_dag
from ..general.dag_deah import plan_dag_run
from ..store.dag_runs import load_dag_run
from ..store.described_deah import kept_paths_per_layer, load_described_deah

__all__ = ["GeneralLayerInfo", "GeneralEdge", "GeneralOverview", "load_general_overview"]


@dataclass(frozen=True)
class GeneralLayerInfo:
    position: int
    name: str
    size: int
    kept: int  # kept paths that visit the layer
    core: bool = False  # a layer of the core a DEAH engine solved (its substructure paths run through it)


@dataclass(frozen=True)
class GeneralEdge:
    source: int  # layer positions
    target: int
    kind: str  # dense, diagonal, identity
    taps: int  # 0 for identity

    @property
    def label(self) -> str:
        """``dense x9``, ``diagonal``, ``identity``: the kind and, past one, the taps."""
        return self.kind + (f" x{self.taps}" if self.taps > 1 else "")


@dataclass(frozen=True)
class GeneralOverview:
    id: str
    engine: str
    status: str
    name: str
    m: int
    H: int
    basis_size: int | None
    certified: bool | None
    layers: tuple[GeneralLayerInfo, ...]
    edges: tuple[GeneralEdge, ...]
    substructures: int = 0  # DEAH runs: |P^S| of the core, how many Step 1 selected, paths discarded
    selected: int = 0
    discarded: int = 0

    @property
    def title(self) -> str:
        return f"{self.name or '(unnamed)'} - run {self.id} ({self.engine}, general network, {self.status})"

    def counts(self) -> list[str]:
        """The run's numbers as short texts."""
        verdict = {True: "certified", False: "NOT certified"}.get(self.certified, "not certified yet")
        kinds = kind_counts(self.edges)
        out = [f"m = {self.m}", f"H = {self.H}", f"|B| = {'-' if self.basis_size is None else self.basis_size}", verdict,
               f"{len(self.layers)} layers", ", ".join(f"{n} {k}" for k, n in kinds.items() if n)]
        if self.substructures:
            out.append(f"core: {sum(l.core for l in self.layers)} layers, |P^S| = {self.substructures}, R = {self.selected}, "
                       f"{self.discarded} discarded")
        return out


def load_general_overview(store: Store, row: dict) -> GeneralOverview:
    """The overview of the general run of ``row`` (a ``show_run_summary`` row)."""
    net = load_general_network(store, row["key"], row["name"] or "")
    rebuilt = load_described_deah(store, row["id"], net, store.run("get_run", id=row["id"])[0]) if row["engine"] == "deah-complete" else None
    if rebuilt is not None:  # a described DEAH run: counted from its parts (only its explicit paths are nodes)
        kept = kept_paths_per_layer(rebuilt)
    else:
        kept = {int(r["layer"]): int(r["paths"]) for r in store.run("general_layer_counts", run=row["id"])}
    form = stored_form(store, row["id"], net) if row["engine"] != "skeleton" else None
    core = set(form.positions.tolist()) if form is not None else set()
    subs = store.run("show_substructures", run=row["id"]) if core else []
    substructures, selected = len(subs), sum(bool(r["selected"]) for r in subs)
    if row["engine"] == "deah-complete" and row["status"] == "complete" and reads_as_layer_dag(net):  # store/dag_runs.py
        dag = load_dag_run(store, row["id"], net, store.run("get_run", id=row["id"])[0])
        core = set(dag.decomposition.core.layers)
        substructures, selected = dag.decomposition.substructure_count, len(dag.ears)
    elif row["engine"] == "deah" and reads_as_layer_dag(net):  # faithful deah on a layer DAG: P^S counted, the selected stored
        plan = plan_dag_run(net, "deah")
        core = set(plan.decomposition.core.layers)
        substructures, selected = plan.decomposition.substructure_count, len(plan.ears)
    return GeneralOverview(
        id=row["id"], engine=row["engine"], status=row["status"], name=row["name"] or "", m=int(row["m"]), H=int(row["H"]),
        basis_size=row["basis_size"], certified=row["certified"],
        layers=tuple(GeneralLayerInfo(k, l.name, l.size, kept.get(k, 0), k in core) for k, l in enumerate(net.layers)),
        edges=tuple(GeneralEdge(c.source, c.target, c.kind, c.taps) for c in net.connections),
        substructures=substructures, selected=selected, discarded=int(row["discarded"] or 0) if core else 0,
    )
