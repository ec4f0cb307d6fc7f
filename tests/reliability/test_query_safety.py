"""``basispath query`` is read-only unless ``--write``, and the database enforces it.

Without ``--write`` the embedded store is opened in LadybugDB's read-only mode and Neo4j runs the
query in a READ transaction, so writes are refused by the database itself; that is checked here
by running the writes against the store with the tool's own check out of the way. What those
modes let through (LadybugDB: LOAD FROM reads any file of the host, COPY TO and EXPORT DATABASE
write files, CHECKPOINT writes WAL/shadow files and leaves the store unopenable read-only,
INSTALL/LOAD EXTENSION load code, CALL x = v changes settings; Neo4j: LOAD CSV reads server files
and URLs) is refused by basispath_graph/store/query_guard.py. Every refusal is exit code 2 with
one ``error:`` line, and the store is unchanged afterwards: the same counts, the same canonical
dump of every node and relationship, the same bytes on disk, and no file was read or written.

The Neo4j half runs against the session's real Neo4j 5 server (tests/neo4j_support.py) and records
what the server answers: every write in a READ transaction fails with the code
``Neo.ClientError.Statement.AccessMode`` (``neo4j_store.READ_MODE_CODE``), message "Writing in
read access mode not allowed. Attempted write to neo4j" (``system`` for users and databases).
What READ mode lets through there: LOAD CSV, and TERMINATE TRANSACTIONS / dbms.killConnection(s),
which end other clients' work (a run writing to the same server); the tool refuses those.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from basispath_graph.store import open_store
from basispath_graph.store.base import WriteRefused
from basispath_graph.store.query_guard import QueryRefused, check_read_only, statement_texts

from ..cli_runner import cli, run_in_process, run_many
from .counts import record
from .graph_dump import canonical_dump

EXAMPLES = Path("/work/shared/examples")
if not EXAMPLES.is_dir():
    EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

DB_REFUSAL = "error: the query writes to the store; add --write to allow it\n"
SECRET = "secret-marker-7f3a"  # the content of a host file a query tries to read


def tool_refusal(what: str) -> str:
    return f"error: the query {what}; add --write to allow it\n"


# -- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """Files on the host a query might try to read or write (none of the writes may appear)."""
    root = tmp_path_factory.mktemp("host")
    (root / "data.csv").write_text(f"a,b\n{SECRET},2\n")
    (root / "run.csv").write_text(f"{SECRET},deah\n")
    return root


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A store holding one complete deah run of fig1b."""
    store = tmp_path_factory.mktemp("q") / "store"
    out = cli("run", EXAMPLES / "fig1b.json", "--store", store, "--json", check=0)
    return store, json.loads(out.stdout)["run_id"]


def snapshot(store: Path) -> dict:
    """Everything that must not change: counts, the canonical dump, the files and their bytes."""
    files = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(store.iterdir())
        if p.is_file() and "lock" not in p.name  # the store's lock file is not data
    }
    with open_store(str(store)) as s:
        nodes, rels = canonical_dump(s)
        n = s.query("MATCH (n) RETURN count(n)")[1][0][0]
        r = s.query("MATCH ()-[r]->() RETURN count(r)")[1][0][0]
    return {"nodes": n, "relationships": r, "dump": (nodes, rels), "files": files}


