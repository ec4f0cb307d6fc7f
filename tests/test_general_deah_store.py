"""One store layout (issue 25, item 3): a general run of a DEAH engine stores every artifact a
layered run stores, in general path form, and ``why``, ``compare`` and the packaged queries read
them as they read a layered run's.

The check: a layered spec and the same network written as a general spec (layers "0".."L",
dense connections: ``general.model.from_layered(net).to_dict()``), each stored with deah-complete
and with deah (seed 0), on both backends. Nothing expected is written here: the layered run's
answers are the reference, and the general run's are read back into the layered spelling (layer
names "0".."L" as integers, JSON paths as [layer, index] pairs with every tap 0, weights
[a, i, b, j, tap] with tap 0) and must be equal: every ``why`` answer (rule, its fields, the
certificate's coefficients and paths; ``verified``), the ``compare`` rows, and the packaged
queries that read a run's DEAH artifacts (docs/graph-model.md, "Questions you can ask", and
those ``show`` and ``compare`` use). resnet-style: faithful deah with repairs; stride2-6x3:
deah-complete's hop rule and local rule.

A general network with taps, biases and identity shortcuts (resnet20) is in
tests/test_general_store.py (LadybugDB) and tests/test_neo4j_general_store.py (Neo4j).
"""

from __future__ import annotations

import json
from decimal import Decimal
from itertools import combinations
from pathlib import Path

import pytest

from basispath_graph import preset
from basispath_graph.analysis.compare import column_from_run
from basispath_graph.analysis.why import explain
from basispath_graph.general.model import from_layered
from basispath_graph.network import Network
from basispath_graph.pipeline import execute_general_run, execute_run
from basispath_graph.spec import load_any_spec
from basispath_graph.store import open_store
from basispath_graph.store.resume import WRITES

from .cli_runner import run_in_process, show
from .conftest import BACKEND_PARAMS, module_store

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("deah-complete", "deah")


def _networks() -> dict[str, Network]:
    spec = json.loads((ROOT / "examples" / "resnet-style.json").read_text())
    return {"resnet-style": Network.build(spec["widths"], spec["skips"], "resnet-style"),
            "stride2-6x3": preset("stride", 6, 3, stride=2)}


@pytest.fixture(scope="module", params=BACKEND_PARAMS)
def stored(request, tmp_path_factory):
    """Store URI and, per (network, engine), the layered run id and the general run id (the
    general spec written to a file and read back, as ``basispath run`` would)."""
    uri = module_store(request, tmp_path_factory, "general-deah")
    folder = tmp_path_factory.mktemp("specs")
    runs = {}
    with open_store(uri, write=True) as store:
        for name, net in _networks().items():
            path = folder / f"{name}.json"
            path.write_text(json.dumps(from_layered(net).to_dict()))
            general = load_any_spec(path)
            assert [l.name for l in general.layers] == [str(l) for l in range(net.L + 1)]
            for engine in ENGINES:
                layered = execute_run(store, net, engine, 0).run_id
                runs[(name, engine)] = (layered, execute_general_run(store, general, engine, 0).run_id)
    return uri, runs


# -- the general spelling read back as the layered one -------------------------------------------

def _path(p) -> list[list[int]]:
    assert set(p["taps"]) <= {0}, p  # a core path: tap 0 on every hop
    return [[int(name), i] for name, i in p["nodes"]]


def _layers(layers):
    return None if layers is None else [int(l) for l in layers]


def _weights(ws) -> list[list[int]]:
    assert all(w[4] == 0 for w in ws), ws
    return [[int(a), i, int(b), j] for a, i, b, j, _ in ws]


