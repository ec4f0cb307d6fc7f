"""`why` for deah-complete's local rule (witness coordinates) and coordinates of any path
(`why` on a path that was never a candidate, `basispath express`, the Python API), on both
backends. Expected values come from the in-memory solve and the test's own vector addition."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from basispath_graph import express, preset, solve
from basispath_graph.analysis.why import explain
from basispath_graph.store import open_store

from .certificates import sums_to, weight_vector
from .cli_runner import cli
from .conftest import BACKEND_PARAMS, module_store

NET = preset("resnet", 6, 3)  # local blocks with new hops and with paid layer debts


def _text(path) -> str:
    return ",".join(f"{l}:{i}" for l, i in path)


def _all_paths(net):
    """Every path of the network, as [[layer, index], ...] (brute force: small networks only)."""
    succ = {a: [b for x, b in net.pairs if x == a] for a in range(net.L + 1)}

    def routes(a):
        if a == net.L:
            yield (a,)
        for b in succ[a]:
            for rest in routes(b):
                yield (a, *rest)

    for layers in routes(0):
        for idx in itertools.product(*(range(net.widths[l]) for l in layers)):
            yield [[l, i] for l, i in zip(layers, idx)]


@pytest.fixture(scope="module")
def memory():
    return solve(NET, engine="deah-complete")


@pytest.fixture(scope="module", params=BACKEND_PARAMS)
def stored(request, tmp_path_factory):
    store = module_store(request, tmp_path_factory, "local")
    spec = tmp_path_factory.mktemp("spec") / "resnet-6x3.json"
    spec.write_text(json.dumps(NET.to_dict()))
    run = json.loads(cli("run", str(spec), "--store", store, "--json", check=0).stdout)
    return store, run["run_id"], spec


def _local_discards(store, run):
    with open_store(store) as s:
        _, rows = s.query(
            "MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath)-[:REASON]->(d:Discard {step: 'local'}) RETURN b.text ORDER BY b.text",
            {"run": run},
        )
    return [r[0] for r in rows]


def test_why_shows_the_witness_coordinates_of_every_local_discard(stored, memory):
    store, run, _ = stored
    s3, s1 = memory.deah.step3, memory.deah.step1
    idx_of = {tuple(s1.paths[i].layers): i for i in s1.selected}
    texts = _local_discards(store, run)
    assert len(texts) == memory.deah.step3.rule_counts()["local"] > 0
    seen_debt = seen_hop = 0
    with open_store(store) as s:
        for text in texts:
            answer = explain(s, run, text)
            r = answer["reason"]
            assert answer["verified"] and r["step"] == "local"
            w = r["witness"]
            idx = idx_of[tuple(r["substructure"])]
            # The block as the engine planned it, from the in-memory Step 3.
            assert w["block"]["position"] == s3.order.index(idx)
            assert w["block"]["rule"] == s3.rules[idx] == "local"
            assert [tuple(h) for h in w["block"]["new_hops"]] == s3.new_hops[idx]
            assert [d["layer"] for d in w["block"]["paid_debts"]] == [d[0] for d in s3.paid_debts[idx]]
            # The path's new-weight coordinates are exactly its weights on the block's new hops.
            path = answer["path"]
            new = {f"{a}:{i}->{b}:{j}" for (a, i), (b, j) in weight_vector(path) if (a, b) in s3.new_hops[idx]}
            assert {k for k in w["witness"] if "->" in k} == new
            assert w["witness"]["alpha"] == 1  # the alpha functional is 1 on the block's own paths
            for d in w["block"]["paid_debts"]:
                z = dict(map(tuple, path))[d["layer"]]
                assert w["witness"][f"phi {d['layer']}:{z}"] == d["sign"]
            # The block's terms are terms of the certificate and add up to the path's witness values.
            cert = {(_text(t["path"]), t["coef"]) for t in answer["certificate"]}
            assert {(_text(t["path"]), t["coef"]) for t in w["block_terms"]} <= cert
            assert all(tuple(l for l, _ in t["path"]) == tuple(r["substructure"]) for t in w["block_terms"])
            total: dict = {}
            for t in w["block_terms"]:
                for k, v in t["witness"].items():
                    total[k] = total.get(k, 0) + t["coef"] * v
            assert {k: v for k, v in total.items() if v} == w["witness"]
            assert w["earlier_terms"] + len(w["block_terms"]) == len(answer["certificate"])
            assert w["earlier_vanish"] and w["later_terms"] == 0 and w["dependent"]
            seen_debt += bool(w["block"]["paid_debts"])
            seen_hop += bool(w["block"]["new_hops"])
    assert seen_debt and seen_hop  # both kinds of coordinates were exercised


def test_why_text_for_a_local_discard_names_the_block_and_the_dependency(stored, memory):
    store, run, _ = stored
    s3, s1 = memory.deah.step3, memory.deah.step1
    text = next(t for t in _local_discards(store, run)
                if s3.paid_debts[next(i for i in s1.selected if tuple(s1.paths[i].layers) == tuple(int(p.split(":")[0]) for p in t.split(",")))])
    idx = next(i for i in s1.selected if tuple(s1.paths[i].layers) == tuple(int(p.split(":")[0]) for p in text.split(",")))
    out = cli("why", "--store", store, run, text, check=0).stdout
    hops = ", ".join(f"{a}->{b}" for a, b in s3.new_hops[idx]) or "none"
    assert f"block #{s3.order.index(idx) + 1} of the ear order (p_0 is #1, as in 'basispath show'); new layer pairs it owns: {hops}" in out
    for layer, into, out_of in s3.paid_debts[idx]:
        hop_text = lambda hops: ", ".join(f"{a}->{b}" for a, b in sorted(hops))
        assert f"it pays the layer debt at layer {layer}: phi_z = flow into z over {hop_text(into)} - flow out of z over {hop_text(out_of)}" in out
    assert "this path on them: " in out and "alpha = +1" in out
    assert "dependent, discarded (checked now)" in out and "verified now by vector addition" in out
    answer = json.loads(cli("why", "--store", store, run, text, "--json", check=0).stdout)
    assert answer["reason"]["step"] == "local" and answer["reason"]["witness"]["dependent"]
    assert answer["verified"] and sums_to(answer["certificate"], answer["path"])


def test_in_memory_why_of_a_local_discard_has_the_same_witness_answer(stored, memory):
    store, run, _ = stored
    text = _local_discards(store, run)[0]
    with open_store(store) as s:
        stored_answer = explain(s, run, text)
    assert memory.why(text)["reason"]["witness"] == stored_answer["reason"]["witness"]


def test_why_expresses_a_path_that_was_never_a_candidate(stored, memory):
    store, run, _ = stored
    with open_store(store) as s:
        _, rows = s.query("MATCH (b:BasisPath {run: $run}) RETURN b.text, b.id, b.kept", {"run": run})
    candidates = {t for t, _, _ in rows}
    kept_id = {t: i for t, i, k in rows if k}
    others = [p for p in _all_paths(NET) if _text(p) not in candidates]
    assert len(others) > 100
    sample = random.Random(0).sample(others, 12)
    with open_store(store) as s:
        for path in sample:
            answer = explain(s, run, _text(path))
            assert answer["status"] == "not a candidate" and answer["id"] is None
            assert answer["reason"]["step"] == "coordinates" and answer["verified"] is True
            assert answer["path"] == path and sums_to(answer["certificate"], path)
            assert all(kept_id[_text(t["path"])] == t["id"] for t in answer["certificate"])
            # Coordinates over a basis are unique: the in-memory basis of the same solve agrees.
            mine = {_text(t["path"]): t["coef"] for t in memory.express(path)["coordinates"]}
            assert mine == {_text(t["path"]): t["coef"] for t in answer["certificate"]}


def test_why_cli_prints_coordinates_for_a_non_candidate(stored):
    store, run, _ = stored
    with open_store(store) as s:
        _, rows = s.query("MATCH (b:BasisPath {run: $run}) RETURN b.text", {"run": run})
    candidates = {r[0] for r in rows}
    path = next(p for p in _all_paths(NET) if _text(p) not in candidates)
    answer = json.loads(cli("why", "--store", store, run, _text(path), "--json", check=0).stdout)
    assert answer["status"] == "not a candidate" and sums_to(answer["certificate"], path)
    out = cli("why", "--store", store, run, _text(path), check=0).stdout
    assert out.startswith(f"path {_text(path)} of run {run}: not a candidate\n")
    assert "coordinates (this path = sum of coef x basis path):" in out and "verified now by vector addition" in out


def test_express_cli_over_an_exported_basis(tmp_path, memory):
    spec = tmp_path / "net.json"
    spec.write_text(json.dumps(NET.to_dict()))
    basis = tmp_path / "basis.json"
    cli("solve", str(spec), "--export", str(basis), check=0)
    for path in random.Random(1).sample(list(_all_paths(NET)), 8):
        answer = json.loads(cli("express", str(spec), str(basis), _text(path), "--json", check=0).stdout)
        terms = [{"coef": t["coef"], "path": t["path"]} for t in answer["coordinates"]]
        assert answer["verified"] and sums_to(terms, path) and all(t["coef"] for t in terms)
        exported = json.loads(basis.read_text())["basis"]
        assert all(exported[t["index"]] == t["path"] for t in answer["coordinates"])
    out = cli("express", str(spec), str(basis), "0:0,2:1,4:2,6:0", check=0).stdout
    assert out.startswith("path 0:0,2:1,4:2,6:0 = sum of coef x basis path (") and out.endswith("verified by vector addition\n")


def test_express_cli_errors(tmp_path):
    spec = tmp_path / "net.json"
    spec.write_text(json.dumps(NET.to_dict()))
    basis = tmp_path / "basis.json"
    cli("solve", str(spec), "--export", str(basis), check=0)
    r = cli("express", str(spec), str(basis), "0:0,1:0,3:0,6:0", check=2)
    assert r.stderr == "error: 0:0,1:0,3:0,6:0 is not a path of network resnet-6x3: hop 3->6 is not a connected layer pair\n"
    r = cli("express", str(spec), str(basis), "0:0,1:7,2:0,4:0,6:0", check=2)
    assert r.stderr == "error: 0:0,1:7,2:0,4:0,6:0 is not a path of network resnet-6x3: neuron index 7 out of range at layer 1 (width 3)\n"
    doc = json.loads(basis.read_text())
    doc["basis"].append(doc["basis"][0])
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps(doc))
    first = _text(doc["basis"][0])
    r = cli("express", str(spec), str(twice), "0:0,2:1,4:2,6:0", check=1)
    assert r.stderr == f"error: {twice}: basis is dependent: path {len(doc['basis']) - 1} ({first}) is in the span of other basis paths\n"


def test_python_express_matches_the_result_method(memory):
    path = "0:2,2:1,4:0,6:2"
    assert express(NET, memory, path) == memory.express(path)
    assert express(NET, memory.export(), [(0, 2), (2, 1), (4, 0), (6, 2)])["coordinates"] == memory.express(path)["coordinates"]


def test_compare_of_a_stored_run_has_its_largest_certificate(stored, memory):
    store, run, _ = stored
    (col,) = json.loads(cli("compare", run, "--store", store, "--json", check=0).stdout)
    largest = max(len(d.certificate) for d in memory.discarded)
    assert col["certificate_max"] == largest > 1