# -- the cases --------------------------------------------------------------------------------
# Refused by LadybugDB's read-only mode itself: the tool's check lets them through.
DB_REFUSED = {
    "CREATE": "CREATE (:Run {id: 'intruder'})",
    "CREATE relationship": "MATCH (r:Run), (n:Network) CREATE (r)-[:`ON`]->(n)",
    "MERGE": "MERGE (:Run {id: 'intruder'})",
    "SET": "MATCH (n:Network) SET n.name = 'renamed'",
    "SET to null (REMOVE)": "MATCH (n:Network) SET n.name = NULL",
    "DELETE": "MATCH (d:Discard) DELETE d",
    "DETACH DELETE": "MATCH (n:Network) DETACH DELETE n",
    "DETACH DELETE all": "MATCH (n) DETACH DELETE n",
    "UNWIND CREATE": "UNWIND [1, 2] AS x CREATE (:Chain {uid: 'c' + string(x)})",
    "DROP TABLE": "DROP TABLE Discard",
    "CREATE NODE TABLE": "CREATE NODE TABLE Intruder(id STRING, PRIMARY KEY(id))",
    "CREATE REL TABLE": "CREATE REL TABLE INTRUDES(FROM Run TO Run)",
    "ALTER TABLE": "ALTER TABLE Run ADD extra STRING",
    "ALTER TABLE RENAME": "ALTER TABLE Run RENAME TO Runs",
    "CREATE MACRO": "CREATE MACRO addone(x) AS x + 1",
    "CREATE SEQUENCE": "CREATE SEQUENCE intruder_seq",
    "COMMENT ON": "COMMENT ON TABLE Run IS 'intruder'",
    "COPY FROM": "COPY Run FROM '{host}/run.csv'",
    "ATTACH": "ATTACH '{host}/other.lbug' AS other (dbtype lbug)",
    "ATTACH in memory": "ATTACH ':memory:' AS other (dbtype lbug)",
    "CALL writing function": "CALL clear_warnings()",
    "two statements: read then CREATE": "MATCH (n) RETURN count(n); CREATE (:Run {id: 'intruder'})",
    "two statements: read then SET": "RETURN 1 AS one; MATCH (n:Network) SET n.name = 'renamed'",
    "comment hides nothing": "/* harmless */ MATCH (n:Network) // SET\nSET n.name = 'renamed'",
}

# Refused by the tool (query_guard): LadybugDB's read-only mode would run them.
TOOL_REFUSED = {
    "LOAD FROM": ("LOAD FROM '{host}/data.csv' RETURN *", "reads files (LOAD FROM)"),
    "LOAD FROM any file": ("LOAD FROM '/etc/passwd' (file_format='csv', header=false, delim=':') RETURN *", "reads files (LOAD FROM)"),
    "load from, lower case, comment between": ("load/**/from '{host}/data.csv' return *", "reads files (LOAD FROM)"),
    "LOAD WITH HEADERS": ("LOAD WITH HEADERS (a STRING, b INT64) FROM '{host}/data.csv' RETURN *", "reads files (LOAD WITH HEADERS ... FROM)"),
    "LOAD CSV (Neo4j's)": ("LOAD CSV FROM 'file:///{host}/data.csv' AS row RETURN row", "reads files or URLs (LOAD CSV)"),
    "LOAD FROM after MATCH": ("MATCH (r:Run) WITH r LOAD FROM '{host}/data.csv' RETURN *", "reads files (LOAD FROM)"),
    "LOAD FROM as second statement": ("RETURN 1 AS one; LOAD FROM '{host}/data.csv' RETURN *", "reads files (LOAD FROM)"),
    "LOAD FROM after a string with a quote": ("RETURN 'it\\'s' AS x; LOAD FROM '{host}/data.csv' RETURN *", "reads files (LOAD FROM)"),
    "COPY TO": ("COPY (MATCH (b:BasisPath) RETURN b.text) TO '{host}/out.csv'", "writes files (COPY ... TO)"),
    "PROFILE COPY TO": ("PROFILE COPY (MATCH (b:BasisPath) RETURN b.text) TO '{host}/out2.csv'", "writes files (COPY ... TO)"),
    "EXPORT DATABASE": ("EXPORT DATABASE '{host}/export'", "writes files (EXPORT DATABASE)"),
    "EXPLAIN EXPORT DATABASE": ("EXPLAIN EXPORT DATABASE '{host}/export2'", "writes files (EXPORT DATABASE)"),
    "IMPORT DATABASE": ("IMPORT DATABASE '{host}'", "reads files into the store (IMPORT DATABASE)"),
    "CHECKPOINT": ("CHECKPOINT", "writes the store's files (CHECKPOINT)"),
    "INSTALL": ("INSTALL json", "installs or loads database extensions (INSTALL)"),
    "FORCE INSTALL": ("FORCE INSTALL json", "installs or loads database extensions (FORCE INSTALL)"),
    "UPDATE extension": ("UPDATE json", "installs or loads database extensions (UPDATE)"),
    "UNINSTALL": ("UNINSTALL json", "installs or loads database extensions (UNINSTALL)"),
    "LOAD EXTENSION": ("LOAD EXTENSION json", "installs or loads database extensions (LOAD EXTENSION)"),
    "LOAD extension by name": ("LOAD json", "installs or loads database extensions (LOAD EXTENSION)"),
    "CALL setting": ("CALL threads = 1", "changes a database setting (CALL threads = ...)"),
    "ANALYZE": ("ANALYZE", "updates the database's statistics (ANALYZE)"),
    "TERMINATE TRANSACTIONS (Neo4j)": ("TERMINATE TRANSACTIONS 'neo4j-transaction-1'", "ends other clients' transactions (TERMINATE TRANSACTIONS)"),
    "SHOW ... TERMINATE TRANSACTIONS (Neo4j)": (
        "SHOW TRANSACTIONS YIELD transactionId AS t WHERE t <> '' TERMINATE TRANSACTIONS t",
        "ends other clients' transactions (TERMINATE TRANSACTIONS)",
    ),
    "CALL dbms.killConnection (Neo4j)": ("CALL dbms.killConnection('bolt-1')", "ends other clients' connections (CALL dbms.killConnection)"),
    "CALL `dbms`.`killConnections` after MATCH (Neo4j)": (
        "MATCH (r:Run) CALL `dbms`.`killConnections`(['bolt-1']) YIELD message RETURN message",
        "ends other clients' connections (CALL dbms.killConnections)",
    ),
}