def _reason(r: dict) -> dict:
    r = dict(r)
    if "earlier" in r:
        r["earlier"] = _reason(r["earlier"])
    if r["step"] in ("chain", "head"):
        r["pair"] = {k: _layers(v) for k, v in r["pair"].items()}
        r["shared_layers"] = [_layers(p) for p in r["shared_layers"]]
        r.update({k: _weights(r[k]) for k in ("ep", "ucp_star", "iep", "shared")})
    if r["step"] in ("prefix", "suffix", "local"):
        r["substructure"] = _layers(r["substructure"])
    if r["step"] in ("prefix", "suffix") and "twin" in r:
        assert r.pop("twin_text")
        r.update(hop=_layers(r["hop"]), crossing=_weights([r["crossing"]])[0], twin=_path(r["twin"]),
                 **{k: _weights(r[k]) for k in ("differs", "twin_differs", "agrees")})
    if r["step"] == "local" and "witness" in r:
        w = r["witness"] = dict(r["witness"])
        b = w["block"] = dict(w["block"])
        b["new_hops"] = [_layers(h) for h in b["new_hops"]]
        b["paid_debts"] = [{**d, "layer": int(d["layer"]), "into": [_layers(h) for h in d["into"]],
                            "out_of": [_layers(h) for h in d["out_of"]]} for d in b["paid_debts"]]
        for t in w["block_terms"]:
            assert t.pop("text")
        w["block_terms"] = [{**t, "path": _path(t["path"])} for t in w["block_terms"]]
    return r


def layered_spelling(answer: dict, texts: dict[int, str]) -> dict:
    """A general run's ``why`` answer in a layered run's spelling; ``texts``: the stored text of
    each path id of the run (each term's text must be its path's)."""
    a = json.loads(json.dumps(answer))  # a copy
    assert a.pop("text") == texts[a["id"]]
    for t in a["certificate"]:
        assert t.pop("text") == texts[t.pop("id")]
    a.update(path=_path(a["path"]), substructure=_layers(a["substructure"]), reason=_reason(a["reason"]),
             certificate=[{**t, "path": _path(t["path"])} for t in a["certificate"]])
    return a


def _ids(store, run_id: str) -> dict[int, tuple[str, bool]]:
    _, rows = store.query("MATCH (b:BasisPath {run: $run}) RETURN b.id, b.text, b.kept", {"run": run_id})
    return {i: (text, kept) for i, text, kept in rows}


# -- the tests ---------------------------------------------------------------------------------

def test_why_answers_are_the_layered_runs(stored):
    """Every discarded path, every path with a record (re-admitted by the repair) and every
    seventh kept one: the same rule (SDVChain call, hop rule with its twin, local rule with its
    witness coordinates, repair), the same certificate, verified."""
    uri, runs = stored
    steps = set()
    with open_store(uri) as store:
        for case, (layered, general) in runs.items():
            ids = _ids(store, general)
            assert {i: kept for i, (_, kept) in ids.items()} == {i: kept for i, (_, kept) in _ids(store, layered).items()}
            texts = {i: t for i, (t, _) in ids.items()}
            _, recorded = store.query("MATCH (b:BasisPath {run: $run})-[:REASON]->() RETURN DISTINCT b.id", {"run": general})
            kept = sorted(i for i, (_, k) in ids.items() if k)
            asked = {i for i, (_, k) in ids.items() if not k} | {i for (i,) in recorded} | set(kept[::7])
            for pid in sorted(asked):
                want = explain(store, layered, str(pid))
                raw = explain(store, general, str(pid))
                assert raw["verified"] is True, (case, pid)
                got = layered_spelling(raw, texts)
                assert json.dumps(got).replace(general, layered) == json.dumps(want), (case, pid)
                steps.add(want["reason"]["step"])
                if pid % 17 == 0:  # given as a JSON path, the same answer as by its id
                    assert explain(store, general, json.dumps(raw["path"])) == raw, (case, pid)
    assert steps >= {"kept", "chain", "head", "repair", "prefix", "suffix", "local"}, steps


def test_compare_rows_are_the_layered_runs(stored):
    """The stored general run's compare column has every row of the layered run's (P^S, R, chains
    or blocks by rule, discards by step, the largest certificate, repairs, certified), equal."""
    uri, runs = stored
    nets = _networks()
    with open_store(uri) as store:
        for case, (layered, general) in runs.items():
            want = column_from_run(store, layered).values
            got = column_from_run(store, general).values
            assert {k: got.get(k) for k in want} == want, case
            assert (got["layers"], got["dense_connections"], got["identity_connections"]) == (
                nets[case[0]].L + 1, len(nets[case[0]].pairs), 0)  # and the general network's own rows
            assert want["substructure_paths"] > 1 and ("chains" in want) == (case[1] == "deah")


