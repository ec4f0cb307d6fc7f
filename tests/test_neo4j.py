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
