"""General networks in the store (issue 18, item 6): ``run``/``ingest`` store the network (layers,
connections with kind and taps), the run and its kept paths; ``runs``, ``why``, ``compare``,
``show`` and ``delete`` read them; the Python API does the same. Store tests run on both backends
(``store_uri``; the Neo4j case carries the ``neo4j`` marker).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from basispath_graph.general.blocks import block_weight_ids
from basispath_graph.general.paths import certify_general, format_general_path, path_block
from basispath_graph.spec import load_any_spec
from basispath_graph.store import open_store

from .cli_runner import cli, run_many, show

ROOT = Path(__file__).resolve().parents[1]
BLOCK = ROOT / "examples" / "general" / "resnet-block.json"
# resnet-block: m = 418, H = 8; 6 layers, 8 dense connections (3 of 9 taps) and one identity
M, H = 418, 8
OFF_BASIS = {"nodes": [["input", 0], ["stem", 1], ["conv1", 0], ["conv2", 0], ["fc", 1]], "taps": [4, 0, 8, 0]}


def _run(store: str, *extra) -> dict:
    return json.loads(cli("run", str(BLOCK), "--store", store, "--json", *extra, check=0).stdout)


def _query(store: str, cypher: str, **params) -> list[dict]:
    args = [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
    return json.loads(cli("query", "--store", store, "--json", *args, cypher, check=0).stdout)


def _weights(net, path) -> Counter:
    """A path's trainable weight ids, counted here from the model's numbering (not the code under test's check)."""
    return Counter(block_weight_ids(net, path_block(net, path))[0].tolist())


def _as_path(net, raw: dict):
    return tuple((net.index[n], i) for n, i in raw["nodes"]), tuple(raw["taps"])


def test_run_stores_the_network_once_the_run_and_m_minus_h_kept_paths(store_uri):
    store = str(store_uri)
    first, second = _run(store), _run(store)
    for s in (first, second):
        assert (s["kind"], s["engine"], s["m"], s["H"], s["basis_size"], s["certified"]) == ("general", "skeleton", M, H, M - H, True)
    answers = {
        name: _query(store, cypher, run=first["run_id"])
        for name, cypher in {
            "kept": "MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b) AS n",
            "networks": "MATCH (n:Network) RETURN n.kind AS kind, n.m AS m, n.H AS H, count(*) AS n",
            "layers": "MATCH (:Network)-[:HAS_GENERAL_LAYER]->(l:GeneralLayer) RETURN l.position AS p, l.name AS name, l.size AS size ORDER BY p",
            "connections": "MATCH (a:GeneralLayer)-[c:CONNECTS]->(b:GeneralLayer) RETURN c.position AS p, a.name AS a, b.name AS b, "
                           "c.kind AS kind, c.taps AS taps, c.weight_offset AS offset ORDER BY p",
            "identity_hops": "MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) WHERE b.text CONTAINS '-[id]->' RETURN b.text AS text, b.taps AS taps",
            "on": "MATCH (r:Run {id: $run})-[:`ON`]->(n:Network) RETURN n.kind AS kind",
        }.items()
    }
    assert answers["kept"] == [{"n": M - H}]
    assert answers["networks"] == [{"kind": "general", "m": M, "H": H, "n": 1}]  # stored once for two runs
    assert [(r["name"], r["size"]) for r in answers["layers"]] == [("bias", 1), ("input", 3), ("stem", 4), ("conv1", 4), ("conv2", 4), ("fc", 2)]
    conns = answers["connections"]
    assert [(c["a"], c["b"], c["kind"], c["taps"]) for c in conns[:4]] == [
        ("input", "stem", "dense", 9), ("stem", "conv1", "dense", 9), ("conv1", "conv2", "dense", 9), ("stem", "conv2", "identity", 0)]
    assert [c["offset"] for c in conns[:5]] == [0, 108, 252, -1, 396]
    hops = answers["identity_hops"]
    assert hops and all(-1 in r["taps"] for r in hops)
    assert answers["on"] == [{"kind": "general"}]
    runs = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert sorted((r["id"], r["kind"], r["status"], r["basis_size"]) for r in runs) == sorted(
        (s["run_id"], "general", "complete", M - H) for s in (first, second))

    # read back from the store alone, the basis certifies
    with open_store(store) as s:
        net = _stored_net(s, first["run_id"])
        kept = [_path_from_row(net, r) for r in s.run("general_kept_paths", run=first["run_id"])]
    assert len(kept) == M - H
    verdict = certify_general(load_any_spec(BLOCK), kept)
    assert verdict.certified, verdict.defect


def _stored_net(s, run_id):
    from basispath_graph.store.general_networks import stored_network

    (row,) = s.run("get_run", id=run_id)
    return stored_network(s, row)


def _path_from_row(net, row):
    nodes = tuple((l, g - int(net.neuron_offset[l])) for l, g in zip(row["layers"], row["nodes"]))
    return nodes, tuple(None if t < 0 else t for t in row["taps"])


def test_why_kept_not_a_candidate_and_refusals(store_uri, tmp_path):
    store = str(store_uri)
    run_id = _run(store)["run_id"]
    net = load_any_spec(BLOCK)
    path_file = tmp_path / "path.json"
    path_file.write_text(json.dumps(OFF_BASIS))
    kept_json = {"nodes": [["bias", 0], ["stem", 0], ["conv2", 0], ["fc", 0]], "taps": [0, None, 0]}
    jobs = [
        ["why", run_id, "0", "--json"],
        ["why", run_id, json.dumps(kept_json), "--json"],
        ["why", run_id, json.dumps(OFF_BASIS), "--json"],
        ["why", run_id, str(path_file), "--json"],
        ["why", run_id, json.dumps(OFF_BASIS)],
        ["why", run_id, '{"nodes": [["input", 0], ["stem", 1], ["conv1", 0], ["fc", 1]], "taps": [4, 0, 0]}'],
        ["why", run_id, "99999"],
        ["why", run_id, "0:1,1:0"],
        ["why", run_id, '{"nodes": [["input", 0]'],
        ["why", run_id, '{"nodes": [["nope", 0], ["fc", 0]], "taps": [0]}'],
    ]
    results = run_many(([*argv, "--store", store], None, None) for argv in jobs)
    by_id, kept, off, from_file, text, *errors = results
    for r in (by_id, kept, off, from_file, text):
        assert r.returncode == 0, show(r)
    by_id, kept, off, from_file = (json.loads(r.stdout) for r in (by_id, kept, off, from_file))
    assert (by_id["status"], by_id["id"], by_id["verified"]) == ("kept", 0, True)
    assert (kept["status"], kept["id"], kept["path"]) == ("kept", 0, kept_json)
    assert off["status"] == "not a candidate" and off["id"] is None and off["verified"] is True
    assert from_file == off
    # the coordinates add up to the path, weight by weight, over stored kept paths (ids from the store)
    total = Counter()
    for term in off["certificate"]:
        assert term["text"] == format_general_path(net, _as_path(net, term["path"]))
        for w, k in _weights(net, _as_path(net, term["path"])).items():
            total[w] += term["coef"] * k
    assert +total == _weights(net, _as_path(net, OFF_BASIS)) and not -total
    stored = {r["id"]: r["text"] for r in _query(store, "MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN b.id AS id, b.text AS text", run=run_id)}
    assert all(stored[t["id"]] == t["text"] for t in off["certificate"])
    assert "not a candidate" in text.stdout and "verified now by vector addition" in text.stdout
    expected = [
        "error: input:0 -[4]-> stem:1 -[0]-> conv1:0 -[0]-> fc:1 is not a path of network resnet-block: no trainable connection conv1 -> fc",
        f"error: path id 99999 is not a path of run {run_id}",
        "error: cannot read path '0:1,1:0': give a stored path id, a JSON path "
        '{"nodes": [[layer, index], ...], "taps": [...]} or a file holding one',
        "error: cannot read path '{\"nodes\": [[\"input\", 0]': not JSON; give a stored path id, a JSON path "
        '{"nodes": [[layer, index], ...], "taps": [...]} or a file holding one',
        'error: path: nodes[0] names no layer: "nope"',
    ]
    for r, message in zip(errors, expected):
        assert (r.returncode, r.stdout, r.stderr.strip()) == (2, "", message), show(r)


def test_compare_show_and_delete(store_uri, tmp_path):
    store = str(store_uri)
    run_id = _run(store)["run_id"]
    plot = tmp_path / "cmp.png"
    jobs = [
        ["compare", run_id, "--json"],
        ["compare", run_id, str(BLOCK), "--json"],
        ["compare", run_id, "--plot", str(plot)],
        ["show", run_id, "--format", "dot"],
        ["show", run_id, "-o", str(tmp_path / "run.png")],
        ["show", run_id, "--path", "0"],
    ]
    cmp, cmp_spec, table, dot, png, path = run_many(([*argv, "--store", store], None, None) for argv in jobs)
    for r in (cmp, cmp_spec, table, dot, png):
        assert r.returncode == 0, show(r)
    (col,) = json.loads(cmp.stdout)
    assert {k: col[k] for k in ("source", "engine", "m", "H", "basis_size", "layers", "dense_connections",
                                "diagonal_connections", "identity_connections", "certified", "status")} == {
        "source": f"run {run_id}", "engine": "skeleton", "m": M, "H": H, "basis_size": M - H, "layers": 6,
        "dense_connections": 8, "diagonal_connections": 0, "identity_connections": 1, "certified": True, "status": "complete"}
    assert set(col["timings"]) >= {"certify", "persist"}
    # a spec with a stored complete run is read from the store
    assert [c["source"] for c in json.loads(cmp_spec.stdout)] == [f"run {run_id}", f"run {run_id}"]
    assert plot.stat().st_size > 0 and "|B|" in table.stdout
    lines = dot.stdout.splitlines()
    nodes = [l for l in lines if l.strip().startswith("L") and "->" not in l]
    edges = [l for l in lines if "->" in l and l.strip().startswith("L")]
    assert len(nodes) == 6 and len(edges) == 9
    assert 'L1 [label="input\\nsize 3\\n' in dot.stdout
    (identity,) = [e for e in edges if 'class="identity"' in e]
    assert identity.strip().startswith("L2 -> L4") and 'style="dashed"' in identity and 'label="identity"' in identity
    assert sum('label="dense x9"' in e for e in edges) == 3
    assert (tmp_path / "run.png").read_bytes()[:4] == b"\x89PNG"
    assert (path.returncode, path.stderr.strip()) == (
        2, f"error: run {run_id} is of a general network: --path draws layered runs only; drop --path for its layer-level picture")

    cli("delete", run_id, "--store", store, "--yes", check=0)
    assert json.loads(cli("runs", "--store", store, "--json", check=0).stdout) == []
    left = _query(store, "MATCH (b:BasisPath) RETURN count(b) AS n")
    layers = _query(store, "MATCH (l:GeneralLayer) RETURN count(l) AS n")
    assert left == [{"n": 0}] and layers == [{"n": 6}]  # the network stays, as for layered runs


def test_ingest_stores_general_and_layered_specs(store_uri):
    store = str(store_uri)
    out = cli("ingest", str(BLOCK), str(ROOT / "examples" / "fig1b.json"), "--store", store, check=0).stdout
    assert "resnet-block m = 418, H = 8" in out
    rows = _query(store, "MATCH (n:Network) RETURN n.kind AS kind, n.name AS name ORDER BY name")
    assert rows == [{"kind": "layered", "name": "fig1b"}, {"kind": "general", "name": "resnet-block"}]


def test_python_api_runs_loads_and_certifies_a_general_network(store_uri):
    from basispath_graph import certify, load_general
    from basispath_graph import open_store as api_open_store

    net = load_general(str(BLOCK))
    with api_open_store(str(store_uri), create=True) as store:
        run = store.run(net)
        back = store.load(run.id)
        answer = store.why(run.id, OFF_BASIS)
        table = dict(store.compare(run.id).rows())
    assert (run.engine, run.basis_size, back.basis_size) == ("skeleton", M - H, M - H)
    assert back.basis_paths == run.basis_paths
    assert certify(net, back).certified and certify(back.network, back.basis_paths).certified
    assert answer["status"] == "not a candidate" and answer["verified"]
    assert table["|B|"] == [M - H] and table["identity shortcuts"] == [1]


def test_a_deah_engine_run_is_stored_the_same_way(store_uri):
    store = str(store_uri)
    summary = _run(store, "--engine", "deah-complete")
    assert (summary["engine"], summary["basis_size"], summary["certified"]) == ("deah-complete", M - H, True)
    with open_store(store) as s:
        net = _stored_net(s, summary["run_id"])
        kept = [_path_from_row(net, r) for r in s.run("general_kept_paths", run=summary["run_id"])]
    assert certify_general(load_any_spec(BLOCK), kept).certified
    (row,) = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert (row["engine"], row["kind"], row["basis_size"]) == ("deah-complete", "general", M - H)


def test_a_network_the_engine_does_not_read_is_refused_leaving_no_trace(store_uri, tmp_path):
    store = str(store_uri)
    spec = json.loads(BLOCK.read_text())
    # conv1 fed from the input and read only by an extra output: on no path to the main output
    spec["layers"].append({"name": "aux", "size": 1})
    spec["connections"][1] = {"from": "input", "to": "conv1", "kind": "dense"}
    spec["connections"][2] = {"from": "stem", "to": "conv2", "kind": "dense"}
    spec["connections"].append({"from": "conv1", "to": "aux"})
    path = tmp_path / "aux.json"
    path.write_text(json.dumps(spec))
    r = cli("run", str(path), "--store", store, "--engine", "deah", check=2)
    assert r.stdout == "" and r.stderr == (
        f"error: {path}: engine deah needs every layer of the core on a path to the main output fc; conv1 leads only to "
        "other outputs; solve it with --engine skeleton\n")
    assert json.loads(cli("runs", "--store", store, "--json", check=0).stdout) == []
    assert _query(store, "MATCH (n:Network) RETURN count(n) AS n") == [{"n": 0}]


def test_killed_general_run_resumes_keeping_what_it_committed(tmp_path):
    store = str(tmp_path / "store")
    env = {"BASISPATH_BATCH_ROWS": "100", "BASISPATH_COPY_THRESHOLD": "1000000"}
    killed = cli("run", str(BLOCK), "--store", store, "-q", env={**env, "BASISPATH_KILL_AT": "basis paths:batch:2"})
    assert killed.returncode == -9
    (row,) = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert (row["status"], row["kind"]) == ("incomplete", "general")
    resumed = json.loads(cli("run", "--resume", row["id"], "--store", store, "--json", env=env, check=0).stdout)
    assert (resumed["run_id"], resumed["basis_size"], resumed["resumed_rows"], resumed["certified"]) == (row["id"], M - H, 200, True)
    assert _query(store, "MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b) AS n", run=row["id"]) == [{"n": M - H}]


def test_a_store_made_before_general_networks_opens_and_takes_them(tmp_path):
    """The new tables and columns come with IF NOT EXISTS: an older store (its schema without
    them, a layered run in it) opens for writing, takes a general run, and keeps its layered run."""
    import ladybug

    from basispath_graph.store.library import QueryLibrary

    folder = tmp_path / "old"
    folder.mkdir()
    new = ("GeneralLayer", "HAS_GENERAL_LAYER", "CONNECTS", "Network ADD", "BasisPath ADD")
    old_schema = [s for s in QueryLibrary("ladybug").statements("schema") if not any(n in s for n in new)]
    db = ladybug.Database(str(folder / "graph.lbug"))
    conn = ladybug.Connection(db)
    for statement in old_schema:
        conn.execute(statement)
    conn.execute("CREATE (:Network {key: 'old', name: 'old', widths: [1, 1], skips: [], m: 1, H: 0})")
    conn.close()
    db.close()
    summary = _run(str(folder))
    assert summary["basis_size"] == M - H
    rows = _query(str(folder), "MATCH (n:Network) RETURN n.name AS name, n.kind AS kind ORDER BY name")
    assert rows == [{"name": "old", "kind": "layered"}, {"name": "resnet-block", "kind": "general"}]


def test_resnet20_stores_its_basis_in_seconds(tmp_path):
    """CIFAR ResNet-20 at channel level: 271,242 kept paths bulk-loaded (COPY), not row by row."""
    spec = tmp_path / "r20.json"
    cli("spec", "preset", "resnet20", "-o", str(spec), check=0)
    store = str(tmp_path / "store")
    summary = _run(store)  # warm up the store (schema) with a small run
    summary = json.loads(cli("run", str(spec), "--store", store, "--json", check=0).stdout)
    assert (summary["m"] - summary["H"], summary["basis_size"], summary["certified"]) == (271242, 271242, True)
    assert summary["timings"]["persist"] < 60  # measured 5.6 s on 2 cores
    assert _query(store, "MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b) AS n", run=summary["run_id"]) == [{"n": 271242}]


def check_resnet20_deah_complete(store: str, tmp_path) -> dict:
    """CIFAR ResNet-20 (taps, biases, identity and projection shortcuts) stored with deah-complete:
    the core's artifacts are there (P^S, discarded paths, their rule records and certificates), and
    ``why`` answers a discarded core path of each rule with the rule and a certificate it checks
    (``verified``), the terms re-added here weight by weight; a kept core path names its
    substructure, a tap-lifted one is a basis path. Returns the run's summary (timings) and counts."""
    spec = tmp_path / "r20.json"
    cli("spec", "preset", "resnet20", "-o", str(spec), check=0)
    summary = json.loads(cli("run", str(spec), "--store", store, "--json", "--engine", "deah-complete", check=0).stdout)
    run_id, core = summary["run_id"], summary["core"]
    assert (summary["basis_size"], summary["certified"], core["discarded"]) == (271242, True, 47776)
    counts = _query(store, "MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath)-[:REASON]->(d:Discard) "
                           "RETURN d.step AS step, count(*) AS n ORDER BY step", run=run_id)
    assert {r["step"]: r["n"] for r in counts} == {k: v for k, v in core["discards_by_step"].items() if v}
    terms = _query(store, "MATCH (:Run {id: $run})-[:DISCARDED]->(:BasisPath)-[c:CERTIFIED_BY]->(:BasisPath) RETURN count(c) AS n", run=run_id)
    assert terms == [{"n": sum(int(k) * v for k, v in core["certificate_sizes"].items())}]
    assert _query(store, "MATCH (s:SubstructurePath {run: $run}) RETURN count(s) AS n", run=run_id) == [{"n": core["substructure_paths"]}]
    first = _query(store, "MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath)-[:REASON]->(d:Discard) RETURN d.step AS step, min(b.id) AS id "
                          "ORDER BY step", run=run_id)
    lifted = summary["parts"]["core"]  # the first tap-lifted path (the core's kept paths come first)
    jobs = [["why", run_id, str(r["id"]), "--json"] for r in first] + [["why", run_id, "0", "--json"], ["why", run_id, str(lifted), "--json"]]
    results = run_many(([*argv, "--store", store], None, None) for argv in jobs)
    for r in results:
        assert r.returncode == 0, show(r)
    *discards, core_kept, lifted_kept = (json.loads(r.stdout) for r in results)
    net = load_any_spec(spec)
    for row, answer in zip(first, discards):
        assert (answer["status"], answer["reason"]["step"], answer["verified"]) == ("discarded", row["step"], True)
        r = answer["reason"]
        assert r["substructure"][0] == "input" and r["substructure"][-1] == "fc" and answer["substructure"] == r["substructure"]
        if row["step"] in ("prefix", "suffix"):  # the hop rule: the twin is a kept path crossing the new hop at the same weight
            assert r["hop"][0] in r["substructure"] and r["twin"]["nodes"][0][0] == "input" and r["crossing"][4] == 0
            assert r["crossing"][:4:2] == r["hop"]
        total = Counter()
        for term in answer["certificate"]:
            assert term["text"] == format_general_path(net, _as_path(net, term["path"])) and term["id"] < lifted
            for w, k in _weights(net, _as_path(net, term["path"])).items():
                total[w] += term["coef"] * k
        assert +total == _weights(net, _as_path(net, answer["path"])) and not -total
    assert (core_kept["status"], core_kept["reason"]["detail"]) == ("kept", "kept: in B_r of its substructure and never discarded")
    assert core_kept["substructure"][0] == "input"
    assert (lifted_kept["status"], lifted_kept["substructure"], lifted_kept["reason"]["detail"]) == ("kept", None, "kept: a path of the basis")
    return summary


def test_resnet20_deah_complete_stores_its_core_and_why_gives_the_rule(tmp_path):
    """LadybugDB (Neo4j: tests/test_neo4j_general_store.py): about 1 M rows (319,018 paths,
    47,776 discard records, 167,968 certificate terms and the relationships) in about 20-30 s."""
    summary = check_resnet20_deah_complete(str(tmp_path / "store"), tmp_path)
    assert summary["timings"]["persist"] < 120


def test_both_backends_store_the_same_general_graph_and_answer_alike(neo4j_server, tmp_path):
    """The same general run on LadybugDB and Neo4j: identical canonical dumps (network, layers,
    connections, run, paths) and identical why / compare / show answers."""
    from .reliability.graph_dump import VOLATILE_RUN_PROPERTIES, canonical_dump

    neo4j_server.wipe()
    uris = {"ladybug": str(tmp_path / "store"), "neo4j": neo4j_server.uri}
    run_ids = {b: _run(uri)["run_id"] for b, uri in uris.items()}
    answers = {}
    for backend, uri in uris.items():
        rid = run_ids[backend]
        with open_store(uri) as s:
            dump = canonical_dump(s, {rid: "<run>"})
        outs = [cli(*argv, "--store", uri, check=0).stdout.replace(rid, "<run>") for argv in (
            ["why", rid, json.dumps(OFF_BASIS), "--json"], ["why", rid, "5", "--json"], ["show", rid, "--format", "dot"])]
        (col,) = json.loads(cli("compare", rid, "--json", "--store", uri, check=0).stdout.replace(rid, "<run>"))
        col.pop("timings")
        runs = [{k: v for k, v in r.items() if k not in VOLATILE_RUN_PROPERTIES}
                for r in json.loads(cli("runs", "--json", "--store", uri, check=0).stdout.replace(rid, "<run>"))]
        answers[backend] = (dump, outs, col, runs)
    lady, neo = answers["ladybug"], answers["neo4j"]
    assert lady[0][0] and lady[0][1]
    assert lady[0][0] == neo[0][0], "nodes differ between LadybugDB and Neo4j"
    assert lady[0][1] == neo[0][1], "relationships differ between LadybugDB and Neo4j"
    assert lady[1:] == neo[1:]
