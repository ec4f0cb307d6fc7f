"""`why` and `compare` against a real store, on both backends (LadybugDB, then Neo4j: see
tests/conftest.py ``store_uri``)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from basispath_graph import compare, preset, solve
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
    assert answer["certificate"] == [{"coef": 1, "path": answer["path"], "index": 0}]  # itself, basis index 0


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
    for label in ("mlp (deah)", "resnet-style (deah)", "densenet-style (deah)", "repairs", "T chains"):
        assert label in r.stdout
    assert "|B| / m" not in r.stdout  # always (m - H) / m: it told nothing
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
    # the same run twice: its label would be shared, so each says its source, then its column
    assert [c["label"] for c in cols] == [f"densenet-style (deah, run {run}, column 1)", f"densenet-style (deah, run {run}, column 2)",
                                          "densenet-style (skeleton)"]
    assert {c["basis_size"] for c in cols} == {58}


def test_compare_refuses_unknown_items(stored):
    store, _ = stored
    r = cli("compare", "nope", "--store", store, check=2)
    assert r.stderr == "error: nope: neither a spec file nor a run id in this store\n"


def test_compare_columns_name_their_engine_in_the_table_and_the_json(tmp_path):
    spec = str(EXAMPLES / "resnet-style.json")
    args = ("compare", spec, "-e", "deah", "-e", "deah-complete", "--store", str(tmp_path / "nostore"))
    cols = json.loads(cli(*args, "--json", check=0).stdout)
    assert [(c["label"], c["engine"]) for c in cols] == [("resnet-style (deah)", "deah"), ("resnet-style (deah-complete)", "deah-complete")]
    header = cli(*args, check=0).stdout.splitlines()[1]
    assert "resnet-style (deah)" in header and "resnet-style (deah-complete)" in header


def test_compare_makes_labels_of_the_same_network_and_engine_distinct():
    net = preset("resnet", 4, 2)
    table = compare(solve(net, engine="deah"), solve(net, engine="deah"))
    assert [c.label for c in table.columns] == ["resnet-4x2 (deah, solved now, column 1)", "resnet-4x2 (deah, solved now, column 2)"]
    assert [c["label"] for c in table.to_json()] == [c.label for c in table.columns]


@pytest.fixture(scope="module")
def engines_figure():
    """deah and deah-complete on a network where deah-complete uses all three rules."""
    net = preset("resnet", 6, 2)
    results = [solve(net, engine=e) for e in ("deah", "deah-complete")]
    table = compare(*results)
    return results, table, table.figure()


def _bars(ax) -> dict[str, list[float]]:
    return {c.get_label(): [b.get_height() for b in c] for c in ax.containers}


def test_compare_plot_draws_the_discards_of_each_engine_by_rule(engines_figure):
    (deah, complete), _, fig = engines_figure
    discards = _bars(fig.axes[0])
    counts = complete.deah.step3.rule_counts()
    assert all(counts[step] > 0 for step in ("prefix", "suffix", "local"))
    for step, label in (("prefix", "ear hop rule, prefix"), ("suffix", "ear hop rule, suffix"), ("local", "local rule")):
        assert discards[f"deah-complete: {label}"] == [0, counts[step]]
    chain_steps = Counter(d.step for d in deah.deah.step3.discards)
    assert discards["deah: SDVChain, in chains"] == [chain_steps["chain"], 0]
    assert discards["deah: SDVChain, by chain heads"] == [chain_steps["head"], 0]
    assert discards["repairs (drops + re-admissions)"] == [len(deah.repairs), 0]
    rules = Counter(complete.deah.step3.rules.values())
    blocks = _bars(fig.axes[1])
    assert blocks["deah-complete: ear blocks (one new layer pair)"] == [0, rules["ear"]]
    assert blocks["deah-complete: local blocks"] == [0, rules["local"]] and rules["local"] > 0
    assert blocks["deah: T chains"] == [len(deah.deah.step3.chains), 0]


def test_compare_plot_has_no_ratio_panel_and_its_legends_cover_no_bar(engines_figure):
    _, _, fig = engines_figure
    titles = [ax.get_title() for ax in fig.axes]
    assert len(titles) == 3 and not any("|B|" in t for t in titles)
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)  # lay out (constrained) before measuring
    for ax in fig.axes:
        legend = ax.get_legend().get_window_extent(renderer)
        bars = [p.get_window_extent(renderer) for p in ax.patches if p.get_height() > 0]
        assert bars and not any(legend.overlaps(b) for b in bars), ax.get_title()
