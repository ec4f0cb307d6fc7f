"""General networks (layers, typed connections) in a store: their key, storing them once, and
rebuilding them from the graph (``GeneralLayer`` nodes, ``CONNECTS`` relationships).

A stored Network has ``kind`` 'layered' (widths, skips: ``runs.ingest_network``) or 'general'
(this module); ``stored_network`` reads either back from a ``get_run`` row.
"""

from __future__ import annotations

import hashlib
import json

from ..general.model import GConnection, GeneralNetwork, GLayer
from ..network import Network
from .base import Store, StoreError
from .runs import ingest_network, live_writer_pid, network_from_row

__all__ = ["general_network_key", "ingest_general_network", "load_general_network", "stored_network", "ingest_any", "load_run_for_resume"]


def general_network_key(network: GeneralNetwork) -> str:
    """Networks are identified by their structure (layers, connections with kinds and taps), not
    by name: the same spec under another name is stored once."""
    spec = network.to_dict()
    text = json.dumps({"layers": spec["layers"], "connections": spec["connections"]}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def ingest_general_network(store: Store, network: GeneralNetwork) -> str:
    """Store the network, its layers and connections once (``merge_general_network``); its key."""
    key = general_network_key(network)
    store.run(
        "merge_general_network",
        key=key,
        name=network.name,
        m=network.m,
        H=network.H,
        layers=[{"uid": f"{key}:{k}", "position": k, "name": l.name, "size": l.size} for k, l in enumerate(network.layers)],
        connections=[
            {"source": f"{key}:{c.source}", "target": f"{key}:{c.target}", "position": k, "kind": c.kind, "taps": c.taps,
             "weight_offset": network.connection_offsets.get(k, -1), "groups": c.groups}
            for k, c in enumerate(network.connections)
        ],
    )
    return key


def ingest_any(store: Store, network: Network | GeneralNetwork) -> str:
    """``ingest_network`` for a layered network, ``ingest_general_network`` for a general one."""
    return ingest_general_network(store, network) if not network.is_layered else ingest_network(store, network)


def load_general_network(store: Store, key: str, name: str = "") -> GeneralNetwork:
    """The general network stored under ``key``, rebuilt from its layers and connections (and
    checked against the stored weight offsets: a damaged store is a StoreError, not a wrong answer)."""
    layers = [GLayer(r["name"], int(r["size"])) for r in store.run("general_layers", key=key)]
    rows = store.run("general_connections", key=key)
    if not layers or not rows:
        raise StoreError(f"network {key} has no stored layers or connections")
    net = GeneralNetwork.from_parts(name or "", layers, [GConnection(int(r["source"]), int(r["target"]), r["kind"], int(r["taps"]), int(r["groups"])) for r in rows])
    for k, r in enumerate(rows):
        if int(r["position"]) != k or net.connection_offsets.get(k, -1) != int(r["weight_offset"]):
            raise StoreError(f"network {key}: stored connection {k} does not match its weight numbering")
    return net


def stored_network(store: Store, row: dict) -> Network | GeneralNetwork:
    """The network of a ``get_run`` (or ``show_run_summary``, ``compare_run``) row, of either kind."""
    if row.get("kind") == "general":
        return load_general_network(store, row["key"], row.get("name") or "")
    return network_from_row(row)


def load_run_for_resume(store: Store, run_id: str) -> tuple[Network, str, int]:
    """The network (layered or general), engine and seed of a run that may be resumed; refuses complete runs and, on
    Neo4j, runs whose process is still connected (``Neo4jStore.live_pids``)."""
    rows = store.run("get_run", id=run_id)
    if not rows:
        raise StoreError(f"no run {run_id!r} in this store")
    r = rows[0]
    if r["status"] == "complete":
        raise StoreError(f"run {run_id} is already complete; nothing to resume")
    pid = live_writer_pid(store, run_id, r["status"])
    if pid is not None:
        # redoing a run that its process is still writing would delete its artifacts under it
        raise StoreError(f"run {run_id} is still being written by PID {pid} (connected to the server); resume it once that process has ended")
    return stored_network(store, r), r["engine"], int(r["seed"])