#: Read queries of one run's DEAH artifacts: (name, parameters besides run), each compared on
#: its own, with the columns holding texts (the one thing spelled differently) left out.
def _query_jobs(store, layered: str, general: str, net: Network) -> list[tuple[str, dict]]:
    subs = [r["idx"] for r in store.run("show_substructures", run=layered)]
    _, discarded = store.query("MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath) RETURN b.id ORDER BY b.id", {"run": layered})
    jobs = [(name, {}) for name in ("substructure_hops", "substructure_counts", "show_substructures", "show_chains", "show_discard_steps",
                                    "read_subdivides", "read_shares_edge", "selected_substructures", "certificate_max", "count_kept",
                                    "core_layers", "compare_run")]
    jobs += [(f"committed_{w}", {}) for w in WRITES]
    jobs += [("substructure_layers", {"idxs": subs})]
    jobs += [("shared_layer_pairs", {"p": p, "q": q}) for p, q in combinations(subs, 2)]
    jobs += [("paths_through_neuron", {"layer": l, "neuron": i}) for l, w in enumerate(net.widths) for i in range(w)]
    jobs += [("show_certificate", {"id": row[0]}) for row in discarded]
    return jobs


def _comparable(name: str, rows: list[dict]) -> list:
    drop = {"text", "id", "name", "key", "kind", "timings"} if name == "compare_run" else {"text"}
    rows = [{k: int(v) if isinstance(v, Decimal) else v for k, v in r.items() if k not in drop} for r in rows]  # LadybugDB's sum()
    return rows if name in ("substructure_hops", "selected_substructures", "show_chains", "substructure_counts", "core_layers",
                            "show_substructures", "paths_through_neuron", "show_certificate", "show_discard_steps") else sorted(rows, key=json.dumps)


def test_packaged_queries_answer_alike(stored):
    """The questions of docs/graph-model.md and the queries show, compare and --resume use give
    the general run the layered run's rows: layers are positions "0".."L", edge codes, weight and
    neuron ids the same; paths_through_neuron takes a general layer's position."""
    uri, runs = stored
    nets = _networks()
    with open_store(uri) as store:
        for case, (layered, general) in runs.items():
            answered = 0
            for name, params in _query_jobs(store, layered, general, nets[case[0]]):
                want = _comparable(name, store.run(name, run=layered, **params))
                got = _comparable(name, store.run(name, run=general, **params))
                assert got == want, (case, name, params)
                answered += bool(want)
            assert answered > 50, case


def test_why_text_names_the_rule_on_a_general_run(stored, tmp_path, monkeypatch, capsys):
    """``basispath why`` prints a general run's discard with its rule, in general spelling, as for
    a layered run (one path per rule, the CLI's main() in this process)."""
    uri, runs = stored
    jobs = {}
    with open_store(uri) as store:
        for case, (_, general) in runs.items():
            _, rows = store.query(  # a discarded path per rule (a kept one for a repair: re-admitted or added)
                "MATCH (b:BasisPath {run: $run})-[:REASON]->(d:Discard) WHERE NOT b.kept OR d.step = 'repair' "
                "RETURN d.step, min(b.id) ORDER BY d.step", {"run": general})
            for step, pid in rows:
                jobs.setdefault(step, (case, ["why", general, str(pid), "--store", uri]))
    heads = {"chain": "discarded by SDVChain, inside chain", "head": "discarded by SDVChain, chain head", "repair": "repair: ",
             "prefix": "discarded by deah-complete's hop rule", "suffix": "discarded by deah-complete's hop rule",
             "local": "discarded by deah-complete's local rule"}
    assert set(jobs) == set(heads)
    for step, (case, argv) in jobs.items():
        res = run_in_process(argv, tmp_path, monkeypatch, capsys)
        assert res.returncode == 0, show(res)
        assert heads[step] in res.stdout and "verified now by vector addition" in res.stdout, (case, step, res.stdout)
        assert " -[0]-> " in res.stdout  # general paths and weights


