"""One network model, one solve, one result (issue 25, items 1 and 2).

Every spec form (a file, a mapping, layered or general, a Network) goes through ``load_spec``
into one ``Network`` class and through ``solve`` into one ``Result`` type, whatever the engine.
The strongest check is an invariance only a correct unification has: a layered network and the
same network written in the general form give the same basis, the same discards, the same
``why`` answers and the same certificates, path for path (each spelled in its own form).
"""

from __future__ import annotations

import json
import pickle

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from basispath_graph import (
    BadInput, InvalidNetwork, Network, Result, certify, default_engine, express, load_general, load_spec, solve,
)
from basispath_graph.general.blocks import general_path_json
from basispath_graph.general.model import from_layered

from .cli_runner import cli
from .strategies import networks

FIG1B = {"name": "fig1b", "widths": [2, 2, 3, 2, 2], "skips": [[0, 2], [1, 3]]}
CONV = {
    "name": "conv",
    "layers": [{"name": "bias", "size": 1}, {"name": "x", "size": 2}, {"name": "h", "size": 3}, {"name": "y", "size": 2}],
    "connections": [{"from": "x", "to": "h", "taps": 9}, {"from": "h", "to": "y"},
                    {"from": "bias", "to": "h"}, {"from": "bias", "to": "y"}],
}
RESIDUAL = {
    "name": "residual",
    "layers": [{"name": "x", "size": 2}, {"name": "a", "size": 3}, {"name": "b", "size": 3}, {"name": "c", "size": 3},
               {"name": "y", "size": 2}],
    "connections": [{"from": "x", "to": "a"}, {"from": "a", "to": "b", "taps": 4}, {"from": "b", "to": "c", "taps": 4},
                    {"from": "a", "to": "c", "kind": "identity"}, {"from": "c", "to": "y"}],
}
ENGINES = ("deah-complete", "deah", "skeleton")


def general_form(spec: dict) -> dict:
    """A layered spec written as a general one: layers "0".."L", one dense connection per pair."""
    return from_layered(Network(spec["widths"], spec.get("skips", ()), spec.get("name", ""))).to_dict()


def as_general_path(path) -> dict:
    """A layered path ((layer, index), ...) spelled in the general form (tap 0 on every hop)."""
    return {"nodes": [[str(l), i] for l, i in path], "taps": [0] * (len(path) - 1)}


def named(reason: dict) -> dict:
    """A layered why reason spelled as the general form's (layers "0".."L"): layer lists as names,
    the twin as a general path with its text, weights as [layer, index, layer, index, tap 0]."""
    out = dict(reason)
    for key in ("substructure", "hop"):
        if key in out:
            out[key] = [str(l) for l in out[key]]
    if "twin" in out:
        out["twin"] = {"nodes": [[str(l), i] for l, i in out["twin"]], "taps": [0] * (len(out["twin"]) - 1)}
        out["twin_text"] = " -[0]-> ".join(f"{l}:{i}" for l, i in out["twin"]["nodes"])
    if "pair" in out:
        out["pair"] = {k: [str(l) for l in v] for k, v in out["pair"].items()}
    if "shared_layers" in out:
        out["shared_layers"] = [[str(a), str(b)] for a, b in out["shared_layers"]]
    if "crossing" in out:
        a, i, b, j = out["crossing"]
        out["crossing"] = [str(a), i, str(b), j, 0]
    for key in ("differs", "twin_differs", "agrees", "ep", "ucp_star", "iep", "shared"):
        if key in out:
            out[key] = [[str(a), i, str(b), j, 0] for a, i, b, j in out[key]]
    return out


# --- one model --------------------------------------------------------------------------------


