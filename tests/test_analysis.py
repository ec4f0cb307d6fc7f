"""`why` and `compare` against a real store, on both backends (LadybugDB, then Neo4j: see
tests/conftest.py ``store_uri``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from basispath_graph.analysis.why import explain
from basispath_graph.store import open_store

from .certificates import sums_to
from .cli_runner import cli
from .conftest import BACKEND_PARAMS, module_store

# Module-scoped stores per backend; the Neo4j one carries the neo4j marker like store_uri's.

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="module", params=BACKEND_PARAMS)
def stored(request, tmp_path_factory):
    """Two runs stored once per backend; the tests below only read them. (The Neo4j store is
    the session's server, emptied first; a test emptying it in between would fail the readers
    loudly, and pytest runs this module's tests grouped by backend.)"""
    store = module_store(request, tmp_path_factory, "why")
    runs = {}
    for name in ("densenet-style", "resnet-style"):
        out = cli("run", str(EXAMPLES / f"{name}.json"), "--store", store, "--engine", "deah", "--json", check=0)
        runs[name] = json.loads(out.stdout)
    return store, runs


@pytest.mark.parametrize("name", ["densenet-style", "resnet-style"])
def test_every_discarded_path_has_a_certificate_that_really_sums(stored, name):
    store, runs = stored
    run = runs[name]
    with open_store(store) as s:
        ids = [r[0] for r in s.query("MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath) RETURN b.id ORDER BY b.id", {"run": run["run_id"]})[1]]
        kept = {r[0] for r in s.query("MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN b.text", {"run": run["run_id"]})[1]}
        assert len(ids) == run["discarded"] > 0
        for pid in ids:
            answer = explain(s, run["run_id"], str(pid))
            assert answer["status"] == "discarded" and answer["verified"] is True
            assert sums_to(answer["certificate"], answer["path"])
            assert all(",".join(f"{l}:{i}" for l, i in t["path"]) in kept for t in answer["certificate"])
            assert answer["reason"]["step"] in ("chain", "head", "repair")


def test_why_json_through_the_cli(stored):
    store, runs = stored
    run = runs["resnet-style"]["run_id"]
    rows = json.loads(cli("query", "--store", store, "--json", "-p", f"run={run}",
                          "MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath)-[:REASON]->(d:Discard {step: 'chain'}) RETURN b.text AS t LIMIT 1", check=0).stdout)
    text = rows[0]["t"]
    answer = json.loads(cli("why", "--store", store, run, text, "--json", check=0).stdout)
    assert set(answer) >= {"path", "status", "substructure", "reason", "certificate", "verified"}
    assert ",".join(f"{l}:{i}" for l, i in answer["path"]) == text
    assert answer["status"] == "discarded" and answer["verified"] is True
    r = answer["reason"]
    assert r["step"] == "chain" and r["chain"] >= 1 and r["pair"]["from"] and r["pair"]["to"]
    assert r["shared_layers"] and r["ep"] and r["iep"] and r["ucp_star"] and r["shared"] != r["ucp_star"]
    assert sums_to(answer["certificate"], answer["path"])
    human = cli("why", "--store", store, run, text, check=0).stdout
    assert "discarded by SDVChain, inside chain" in human and "verified now by vector addition" in human


def test_why_on_a_kept_path(stored):
    store, runs = stored
    run = runs["densenet-style"]["run_id"]
    answer = json.loads(cli("why", "--store", store, run, "0", "--json", check=0).stdout)
    assert answer["status"] == "kept" and answer["verified"] is True
    assert answer["certificate"] == [{"coef": 1, "path": answer["path"]}]


@pytest.mark.parametrize(
    "path, message",
    [
        ("0:9,4:0", "0:9,4:0 is not a path of network densenet-style: neuron 9 does not exist in layer 0 (width 2)"),
        ("0:0,3:0", "0:0,3:0 is not a path of network densenet-style: a path runs from layer 0 to layer 4"),
        ("99999", "path id 99999 is not a path of run {run} (neither kept nor discarded by it)"),
    ],
)
def test_why_refuses_paths_that_are_not_in_the_run(stored, path, message):
    store, runs = stored
    run = runs["densenet-style"]["run_id"]
    r = cli("why", "--store", store, run, path, check=2)
    assert r.stderr == f"error: {message.format(run=run)}\n"


def test_why_reports_a_tampered_certificate_loudly(store_uri):
    store = str(store_uri)
    run = json.loads(cli("run", str(EXAMPLES / "fig1b.json"), "--store", store, "--json", check=0).stdout)["run_id"]
    rows = json.loads(cli("query", "--store", store, "--json", "-p", f"run={run}",
                          "MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath) RETURN b.id AS id LIMIT 1", check=0).stdout)
    pid = rows[0]["id"]
    cli("query", "--store", store, "--write", "-p", f"run={run}", "-p", f"id={pid}",
        "MATCH (b:BasisPath {run: $run, id: $id})-[c:CERTIFIED_BY]->() SET c.coef = c.coef * 2", check=0)
    r = cli("why", "--store", store, run, str(pid), "--json", check=1)
    assert json.loads(r.stdout)["verified"] is False
    r = cli("why", "--store", store, run, str(pid), check=1)
    assert "CERTIFICATE DOES NOT CHECK" in r.stdout


def test_compare_three_specs_prints_the_table_and_writes_a_png(tmp_path):  # no store: solved now
    png = tmp_path / "cmp.png"
    specs = [str(EXAMPLES / f"{n}.json") for n in ("mlp", "resnet-style", "densenet-style")]
    r = cli("compare", *specs, "--engine", "deah", "--store", str(tmp_path / "nostore"), "--plot", str(png), check=0)
    for label in ("mlp (deah)", "resnet-style (deah)", "densenet-style (deah)", "|B| / m", "repairs", "T chains"):
        assert label in r.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20000
    cols = json.loads(cli("compare", *specs, "--engine", "deah", "--json", "--store", str(tmp_path / "nostore"), check=0).stdout)
    assert [(c["m"], c["H"], c["basis_size"], c["repairs"]) for c in cols] == [(78, 12, 66, 0), (150, 20, 130, 10), (67, 9, 58, 4)]


def test_compare_uses_stored_runs_and_two_engines(stored):
    store, runs = stored
    run = runs["densenet-style"]["run_id"]
    cols = json.loads(cli("compare", run, str(EXAMPLES / "densenet-style.json"), "-e", "deah", "-e", "skeleton",
                          "--store", store, "--json", check=0).stdout)
    assert [c["source"] for c in cols] == [f"run {run}", f"run {run}", "solved now"]
    assert [c["engine"] for c in cols] == ["deah", "deah", "skeleton"]
    assert {c["basis_size"] for c in cols} == {58}


def test_compare_refuses_unknown_items(stored):
    store, _ = stored
    r = cli("compare", "nope", "--store", store, check=2)
    assert r.stderr == "error: nope: neither a spec file nor a run id in this store\n"