# LadybugDB has no REMOVE clause: its parser refuses it (one line, exit 2; nothing runs).
PARSER_REFUSED = {"REMOVE": "MATCH (n:Network) REMOVE n.name"}

# Reads that look like the refused ones but are not: they must run.
ALLOWED = {
    "keyword inside a string": ("RETURN 'LOAD FROM x; CHECKPOINT' AS x", [{"x": "LOAD FROM x; CHECKPOINT"}]),
    "variable called load": ("MATCH (load:Run) RETURN count(load) AS n", [{"n": 1}]),
    "alias called copy": ("MATCH (n:Network) RETURN n.name AS copy", [{"copy": "fig1b"}]),
    "map key called load": ("RETURN {load: 1} AS x", [{"x": {"load": 1}}]),
    "catalog function": ("CALL show_tables() WHERE name = 'Run' RETURN name", [{"name": "Run"}]),
    "setting read": ("CALL current_setting('threads') RETURN count(*) AS n", [{"n": 1}]),
    "two read statements (rows of the last)": ("RETURN 1 AS a; RETURN 2 AS b", [{"b": 2}]),
}


def _fill(text: str, host: Path) -> str:
    return text.replace("{host}", str(host))


# -- LadybugDB --------------------------------------------------------------------------------
def test_every_write_and_file_access_is_refused_and_the_store_is_unchanged(stored, host, tmp_path, monkeypatch, capsys):
    """The CLI's entry point in this process (a subprocess per case would take ~2 s each); two
    cases also go through a real subprocess."""
    store, _ = stored
    before = snapshot(store)
    cases = [("db", name, _fill(q, host), DB_REFUSAL) for name, q in DB_REFUSED.items()]
    cases += [("tool", name, _fill(q, host), tool_refusal(what)) for name, (q, what) in TOOL_REFUSED.items()]
    cases += [("parser", name, q, None) for name, q in PARSER_REFUSED.items()]
    results = [run_in_process(["query", "--store", store, q], tmp_path, monkeypatch, capsys) for _, _, q, _ in cases]
    picked = [cases[0], cases[len(DB_REFUSED)]]  # CREATE (database), LOAD FROM (tool)
    cases += picked
    results += run_many([(["query", "--store", store, q], None, None) for _, _, q, _ in picked])
    for (who, name, query, expected), r in zip(cases, results):
        assert r.returncode == 2, (name, r)
        assert r.stdout == "", (name, r.stdout)
        assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, (name, r.stderr)
        if expected is not None:
            assert r.stderr == expected, (name, r.stderr)
        else:
            assert "Parser exception" in r.stderr, (name, r.stderr)
        assert SECRET not in r.stdout + r.stderr, name
    after = snapshot(store)
    assert after == before
    # nothing was written on the host either
    for leftover in ("out.csv", "out2.csv", "export", "export2", "other.lbug"):
        assert not (host / leftover).exists(), leftover
    record("query clauses refused (LadybugDB, by the database)", len(DB_REFUSED))
    record("query clauses refused (LadybugDB, by the tool)", len(TOOL_REFUSED))
    record("query clauses refused (LadybugDB, by the parser)", len(PARSER_REFUSED))


