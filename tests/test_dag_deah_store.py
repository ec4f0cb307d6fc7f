"""A deah-complete run of a layer DAG core in the store (issue 28, item 4; ``store/dag_runs.py``), on
both backends: ``why`` answers every discard (by id and as a path) with its ear, its rule and a
certificate that is the solve's telescoping sum and checks; kept paths and paths in no B_r get
the described basis's answers; ``GraphStore.load`` makes every discard in id order; ``compare``
shows the run's DEAH rows; a run whose blocks are not its network's is refused in one line."""

from __future__ import annotations

import json

import pytest

from basispath_graph import solve_general
from basispath_graph.analysis.compare import column_from_run
from basispath_graph.analysis.why import WhyError, explain
from basispath_graph.general.blocks import block_general_paths, general_path_json
from basispath_graph.general.dag_discards import EarDiscards, certificate
from basispath_graph.general.model import parse_general
from basispath_graph.graph_store import open_store as open_graph_store
from basispath_graph.pipeline import execute_general_run
from basispath_graph.store import open_store

from .cli_runner import run_in_process
from .conftest import BACKEND_PARAMS, module_store

#: SqueezeNet's fire module (x -> s -> {e1 (grouped), e3 (3 taps)} -> y) with a kept BatchNorm
#: scale of e1 (diagonal) that also adds s (identity), biases and an extra output.
FIRE = {
    "name": "fire-dag",
    "layers": [{"name": "bias", "size": 1}, {"name": "x", "size": 2}, {"name": "s", "size": 4}, {"name": "e1", "size": 4},
               {"name": "e3", "size": 2}, {"name": "bn", "size": 4}, {"name": "y", "size": 2}, {"name": "aux", "size": 1}],
    "connections": [
        {"from": "x", "to": "s", "taps": 2}, {"from": "s", "to": "e1", "kind": "grouped", "groups": 2},
        {"from": "s", "to": "e3", "taps": 3}, {"from": "e1", "to": "bn", "kind": "diagonal"}, {"from": "s", "to": "bn", "kind": "identity"},
        {"from": "e1", "to": "y"}, {"from": "e3", "to": "y"}, {"from": "bn", "to": "y"}, {"from": "bias", "to": "s"},
        {"from": "bias", "to": "e3"}, {"from": "bn", "to": "aux"},
    ],
}


@pytest.fixture(scope="module", params=BACKEND_PARAMS)
def stored(request, tmp_path_factory):
    uri = module_store(request, tmp_path_factory, "dag-deah")
    net = parse_general(FIRE, "<spec>", 10**6)
    with open_store(uri, write=True) as store:
        outcome = execute_general_run(store, net, "deah-complete")
    return uri, outcome.run_id, net, solve_general(net, "deah-complete")


def _discards(result):
    """(id, reason, general path) of every discard of the solve, in id order."""
    out, first = [], result.basis_size
    for n in range(1, len(result.dag.ears)):
        for reason, block in EarDiscards(result.dag, n).blocks():
            for path in block_general_paths(result.network, block):
                out.append((first, reason, n, path))
                first += 1
    return out


def _terms(net, answer) -> set:
    return {(t["coef"], json.dumps(t["path"])) for t in answer["certificate"]}


def test_the_run_is_stored_with_its_counts(stored):
    uri, run_id, net, result = stored
    with open_store(uri) as store:
        (row,) = store.run("get_run", id=run_id)
        blocks = store.run("run_described_blocks", run=run_id)
        subs = store.run("selected_substructures", run=run_id)
    assert result.parts["core"] == "layer DAG" and row["certified"] and row["raw_certified"]
    assert row["discarded"] == result.dag.discard_count == len(_discards(result)) > 0
    assert [b["rule"] for b in blocks] == ["p0"] + ["ear"] * (len(result.dag.ears) - 1)
    assert [list(s["layers"]) for s in sorted(subs, key=lambda s: s["idx"])] == [list(e.layers) for e in result.dag.ears]


def test_why_answers_every_discard_with_its_ear_rule_and_certificate(stored):
    uri, run_id, net, result = stored
    with open_store(uri) as store:
        for pid, reason, n, path in _discards(result):
            by_id = explain(store, run_id, str(pid))
            by_path = explain(store, run_id, json.dumps(general_path_json(net, path)))
            assert by_id == by_path
            assert (by_id["id"], by_id["status"], by_id["reason"]["step"], by_id["reason"]["ear"]) == (pid, "discarded", reason, n)
            assert by_id["verified"]
            layers = tuple(l for l, _ in path[0])
            hops = tuple(net.hop[(a, b, True)] for a, b in zip(layers, layers[1:]))
            expected = certificate(result.dag, layers, hops, [i for _, i in path[0]], path[1])
            assert _terms(net, by_id) == {(c, json.dumps(general_path_json(net, p))) for c, p in expected}


