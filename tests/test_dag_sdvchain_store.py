"""Faithful deah on a layer DAG core in the store (issue 28, item 4; ``store/dag_runs.write_sdvchain_run``),
on both backends: the selected substructures with Cypher's SUBDIVIDES and SHARES_EDGE (the
relations Step 3 read), chains, every discard with its SDVChain call or repair and a certificate
that checks; ``why`` by id and by path, ``GraphStore.load``, ``compare`` as for a run solved now."""

from __future__ import annotations

import json

import pytest

from basispath_graph import solve_general
from basispath_graph.analysis.compare import column_from_general, column_from_run
from basispath_graph.analysis.why import explain
from basispath_graph.deah.step3_sdvchain import Discard
from basispath_graph.general.blocks import general_path_json
from basispath_graph.general.model import parse_general
from basispath_graph.graph_store import open_store as open_graph_store
from basispath_graph.pipeline import execute_general_run
from basispath_graph.store import open_store

from .cli_runner import cli, run_in_process
from .conftest import BACKEND_PARAMS, module_store
from .test_dag_deah_store import FIRE
from .test_dag_sdvchain import READMIT


@pytest.fixture(scope="module", params=BACKEND_PARAMS)
def backend(request, tmp_path_factory):
    """A store with the faithful runs of the two networks (FIRE: drops; READMIT: drops and re-admissions)."""
    uri = module_store(request, tmp_path_factory, "dag-sdvchain")
    runs = {}
    with open_store(uri, write=True) as store:
        for spec in (FIRE, READMIT):
            net = parse_general(spec, "<spec>", 10**6)
            runs[spec["name"]] = execute_general_run(store, net, "deah").run_id, net, solve_general(net, "deah")
    return uri, runs


@pytest.fixture(params=["fire-dag", "readmit"])
def stored(request, backend):
    uri, runs = backend
    return (uri, *runs[request.param])


def _path(d) -> tuple:
    return tuple(zip(d.layers, d.indices)), d.taps


def test_the_run_and_cyphers_relations_are_stored(stored):
    uri, run_id, net, result = stored
    run = result.sdvchain
    assert not result.raw_verdict.certified and result.repairs  # this network needs the repair: it is stored too
    with open_store(uri) as store:
        (row,) = store.run("get_run", id=run_id)
        subdivides = {(r["a"], r["b"]) for r in store.run("read_subdivides", run=run_id)}
        shares = {(r["a"], r["b"]) for r in store.run("read_shares_edge", run=run_id)}
    assert (row["certified"], row["raw_certified"], row["discarded"]) == (True, False, len(result.discarded))
    paths = run.substructures.paths
    n = len(paths)
    assert subdivides == {(a, b) for a in range(n) for b in range(n) if a != b and set(paths[b].layers) < set(paths[a].layers)}
    assert shares == {(a, b) for a in range(n) for b in range(a + 1, n) if set(paths[a].edges) & set(paths[b].edges)}


def test_why_answers_every_discard_with_its_record_and_certificate(stored):
    uri, run_id, net, result = stored
    first = result.basis_size
    with open_store(uri) as store:
        for k, d in enumerate(result.discarded):
            by_id = explain(store, run_id, str(first + k))
            by_path = explain(store, run_id, json.dumps(general_path_json(net, _path(d))))
            assert by_id == by_path and by_id["status"] == "discarded" and by_id["verified"]
            reason = by_id["reason"]
            if isinstance(d.reason, Discard):
                assert (reason["step"], reason["chain"]) == (d.reason.step, d.reason.chain)
                assert reason["shared_layers"] == [[net.layers[net.connections[c].source].name, net.layers[net.connections[c].target].name]
                                                   for c in d.reason.shared_pairs]
            else:
                assert (reason["step"], reason["action"]) == ("repair", d.reason.action)
            expected = {(c, json.dumps(general_path_json(net, result.basis_path(i)))) for i, c in d.certificate}
            assert {(t["coef"], json.dumps(t["path"])) for t in by_id["certificate"]} == expected


def test_load_and_compare_give_what_the_solve_gives(stored):
    uri, run_id, net, result = stored
    with open_graph_store(str(uri), read_only=True) as graph:
        run = graph.load(run_id)
    assert run.basis_size == result.basis_size and run.certified
    assert list(run.discarded_paths) == [_path(d) for d in result.discarded]
    with open_store(uri) as store:
        stored_values = column_from_run(store, run_id).values
    now = column_from_general("now", result).values
    assert {k: stored_values[k] for k in now} == now
    assert (now["R"], now["chains"], now["repairs"]) == (len(result.sdvchain.substructures.paths), len(result.sdvchain.step3.chains),
                                                         len(result.repairs))


