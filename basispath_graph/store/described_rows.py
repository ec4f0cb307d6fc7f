"""A described basis in the store: O(neurons + connections) rows, not a node per path.

A skeleton run of a general network (``general/described.py``) stores

- its explicit paths (T paths, identity forest) as ``BasisPath`` nodes with ``KEPT``, ids their
  basis indices (the head's first, the tail's after every family path), and up to
  ``LISTED_PATHS`` paths every family path too, so that a small run is queried like any other;
- one ``Designation`` per layer and side (the designated connection and, per neuron, the neuron
  it comes from or goes to);
- one ``Family`` per trainable connection (its excluded weights and its basis ids).

``load_described`` reads them back into the same ``DescribedBasis``, from which ``why``,
``express`` and ``GraphStore.load`` make any path on demand (in Python; docs/graph-model.md).
"""

from __future__ import annotations

import numpy as np

from ..analysis.general_coordinates import blocks_from_stored
from ..general.described import DescribedBasis, Family
from ..general.model import GeneralNetwork
from ..general.skeleton import walks_from
from . import resume
from .base import ArrowStrings, Store, StoreError

__all__ = ["write_described", "load_described", "described_rows", "LISTED_PATHS"]

#: Up to this many paths a described basis is also stored path by path (a BasisPath node each, as
#: every other run), so Cypher over BasisPath nodes sees them all; above, only its explicit paths
#: are nodes (the threshold ``solve --export`` uses to write a described file).
LISTED_PATHS = 1_000_000


def described_rows(run_id: str, basis: DescribedBasis) -> tuple[list[dict], list[dict]]:
    """The Designation and Family rows of a described basis."""
    w = basis.walks
    designations = [
        {"uid": f"{run_id}:w{side}{layer}", "run": run_id, "side": side, "layer": int(layer), "connection": int(k),
         "neurons": [int(x) for x in neurons[layer]]}
        for side, chosen, neurons in (("in", w.pred, w.pred_from), ("out", w.succ, w.succ_to))
        for layer, k in sorted(chosen.items())
    ]
    families, first = [], basis.head_paths
    for n, fam in enumerate(basis.families):
        families.append({"uid": f"{run_id}:f{n}", "run": run_id, "position": n, "connection": fam.connection,
                         "first": first, "size": fam.size, "excluded": [int(x) for x in fam.excluded]})
        first += fam.size
    return designations, families


def _rows_to_columns(rows: list[dict]) -> dict:
    return {k: [r[k] for r in rows] for k in rows[0]} if rows else {}


def write_described(store: Store, run_id: str, form, basis: DescribedBasis, committed=None, on_stage=None,
                    on_batch=None) -> None:
    """Store a described basis (see the module doc) with the writer's stages and resume."""
    stage, bulk = resume.writer(store, run_id, committed, on_stage, on_batch)

    stage("basis paths")
    if basis.path_count <= LISTED_PATHS:  # every path a node, as any other run's (Cypher over them)
        parts = [(list(basis), 0)]
    else:  # the explicit paths only; the families' are made from the description when asked for
        parts = [(basis.explicit[:basis.head], 0), (basis.explicit[basis.head:], basis.head_paths + sum(f.size for f in basis.families))]
    uids = []
    for blocks, start in parts:
        columns = form.path_columns(run_id, blocks, start, True)
        bulk("insert_basis_paths", columns)
        uids.append(columns["uid"])
    kept = ArrowStrings.concat(uids)
    bulk("link_kept", {"from": [run_id] * len(kept), "to": kept})
    stage("description")
    designations, families = described_rows(run_id, basis)
    bulk("insert_designations", _rows_to_columns(designations))
    bulk("insert_families", _rows_to_columns(families))


def load_described(store: Store, run_id: str, net: GeneralNetwork, kept_rows: list[dict]) -> DescribedBasis | None:
    """The described basis of a run (None: its basis is stored path by path). ``kept_rows``: its
    stored kept paths (``general_kept_paths``), the explicit ones."""
    rows = store.run("run_families", run=run_id)
    if not rows:
        return None
    chosen: dict[str, dict[int, int]] = {"in": {}, "out": {}}
    neurons: dict[str, dict[int, np.ndarray]] = {"in": {}, "out": {}}
    for d in store.run("run_designations", run=run_id):
        chosen[d["side"]][int(d["layer"])] = int(d["connection"])
        neurons[d["side"]][int(d["layer"])] = np.asarray(d["neurons"], dtype=np.int64)
    families = [Family(net, int(r["connection"]), np.asarray(r["excluded"], dtype=np.int64)) for r in rows]
    first = int(rows[0]["first"])
    after = int(rows[-1]["first"]) + int(rows[-1]["size"])  # a small run stores the family paths too: not explicit
    head = blocks_from_stored(net, [r for r in kept_rows if int(r["id"]) < first])
    tail = blocks_from_stored(net, [r for r in kept_rows if int(r["id"]) >= after])
    try:
        walks = walks_from(net, chosen["in"], neurons["in"], chosen["out"], neurons["out"])
    except (KeyError, IndexError) as exc:
        raise StoreError(f"run {run_id}: its stored designations do not describe walks of the network ({exc})") from None
    basis = DescribedBasis(net, walks, head, families, tail=tail)
    if [int(r["first"]) for r in rows] != [basis.head_paths + sum(f.size for f in families[:n]) for n in range(len(families))]:
        raise StoreError(f"run {run_id}: its stored families do not follow one another in basis order")
    return basis
