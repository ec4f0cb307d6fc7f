"""Neo4j 5 backend end to end, on the session's real server (tests/neo4j_support.py).

The parts of the Neo4j backend that need no server (missing credentials, dialect lint) are
tested in test_store.py and test_cypher_lint.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .cli_runner import cli as run_cli

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture
def neo4j_uri(empty_neo4j):
    return empty_neo4j.uri, empty_neo4j.user, empty_neo4j.password


def cli(uri, user, password, *args, check=0):
    r = run_cli(*args, "--store", uri, env={"NEO4J_USER": user, "NEO4J_PASSWORD": password})
    assert r.returncode == check, (r.stdout, r.stderr)
    assert password not in r.stdout + r.stderr
    return r


def test_run_and_query_on_neo4j(neo4j_uri):
    uri, user, password = neo4j_uri
    summary = json.loads(cli(uri, user, password, "run", str(EXAMPLES / "resnet-style.json"), "--json").stdout)
    rows = json.loads(
        cli(uri, user, password, "query", "--json", "--param", f"run={summary['run_id']}",
            "MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b) AS n").stdout
    )
    assert rows == [{"n": 130}]
    rows = json.loads(
        cli(uri, user, password, "query", "--json", "--param", f"run={summary['run_id']}",
            "MATCH (a:SubstructurePath {run: $run})-[:SHARES_EDGE]->(b) RETURN count(*) AS n").stdout
    )
    assert rows[0]["n"] > 0


def test_query_without_write_is_refused_by_neo4j_access_mode(neo4j_uri):
    uri, user, password = neo4j_uri
    r = cli(uri, user, password, "query", "CREATE (:Run {id: 'intruder'})", check=2)
    assert r.stderr == "error: the query writes to the store; add --write to allow it\n"


def test_wrong_password_exits_3(neo4j_uri):
    uri, user, _ = neo4j_uri
    r = cli(uri, user, "wrong-password", "runs", check=3)
    assert r.stderr.startswith(f"error: Neo4j at {uri} refused the credentials")


def test_bulk_load_in_batches_writes_exactly_the_rows_and_reports_each_commit(empty_neo4j, monkeypatch):
    """Neo4jStore.bulk over several batches (BASISPATH_BATCH_ROWS=4): the columnar cypher/neo4j/
    loads store exactly the given nodes, properties and relationships, list columns given as
    numpy arrays and Ragged (rows of different widths, sliced across batch boundaries), and
    progress(rows) is called once per batch, after that batch is visible to another connection
    (committed)."""
    import numpy as np

    from basispath_graph.store.base import Ragged
    from basispath_graph.store.ladybug_store import BATCH_ENV
    from basispath_graph.store.neo4j_store import Neo4jStore

    monkeypatch.setenv(BATCH_ENV, "4")
    n = 10  # rows 0-5 have 3 nodes, rows 6-9 have 2
    nodes = Ragged.from_rows([np.arange(18).reshape(6, 3), 100 + np.arange(8).reshape(4, 2)])
    layers = Ragged.from_rows([np.tile([0, 1, 2], (6, 1)), np.tile([0, 2], (4, 1))])
    expected_nodes = nodes.tolist()
    store = Neo4jStore(empty_neo4j.uri, write=True)
    try:
        store.query("CREATE (:Run {id: $id})", {"id": "r1"})
        seen = []

        def committed(rows):
            seen.append((rows, empty_neo4j.node_count()))

        store.bulk("insert_basis_paths", {
            "uid": [f"r1:{i}" for i in range(n)], "run": ["r1"] * n, "id": np.arange(n, dtype=np.int64),
            "nodes": nodes, "layers": layers, "text": [f"path {i}" for i in range(n)], "kept": np.arange(n) % 2 == 0,
            "taps": Ragged.empty(n),  # a layered path has no taps (general paths have one per hop)
        }, committed)
        assert seen == [(4, 5), (4, 9), (2, 11)]  # the Run node and the paths committed so far

        kept, discarded = [f"r1:{i}" for i in range(0, n, 2)], [f"r1:{i}" for i in range(1, n, 2)]
        calls = []
        store.bulk("link_kept", {"from": ["r1"] * len(kept), "to": kept}, calls.append)
        store.bulk("link_discarded", {"from": ["r1"] * len(discarded), "to": discarded}, calls.append)
        certs = [(d, k, c) for j, d in enumerate(discarded) for k, c in zip(kept[: j % 3 + 1], (1, -1, 2))]
        store.bulk("link_certified_by", {"from": [a for a, _, _ in certs], "to": [b for _, b, _ in certs],
                                         "coef": np.array([c for _, _, c in certs])}, calls.append)
        assert calls == [4, 1, 4, 1, 4, 4, 1]  # 5 + 5 + 9 rows in batches of 4

        _, rows = store.query("MATCH (b:BasisPath) RETURN b.uid, b.run, b.id, b.nodes, b.layers, b.text, b.kept ORDER BY b.id")
        assert rows == [
            [f"r1:{i}", "r1", i, expected_nodes[i], [0, 1, 2] if i < 6 else [0, 2], f"path {i}", i % 2 == 0] for i in range(n)
        ]
        _, rels = store.query("MATCH (a)-[r]->(b) RETURN coalesce(a.uid, a.id), type(r), r.coef, b.uid")
        expected = ([["r1", "KEPT", None, u] for u in kept] + [["r1", "DISCARDED", None, u] for u in discarded]
                    + [[a, "CERTIFIED_BY", c, b] for a, b, c in certs])
        assert sorted(rels, key=repr) == sorted(expected, key=repr)
    finally:
        store.close()