@pytest.mark.parametrize("name", list(DB_REFUSED))
def test_the_database_itself_refuses_writes_in_read_only_mode(stored, host, name):
    """No text inspection involved: the tool's check lets these through, LadybugDB refuses them."""
    store, _ = stored
    query = _fill(DB_REFUSED[name], host)
    check_read_only(query)  # the tool does not look at writes: the database has to refuse them
    with open_store(str(store)) as s:
        assert not s.writable
        with pytest.raises(WriteRefused) as info:
            s._execute(query, {})  # straight to the read-only LadybugDB connection
    assert not isinstance(info.value, QueryRefused)
    assert "read-only database" in str(info.value)


@pytest.mark.parametrize("name", list(TOOL_REFUSED))
def test_the_tool_check_refuses_what_read_only_mode_allows(name, host):
    query, what = TOOL_REFUSED[name]
    with pytest.raises(QueryRefused) as info:
        check_read_only(_fill(query, host))
    assert str(info.value) == f"the query {what}; add --write to allow it"


def test_reads_that_look_like_refused_clauses_still_run(stored, tmp_path, monkeypatch, capsys):
    store, _ = stored
    results = [run_in_process(["query", "--store", store, "--json", q], tmp_path, monkeypatch, capsys) for q, _ in ALLOWED.values()]
    for (name, (_, rows)), r in zip(ALLOWED.items(), results):
        assert r.returncode == 0, (name, r.stderr)
        assert json.loads(r.stdout) == rows, name
    record("query look-alikes allowed", len(ALLOWED))


def test_with_write_a_create_works_and_the_file_check_is_lifted(stored, host, tmp_path, monkeypatch, capsys):
    store, run_id = stored
    copy = tmp_path / "store"
    shutil.copytree(store, copy, ignore=shutil.ignore_patterns("*lock*"))
    before = snapshot(copy)
    cli("query", "--store", copy, "--write", "CREATE (:Run {id: 'added-with-write'})", check=0)

    def q(*args):
        r = run_in_process(["query", "--store", copy, "--json", *args], tmp_path, monkeypatch, capsys)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    assert q("MATCH (r:Run) RETURN r.id AS id ORDER BY id") == sorted([{"id": run_id}, {"id": "added-with-write"}], key=lambda x: x["id"])
    assert snapshot(copy)["nodes"] == before["nodes"] + 1
    # --write is the user's explicit consent: LOAD FROM runs then
    assert q("--write", f"LOAD FROM '{host}/data.csv' RETURN *") == [{"a": SECRET, "b": 2}]


def test_refusals_come_from_the_store_api_too(stored, host):
    """Store.query (what the CLI calls) refuses before the database runs anything."""
    store, _ = stored
    with open_store(str(store)) as s:
        with pytest.raises(QueryRefused):
            s.query(f"LOAD FROM '{host}/data.csv' RETURN *")
        with pytest.raises(WriteRefused):
            s.query("CREATE (:Run {id: 'x'})")
        assert s.query("RETURN 1 AS a; RETURN 2 AS b") == (["b"], [[2]])