def test_a_killed_run_resumes_to_the_same_graph(tmp_path):
    """Killed while writing its discard records, the run resumes keeping what it committed and
    ends with every record and certificate, as a run never killed."""
    spec = tmp_path / "fire.json"
    spec.write_text(json.dumps(FIRE))
    env = {"BASISPATH_BATCH_ROWS": "10", "BASISPATH_COPY_THRESHOLD": "1000000"}
    store = str(tmp_path / "store")
    killed = cli("run", str(spec), "--store", store, "--engine", "deah", "-q", env={**env, "BASISPATH_KILL_AT": "discards:batch:1"})
    assert killed.returncode == -9
    (row,) = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert (row["status"], row["stage"]) == ("incomplete", "discards")
    resumed = json.loads(cli("run", "--resume", row["id"], "--store", store, "--json", env=env, check=0).stdout)
    assert resumed["certified"] and resumed["resumed_rows"] > 0
    whole = str(tmp_path / "whole")
    cli("run", str(spec), "--store", whole, "--engine", "deah", "-q")
    (other,) = json.loads(cli("runs", "--store", whole, "--json", check=0).stdout)
    net = parse_general(FIRE, "<spec>", 10**6)
    result = solve_general(net, "deah")
    with open_store(store) as a, open_store(whole) as b:
        for k in range(result.basis_size, result.basis_size + len(result.discarded)):
            one, two = explain(a, row["id"], str(k)), explain(b, other["id"], str(k))
            assert {**one, "run": None} == {**two, "run": None} and one["verified"]


def test_show_labels_the_run_with_its_selection_and_discards(stored, tmp_path, monkeypatch, capsys):
    uri, run_id, net, result = stored
    r = run_in_process(["show", run_id, "--store", str(uri), "--format", "dot"], tmp_path, monkeypatch, capsys)
    assert r.returncode == 0, r.stderr
    core = result.sdvchain.plan.decomposition.core
    assert (f"core: {len(core.layers)} layers, |P^S| = {result.parts['substructure_paths']}, R = {result.parts['selected']}, "
            f"{len(result.discarded)} discarded") in r.stdout


def test_result_why_and_stored_why_give_one_answer(stored):
    """Every discard and every re-admitted path: the solve's ``Result.why`` and the stored run's
    ``why`` name the same status (a discard: substructure and rule) (a re-admission: the repair, with the
    SDVChain call it undid as "earlier" in the store) and the same certificate."""
    uri, run_id, net, result = stored
    paths = [general_path_json(net, _path(d)) for d in result.discarded]
    paths += [general_path_json(net, ((tuple(zip(x.layers, x.indices))), x.taps)) for x in result.repairs if x.action == "readmit"]
    with open_store(uri) as store:
        for p in paths:
            mine, theirs = result.why(p), explain(store, run_id, json.dumps(p))
            assert mine["status"] == theirs["status"]
            assert [(t["coef"], t["path"]) for t in mine["certificate"]] == [(t["coef"], t["path"]) for t in theirs["certificate"]]
            if mine["status"] == "discarded":
                assert mine["substructure"] == theirs["substructure"] and mine["reason"] == theirs["reason"]
                assert mine["verified"] and theirs["verified"]
            else:  # re-admitted: kept, the stored run says by which repair and what SDVChain had done
                assert (theirs["reason"]["step"], theirs["reason"]["action"], theirs["reason"]["earlier"]["step"]) == ("repair", "readmit", "chain")


def test_above_the_listed_certificates_the_records_stay_and_certificates_are_made_when_asked(tmp_path, monkeypatch):
    """With more discards than LISTED_DAG_DISCARDS (here 2) no certificate is made while solving
    or stored; ``why`` (solve and store) still names the SDVChain call or repair, and makes the
    certificate over the basis then; the export gives the count; compare has no largest one."""
    from basispath_graph.analysis import compare
    from basispath_graph.general import dag_sdvchain, documents

    for module in (dag_sdvchain, documents, compare):
        monkeypatch.setattr(module, "LISTED_DAG_DISCARDS", 2)
    net = parse_general(FIRE, "<spec>", 10**6)
    result = solve_general(net, "deah")
    assert len(result.discarded) > 2 and all(not d.certificate for d in result.discarded)
    assert result.certificate_method == "global elimination, when asked" and result.certificates_rechecked == 0
    assert result.export()["discarded_on_demand"] == len(result.discarded)
    assert column_from_general("now", result).values["certificate_max"] is None
    uri = str(tmp_path / "store")
    with open_store(uri, write=True, create=True) as store:
        run_id = execute_general_run(store, net, "deah").run_id
    with open_store(uri) as store:
        assert column_from_run(store, run_id).values["certificate_max"] is None
        for d in result.discarded:
            mine, theirs = result.why(general_path_json(net, _path(d))), explain(store, run_id, json.dumps(general_path_json(net, _path(d))))
            assert mine["reason"] == theirs["reason"] and mine["reason"]["step"] in ("chain", "head", "repair")
            assert mine["verified"] and theirs["verified"] and mine["certificate"]


def test_a_run_stored_from_ids_held_as_those_they_lack_is_the_same_graph(monkeypatch, tmp_path):
    """The raw union's views, the core and the drops held as ``AllBut`` everywhere (whole
    GoogLeNet has them so: its drops are the rows the repair keeps, turned around) store the
    same graph as arrays do, discards, records and certificates included."""
    from .all_but import hold_every_index_as_all_but
    from .reliability.graph_dump import canonical_dump

    wide = json.loads(json.dumps(FIRE))
    for layer in wide["layers"]:
        layer["size"] *= 3

    def dump(name: str):
        uri = str(tmp_path / name)
        with open_store(uri, write=True, create=True) as store:
            for spec in (FIRE, READMIT, wide):
                execute_general_run(store, parse_general(spec, "<spec>", 10**6), "deah")
        with open_store(uri) as store:
            return canonical_dump(store)

    plain = dump("arrays")
    hold_every_index_as_all_but(monkeypatch)
    assert dump("lacking") == plain and len(plain[0]) > 1000
