"""Side-by-side numbers for several networks or runs (``basispath compare``).

Each column comes from a stored run (read with ``compare_run.cypher``) or, for a spec with no
complete run in the store, from solving it now in memory.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..network import kind_counts
from ..deah.step3_complete import COMPLETE_STEPS
from ..deah.step3_sdvchain import SDVCHAIN_STEPS
from ..export import discards_by_step
from ..general.paper_setting import UnsupportedFeature, reads_as_layer_dag
from ..general.skeleton import UnsupportedIdentity
from ..general.solve import solve_general
from ..network import Network
from ..discarded import certificate_lengths
from ..solver import solve
from ..store import Store
from ..store.general_networks import general_network_key, load_general_network
from ..store.dag_runs import load_dag_run
from ..general.dag_deah import plan_dag_run
from ..general.dag_discards import LISTED_DAG_DISCARDS
from ..store.path_forms import stored_form
from ..store.runs import network_key, stored_plan
from ..timing import STEP_ORDER
from .compare_plot import comparison_figure, plot_comparison

__all__ = ["Column", "Comparison", "column_label", "column_counts", "distinct_labels", "column_from_result", "column_from_run", "table_rows", "METRICS", "STEP_ORDER"]

# (key, label) of the rows of the comparison table, in order.
METRICS = [
    ("m", "m (weights)"),
    ("H", "H (hidden rescaling classes)"),
    ("basis_size", "|B|"),
    ("layers", "layers (general networks)"),
    ("dense_connections", "dense connections"),
    ("grouped_connections", "grouped connections"),
    ("diagonal_connections", "diagonal connections"),
    ("identity_connections", "identity shortcuts"),
    ("substructure_paths", "|P^S| substructure paths"),
    ("R", "R selected"),
    ("chains", "T chains"),
    ("ear_blocks", "blocks by the ear rule (deah-complete)"),
    ("local_blocks", "blocks by the local rule (deah-complete)"),
    ("chain_discards", "discards in chains"),
    ("head_discards", "discards by chain heads"),
    ("prefix_discards", "discards: hop rule, prefix (deah-complete)"),
    ("suffix_discards", "discards: hop rule, suffix (deah-complete)"),
    ("local_discards", "discards: local rule (deah-complete)"),
    ("certificate_max", "largest certificate (basis paths)"),
    ("repairs", "repairs"),
    ("certified", "certified"),
    ("raw_certified", "raw union certified (no repair)"),
]

#: Time rows in the order the work happens (others follow, sorted).


@dataclass
class Column:
    label: str
    source: str  # "run <id>" or "solved now"
    values: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"label": self.label, "source": self.source, **self.values, "timings": self.timings}


def column_label(name: str, engine: str) -> str:
    """The default column label: the network and the engine that solved it."""
    return f"{name} ({engine})"


def distinct_labels(columns: list[Column]) -> list[Column]:
    """Columns whose labels are all different: a label two columns share gets the column's
    source ("x (deah)" -> "x (deah, run 1a2b3c4d)"), and if that is shared too, its number."""
    def renamed(columns: list[Column], tag) -> list[Column]:
        seen = Counter(c.label for c in columns)
        return [replace(c, label=_tagged(c.label, tag(i, c))) if seen[c.label] > 1 else c for i, c in enumerate(columns)]

    columns = renamed(columns, lambda i, c: c.source)
    return renamed(columns, lambda i, c: f"column {i + 1}")


def _tagged(label: str, tag: str) -> str:
    return f"{label[:-1]}, {tag})" if label.endswith(")") else f"{label} ({tag})"


def _rule_values(rules) -> dict:
    """Blocks per deah-complete rule (p_0 is always one block) from the rule of each block."""
    counts = Counter(rules)
    return {"ear_blocks": counts["ear"], "local_blocks": counts["local"]}


def column_from_result(label: str, result) -> Column:
    net = result.network
    values = {
        "engine": result.engine,
        "m": net.m,
        "H": net.H,
        "basis_size": result.basis_size,
        "certified": result.certified,
        "raw_certified": result.raw_verdict.certified,
        "repairs": len(result.repairs),
    }
    if result.deah is not None:
        s1, s3 = result.deah.step1, result.deah.step3
        values.update(substructure_paths=s1.total, R=len(s1.selected))
        if result.engine == "deah":
            values.update(chains=len(s3.chains))
        else:
            values.update(_rule_values(s3.rules.values()))
        values.update({f"{step}_discards": n for step, n in discards_by_step(result).items()})
        lengths = certificate_lengths(result.discarded)  # None: made on demand (described deah-complete, faithful deah)
        values.update(certificate_max=None if lengths is None else int(lengths.max(initial=0)))
    return Column(label, "solved now", values, {k: round(v, 6) for k, v in result.timings.items()})


def column_from_run(store: Store, run_id: str, label: str | None = None) -> Column | None:
    rows = store.run("compare_run", run=run_id)
    if not rows:
        return None
    r = rows[0]
    if r["kind"] == "general":
        return _general_column(store, r, label)
    values = {
        "engine": r["engine"],
        "m": r["m"],
        "H": r["H"],
        "basis_size": r["basis_size"],
        "certified": r["certified"],
        "raw_certified": r["raw_certified"],
        "repairs": r["repairs"],
        "status": r["status"],
    }
    if r["engine"] != "skeleton":
        values.update(_deah_values(store, r))
    timings = json.loads(r["timings"]) if r["timings"] else {}
    return Column(label or column_label(r["name"] or run_id, r["engine"]), f"run {run_id}", values, timings)


def _deah_values(store: Store, r: dict, form=None) -> dict:
    """The DEAH rows of a stored run (``compare_run`` row): P^S, R, chains or blocks by rule,
    discards by step, the largest certificate; of a general run's core (``form``: its
    ``GeneralForm``, the plan read back in core layers)."""
    run_id = r["id"]
    values = {"substructure_paths": int(r["substructure_paths"]), "R": int(r["selected"] or 0)}
    if r["engine"] == "deah":
        values.update(chains=int(r["chains"]))
        steps = SDVCHAIN_STEPS
    else:
        values.update(_rule_values(b.rule for b in stored_plan(store, run_id, form)))  # rebuilt from the stored selection
        steps = COMPLETE_STEPS
    values.update({f"{step}_discards": int(r[f"{step}_discards"] or 0) for step in steps})
    described = store.run("described_discard_steps", run=run_id) if r["engine"] == "deah-complete" else []
    if described and int(described[0]["blocks"]):  # stored described: counted from its blocks, certificates made on demand
        values.update(prefix_discards=int(described[0]["prefix"]), suffix_discards=int(described[0]["suffix"]), certificate_max=None)
        return values
    largest = store.run("certificate_max", run=run_id)
    values.update(certificate_max=int((largest[0]["certificate_max"] if largest else 0) or 0))
    return values


def _dag_values(run) -> dict:
    """The DEAH rows of deah-complete on a layer DAG core (``general/dag_deah.py``): P^S counted,
    p_0 and the ears, discards by rule; certificates are made on demand (no largest one)."""
    counts = run.rule_counts()
    return {"substructure_paths": run.decomposition.substructure_count, "R": len(run.ears), "ear_blocks": len(run.ears) - 1,
            "local_blocks": 0, "prefix_discards": counts["prefix"], "suffix_discards": counts["suffix"], "local_discards": 0,
            "certificate_max": None, "repairs": 0}


def _sdvchain_values(run) -> dict:
    """The DEAH rows of faithful deah on a layer DAG core (``general/dag_sdvchain.py``)."""
    parts = run.parts
    return {"substructure_paths": parts["substructure_paths"], "R": parts["selected"], "chains": parts["chains"],
            "chain_discards": parts["discarded"]["chain"], "head_discards": parts["discarded"]["head"]}


def _sizes(net) -> dict:
    """m, H, |B| = m - H and, for a general network, its layers and connections by kind."""
    values = {"m": net.m, "H": net.H, "basis_size": net.basis_size}
    if not net.is_layered:
        kinds = kind_counts(net.connections)
        values.update(layers=len(net.layers), **{f"{k}_connections": n for k, n in kinds.items()})
    return values


def column_counts(label: str, network) -> Column:
    """A network counted, not solved (``compare --counts``): its sizes, nothing certified."""
    return Column(label, "counted, not solved", {"engine": "counts", **_sizes(network)})


def column_from_general(label: str, result) -> Column:
    """A general network solved now (``general.solve``): sizes, its connections by kind, the verdict;
    with a DEAH engine also the DEAH rows of the layered run on its core."""
    net = result.network
    values = {"engine": result.engine, **_sizes(net), "basis_size": result.basis_size, "certified": result.certified}
    if result.core is not None:
        core_values = column_from_result(label, result.core).values
        values.update({k: v for k, v in core_values.items() if k not in values})
    elif result.dag is not None:
        values.update(_dag_values(result.dag), raw_certified=result.certified)
    elif result.sdvchain is not None:  # faithful deah on a layer DAG core: SDVChain's counts, the raw union, the repair
        lengths = [len(d.certificate) for d in result.discarded]
        values.update(_sdvchain_values(result.sdvchain), raw_certified=result.raw_verdict.certified, repairs=len(result.repairs),
                      certificate_max=max(lengths, default=0) if result.certificate_method == "global elimination" else None)
    return Column(label, "solved now", values, {k: round(v, 6) for k, v in _step_timings(result.timings).items()})


def _step_timings(timings: dict) -> dict:
    """A general result's times under the layered step names (STEP_ORDER): the core's steps as
    they are, building the paths (skeleton walks, tap lift and the rest) as "engine", both
    certifications (the core's and the union's) as "certify"."""
    out: dict[str, float] = {}
    for key, seconds in timings.items():
        step = key.removeprefix("core ")
        step = "engine" if step in ("materialise", "lift") else step
        out[step] = out.get(step, 0.0) + seconds
    return out


def _general_column(store: Store, r: dict, label: str | None) -> Column:
    """A stored general run (``compare_run`` row): its network rebuilt from the store, its sizes
    and verdict; with a DEAH engine the DEAH rows of its core, as a layered run shows them (read
    from the core's stored artifacts), as ``column_from_general`` shows them for a run solved now."""
    net = load_general_network(store, r["key"], r["name"] or "")
    values = {"engine": r["engine"], **_sizes(net), "basis_size": r["basis_size"], "certified": r["certified"], "status": r["status"]}
    form = stored_form(store, r["id"], net) if r["engine"] != "skeleton" else None
    if form is not None:  # (a DEAH run stored before its core's artifacts were has none)
        values.update(raw_certified=r["raw_certified"], repairs=r["repairs"], **_deah_values(store, r, form))
    elif r["engine"] == "deah-complete" and r["status"] == "complete" and reads_as_layer_dag(net):  # a layer DAG core
        values.update(_dag_values(load_dag_run(store, r["id"], net, r)), raw_certified=r["raw_certified"])
    elif r["engine"] == "deah" and r["status"] == "complete" and reads_as_layer_dag(net):  # faithful deah on a layer DAG core
        # its stored records and certificates; P^S is counted (only the selected routes are nodes)
        values.update(raw_certified=r["raw_certified"], repairs=r["repairs"], **_deah_values(store, r))
        values["substructure_paths"] = plan_dag_run(net, "deah").decomposition.substructure_count
        if int(store.run("get_run", id=r["id"])[0]["discarded"] or 0) > LISTED_DAG_DISCARDS:  # certificates made when asked, none stored
            values["certificate_max"] = None
    timings = json.loads(r["timings"]) if r["timings"] else {}
    return Column(label or column_label(r["name"] or r["id"], r["engine"]), f"run {r['id']}", values, _step_timings(timings))


def column_for_spec(store: Store | None, path: Path, network: Network, engine: str, seed: int, memory_limit: int | None = None) -> Column:
    """A stored complete run of this network, engine and seed if there is one, else solve now.
    A general network (layers, connections) is solved now: skeleton, or a DEAH engine in the
    paper's setting (``general.deah_solve``)."""
    if not network.is_layered:
        label = column_label(network.name or path.stem, engine)
        if store is not None:
            found = store.run("find_complete_run", key=general_network_key(network), engine=engine, seed=seed)
            col = column_from_run(store, found[0]["id"], label) if found else None
            if col is not None:
                return col
        try:
            result = solve_general(network, engine, seed, memory_limit=memory_limit)
            return column_from_general(label, result)
        except (UnsupportedFeature, UnsupportedIdentity) as exc:
            raise type(exc)(f"{path}: {exc}") from None
    label = column_label(network.name or path.stem, engine)
    if store is not None:
        found = store.run("find_complete_run", key=network_key(network), engine=engine, seed=seed)
        if found:
            col = column_from_run(store, found[0]["id"], label)
            if col is not None:
                return col
    return column_from_result(label, solve(network, engine, seed, memory_limit=memory_limit))


def table_rows(columns: list[Column]) -> list[tuple[str, list]]:
    """The comparison table: (row label, one value per column), the metrics some column has
    (rule rows only appear for deah-complete, chain rows for deah), then the time rows."""
    rows = [
        (label, [c.values.get(key) for c in columns])
        for key, label in METRICS
        if any(c.values.get(key) is not None for c in columns)
    ]
    known = {k for c in columns for k in c.timings}
    steps = [s for s in STEP_ORDER if s in known] + sorted(known - set(STEP_ORDER))
    rows += [(f"time {step} (s)", [c.timings.get(step) for c in columns]) for step in steps]
    return rows


def cell_text(value) -> str:
    """A table cell: '-' for a missing value, floats to 4 decimals."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _markdown_row(cells: list[str]) -> str:
    """One row of a Markdown table: a '|' in a cell (the |B| and |P^S| rows, a label) escaped as
    '\\|', so that the row keeps its number of cells."""
    return "| " + " | ".join(" ".join(c.split()).replace("|", "\\|") for c in cells) + " |"


@dataclass(repr=False)
class Comparison:
    """Several networks or runs side by side (``basispath compare`` in Python).

    ``rows()`` is the table as data, ``to_markdown()`` as text (a notebook shows it as a
    table), ``to_json()`` what ``compare --json`` prints, ``plot(path)`` the PNG of ``--plot``
    (``figure()`` the matplotlib Figure). Column labels are made distinct on construction.
    """

    columns: list[Column]

    def __post_init__(self) -> None:
        self.columns = distinct_labels(self.columns)

    def rows(self) -> list[tuple[str, list]]:
        return table_rows(self.columns)

    def to_json(self) -> list[dict]:
        return [c.as_dict() for c in self.columns]

    def to_markdown(self) -> str:
        """The table in Markdown (GitHub's tables): a header of column labels, one row per metric,
        then, after a blank line, where each column comes from ("solved now", "run ID")."""
        head = ["", *(c.label for c in self.columns)]
        lines = [_markdown_row(head), "|" + "---|" * len(head)]
        lines += [_markdown_row([label, *(cell_text(v) for v in values)]) for label, values in self.rows()]
        lines += ["", "Sources: " + "; ".join(f"{c.label}: {c.source}" for c in self.columns) + "."]
        return "\n".join(lines)

    def figure(self):
        return comparison_figure(self.columns)

    def plot(self, path) -> None:
        plot_comparison(self.columns, Path(path))

    def _repr_markdown_(self) -> str:  # Jupyter renders the table
        return self.to_markdown()

    def __repr__(self) -> str:
        return f"Comparison({', '.join(repr(c.label) for c in self.columns)})"
