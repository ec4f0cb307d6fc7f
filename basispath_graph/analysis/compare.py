"""Side-by-side numbers for several networks or runs (``basispath compare``).

Each column comes from a stored run (read with ``compare_run.cypher``) or, for a spec with no
complete run in the store, from solving it now in memory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..deah.step3_complete import COMPLETE_STEPS
from ..deah.step3_sdvchain import SDVCHAIN_STEPS
from ..export import discards_by_step
from ..network import Network
from ..discarded import certificate_lengths
from ..solver import solve
from ..store import Store
from ..store.runs import network_key

__all__ = ["Column", "Comparison", "column_from_result", "column_from_run", "table_rows", "METRICS", "STEP_ORDER"]

# (key, label) of the rows of the comparison table, in order.
METRICS = [
    ("m", "m (weights)"),
    ("H", "H (hidden neurons)"),
    ("basis_size", "|B|"),
    ("ratio", "|B| / m"),
    ("substructure_paths", "|P^S| substructure paths"),
    ("R", "R selected"),
    ("chains", "T chains"),
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
STEP_ORDER = ["step1", "step2", "relations", "step3", "engine", "certify", "repair", "certificates", "persist_substructures", "persist"]


@dataclass
class Column:
    label: str
    source: str  # "run <id>" or "solved now"
    values: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"label": self.label, "source": self.source, **self.values, "timings": self.timings}


def column_from_result(label: str, result) -> Column:
    net = result.network
    values = {
        "engine": result.engine,
        "m": net.m,
        "H": net.H,
        "basis_size": result.basis_size,
        "ratio": round(result.basis_size / net.m, 4),
        "certified": result.certified,
        "raw_certified": result.raw_verdict.certified,
        "repairs": len(result.repairs),
    }
    if result.deah is not None:
        s1, s3 = result.deah.step1, result.deah.step3
        by_step = discards_by_step(result)
        values.update(
            substructure_paths=s1.total,
            R=len(s1.selected),
            chains=len(s3.chains),
            chain_discards=by_step.get("chain", 0),
            head_discards=by_step.get("head", 0),
            **{f"{step}_discards": n for step, n in by_step.items() if step not in SDVCHAIN_STEPS},
            certificate_max=int(certificate_lengths(result.discarded).max(initial=0)),
        )
    return Column(label, "solved now", values, {k: round(v, 6) for k, v in result.timings.items()})


def column_from_run(store: Store, run_id: str, label: str | None = None) -> Column | None:
    rows = store.run("compare_run", run=run_id)
    if not rows:
        return None
    r = rows[0]
    values = {
        "engine": r["engine"],
        "m": r["m"],
        "H": r["H"],
        "basis_size": r["basis_size"],
        "ratio": round(r["basis_size"] / r["m"], 4) if r["basis_size"] is not None else None,
        "certified": r["certified"],
        "raw_certified": r["raw_certified"],
        "repairs": r["repairs"],
        "status": r["status"],
    }
    if r["engine"] != "skeleton":
        values.update(
            substructure_paths=int(r["substructure_paths"]),
            R=int(r["selected"] or 0),
            chains=int(r["chains"]),
            chain_discards=int(r["chain_discards"] or 0),
            head_discards=int(r["head_discards"] or 0),
        )
        if r["engine"] == "deah-complete":
            values.update({f"{step}_discards": int(r[f"{step.replace('-', '_')}_discards"] or 0) for step in COMPLETE_STEPS})
    timings = json.loads(r["timings"]) if r["timings"] else {}
    return Column(label or f"{r['name'] or run_id}", f"run {run_id}", values, timings)


def column_for_spec(store: Store | None, path: Path, network: Network, engine: str, seed: int) -> Column:
    """A stored complete run of this network, engine and seed if there is one, else solve now."""
    label = f"{network.name or path.stem} ({engine})"
    if store is not None:
        found = store.run("find_complete_run", key=network_key(network), engine=engine, seed=seed)
        if found:
            col = column_from_run(store, found[0]["id"], label)
            if col is not None:
                return col
    return column_from_result(label, solve(network, engine, seed))


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


@dataclass(repr=False)
class Comparison:
    """Several networks or runs side by side (``basispath compare`` in Python).

    ``rows()`` is the table as data, ``to_markdown()`` as text (a notebook shows it as a
    table), ``to_json()`` what ``compare --json`` prints, ``plot(path)`` the PNG of ``--plot``.
    """

    columns: list[Column]

    def rows(self) -> list[tuple[str, list]]:
        return table_rows(self.columns)

    def to_json(self) -> list[dict]:
        return [c.as_dict() for c in self.columns]

    def to_markdown(self) -> str:
        head = ["", *(f"{c.label} ({c.source})" for c in self.columns)]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join([label, *(cell_text(v) for v in values)]) + " |" for label, values in self.rows()]
        return "\n".join(lines)

    def plot(self, path) -> None:
        from .compare_plot import plot_comparison

        plot_comparison(self.columns, Path(path))

    def _repr_markdown_(self) -> str:  # Jupyter renders the table
        return self.to_markdown()

    def __repr__(self) -> str:
        return f"Comparison({', '.join(repr(c.label) for c in self.columns)})"