# -- Neo4j (the session's real server) ---------------------------------------------------------
NEO4J_DB_REFUSED = {
    "CREATE": "CREATE (:Run {id: 'intruder'})",
    "CREATE relationship": "MATCH (r:Run), (n:Network) CREATE (r)-[:`ON`]->(n)",
    "MERGE": "MERGE (:Run {id: 'intruder'})",
    "MERGE relationship": "MATCH (r:Run), (n:Network) MERGE (r)-[:INTRUDES]->(n)",
    "SET": "MATCH (n:Network) SET n.name = 'renamed'",
    "SET to null": "MATCH (n:Network) SET n.name = NULL",
    "SET label": "MATCH (n:Network) SET n:Intruder",
    "SET += map": "MATCH (n:Network) SET n += {name: 'renamed'}",
    "REMOVE": "MATCH (n:Network) REMOVE n.name",
    "REMOVE label": "MATCH (n:Network) REMOVE n:Network",
    "DELETE": "MATCH (d:Discard) DETACH DELETE d",
    "DETACH DELETE": "MATCH (n:Network) DETACH DELETE n",
    "DETACH DELETE all": "MATCH (n) DETACH DELETE n",
    "UNWIND CREATE": "UNWIND [1, 2] AS x CREATE (:Chain {uid: 'c' + toString(x)})",
    "FOREACH": "MATCH (n:Network) FOREACH (x IN [1] | SET n.name = 'renamed')",
    "CALL subquery": "CALL { CREATE (:Run {id: 'intruder'}) } RETURN 1 AS one",
    "CALL IN TRANSACTIONS": "MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS",
    "PROFILE CREATE": "PROFILE CREATE (:Run {id: 'intruder'})",
    "CREATE INDEX": "CREATE INDEX intruder_idx IF NOT EXISTS FOR (n:Run) ON (n.engine)",
    "DROP INDEX": "DROP INDEX basis_path_run_text",
    "CREATE CONSTRAINT": "CREATE CONSTRAINT intruder_c IF NOT EXISTS FOR (n:Run) REQUIRE n.engine IS UNIQUE",
    "DROP CONSTRAINT": "DROP CONSTRAINT run_id",
    "CALL writing procedure (label)": "CALL db.createLabel('Intruder')",
    "CALL writing procedure (property key)": "CALL db.createProperty('intruder')",
    "CALL writing procedure (relationship type)": "CALL db.createRelationshipType('INTRUDES')",
    "CALL schema procedure (vector index)": "CALL db.index.vector.createNodeIndex('intruder_vec', 'Run', 'v', 3, 'cosine')",
    "CALL writing procedure (vector property)": "MATCH (n:Network) CALL db.create.setNodeVectorProperty(n, 'v', [1.0, 2.0])",
    "CREATE USER": "CREATE USER intruder SET PASSWORD 'intruder-pw-123'",
    "CREATE DATABASE": "CREATE DATABASE intruder",
    "two statements: read then CREATE": "MATCH (n) RETURN count(n); CREATE (:Run {id: 'intruder'})",
    "two statements: read then SET": "RETURN 1 AS one; MATCH (n:Network) SET n.name = 'renamed'",
    "comment hides nothing": "/* harmless */ MATCH (n:Network) // SET\nSET n.name = 'renamed'",
}
NEO4J_TOOL_REFUSED = {
    "LOAD CSV file": ("LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row", "reads files or URLs (LOAD CSV)"),
    "LOAD CSV URL": ("LOAD CSV WITH HEADERS FROM 'http://127.0.0.1:1/x.csv' AS row RETURN row", "reads files or URLs (LOAD CSV)"),
    "LOAD CSV after MATCH": ("MATCH (r:Run) WITH r LOAD CSV FROM 'file:///x.csv' AS row RETURN row", "reads files or URLs (LOAD CSV)"),
    **{name: TOOL_REFUSED[name] for name in TOOL_REFUSED if name.endswith("(Neo4j)")},
}
NEO4J_ALLOWED = {
    name: ALLOWED[name]
    for name in ("keyword inside a string", "variable called load", "alias called copy", "map key called load", "two read statements (rows of the last)")
}
READ_MODE_MESSAGE = re.compile(r"Writing in read access mode not allowed\. Attempted write to (neo4j|system)")


@pytest.fixture(scope="module")
def neo4j_stored(neo4j_server):
    """The session's server holding one complete deah run of fig1b (and nothing else)."""
    neo4j_server.wipe()
    out = cli("run", EXAMPLES / "fig1b.json", "--store", neo4j_server.uri, "--json", check=0)
    return neo4j_server.uri, json.loads(out.stdout)["run_id"]


def _neo4j_snapshot(uri: str) -> dict:
    """The whole graph (canonical dump), its counts, and the schema and users around it."""
    with open_store(uri) as s:
        nodes, rels = canonical_dump(s)
        catalog = {
            name: sorted(map(str, (r[0] for r in s.query(q)[1])))
            for name, q in {
                "labels": "CALL db.labels() YIELD label RETURN label",
                "types": "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType",
                "keys": "CALL db.propertyKeys() YIELD propertyKey RETURN propertyKey",
                "indexes": "SHOW INDEXES YIELD name RETURN name",
                "constraints": "SHOW CONSTRAINTS YIELD name RETURN name",
                "users": "SHOW USERS YIELD user RETURN user",
                "databases": "SHOW DATABASES YIELD name RETURN name",
            }.items()
        }
    return {"nodes": len(nodes), "relationships": len(rels), "dump": (nodes, rels), **catalog}


