"""A canonical dump of a store's whole graph, comparable across runs, stores and backends.

``canonical_dump(store)`` runs the library queries ``dump_nodes`` and ``dump_relationships``
(cypher/queries/) and returns two sorted lists of JSON lines:

- a node is ``[label, properties]``; a relationship is ``[from key, type, properties, to key]``
  where a node's key is its label and ``uid`` (or ``key`` for Network, ``id`` for Run);
- what differs between two runs of the same spec by design is normalised: a Run's ``id`` becomes
  ``<run>`` everywhere it appears inside a string (uids, ``run`` properties), and its
  ``started``, ``finished``, ``pid`` and ``timings`` (measured seconds) are dropped;
- properties that are null are dropped (LadybugDB returns every column of every node table for
  ``MATCH (n)``, Neo4j only the properties that are set), so both backends give the same dump.
"""

from __future__ import annotations

import json

__all__ = ["canonical_dump", "plain_node", "VOLATILE_RUN_PROPERTIES"]

VOLATILE_RUN_PROPERTIES = ("started", "finished", "pid", "timings")


def plain_node(node: dict) -> tuple[str, dict]:
    """(label, properties) of a node as either backend returns it."""
    d = dict(node)
    if "_LABEL" in d:  # LadybugDB: {_ID, _LABEL, every column}
        label = d.pop("_LABEL")
    else:  # Neo4j (store._plain): {labels: [...], properties}
        label = "|".join(d.pop("labels"))
    props = {k: v for k, v in d.items() if not k.startswith("_") and v is not None}
    if label == "BasisPath" and isinstance(props.get("id"), str):
        # LadybugDB gives ``MATCH (n)`` one column per property name over all node tables, so
        # BasisPath.id (INT64) comes back as text next to Run.id (STRING), and some values come
        # back as '' (seen with LadybugDB 0.22; ``MATCH (:Run {id: $run})-[:DISCARDED]->(b)
        # RETURN b.id`` with b unlabelled even repeats one row's id in the next row, while
        # ``b.uid`` and ``RETURN b`` are right). The uid "<run>:<id>" carries the same integer.
        props["id"] = int(props["uid"].rsplit(":", 1)[1])
    return label, props


def _rel(rel: dict) -> tuple[str, dict]:
    d = dict(rel)
    kind = d.pop("_LABEL") if "_LABEL" in d else d.pop("type")
    return kind, {k: v for k, v in d.items() if not k.startswith("_") and v is not None}


def _normaliser(names: dict[str, str]):
    run_ids = sorted(names, key=len, reverse=True)

    def norm(value):
        if isinstance(value, str):
            for rid in run_ids:
                value = value.replace(rid, names[rid])
            return value
        if isinstance(value, list):
            return [norm(v) for v in value]
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        return value

    return norm


def canonical_dump(store, names: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(nodes, relationships) of the whole graph, normalised and sorted (see module doc).

    ``names`` maps run ids to what they become in the dump (default: every run id is ``<run>``;
    give each run its own name when a store holds several runs of one network)."""
    nodes = [plain_node(row["n"]) for row in store.run("dump_nodes")]
    run_ids = {p["id"] for label, p in nodes if label == "Run"}
    norm = _normaliser({rid: (names or {}).get(rid, "<run>") for rid in run_ids})

    def clean(label: str, props: dict) -> dict:
        if label == "Run":
            props = {k: v for k, v in props.items() if k not in VOLATILE_RUN_PROPERTIES}
        return norm(props)

    def key(node: dict) -> list:
        label, props = plain_node(node)
        props = clean(label, props)
        return [label, props.get("uid", props.get("key", props.get("id")))]

    node_lines = sorted(json.dumps([label, clean(label, p)], sort_keys=True) for label, p in nodes)
    rel_lines = []
    for row in store.run("dump_relationships"):
        kind, props = _rel(row["r"])
        rel_lines.append(json.dumps([key(row["a"]), kind, norm(props), key(row["b"])], sort_keys=True))
    return node_lines, sorted(rel_lines)
