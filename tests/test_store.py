"""The graph store end to end: persistence, Cypher-computed relations, CLI, resume.

Every test that stores something runs on both backends (fixture ``store_uri``: a LadybugDB folder,
then the session's Neo4j server; see tests/conftest.py). The tests about LadybugDB itself (its
folder, its file, its lock) stay LadybugDB-only and say so.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basispath_graph.deah.engine import run_deah
from basispath_graph.deah.step3_sdvchain import InMemoryRelations, build_chains, build_q_sets
from basispath_graph.network import Network
from basispath_graph.solver import solve
from basispath_graph.store import open_store
from basispath_graph.store.relations import StoreRelations, persist_substructures
from basispath_graph.pipeline import execute_run

from .cli_runner import cli, run_many, show
from .conftest import BACKEND_PARAMS, module_store

# Module-scoped stores per backend; the Neo4j one carries the neo4j marker like store_uri's.
from .strategies import networks

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module", params=BACKEND_PARAMS)
def shared_store(request, tmp_path_factory):
    """One store per backend for every example of a module's hypothesis tests (each example
    writes under its own run id; another test emptying the Neo4j database in between does not
    matter). Neo4j keeps the same number of examples: its 25 take about 2 s (measured)."""
    uri = module_store(request, tmp_path_factory, "lb")
    store = open_store(uri, write=True)
    yield store
    store.close()


@given(net=networks(max_layers=6, max_width=3), seed=st.integers(0, 3))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_cypher_relations_equal_the_in_memory_ones(shared_store, net, seed):
    run_id = f"rel{abs(hash((net.widths, net.pairs, seed))) % 10**9}"
    deah = run_deah(net, seed)
    s1 = deah.step1
    if shared_store.run("count_kept", run=run_id) and shared_store.query(
        "MATCH (s:SubstructurePath {run: $run}) RETURN count(s)", {"run": run_id}
    )[1][0][0]:
        return  # hypothesis replayed an example already stored
    persist_substructures(shared_store, run_id, s1)
    stored = StoreRelations.read(shared_store, run_id, net.L)
    mem = InMemoryRelations(s1)
    sel = s1.selected
    for a in sel:
        for b in sel:
            if a != b:
                assert stored.subdivides(a, b) == mem.subdivides(a, b)
                assert stored.shared_pairs(a, b) == mem.shared_pairs(a, b)
    assert build_chains(s1, stored) == build_chains(s1, mem)
    assert build_q_sets(build_chains(s1, mem), stored) == build_q_sets(build_chains(s1, mem), mem)


@pytest.mark.parametrize("name", ["fig1b", "resnet-style", "densenet-style"])
def test_run_through_the_store_matches_solve_in_memory(shared_store, name):
    spec = json.loads((EXAMPLES / f"{name}.json").read_text())
    net = Network.build(spec["widths"], spec["skips"], name)
    outcome = execute_run(shared_store, net, "deah")
    plain = solve(net, "deah")
    assert [b.nodes.tolist() for b in outcome.result.basis] == [b.nodes.tolist() for b in plain.basis]
    rows = shared_store.run("count_kept", run=outcome.run_id)
    assert rows == [{"n": net.m - net.H}]
    cols, rows = shared_store.query(
        "MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath)-[:REASON]->(d:Discard) RETURN count(DISTINCT b) AS n",
        {"run": outcome.run_id},
    )
    assert rows == [[len(plain.discarded)]]


def test_cli_run_then_query_returns_m_minus_h_and_every_artifact_is_queryable(tmp_path, store_uri):
    store = str(store_uri)
    out = cli("run", str(EXAMPLES / "densenet-style.json"), "--store", store, "--engine", "deah", "--json", check=0)
    summary = json.loads(out.stdout)
    run_id = summary["run_id"]
    assert (summary["m"], summary["H"], summary["basis_size"], summary["certified"]) == (67, 9, 58, True)

    queries = {
        "kept": "MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b) AS n",
        "discarded": "MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath) RETURN count(b) AS n",
        "substructures": "MATCH (s:SubstructurePath {run: $run}) RETURN count(s) AS n, sum(CASE WHEN s.selected THEN 1 ELSE 0 END) AS sel",
        "sets": "MATCH (u:SubdivisionSet {run: $run})-[:OF]->(p) RETURN u.r AS r, u.size AS size, p.layers AS layers ORDER BY r",
        "contains": "MATCH (u:SubdivisionSet {run: $run})-[:CONTAINS]->(p) RETURN u.r AS r, count(p) AS n ORDER BY r",
        "chains": "MATCH (c:Chain {run: $run})-[l:LINK]->(u:SubdivisionSet) RETURN c.t AS t, l.pos AS pos, u.size AS size ORDER BY t, pos",
        "subdivides": "MATCH (a:SubstructurePath {run: $run})-[:SUBDIVIDES]->(b) RETURN count(*) AS n",
        "shares_edge": "MATCH (a:SubstructurePath {run: $run})-[s:SHARES_EDGE]->(b) RETURN count(*) AS n",
        "uncertified": "MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath) WHERE NOT (b)-[:CERTIFIED_BY]->() RETURN count(b) AS n",
        "steps": "MATCH (d:Discard {run: $run}) RETURN d.step AS step, d.action AS action, count(*) AS n ORDER BY step, action",
    }
    # the queries only read: started together (interpreter start-up dominates)
    results = run_many((["query", "--store", store, "--json", "--param", f"run={run_id}", cypher], None, None) for cypher in queries.values())
    answers = {}
    for name, r in zip(queries, results):
        assert r.returncode == 0, show(r)
        answers[name] = json.loads(r.stdout)

    assert answers["kept"] == [{"n": 58}]
    assert answers["discarded"] == [{"n": summary["discarded"]}]
    # P^S of densenet-style (every skip over 5 layers): 2^3 substructure paths, R = 10 - 3 = 7 selected.
    assert answers["substructures"] == [{"n": 8, "sel": 7}]
    sets = answers["sets"]
    assert len(sets) == 7 and {s["size"] for s in sets if s["layers"] == [0, 1, 2, 3, 4]} == {0}
    assert {c["r"]: c["n"] for c in answers["contains"]} == {s["r"]: s["size"] for s in sets if s["size"]}
    chains = answers["chains"]
    assert chains and all(c["size"] == 0 for c in chains if c["pos"] == max(x["pos"] for x in chains if x["t"] == c["t"]))
    assert answers["subdivides"][0]["n"] > 0
    assert answers["shares_edge"][0]["n"] > 0
    # every discarded path is certified by kept paths, with a stored coefficient
    assert answers["uncertified"] == [{"n": 0}]
    steps = answers["steps"]
    assert {(s["step"], s["action"]) for s in steps} <= {("chain", "discard"), ("head", "discard"), ("repair", "drop"), ("repair", "readmit"), ("repair", "add")}
    repairs = sum(s["n"] for s in steps if s["step"] == "repair")
    assert repairs == summary["repairs"]


def test_query_is_read_only_unless_write(tmp_path, store_uri):
    store = str(store_uri)
    cli("ingest", str(EXAMPLES / "fig1b.json"), "--store", store, check=0)
    for write in ["CREATE (:Run {id: 'x'})", "MATCH (n:Network) SET n.name = 'y'", "MATCH (n:Network) DETACH DELETE n"]:
        r = cli("query", "--store", store, write, check=2)
        assert r.stderr == "error: the query writes to the store; add --write to allow it\n"
    r = cli("query", "--store", store, "--json", "MATCH (n:Network) RETURN n.name AS name", check=0)
    assert json.loads(r.stdout) == [{"name": "fig1b"}]
    cli("query", "--store", store, "--write", "MATCH (n:Network) SET n.name = 'renamed'", check=0)
    r = cli("query", "--store", store, "--json", "MATCH (n:Network) RETURN n.name AS name", check=0)
    assert json.loads(r.stdout) == [{"name": "renamed"}]


def test_query_params_are_typed_from_json(tmp_path, store_uri):
    store = str(store_uri)
    cli("ingest", str(EXAMPLES), "--store", store, check=0)
    r = cli("query", "--store", store, "--json", "-p", "m=32", "MATCH (n:Network) WHERE n.m = $m RETURN n.name AS name", check=0)
    assert json.loads(r.stdout) == [{"name": "fig1b"}]
    r = cli("query", "--store", store, "-p", "novalue", "RETURN 1", check=2)
    assert r.stderr == "error: --param 'novalue': expected key=value\n"


def test_ingest_checks_every_spec_before_writing(tmp_path, store_uri):
    store = str(store_uri)
    cli("ingest", str(EXAMPLES / "mlp.json"), "--store", store, check=0)
    bad = tmp_path / "specs"
    bad.mkdir()
    (bad / "a.json").write_text((EXAMPLES / "fig1b.json").read_text())
    (bad / "b.json").write_text('{"widths": [2, 0, 3]}')
    r = cli("ingest", str(bad), "--store", store, check=2)
    assert r.stderr == f"error: {bad / 'b.json'}: widths[1] must be an integer >= 1, got 0\n"
    r = cli("query", "--store", store, "--json", "MATCH (n:Network) RETURN n.name AS name", check=0)
    assert json.loads(r.stdout) == [{"name": "mlp"}]


KILL_STAGES = ["substructures", "solved", "basis paths", "discards", "links", "complete"]
# Neo4j: one stage, mid-persistence (tests/reliability/test_crash_safety.py kills at every
# point on both backends); each case costs three runs.
NEO4J_KILL_STAGES = ["discards"]


@pytest.mark.parametrize(
    "store_uri, stage",
    [("ladybug", stage) for stage in KILL_STAGES] + [("neo4j", stage) for stage in NEO4J_KILL_STAGES],
    indirect=["store_uri"],
)
def test_killed_run_is_incomplete_earlier_runs_unchanged_and_resume_completes_it(store_uri, stage):
    store = str(store_uri)
    first = json.loads(cli("run", str(EXAMPLES / "fig1b.json"), "--store", store, "--json", check=0).stdout)
    before = cli("query", "--store", store, "--json", "MATCH (b:BasisPath {run: $run}) RETURN b.text AS t ORDER BY t", "-p", f"run={first['run_id']}", check=0).stdout

    killed = cli("run", str(EXAMPLES / "resnet-style.json"), "--store", store, "-q", env={"BASISPATH_KILL_AT": stage})
    assert killed.returncode == -9
    runs = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    status = {r["id"]: r["status"] for r in runs}
    assert status[first["run_id"]] == "complete"
    (killed_id,) = [i for i, s in status.items() if i != first["run_id"]]
    assert status[killed_id] == "incomplete"

    resumed = json.loads(cli("run", "--resume", killed_id, "--store", store, "--json", check=0).stdout)
    assert resumed["run_id"] == killed_id and resumed["certified"] and resumed["basis_size"] == 130
    # What the killed run committed is kept, not deleted and rewritten (store/resume.py).
    assert "resume" in resumed["timings"]
    assert (resumed["resumed_rows"] == 0) == (stage == "substructures")
    runs = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert {r["id"]: r["status"] for r in runs} == {first["run_id"]: "complete", killed_id: "complete"}
    n = json.loads(cli("query", "--store", store, "--json", "-p", f"run={killed_id}", "MATCH (:Run {id: $run})-[:KEPT]->(b) RETURN count(b) AS n", check=0).stdout)
    assert n == [{"n": 130}]
    after = cli("query", "--store", store, "--json", "MATCH (b:BasisPath {run: $run}) RETURN b.text AS t ORDER BY t", "-p", f"run={first['run_id']}", check=0).stdout
    assert after == before


class _RecordingStore:
    """Records what the writers would send to a store."""

    def __init__(self):
        self.calls = []

    def bulk(self, name, columns, progress=None):
        self.calls.append((name, columns["id"].tolist(), columns["uid"].tolist()))

    def run(self, name, /, **params):
        self.calls.append((name, params))
        return []


def test_resume_writes_only_the_rows_a_killed_run_did_not_commit():
    import numpy as np

    from basispath_graph.store import resume
    from basispath_graph.store.base import ArrowStrings, Ragged

    def paths(ids):
        ids = np.array(ids, dtype=np.int64)
        return {"uid": ArrowStrings.keys("r:", ids), "id": ids, "nodes": Ragged.from_rows([np.c_[ids, ids]])}

    store = _RecordingStore()
    committed = resume.Committed("r", {"insert_basis_paths": 3, "compute_contains": 7})
    resume.bulk(store, "insert_basis_paths", paths(range(5)), committed)  # kept paths: 3 of 5 stored
    resume.bulk(store, "insert_basis_paths", paths(range(5, 9)), committed)  # discarded: none stored
    resume.derive(store, "compute_contains", committed, run="r")  # ran before the kill: skipped
    resume.derive(store, "compute_subdivides", committed, run="r")  # did not: runs
    assert store.calls == [
        ("insert_basis_paths", [3, 4], ["r:3", "r:4"]),
        ("insert_basis_paths", [5, 6, 7, 8], ["r:5", "r:6", "r:7", "r:8"]),
        ("compute_subdivides", {"run": "r"}),
    ]
    assert committed.rows == 10
    committed.check_used()  # every stored row was one of the redone writes

    extra = resume.Committed("r", {"link_kept": 4})
    resume.bulk(_RecordingStore(), "link_kept", {"id": np.arange(3), "uid": ["a", "b", "c"]}, extra)
    with pytest.raises(resume.StoreError) as exc:
        extra.check_used()
    assert str(exc.value) == (
        "run r: the partial run holds rows this solve does not write (1 of link_kept); "
        "delete it ('basispath delete r') and run the network again"
    )


def test_ragged_slices_keep_their_rows():
    import numpy as np

    from basispath_graph.store.base import Ragged

    r = Ragged.from_rows([np.array([[1, 2], [3, 4]]), np.array([[5, 6, 7]])])
    assert r[1:].tolist() == [[3, 4], [5, 6, 7]] and r[:1].tolist() == [[1, 2]] and r[2:].tolist() == [[5, 6, 7]]
    assert Ragged.concat([r[1:], Ragged.empty(2), r[:1]]).tolist() == [[3, 4], [5, 6, 7], [], [], [1, 2]]
    assert Ragged.from_mask(np.array([[1, 2, 3], [4, 5, 6]]), np.array([[True, False, True], [False, False, False]])).tolist() == [[1, 3], []]


def test_resume_refuses_complete_and_unknown_runs(tmp_path, store_uri):
    store = str(store_uri)
    rid = json.loads(cli("run", str(EXAMPLES / "fig1b.json"), "--store", store, "--json", check=0).stdout)["run_id"]
    assert cli("run", "--resume", rid, "--store", store, check=2).stderr == f"error: run {rid} is already complete; nothing to resume\n"
    assert cli("run", "--resume", "nope", "--store", store, check=2).stderr == "error: no run 'nope' in this store\n"


def test_reading_a_missing_store_is_a_clear_error(tmp_path):  # LadybugDB only: about its folder
    r = cli("runs", "--store", str(tmp_path / "none"), check=2)
    assert r.stderr == f"error: no store at {tmp_path / 'none'} (create one with 'basispath ingest' or 'basispath run')\n"


def test_store_env_variable_is_the_default(tmp_path):  # LadybugDB only: checks its graph.lbug file
    store = tmp_path / "from-env"
    r = cli("ingest", str(EXAMPLES / "fig1b.json"), env={"BASISPATH_STORE": str(store)})
    assert r.returncode == 0, r.stderr
    assert (store / "graph.lbug").exists()


def test_second_writer_is_refused_with_the_holders_pid(tmp_path):  # LadybugDB only: its folder lock
    store = str(tmp_path / "store")
    cli("ingest", str(EXAMPLES / "fig1b.json"), "--store", store, check=0)
    holder = open_store(store, write=True)
    try:
        r = cli("ingest", str(EXAMPLES / "mlp.json"), "--store", store, check=3)
        assert r.stderr == f"error: store is locked by PID {os.getpid()} ({store}): another basispath is writing; retry with --wait SECONDS\n"
    finally:
        holder.close()


def test_unreachable_neo4j_gives_exit_3_and_never_prints_the_password(tmp_path):
    env = {"NEO4J_USER": "neo4j", "NEO4J_PASSWORD": "s3cret-pw"}
    r = cli("runs", "--store", "neo4j://127.0.0.1:1", env=env, check=3)
    assert r.stderr.startswith("error: cannot reach Neo4j at neo4j://127.0.0.1:1")
    assert "s3cret-pw" not in r.stdout + r.stderr


def test_neo4j_without_credentials_and_no_terminal_is_refused(tmp_path):
    env = {"NEO4J_USER": None, "NEO4J_PASSWORD": None}  # unset
    r = cli("runs", "--store", "bolt://127.0.0.1:1", env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 3
    assert r.stderr == "error: Neo4j credentials missing: set NEO4J_USER and NEO4J_PASSWORD\n"


def test_a_run_over_the_memory_estimate_is_refused_and_leaves_no_trace(tmp_path, store_uri):
    store = str(store_uri)
    first = json.loads(cli("run", str(EXAMPLES / "fig1b.json"), "--store", store, "--json", check=0).stdout)
    # densenet-style: 7 substructures whose B_r hold 82 candidate paths -> about 86 MB (the
    # interpreter and libraries: guards.MEMORY's fixed part), over a limit of 100 kB.
    r = cli("run", str(EXAMPLES / "densenet-style.json"), "--store", store, "--engine", "deah", env={"BASISPATH_MAX_MEMORY_GB": "0.0001"}, check=2)
    assert r.stderr == (
        f"error: {EXAMPLES / 'densenet-style.json'}: deah (82 candidate paths in the B_r of 7 substructures) would need "
        "about 87 MB (at least 44 MB), over the limit of 100 kB; use --engine skeleton or raise --max-memory-gb / BASISPATH_MAX_MEMORY_GB\n"
    )
    runs = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert [(x["id"], x["status"]) for x in runs] == [(first["run_id"], "complete")]


def test_memory_limit_option_and_bad_environment_value(tmp_path):
    spec = str(EXAMPLES / "resnet-style.json")
    r = cli("solve", spec, "--engine", "skeleton", "--max-memory-gb", "0.00001", check=2)
    assert r.stderr == f"error: {spec}: skeleton would need about 43 MB (at least 39 MB), over the limit of 10 kB; raise --max-memory-gb / BASISPATH_MAX_MEMORY_GB\n"
    r = cli("solve", spec, env={"BASISPATH_MAX_MEMORY_GB": "lots"}, check=2)
    assert r.stderr == "error: BASISPATH_MAX_MEMORY_GB must be a number of GB, got 'lots'\n"
    cli("solve", spec, "--max-memory-gb", "1", check=0)


def test_list_columns_go_to_copy_with_64_bit_offsets():
    # int32 list offsets wrap past 2^31 list values (50 M paths of a deep network): the Arrow
    # table handed to COPY must use large_list. (2^31 values would take 17 GB to show directly.)
    import pyarrow as pa

    from basispath_graph.store.base import Ragged
    from basispath_graph.store.ladybug_store import _arrow_table

    table = _arrow_table({"nodes": Ragged([1, 2, 3], [0, 2, 3])})
    assert table.schema.field("nodes").type == pa.large_list(pa.int64())
    assert table.column("nodes").to_pylist() == [[1, 2], [3]]


def test_nullable_columns_are_null_in_arrow_and_unset_for_neo4j():
    # A Discard's properties of the other rules: NULL in LadybugDB's COPY table (in the column's
    # own type), None (not set) in Neo4j's parameter lists, whatever the column holds there.
    import numpy as np
    import pyarrow as pa

    from basispath_graph.store.base import ArrowStrings, Nullable, Ragged, columns_from, concat_columns
    from basispath_graph.store.ladybug_store import _arrow_table
    from basispath_graph.store.neo4j_store import _column_slice

    valid = np.array([True, False, True])
    cols = {
        "hop": Nullable(Ragged([1, 2, 9, 3, 4], [0, 2, 3, 5]), valid),
        "crossing": Nullable(np.array([7, -1, 8]), valid),
        "twin": Nullable(ArrowStrings(pa.array(["0:1", "", "1:0"])), valid),
        "chain": Nullable.none(np.zeros(3, dtype=np.int64)),
    }
    table = _arrow_table(cols)
    assert table.schema.field("hop").type == pa.large_list(pa.int64()) and table.schema.field("chain").type == pa.int64()
    assert table.to_pydict() == {"hop": [[1, 2], None, [3, 4]], "crossing": [7, None, 8], "twin": ["0:1", None, "1:0"], "chain": [None] * 3}
    assert _column_slice(cols["hop"], 1, 3) == [None, [3, 4]] and _column_slice(cols["twin"], 0, 2) == ["0:1", None]
    assert columns_from(cols, 2)["crossing"].tolist() == [8]
    assert concat_columns([cols, columns_from(cols, 1)])["hop"].tolist() == [[1, 2], None, [3, 4], None, [3, 4]]


@pytest.mark.parametrize("engine, spec, steps", [
    ("deah-complete", ("stride", 6, 3, 2), {"prefix", "suffix", "local"}),
    ("deah", "resnet-style", {"chain", "repair"}),
])
def test_a_discard_stores_only_the_properties_of_its_rule(store_uri, engine, spec, steps):
    from basispath_graph.presets import preset_network
    from basispath_graph.spec import load_spec

    net = load_spec(EXAMPLES / f"{spec}.json") if isinstance(spec, str) else preset_network(*spec[:3], stride=spec[3])
    with open_store(store_uri.uri, write=True) as store:
        run_id = execute_run(store, net, engine, 0).run_id
        _, rows = store.query(
            "MATCH (d:Discard {run: $run}) RETURN d.step, d.chain IS NULL, d.pair IS NULL, d.shared IS NULL, "
            "d.hop IS NULL, d.crossing IS NULL, d.twin IS NULL, d.agrees IS NULL, d.substructure IS NULL", {"run": run_id})
    seen = {}
    for step, *nulls in rows:
        seen.setdefault(step, set()).add(tuple(nulls))
    sdvchain, hop_rule = (False,) * 3 + (True,) * 4, (True,) * 3 + (False,) * 4
    expected = {"chain": sdvchain, "head": sdvchain, "prefix": hop_rule, "suffix": hop_rule, "local": (True,) * 7}
    assert set(seen) == steps
    for step, patterns in seen.items():
        if step == "repair":  # its action only (and the substructure of a path it re-admits or drops)
            assert {p[:7] for p in patterns} == {(True,) * 7}
        else:
            assert patterns == {expected[step] + (False,)}, step