def test_load_spec_reads_every_form_into_one_network_class(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps(FIG1B))
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(CONV))
    forms = [FIG1B, CONV, tmp_path / "a.json", str(tmp_path / "b.yaml"), Network([2, 3, 2]), "examples/mlp.json"]
    loaded = [load_spec(f) for f in forms]
    assert all(type(n) is Network for n in loaded)
    assert [n.is_layered for n in loaded] == [True, False, True, False, True, True]
    assert loaded[0] == loaded[2] and loaded[1] == loaded[3]
    assert (loaded[1].m, loaded[1].H) == (2 * 3 * 9 + 3 * 2 + 3 + 2, 3)
    # the general form from Python is checked by the spec's rules, reported without a file name
    assert Network(layers=CONV["layers"], connections=CONV["connections"], name="conv") == loaded[1]
    with pytest.raises(InvalidNetwork, match=r'^connections\[0\].from must name a layer, got "z"$'):
        Network(layers=CONV["layers"], connections=[{"from": "z", "to": "y"}])
    with pytest.raises(InvalidNetwork, match=r"^give widths \(the layered form\) or layers and connections"):
        Network([2, 2], layers=CONV["layers"], connections=CONV["connections"])


def test_a_network_is_a_value_in_either_form():
    layered, general = load_spec(FIG1B), load_spec(CONV)
    for net in (layered, general):
        with pytest.raises(AttributeError, match="cannot be changed"):
            net.name = "other"
        assert pickle.loads(pickle.dumps(net)) == net and hash(pickle.loads(pickle.dumps(net))) == hash(net)
        assert load_spec(net.to_dict()) == net  # to_dict is the spec of the form it was made from
    assert layered != load_general(FIG1B)  # the same weights in another form: another spec
    assert (layered.m, layered.H) == (load_general(FIG1B).m, load_general(FIG1B).H)
    with pytest.raises(AttributeError, match=r"^L: network conv is general \(layers and connections\), not layered"):
        general.L


# --- one solve, one result ----------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("spec", [FIG1B, CONV, RESIDUAL, "examples/mlp.json", "examples/resnet-style.json"])
def test_solve_takes_every_form_and_engine_into_one_certified_result(spec, engine):
    net = load_spec(spec)
    if engine != "skeleton" and not net.is_layered and spec is RESIDUAL:
        result = solve(spec, engine=engine)  # identity shortcuts: the identity forest part
        assert result.parts["identity"] > 0
    result = solve(spec, engine=engine)
    assert type(result) is Result
    assert result.engine == engine and result.certified
    assert result.basis_size == net.m - net.H == len(result.basis_paths)
    assert certify(net, result).certified
    assert certify(net, result.basis_paths).certified  # the path form why takes, too
    assert result.summary()["certified"] is True and result.export()["certified"] is True


def test_solve_of_a_loaded_general_network_and_of_a_path_no_longer_fail():
    # both were AttributeError: 'GeneralNetwork' object has no attribute 'L' (issue 25)
    assert solve(load_general("examples/resnet-style.json")).certified
    assert solve("examples/mlp.json").engine == "deah-complete"
    assert solve(load_general("examples/mlp.json")).engine == default_engine(load_general("examples/mlp.json")) == "skeleton"
    with pytest.raises(BadInput, match="^no-such-spec.json: file not found$"):
        solve("no-such-spec.json")  # read as a path, refused in one line
    with pytest.raises(BadInput, match="^unknown engine 'fast'"):
        solve(CONV, engine="fast")


def test_solve_of_a_non_network_is_bad_input():
    with pytest.raises(BadInput, match="^a network is a Network, a spec \\(mapping\\) or a spec file, got int$"):
        solve(12)


@pytest.mark.parametrize("engine", ("deah-complete", "deah"))
def test_the_same_network_in_either_form_gives_the_same_basis_discards_and_why(engine):
    layered, general = solve(FIG1B, engine=engine), solve(general_form(FIG1B), engine=engine)
    assert [as_general_path(p) for p in layered.basis_paths] == general.basis_paths
    assert [as_general_path(p) for p in layered.discarded_paths] == general.discarded_paths
    assert len(layered.discarded) > 0 and len(layered.repairs) == len(general.repairs)
    for path in layered.discarded_paths + layered.basis_paths[:3]:
        a, b = layered.why(path), general.why(as_general_path(path))
        assert a["status"] == b["status"] and a["verified"] is b["verified"] is True
        assert named(a["reason"]) == b["reason"], path
        assert [(t["coef"], t["index"]) for t in a["certificate"]] == [(t["coef"], t["index"]) for t in b["certificate"]]
        assert [as_general_path(tuple(map(tuple, t["path"]))) for t in a["certificate"]] == [t["path"] for t in b["certificate"]]
    never = ((0, 1), (1, 0), (2, 2), (3, 1), (4, 0))
    a, b = layered.why(never), general.why(as_general_path(never))
    assert a["status"] == b["status"] in ("not a candidate", "discarded", "kept")
    assert [(t["coef"], t["index"]) for t in a["certificate"]] == [(t["coef"], t["index"]) for t in b["certificate"]]
    assert express(layered.network, layered, never)["verified"] and express(general.network, general, as_general_path(never))["verified"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks(max_layers=6, max_width=4, max_weights=200))