def test_neo4j_server_refuses_every_write_in_read_access_mode_with_one_code(neo4j_stored):
    """Straight to the server (the tool's check out of the way): what Neo4j really answers."""
    from neo4j.exceptions import Neo4jError

    from basispath_graph.store import neo4j_store

    uri, _ = neo4j_stored
    seen = {}
    with open_store(uri) as s:
        assert not s.writable
        for name, query in NEO4J_DB_REFUSED.items():
            check_read_only(query)  # the tool does not look at writes
            pieces = statement_texts(query)
            with pytest.raises(Neo4jError) as info:
                s._attempt(pieces, {})  # one READ transaction, no retry, no mapping
            seen[name] = (info.value.code, " ".join(info.value.message.split()))
            with pytest.raises(WriteRefused) as mapped:
                s.query(query)
            assert not isinstance(mapped.value, QueryRefused), name
    codes = {code for code, _ in seen.values()}
    assert codes == {neo4j_store.READ_MODE_CODE}, seen
    assert all(READ_MODE_MESSAGE.fullmatch(message) for _, message in seen.values()), seen
    assert {m.rsplit(" ", 1)[1] for _, m in seen.values()} == {"neo4j", "system"}
    record("query clauses refused (Neo4j, READ access mode)", len(seen))


def test_neo4j_read_access_mode_refusals_through_the_cli_and_the_graph_is_unchanged(neo4j_stored, tmp_path, monkeypatch, capsys):
    uri, _ = neo4j_stored
    before = _neo4j_snapshot(uri)
    cases = [(name, q, DB_REFUSAL) for name, q in NEO4J_DB_REFUSED.items()]
    cases += [(name, q, tool_refusal(what)) for name, (q, what) in NEO4J_TOOL_REFUSED.items()]
    results = [run_in_process(["query", "--store", uri, q], tmp_path, monkeypatch, capsys) for _, q, _ in cases]
    picked = [cases[0], cases[len(NEO4J_DB_REFUSED) - 3], cases[len(NEO4J_DB_REFUSED)]]  # CREATE, hidden write, LOAD CSV
    cases += picked
    results += run_many([(["query", "--store", uri, q], None, None) for _, q, _ in picked])
    for (name, query, expected), r in zip(cases, results):
        assert (r.returncode, r.stdout, r.stderr) == (2, "", expected), (name, r)
    assert _neo4j_snapshot(uri) == before
    record("query clauses refused (Neo4j, through the CLI)", len(cases))


def test_neo4j_read_access_mode_would_let_other_clients_work_be_ended(neo4j_stored):
    """Why the tool refuses TERMINATE TRANSACTIONS and dbms.killConnection(s) on its own: the
    server runs them in a READ transaction (here aimed at ids that do not exist)."""
    uri, _ = neo4j_stored
    with open_store(uri) as s:
        assert not s.writable
        _, rows = s._attempt(["TERMINATE TRANSACTIONS 'neo4j-transaction-999999999'"], {})
        assert rows and "not found" in str(rows[0]).lower(), rows
        _, rows = s._attempt(["CALL dbms.killConnection('bolt-999999999') YIELD message RETURN message"], {})
        assert rows and "no connection found" in str(rows[0]).lower(), rows


def test_neo4j_reads_that_look_like_refused_clauses_still_run(neo4j_stored, tmp_path, monkeypatch, capsys):
    uri, _ = neo4j_stored
    for name, (query, rows) in NEO4J_ALLOWED.items():
        r = run_in_process(["query", "--store", uri, "--json", query], tmp_path, monkeypatch, capsys)
        assert r.returncode == 0, (name, r.stderr)
        assert json.loads(r.stdout) == rows, name
    record("query look-alikes allowed (Neo4j)", len(NEO4J_ALLOWED))


def test_neo4j_with_write_a_create_works(neo4j_stored, tmp_path, monkeypatch, capsys):
    uri, _ = neo4j_stored

    def q(*args):
        r = run_in_process(["query", "--store", uri, "--json", *args], tmp_path, monkeypatch, capsys)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    # several statements: one transaction, in order, the rows of the last
    assert q("--write", "CREATE (:Scratch {id: 'added-with-write'}); MATCH (s:Scratch) RETURN s.id AS id") == [{"id": "added-with-write"}]
    assert q("MATCH (s:Scratch) RETURN s.id AS id") == [{"id": "added-with-write"}]
    q("--write", "MATCH (s:Scratch) DELETE s")
    assert q("MATCH (s:Scratch) RETURN count(s) AS n") == [{"n": 0}]