def test_why_text_shows_named_layers(tmp_path, monkeypatch, capsys):
    """Layer names in brackets reach the terminal: rich reads ``[x, h1, y]`` as a markup tag and
    printed nothing for a general run's substructure and hop (seen on ResNet-50: "substructure: ")."""
    from .test_described_deah_store import GENERAL

    spec = tmp_path / "named.json"
    spec.write_text(json.dumps(GENERAL))
    store = str(tmp_path / "store")
    ran = run_in_process(["run", str(spec), "--engine", "deah-complete", "--store", store, "--json"], tmp_path, monkeypatch, capsys)
    assert ran.returncode == 0, show(ran)
    run_id = json.loads(ran.stdout)["run_id"]
    with open_store(store) as gs:
        _, ((pid,),) = gs.query("MATCH (b:BasisPath {run: $run})-[:REASON]->(d:Discard) WHERE d.step IN ['prefix', 'suffix'] "
                                "RETURN min(b.id)", {"run": run_id})
    res = run_in_process(["why", run_id, str(pid), "--store", store], tmp_path, monkeypatch, capsys)
    assert res.returncode == 0, show(res)
    assert "substructure: [x, h1, " in res.stdout and "it owns the new layer pair [" in res.stdout, res.stdout


def with_extra_layers(net: Network) -> dict:
    """The general spec of ``net`` with a bias layer listed first (so every core layer's position
    is its index + 1), 2 taps on the connection 1 -> 2, an identity shortcut 1 -> 3 and a bias into
    every later layer: the same core, so the same DEAH run on it."""
    spec = from_layered(net).to_dict()
    spec["layers"].insert(0, {"name": "bias", "size": 1})
    for c in spec["connections"]:
        if (c["from"], c["to"]) == ("1", "2"):
            c["taps"] = 2
    spec["connections"] += [{"from": "1", "to": "3", "kind": "identity"}]
    spec["connections"] += [{"from": "bias", "to": str(l)} for l in range(1, net.L + 1)]
    return spec


@pytest.mark.parametrize("engine", ENGINES)
def test_a_core_among_extra_layers_answers_as_the_layered_core(store_uri, tmp_path, engine):
    """A general network whose core is stride2-6x3 among a bias layer (listed first: positions are
    not core indices), taps and an identity shortcut: every discarded path's answer is the layered
    run's (rule, twin, witness coordinates, certificate), its id shifted by the extra kept paths."""
    net = _networks()["stride2-6x3"]
    path = tmp_path / "extra.json"
    path.write_text(json.dumps(with_extra_layers(net)))
    general_net = load_any_spec(path)
    with open_store(str(store_uri), write=True) as store:
        layered = execute_run(store, net, engine, 0)
        general = execute_general_run(store, general_net, engine, 0)
        assert general.result.parts["core_layers"] == [str(l) for l in range(net.L + 1)]
        shift = general.result.basis_size - layered.result.basis_size
        assert shift > 0 and general.result.certified
        ids = _ids(store, general.run_id)
        texts = {i: t for i, (t, _) in ids.items()}
        discarded = sorted(i for i, (_, kept) in ids.items() if not kept)
        assert len(discarded) == len(layered.result.discarded) > 0
        _, recorded = store.query("MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath)-[:REASON]->() RETURN DISTINCT b.id", {"run": general.run_id})
        steps = set()
        for pid, layered_id in [(i, i - shift) for i in discarded] + [(i, i) for (i,) in recorded]:  # re-admitted: core ids
            want = explain(store, layered.run_id, str(layered_id))
            raw = explain(store, general.run_id, str(pid))
            assert raw["verified"] is True, pid
            got = layered_spelling(raw, texts)
            got["id"] = layered_id
            assert json.dumps(got).replace(general.run_id, layered.run_id) == json.dumps(want), pid
            steps.add(want["reason"]["step"])
    assert steps == ({"prefix", "suffix", "local"} if engine == "deah-complete" else {"chain", "head", "repair"}), steps
