"""Run records in a store: ids, networks, listing with live status, resume, delete.

Solving and persisting a run (the pipeline) is ``basispath_graph.pipeline``; this module only
reads and writes the Run and Network records.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from datetime import datetime, timezone

from ..deah.step3_complete import BlockPlan, plan_blocks
from ..network import Network
from . import open_store
from .base import Store, StoreError, StoreLocked

__all__ = [
    "network_key", "ingest_network", "mark_stale_runs", "new_run_id", "now", "network_from_row", "list_runs", "run_status", "delete_run", "open_run_store", "live_writer_pid",
]


def _reads_as_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def new_run_id() -> str:
    """8 hex characters that never read as a number.

    About 3% of random hex ids do ("12345678", "791049e3" = 7.91e8): ``--param run=791049e3``
    then passed a float and matched no run, so queries on such a run found nothing.
    """
    while True:
        run_id = secrets.token_hex(4)
        if not _reads_as_number(run_id):
            return run_id


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def network_key(network: Network) -> str:
    """Networks are identified by their structure (widths and skips), not by name."""
    text = json.dumps({"widths": list(network.widths), "skips": [list(s) for s in network.skips]})
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def ingest_network(store: Store, network: Network) -> str:
    key = network_key(network)
    store.run(
        "merge_network",
        key=key,
        name=network.name,
        widths=list(network.widths),
        skips=[v for pair in network.skips for v in pair],
        m=network.m,
        H=network.H,
        layers=[{"uid": f"{key}:{l}", "index": l, "width": w} for l, w in enumerate(network.widths)],
    )
    return key


def mark_stale_runs(store: Store) -> list[str]:
    """Embedded store only: the writer holds the lock, so any 'running' run is orphaned."""
    return [r["id"] for r in store.run("mark_stale_runs")]


def live_writer_pid(store: Store, run_id: str, status: str) -> int | None:
    """The PID of the process still writing run RUN_ID, or None. Only a Neo4j server needs
    asking (its connections, ``Neo4jStore.live_pids``): an embedded store's writer lock already
    keeps everyone else out while a run is written. When the server does not say who is
    connected, None: the user's word is taken."""
    if status != "running" or store.backend != "neo4j":
        return None
    live = store.live_pids()
    pid = next((x["pid"] for x in store.run("list_runs") if x["id"] == run_id), None)
    return pid if live is not None and pid in live else None


def network_from_row(row: dict) -> Network:
    """The Network of a stored row with ``widths``, ``skips`` (flat: a0, b0, a1, b1, ...) and
    ``name``, as ``merge_network`` stores them: the one decoder of that layout."""
    skips = [int(v) for v in row["skips"] or []]
    return Network([int(w) for w in row["widths"]], list(zip(skips[0::2], skips[1::2])), row["name"] or "")


def list_runs(store: Store) -> list[dict]:
    """Every run, newest first (``list_runs.cypher``), with the status a reader should see.

    An embedded store is only read while no writer holds it, so a 'running' run there is one
    whose process died: it is reported 'incomplete'. On Neo4j a run is still running while its
    process is connected to the server (``Neo4jStore.live_pids``)."""
    rows = store.run("list_runs")
    if store.backend != "neo4j":
        for r in rows:
            if r["status"] == "running":
                r["status"] = "incomplete"
    elif any(r["status"] == "running" for r in rows):
        live = store.live_pids()
        for r in rows:
            if r["status"] == "running" and live is not None and r["pid"] not in live:
                r["status"] = "incomplete"
    return rows


def run_status(store: Store, run_id: str) -> str:
    """The status of run RUN_ID; StoreError when the store has no such run."""
    rows = store.run("get_run", id=run_id)
    if not rows:
        raise StoreError(f"no run {run_id!r} in this store (see 'basispath runs')")
    return rows[0]["status"]


def delete_run(store: Store, run_id: str) -> None:
    """Delete run RUN_ID and every artifact it owns; its network and other runs stay.

    The run is marked incomplete first, so a delete cut short on LadybugDB never leaves a
    'complete' run without artifacts. StoreError for an unknown run; StoreLocked when a Neo4j
    run is still being written by a connected process."""
    status = run_status(store, run_id)
    pid = live_writer_pid(store, run_id, status)
    if pid is not None:
        raise StoreLocked(
            f"run {run_id} is still being written by PID {pid} (connected to the server); delete it once that process has ended"
        )
    store.run("mark_run_deleting", id=run_id)
    store.run("delete_run_artifacts", run=run_id)
    store.run("delete_run", id=run_id)


def open_run_store(uri: str | None, write: bool, wait: float = 0, create: bool | None = None) -> Store:
    """open_store for the commands and the Python API: a writer of an embedded store holds its
    only write lock, so any run still 'running' there is orphaned and is marked incomplete.
    ``create`` as open_store's (default: a writer creates a missing store)."""
    store = open_store(uri, write=write, create=create, wait=wait)
    if write and store.backend == "ladybug":
        try:
            mark_stale_runs(store)
        except BaseException:
            store.close()
            raise
    return store


def stored_plan(store: Store, run_id: str, form=None) -> list[BlockPlan]:
    """deah-complete's plan of a stored run (ear order, rules, new hops, paid debts), rebuilt by
    ``plan_blocks`` from Step 1's stored selection; empty when the run selected nothing. A general
    run's layers (positions) are read back as its core's (``form``: its ``GeneralForm``)."""
    rows = store.run("selected_substructures", run=run_id)
    if not rows:
        return []
    core = {int(p): k for k, p in enumerate(form.positions)} if form is not None else None
    layers = {r["idx"]: tuple(r["layers"]) if core is None else tuple(core[int(l)] for l in r["layers"]) for r in rows}
    return plan_blocks(layers, [r["idx"] for r in rows])