def test_kept_paths_and_paths_in_no_b_r_take_the_described_answers(stored):
    uri, run_id, net, result = stored
    kept = result.basis_paths[:5]
    with open_store(uri) as store:
        for k, p in enumerate(kept):
            answer = explain(store, run_id, json.dumps(p))
            assert (answer["status"], answer["id"]) == ("kept", k)
        # x -> s -> e3 -> y crossing two weights no walk uses: on ear s-e3-y's route, in no B_r
        odd = {"nodes": [["x", 1], ["s", 3], ["e3", 1], ["y", 1]], "taps": [1, 2, 0]}
        answer = explain(store, run_id, json.dumps(odd))
        assert answer["status"] == "not a candidate" and answer["verified"] and answer["id"] is None
        with pytest.raises(WhyError, match=f"path id {result.basis_size + result.dag.discard_count} is not a path of run"):
            explain(store, run_id, str(result.basis_size + result.dag.discard_count))


def test_load_makes_every_discard_in_id_order(stored):
    uri, run_id, net, result = stored
    with open_graph_store(str(uri), read_only=True) as graph:
        run = graph.load(run_id)
    assert run.basis_size == result.basis_size and run.certified
    assert list(run.discarded_paths) == [tuple(p) for _, _, _, p in _discards(result)]
    assert run.discarded_paths[-1] == _discards(result)[-1][3]


def test_graph_store_run_returns_the_discards_load_gives(tmp_path):
    net = parse_general(FIRE, "<spec>", 10**6)
    with open_graph_store(str(tmp_path / "store"), create=True) as graph:
        run = graph.run(net, "deah-complete")
        assert list(run.discarded_paths) == list(graph.load(run.id).discarded_paths) != []


def test_show_labels_the_run_with_its_selection_and_discards(stored, tmp_path, monkeypatch, capsys):
    uri, run_id, net, result = stored
    r = run_in_process(["show", run_id, "--store", str(uri), "--format", "dot"], tmp_path, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    core = result.dag.decomposition.core
    assert (f"core: {len(core.layers)} layers, |P^S| = {result.parts['substructure_paths']}, R = {len(result.dag.ears)}, "
            f"{result.dag.discard_count} discarded") in r.stdout


def test_compare_shows_the_runs_deah_rows(stored):
    uri, run_id, net, result = stored
    with open_store(uri) as store:
        values = column_from_run(store, run_id).values
    counts = result.dag.rule_counts()
    assert (values["R"], values["ear_blocks"], values["prefix_discards"], values["suffix_discards"], values["repairs"]) == (
        len(result.dag.ears), len(result.dag.ears) - 1, counts["prefix"], counts["suffix"], 0)
    assert values["substructure_paths"] == result.parts["substructure_paths"]


def test_why_text_names_the_ear_and_its_new_connections(stored, tmp_path, monkeypatch, capsys):
    uri, run_id, net, result = stored
    pid, reason, n, _ = _discards(result)[0]
    summary = result.dag.ears[n]
    a, b = summary.segment
    segment = " -> ".join(net.layers[l].name for l in summary.layers[a:b + 1])
    r = run_in_process(["why", run_id, str(pid), "--store", str(uri)], tmp_path, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    assert f"discarded by deah-complete's ear rule on a layer DAG, ear {n}: it owns the new connections {segment}" in r.stdout
    assert f"differs from every kept row {'before' if reason == 'prefix' else 'after'} them ({reason})" in r.stdout
    assert "verified now by vector addition" in r.stdout


def test_blocks_that_are_not_the_networks_are_refused(tmp_path, monkeypatch, capsys):
    """A stored block count that the network's decomposition does not give (a damaged store, or
    another version's): one line, exit 2, nothing answered from it."""
    net = parse_general(FIRE, "<spec>", 10**6)
    uri = str(tmp_path / "store")
    with open_store(uri, write=True) as store:
        run_id = execute_general_run(store, net, "deah-complete").run_id
        store.query("MATCH (b:DescribedBlock {run: $run, position: 1}) SET b.discard_count = b.discard_count + 1", {"run": run_id})
    r = run_in_process(["why", run_id, "0", "--store", uri], tmp_path, monkeypatch, capsys)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (f"error: run {run_id}: its stored blocks are not those of its network's layer DAG; "
                        "it was written by another version\n")