def test_property_layered_and_general_forms_solve_alike(net):
    spec = general_form(net.to_dict())
    for engine in ("deah-complete", "deah"):
        layered, general = solve(net, engine=engine), solve(spec, engine=engine)
        assert layered.certified and general.certified
        assert [as_general_path(p) for p in layered.basis_paths] == general.basis_paths
        assert [as_general_path(p) for p in layered.discarded_paths] == general.discarded_paths
        if layered.discarded_paths:
            path = layered.discarded_paths[-1]
            a, b = layered.why(path), general.why(as_general_path(path))
            assert named(a["reason"]) == b["reason"] and a["verified"] is b["verified"] is True


def test_certify_and_why_take_every_path_form_of_a_general_network(tmp_path):
    result = solve(CONV, engine="deah-complete")
    net = result.network
    as_json = result.basis_paths
    as_text = [json.dumps(p) for p in as_json]
    as_tuples = [(tuple((net.index[n], i) for n, i in p["nodes"]), tuple(p["taps"])) for p in as_json]
    for form in (as_json, as_text, as_tuples, result):
        assert certify(net, form).certified
    (tmp_path / "path.json").write_text(json.dumps(as_json[5]))
    answers = [result.why(p) for p in (as_json[5], as_text[5], as_tuples[5], str(tmp_path / "path.json"))]
    assert all(a == answers[0] for a in answers) and answers[0]["status"] == "kept"
    with pytest.raises(BadInput, match=r"is not a path of network conv: "):
        result.why({"nodes": [["x", 0], ["y", 0]], "taps": [0]})


def test_summary_and_export_equal_the_cli(tmp_path):
    for spec, engine in ((FIG1B, "deah"), (CONV, "deah-complete"), (CONV, "skeleton")):
        path = tmp_path / f"{spec['name']}-{engine}.json"
        path.write_text(json.dumps(spec))
        export = tmp_path / "export.json"
        res = cli("solve", path, "--engine", engine, "--json", "--export", export)
        assert res.returncode == 0, res.stderr
        result = solve(spec, engine=engine)
        printed, summary = json.loads(res.stdout), json.loads(json.dumps(result.summary()))
        for doc in (printed, summary, printed.get("core", {}), summary.get("core", {})):
            doc.pop("timings", None)
        assert printed == summary
        assert json.loads(export.read_text()) == json.loads(json.dumps(result.export()))


def test_why_of_a_result_and_of_its_stored_run_answer_alike(tmp_path):
    """The one answer shape: a general DEAH result's why and the stored run's why agree on the
    status, the rule (its action too) and the certificate, path for path."""
    net = load_general("examples/resnet-style.json")
    result = solve(net, engine="deah-complete")
    from basispath_graph import open_store

    with open_store(str(tmp_path / "store"), create=True) as store:
        run = store.run(net, engine="deah-complete")
        for path in result.discarded_paths[:5] + result.basis_paths[:2]:
            mine, stored = result.why(path), store.why(run.id, json.dumps(path))
            assert set(mine) == set(stored)
            assert (mine["status"], mine["path"], mine["text"], mine["verified"]) == (
                stored["status"], stored["path"], stored["text"], stored["verified"])
            if mine["status"] == "discarded":
                assert stored["reason"] == mine["reason"]
                assert [(t["coef"], t["path"]) for t in mine["certificate"]] == [(t["coef"], t["path"]) for t in stored["certificate"]]
        loaded = store.load(run.id)  # the stored run read back: its kept and discarded paths
        assert [general_path_json(net, p) for p in loaded.basis_paths] == result.basis_paths
        assert [general_path_json(net, p) for p in loaded.discarded_paths] == result.discarded_paths
