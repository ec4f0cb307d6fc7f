"""The described deah-complete file (issue 26, item 3; ``deah/described_file.py``): ``solve
--export`` of a run held described writes its description (rule, routes, blocks), and ``verify``
rebuilds and certifies it from the description. Its verdict is the explicit certifier's on the
listed paths (random networks, the brute-force oracle's basis); a damaged file is refused in one
line, exit 2."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from basispath_graph import guards, load_general, solve
from basispath_graph.deah.described_file import is_described_deah_document
from basispath_graph.deah.described_verify import certify_described_deah
from basispath_graph.errors import BadInput
from basispath_graph.general.model import parse_general
from basispath_graph.general.presets import general_preset_spec
from basispath_graph.verify import certify

from .cli_runner import cli
from .oracle import enumerate_paths, oracle_for
from .strategies import networks
from .test_described_deah_store import GENERAL


@pytest.fixture
def described(monkeypatch):
    monkeypatch.setattr(guards, "DESCRIBED_ABOVE", -1)


def _document(net, seed=0):
    result = solve(net, engine="deah-complete", seed=seed)
    doc = json.loads(json.dumps(result.export("described")))
    assert is_described_deah_document(doc)
    return result, doc


@settings(max_examples=40, deadline=None)
@given(net=networks(max_layers=6, max_width=4), seed=st.integers(0, 2))
def test_a_described_file_certifies_as_its_listed_paths(net, seed):
    saved = guards.DESCRIBED_ABOVE
    guards.DESCRIBED_ABOVE = -1
    try:
        result = solve(net, engine="deah-complete", seed=seed)
        if not result.deah.described:  # a local block: never held described
            with pytest.raises(BadInput, match="a described export needs a deah-complete run held described"):
                result.export("described")
            return
        doc = json.loads(json.dumps(result.export("described")))
    finally:
        guards.DESCRIBED_ABOVE = saved
    verdict = certify_described_deah(net, doc, "basis.json")
    assert verdict == certify(net, result.basis) and verdict.certified
    # the oracle: the paths the description makes are m - H independent paths of the network
    paths = [tuple(zip(b.layers, row)) for b in result.basis for row in b.take(slice(None)).nodes.tolist()]
    assert set(paths) <= set(enumerate_paths(net.widths, net.pairs)) and len(set(paths)) == len(paths) == net.m - net.H
    if len(paths) <= 200:
        assert oracle_for(tuple(net.widths), tuple(map(tuple, net.pairs))).rank(paths) == len(paths)


def test_a_general_described_file_round_trips_through_the_cli(tmp_path, described):
    spec = tmp_path / "net.json"
    spec.write_text(json.dumps(GENERAL))
    out = tmp_path / "basis.json"
    res = cli("solve", str(spec), "--engine", "deah-complete", "--export", str(out), "--json")
    assert res.returncode == 0, res.stderr  # a small network: --export lists its paths unless asked
    net = load_general(GENERAL)
    result, doc = _document(net)
    out.write_text(json.dumps(doc))
    res = cli("verify", str(spec), str(out))
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == f"certified: {net.m - net.H} independent paths = m - H = {net.m} - {net.H}"
    assert doc["basis_size"] == result.basis_size and doc["discarded"] == len(result.discarded) > 0
    assert doc["core_layers"] == result.parts["core_layers"] and doc["parts"] == result.parts


@pytest.mark.parametrize("damage, message", [
    (lambda d: d["substructures"][1]["layers"].pop(1), "does not describe a deah-complete run of this network: substructure"),
    (lambda d: d["blocks"][1].update(kept=d["blocks"][1]["kept"] + 1), "does not describe a deah-complete run of this network: block 1 rebuilds as"),
    (lambda d: d["orders"][2].__setitem__(0, d["orders"][2][1]), "the choice rule: a layer's order is not a permutation of its neurons"),
    (lambda d: d.pop("blocks"), "needs 'blocks'"),
    (lambda d: d.update(core_layers=["x"]), "core_layers are not the core of this network"),
    (lambda d: d["substructures"][0].update(layers=["x", "nowhere"]), "substructures[0].layers: 'nowhere' is not a layer of the core"),
])
def test_a_damaged_described_file_is_refused_in_one_line(tmp_path, described, damage, message):
    net = load_general(GENERAL)
    _, doc = _document(net)
    damage(doc)
    spec, out = tmp_path / "net.json", tmp_path / "basis.json"
    spec.write_text(json.dumps(GENERAL))
    out.write_text(json.dumps(doc))
    res = cli("verify", str(spec), str(out))
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and message in res.stderr and res.stderr.startswith(f"error: {out}: ")


def test_another_rule_describes_another_basis_and_is_certified_as_such(described):
    """The orders are the rule: a file with another permutation of a layer describes another
    basis of the network, certified from that description."""
    net = load_general(GENERAL)
    _, doc = _document(net)
    doc["orders"][2] = doc["orders"][2][::-1]
    assert certify_described_deah(net, doc, "basis.json").certified


def test_resnet20_described_file_is_small_and_certified():
    """Above the threshold with its real value: ResNet-20's core is not held described (its B_r
    fit), so the threshold is lowered; the file holds a few numbers per core neuron."""
    net = parse_general(general_preset_spec("resnet20"), "resnet20", 10**9)
    saved = guards.DESCRIBED_ABOVE
    guards.DESCRIBED_ABOVE = -1
    try:
        result, doc = _document(net)
    finally:
        guards.DESCRIBED_ABOVE = saved
    text = json.dumps(doc)
    assert len(text) < 20 * sum(net.layers[k].size for k in range(len(net.layers))) + len(json.dumps(doc["spec"])) + 2000
    assert certify_described_deah(net, doc, "basis.json").certified and result.basis_size == net.m - net.H
