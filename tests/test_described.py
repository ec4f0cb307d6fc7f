"""Described bases (issue 26): a skeleton basis held as its designated walks and weight families,
certified from the description, against the explicit exact certifier and the brute-force oracle."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basispath_graph.general import described, documents
from basispath_graph.general.described_io import read_described
from basispath_graph.general.documents import paths_export_pieces
from basispath_graph.general.solve import solve_general
from basispath_graph.result import Result
from basispath_graph.general.blocks import GeneralBlock, block_paths
from basispath_graph.general.described import DescribedBasis, Family, certify_described
from basispath_graph.general.model import parse_general
from basispath_graph.general.paths import certify_blocks
from basispath_graph.general.presets import general_preset_spec
from basispath_graph.general.skeleton import UnsupportedIdentity, skeleton_blocks

from .cli_runner import cli
from .test_general_networks import exact_rank, general_specs, oracle_paths, oracle_vector


def _skeleton(spec):
    net = parse_general(spec, "<spec>", 10**6)
    try:
        return net, skeleton_blocks(net)
    except UnsupportedIdentity:
        return net, None


def _paths(net, blocks):
    return [p for b in blocks for p in block_paths(net, b)]


def _rebuilt(basis: DescribedBasis, **changes):
    return basis.replaced(**{k: v for k, v in changes.items() if v is not None})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs(), st.integers(1, 4))
def test_certified_from_the_description_as_by_the_explicit_judge(spec, chunk_rows):
    """The description's verdict is the explicit certifier's on the listed paths and the oracle's
    exact rank; chunked blocks list the same paths in the same order, and the counts of
    ``sizes`` are those of the blocks made."""
    net, basis = _skeleton(spec)
    if basis is None:
        return
    listed = list(basis)
    verdict = certify_described(basis)
    assert verdict.certified == certify_blocks(net, listed).certified == True  # noqa: E712
    chunked = _rebuilt(basis, chunk_rows=chunk_rows)
    assert _paths(net, chunked) == _paths(net, listed)
    assert chunked.sizes() == [len(b) for b in chunked] and chunked.path_count == net.m - net.H
    vectors = [oracle_vector((tuple((l, i) for l, i in p["nodes"]), tuple(p["taps"]))) for p in _paths(net, listed)]
    assert exact_rank(vectors) == len(vectors) == net.m - net.H


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs(), st.integers(1, 4), st.data())
def test_lazy_chunks_give_the_blocks_paths_and_columns(spec, chunk_rows, data):
    """``iter_chunks`` of a described basis lists the blocks' paths in order; a family's chunk
    gives each column from the walks alone, and any rows it is asked for, as the made block does
    (what ``paths_through`` reads)."""
    from basispath_graph.general.lazy_blocks import iter_chunks

    net, basis = _skeleton(spec)
    if basis is None:
        return
    chunks = list(iter_chunks(basis, chunk_rows))
    assert all(0 < len(c) <= chunk_rows for c in chunks)
    made = [c if isinstance(c, GeneralBlock) else c.take(np.arange(len(c))) for c in chunks]
    assert _paths(net, made) == _paths(net, list(basis))
    for chunk in (c for c in chunks if isinstance(c, described.FamilyChunk)):
        block = GeneralBlock(chunk.layers, chunk.hops, chunk.nodes, chunk.taps)
        assert [chunk.column(k).tolist() for k in range(len(chunk.layers))] == block.nodes.T.tolist()
        rows = np.array(data.draw(st.lists(st.integers(0, len(chunk) - 1), max_size=4)), dtype=np.int64)
        assert block_paths(net, chunk.take(rows)) == block_paths(net, block.take(rows))


def _families_with_designated(basis):
    return [f for f in basis.families if len(f.excluded)]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs(), st.data())
def test_a_family_that_keeps_a_walk_weight_is_refused(spec, data):
    """Put a designated weight back into its family: its path repeats a walk's weight, and both
    certifiers refuse (the count is off by one too, so the explicit one says so)."""
    net, basis = _skeleton(spec)
    if basis is None or not _families_with_designated(basis):
        return
    fam = data.draw(st.sampled_from(_families_with_designated(basis)))
    drop = data.draw(st.sampled_from(list(fam.excluded)))
    changed = [Family(net, f.connection, f.excluded[f.excluded != drop]) if f is fam else f for f in basis.families]
    mutated = _rebuilt(basis, families=changed)
    verdict = certify_described(mutated)
    assert not verdict.certified
    start = net.connection_offsets[fam.connection]
    assert verdict.defect == f"weight {start + int(drop)} lies on a walk and in the family of connection {fam.connection}"
    assert not certify_blocks(net, list(mutated)).certified


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs(), st.data())
def test_a_family_short_of_a_weight_is_refused_by_its_count(spec, data):
    net, basis = _skeleton(spec)
    if basis is None or not basis.families:
        return
    fam = data.draw(st.sampled_from(basis.families))
    kept = np.setdiff1d(np.arange(fam.weights), fam.excluded)
    extra = data.draw(st.sampled_from(list(kept)))
    changed = [Family(net, f.connection, np.append(f.excluded, extra)) if f is fam else f for f in basis.families]
    verdict = certify_described(_rebuilt(basis, families=changed))
    assert verdict.defect == f"size {net.m - net.H - 1} != m - H = {net.m - net.H}"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs(), st.data())
def test_a_dependent_explicit_part_is_refused_with_the_judges_rank(spec, data):
    """Swap an explicit path for a copy of another: the count holds, the set is dependent, and the
    description's verdict gives the explicit certifier's rank."""
    net, basis = _skeleton(spec)
    rows = [(b, r) for b, block in enumerate(basis.explicit) for r in range(len(block))] if basis else []
    if len(rows) < 2:
        return
    (b1, r1), (b2, r2) = data.draw(st.permutations(rows))[:2]
    explicit = list(basis.explicit)
    block = explicit[b1]
    src = basis.explicit[b2]
    if src.layers != block.layers or src.hops != block.hops:
        return
    nodes, taps = block.nodes.copy(), block.taps.copy()
    nodes[r1], taps[r1] = src.nodes[r2], src.taps[r2]
    explicit[b1] = dataclasses.replace(block, nodes=nodes, taps=taps)
    mutated = _rebuilt(basis, explicit=explicit)
    verdict, judge = certify_described(mutated), certify_blocks(net, list(mutated))
    assert not verdict.certified and not judge.certified
    assert verdict.defect == judge.defect == f"dependent: rank {net.m - net.H - 1} < {net.m - net.H}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs(), st.data())
def test_a_walk_that_leaves_its_neuron_is_refused(spec, data):
    """A designated in-walk row that ends at another neuron would make a family path skip a hop:
    refused before anything is counted."""
    net, basis = _skeleton(spec)
    if basis is None or not basis.families:
        return
    layers = [net.connections[f.connection].source for f in basis.families if net.layers[net.connections[f.connection].source].size > 1]
    if not layers:
        return
    layer = data.draw(st.sampled_from(layers))
    in_nodes = dict(basis.walks.in_nodes)
    nodes = in_nodes[layer].copy()
    nodes[[0, 1]] = nodes[[1, 0]]
    in_nodes[layer] = nodes
    walks = dataclasses.replace(basis.walks, in_nodes=in_nodes)
    verdict = certify_described(_rebuilt(basis, walks=walks))
    assert verdict.defect == f"the designated in-walks of {net.layers[layer].name} are not one per neuron, in order"


def test_resnet18_is_certified_without_making_a_family_block(monkeypatch):
    """ResNet-18 at channel level (11.7 M weights): certified from its description alone; no family
    path is made (a made one would fail here)."""
    net = parse_general(general_preset_spec("resnet18"), "resnet18", 10**8)
    basis = skeleton_blocks(net)

    def refuse(*args, **kwargs):
        raise AssertionError("a family block was made")

    monkeypatch.setattr(described, "family_block", refuse)
    verdict = certify_described(basis)
    assert verdict.certified and basis.path_count == net.m - net.H == 11_681_832
    explicit = sum(len(b) for b in basis.explicit)  # the T paths: at most one per neuron
    assert explicit <= sum(layer.size for layer in net.layers) and len(basis) > len(basis.families)  # the big convolutions come in chunks
    with pytest.raises(AssertionError, match="a family block was made"):
        basis[len(basis) - 1]


# ---------------------------------------------------------------- files: described and streamed


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs())
def test_a_described_file_reads_back_to_the_same_paths_and_verdict(spec):
    net, basis = _skeleton(spec)
    if basis is None:
        return
    result = solve_general(net)
    doc = json.loads(json.dumps(result.export("described")))
    assert doc["format"] == "basispath-described/1" and doc["basis_size"] == net.m - net.H
    back = read_described(net, doc, "f.json")
    assert _paths(net, back) == _paths(net, basis)
    assert certify_described(back).certified


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs())
def test_the_streamed_paths_export_is_the_paths_document(spec):
    net, basis = _skeleton(spec)
    if basis is None:
        return
    result = solve_general(net)
    assert json.loads("".join(paths_export_pieces(result))) == result.export("paths") == result.export()


@pytest.mark.parametrize("engine", ["skeleton", "deah-complete"])
def test_basis_paths_of_a_big_basis_are_made_when_read(monkeypatch, engine):
    """Above the threshold (lowered here to 1,000 paths) ``Result.basis_paths`` of a general network
    is a sequence that makes each path when read (ResNet-50's 25.5 M paths as a list of dicts
    were killed by the kernel past 21 GB): the same paths in the same order as the list, by
    index, negative index, slice and iteration."""
    net = parse_general(general_preset_spec("resnet20"), "r20", 10**7)
    result = solve_general(net, engine)
    listed = result.basis_paths
    assert isinstance(listed, list) and len(listed) == net.m - net.H
    monkeypatch.setattr(documents, "EXPLICIT_EXPORT_PATHS", 1000)
    lazy = result.basis_paths
    assert isinstance(lazy, described.DescribedPaths) and len(lazy) == len(listed)
    assert list(lazy) == listed
    for i in (0, 1, 4095, 4096, 123_456, len(listed) - 1, -1):
        assert lazy[i] == listed[i]
    assert lazy[100:110] == listed[100:110]


def test_export_is_described_above_a_million_paths_and_verify_reads_both(tmp_path, monkeypatch):
    """The CIFAR ResNet-20 (271,690 weights): ``--export`` lists its paths; above the threshold
    (lowered here) the same command writes the described basis; ``--export-paths`` always lists
    them. ``verify`` certifies all three files, the described one from its description."""
    spec = tmp_path / "resnet20.json"
    spec.write_text(json.dumps(general_preset_spec("resnet20")))
    paths, streamed, small = tmp_path / "paths.json", tmp_path / "streamed.json", tmp_path / "small.json"
    cli("solve", str(spec), "--export", str(paths), "--export-paths", str(streamed), "-q", check=0)
    assert json.loads(paths.read_text()) == json.loads(streamed.read_text())
    assert len(json.loads(paths.read_text())["basis"]) == 271_690 - 448
    monkeypatch.setattr(documents, "EXPLICIT_EXPORT_PATHS", 1000)
    net = parse_general(general_preset_spec("resnet20"), "resnet20", 10**6)
    small.write_text(json.dumps(solve_general(net).export()))
    doc = json.loads(small.read_text())
    assert doc["format"] == "basispath-described/1" and small.stat().st_size < paths.stat().st_size / 50
    for f in (paths, streamed, small):
        r = cli("verify", str(spec), str(f), check=0)
        assert r.stdout == "certified: 271242 independent paths = m - H = 271690 - 448\n"


def _corrupt(doc, how):
    doc = json.loads(json.dumps(doc))
    if how == "drop an excluded weight":
        fam = next(f for f in doc["families"] if f["excluded"])
        fam["excluded"] = fam["excluded"][1:]
    elif how == "walk into a wrong layer":
        doc["walks"]["in"][0]["connection"] = doc["walks"]["out"][-1]["connection"]
    elif how == "neuron out of range":
        doc["walks"]["in"][0]["from"][0] = 10**6
    elif how == "no families":
        del doc["families"]
    return doc


@pytest.mark.parametrize("how, code, message", [
    ("drop an excluded weight", 1, "not certified: weight "),
    ("walk into a wrong layer", 2, "error: f.json: walks.in[0]: connection "),
    ("neuron out of range", 2, "error: f.json: walks.in[0].from: integers must lie in 0 .. "),
    ("no families", 2, "error: f.json: a basispath-described/1 document needs 'families'"),
])
def test_a_corrupted_described_file_is_refused_in_one_line(tmp_path, how, code, message):
    spec = tmp_path / "resnet20.json"
    spec.write_text(json.dumps(general_preset_spec("resnet20")))
    net = parse_general(general_preset_spec("resnet20"), "resnet20", 10**6)
    (tmp_path / "f.json").write_text(json.dumps(_corrupt(solve_general(net).export("described"), how)))
    r = cli("verify", str(spec), "f.json", cwd=tmp_path, check=code)
    out = r.stdout if code == 1 else r.stderr
    assert out.startswith(message) and out.count("\n") == 1 and "Traceback" not in r.stderr


# ---------------------------------------------------------------- questions, without listing


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs(), st.data())
def test_why_and_express_over_the_description_agree_with_the_listed_basis(spec, data):
    """For a path of the network (from the oracle's list): its coordinates over the described
    basis equal those over the same basis listed as blocks, and ``why`` says kept exactly for the
    basis paths, at the same index."""
    net, basis = _skeleton(spec)
    if basis is None:
        return
    result = solve_general(net)
    listed = Result.of_general(net, "skeleton", 0, list(basis), result.verdict, {})
    path = data.draw(st.sampled_from(oracle_paths(spec)))
    as_json = {"nodes": [[l, i] for l, i in path[0]], "taps": list(path[1])}
    assert result.express(as_json) == listed.express(as_json)
    assert result.express(as_json)["verified"]
    assert result.why(as_json) == listed.why(as_json)


def test_why_on_resnet34_answers_without_listing_the_basis(monkeypatch):
    """ResNet-34 at channel level (21.8 M weights): ``why`` on a basis path near the end and on a
    path that is not one answers with a verified certificate; only single paths are made."""
    from basispath_graph import api

    net = api.load_spec(general_preset_spec("resnet34"), max_weights=None)
    result = api.solve(net)
    assert result.certified and result.engine == "skeleton"
    made = []
    real = described.family_block
    monkeypatch.setattr(described, "family_block", lambda net, walks, fam, start=0, stop=None:
                        made.append((fam.size if stop is None else stop) - start) or real(net, walks, fam, start, stop))
    kept = result.basis_path(result.basis_size - 5)
    answer = result.why(kept)
    assert answer["status"] == "kept" and answer["certificate"][0]["index"] == result.basis_size - 5
    nodes, taps = kept
    changed = (tuple((l, (i + 1) % net.layers[l].size) if n == 1 else (l, i) for n, (l, i) in enumerate(nodes)), taps)
    answer = result.why(changed)
    assert answer["verified"] and answer["status"] in ("kept", "not a candidate")
    assert made and max(made) <= 1, "only single paths are made"
