"""General networks (issue 18, items 1-2): the spec, the counting rule |B| = m - H with H the hidden
rescaling classes, and exact certification, against a brute-force oracle written here from the
definitions (every input-output path, its trainable weights, exact rank over Q)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basispath_graph.general.blocks import block_paths
from basispath_graph.general.model import from_layered, parse_general
from basispath_graph.general.paths import certify_blocks, certify_general, read_general_path
from basispath_graph.general.identity_forest import identity_free_problem
from basispath_graph.general.skeleton import UnsupportedIdentity, skeleton_blocks
from basispath_graph.spec import SpecError

from .cli_runner import cli
from .strategies import networks

# ---------------------------------------------------------------- the oracle (independent)


def oracle_paths(spec: dict) -> list[tuple[tuple, tuple]]:
    """Every path (nodes as (layer name, index), taps) from a layer with no incoming connection
    to a layer with no outgoing one."""
    names = [l["name"] for l in spec["layers"]]
    size = {l["name"]: l["size"] for l in spec["layers"]}
    out_edges = {n: [] for n in names}
    for c in spec["connections"]:
        out_edges[c["from"]].append(c)
    has_in = {c["to"] for c in spec["connections"]}
    outputs = {n for n in names if not out_edges[n]}

    def walk(layer, i):
        if layer in outputs:
            yield ((layer, i),), ()
        for c in out_edges[layer]:
            kind = c.get("kind", "dense")
            if kind == "grouped":  # output block g reads input block g: j in i's block
                block_in, block_out = size[layer] // c["groups"], size[c["to"]] // c["groups"]
                targets = range((i // block_in) * block_out, (i // block_in + 1) * block_out)
            else:
                targets = range(size[c["to"]]) if kind == "dense" else [i]
            taps = [None] if kind == "identity" else range(c.get("taps", 1))
            for j in targets:
                for rest_nodes, rest_taps in walk(c["to"], j):
                    for t in taps:
                        yield ((layer, i), *rest_nodes), (t, *rest_taps)

    return [p for n in names if n not in has_in for i in range(size[n]) for p in walk(n, i)]


def oracle_vector(path) -> frozenset:
    """The trainable weights of a path, named by (from, to, i, j, tap): identity hops add nothing."""
    nodes, taps = path
    return frozenset((a, b, i, j, t) for (a, i), (b, j), t in zip(nodes, nodes[1:], taps) if t is not None)


def exact_rank(vectors) -> int:
    rows = [{k: Fraction(1) for k in v} for v in vectors]
    pivots: dict = {}
    rank = 0
    for row in rows:
        row = dict(row)
        while row:
            key = max(row)
            if key not in pivots:
                pivots[key] = row
                rank += 1
                break
            p = pivots[key]
            f = row[key] / p[key]
            for k, v in p.items():
                nv = row.get(k, 0) - f * v
                if nv:
                    row[k] = nv
                else:
                    row.pop(k, None)
    return rank


def oracle_m(spec) -> int:
    size = {l["name"]: l["size"] for l in spec["layers"]}
    total = 0
    for c in spec["connections"]:
        kind = c.get("kind", "dense")
        if kind == "dense":
            total += size[c["from"]] * size[c["to"]] * c.get("taps", 1)
        elif kind == "grouped":
            total += size[c["from"]] * size[c["to"]] // c["groups"] * c.get("taps", 1)
        elif kind == "diagonal":
            total += size[c["from"]] * c.get("taps", 1)
    return total


def oracle_H(spec) -> int:
    """Hidden rescaling classes: neurons joined by identity edges, classes touching an input or
    output layer left out (breadth-first search, not union-find)."""
    names = [l["name"] for l in spec["layers"]]
    size = {l["name"]: l["size"] for l in spec["layers"]}
    has_in = {c["to"] for c in spec["connections"]}
    has_out = {c["from"] for c in spec["connections"]}
    adj: dict = {(n, i): set() for n in names for i in range(size[n])}
    for c in spec["connections"]:
        if c.get("kind") == "identity":
            for i in range(size[c["from"]]):
                adj[(c["from"], i)].add((c["to"], i))
                adj[(c["to"], i)].add((c["from"], i))
    seen, hidden = set(), 0
    for start in adj:
        if start in seen:
            continue
        comp, todo = set(), [start]
        while todo:
            x = todo.pop()
            if x not in comp:
                comp.add(x)
                todo.extend(adj[x])
        seen |= comp
        hidden += all(n in has_in and n in has_out for n, _ in comp)
    return hidden


# ---------------------------------------------------------------- random general networks


@st.composite
def general_specs(draw):
    """Small networks with dense (1-2 taps), grouped, diagonal and identity connections and biases."""
    n = draw(st.integers(3, 5))
    sizes = [draw(st.sampled_from([1, 2, 2, 4])) for _ in range(n)]
    layers = [{"name": f"L{k}", "size": s} for k, s in enumerate(sizes)]
    conns = []
    for k in range(n - 1):  # consecutive layers: dense, or grouped (2 groups) where both sizes are even
        if sizes[k] % 2 == 0 and sizes[k + 1] % 2 == 0 and draw(st.integers(0, 2)) == 0:
            conns.append({"from": f"L{k}", "to": f"L{k + 1}", "kind": "grouped", "groups": 2, "taps": draw(st.integers(1, 2))})
        else:
            conns.append({"from": f"L{k}", "to": f"L{k + 1}", "kind": "dense", "taps": draw(st.integers(1, 2))})
    for a in range(n):
        for b in range(a + 2, n):
            if sizes[a] == sizes[b] and draw(st.integers(0, 2)) == 0:
                conns.append({"from": f"L{a}", "to": f"L{b}", "kind": "identity"})
            elif draw(st.integers(0, 3)) == 0:
                conns.append({"from": f"L{a}", "to": f"L{b}", "kind": "dense", "taps": draw(st.integers(1, 2))})
    for a in range(n - 1):  # identity or diagonal beside a consecutive dense pair
        if sizes[a] == sizes[a + 1] and draw(st.integers(0, 4)) == 0:
            conns.append({"from": f"L{a}", "to": f"L{a + 1}", "kind": "identity"})
    if draw(st.booleans()):  # a bias: a size-1 input layer feeding some later layers
        layers.insert(0, {"name": "bias", "size": 1})
        for k in range(1, n):
            if k == 1 or draw(st.booleans()):
                conns.append({"from": "bias", "to": f"L{k}", "kind": "dense"})
    for k in range(1, n - 1):
        if draw(st.integers(0, 5)) == 0:  # a per-channel scale after layer k (BatchNorm kept)
            layers.append({"name": f"bn{k}", "size": sizes[k]})
    # BatchNorm layers as diagonal hops inserted between L_k and the layers it fed
    extra = [l for l in layers if l["name"].startswith("bn")]
    for bn in extra:
        k = int(bn["name"][2:])
        moved = [c for c in conns if c["from"] == f"L{k}" and c.get("kind", "dense") != "identity"]
        for c in moved:
            c["from"] = bn["name"]
        conns.append({"from": f"L{k}", "to": bn["name"], "kind": "diagonal"})
    order = [l["name"] for l in layers if l["name"] == "bias"] + [x for k in range(n) for x in [f"L{k}"] + ([f"bn{k}"] if any(e["name"] == f"bn{k}" for e in extra) else [])]
    by_name = {l["name"]: l for l in layers}
    return {"name": "random", "layers": [by_name[x] for x in order], "connections": conns}


def _path_json(path):
    nodes, taps = path
    return {"nodes": [[l, i] for l, i in nodes], "taps": list(taps)}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs())
def test_counting_rule_against_brute_force(spec):
    """m, H and |B| = m - H agree with the rank of all path vectors, computed exactly."""
    net = parse_general(spec, "<spec>", 10**6)
    paths = oracle_paths(spec)
    assert net.m == oracle_m(spec)
    assert net.H == oracle_H(spec)
    assert exact_rank([oracle_vector(p) for p in paths]) == net.m - net.H == net.basis_size


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs(), st.randoms(use_true_random=False))
def test_certify_general_against_brute_force(spec, rnd):
    """A maximal independent set of paths (chosen by the oracle) is certified; one path fewer, a
    path twice, or a dependent path in place of one is not, with the defect named."""
    net = parse_general(spec, "<spec>", 10**6)
    paths = oracle_paths(spec)
    rnd.shuffle(paths)
    chosen, vectors = [], []
    for p in paths:
        if exact_rank(vectors + [oracle_vector(p)]) > len(vectors):
            chosen.append(p)
            vectors.append(oracle_vector(p))
    as_read = [read_general_path(net, _path_json(p), f"path {n}") for n, p in enumerate(chosen)]
    verdict = certify_general(net, as_read)
    assert verdict.certified and verdict.size == net.m - net.H
    assert certify_general(net, as_read[:-1]).defect == f"size {len(as_read) - 1} != m - H = {net.m - net.H}"
    if len(as_read) >= 2:
        twice = as_read[:-1] + [as_read[0]]
        assert certify_general(net, twice).defect.endswith(f"duplicates path 0")
    dependent = next((p for p in paths if p not in chosen), None)
    if dependent is not None:
        swapped = as_read[:-1] + [read_general_path(net, _path_json(dependent), "q")]
        expected_rank = exact_rank(vectors[:-1] + [oracle_vector(dependent)])
        v = certify_general(net, swapped)
        assert v.certified == (expected_rank == len(chosen))
        if not v.certified and "duplicates" not in v.defect:
            assert v.defect == f"dependent: rank {expected_rank} < {len(chosen)}"


@settings(max_examples=40, deadline=None)
@given(networks(max_layers=5, max_width=3))
def test_a_layered_spec_is_sugar_for_the_general_model(net):
    g = from_layered(net)
    assert (g.m, g.H, g.basis_size) == (net.m, net.H, net.basis_size)
    assert [l.name for l in g.layers] == [str(l) for l in range(net.L + 1)]


def test_a_resnet_block_with_biases_by_hand():
    """x -> conv(3 taps) -> h -> conv -> y, y += x (identity), biases into h and y:
    m = 2*2*3 + 2*2*1 + 2 + 2 = 20; classes: h0, h1 hidden; y joined to x (input) by the
    identity, so not counted: H = 2."""
    spec = {"name": "block", "layers": [{"name": "b", "size": 1}, {"name": "x", "size": 2}, {"name": "h", "size": 2}, {"name": "y", "size": 2}],
            "connections": [{"from": "x", "to": "h", "taps": 3}, {"from": "h", "to": "y"}, {"from": "x", "to": "y", "kind": "identity"},
                            {"from": "b", "to": "h"}, {"from": "b", "to": "y"}]}
    net = parse_general(spec, "<spec>", 10**6)
    assert (net.m, net.H, net.inputs, net.outputs) == (20, 2, (0, 1), (3,))
    assert exact_rank([oracle_vector(p) for p in oracle_paths(spec)]) == 18


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda s: s["layers"].append({"name": "x", "size": 2}), "layers[3].name \"x\" is used twice"),
        (lambda s: s["layers"][1].update(size=0), "layers[1].size must be an integer >= 1, got 0"),
        (lambda s: s["connections"].append({"from": "y", "to": "x"}), "connections[3]: y -> x goes backwards; list layers in topological order"),
        (lambda s: s["connections"].append({"from": "x", "to": "nope"}), "connections[3].to must name a layer, got \"nope\""),
        (lambda s: s["connections"].append({"from": "x", "to": "y", "kind": "identity", "taps": 2}), "connections[3]: an identity connection has no taps (its weight is fixed at 1)"),
        (lambda s: s["connections"].append({"from": "x", "to": "y", "kind": "conv"}), "connections[3].kind must be one of dense, grouped, diagonal, identity, got \"conv\""),
        (lambda s: s["connections"].append({"from": "x", "to": "h", "taps": 2}), "connections[3]: x -> h already has a trainable (dense, grouped or diagonal) connection (connections[0]); use taps for parallel weights"),
        (lambda s: s["layers"][2].update(size=3), "connections[2]: an identity connection joins layers of equal size, got x (2) -> y (3)"),
        (lambda s: s["connections"][0].update(taps=1.5), "connections[0].taps must be an integer >= 1, got 1.5"),
        (lambda s: s["layers"].append({"name": "z", "size": 1}), "layer \"z\" has no connection"),
        (lambda s: s.update(widths=[1, 2]), "unknown key \"widths\" (a general spec has: name, layers, connections)"),
    ],
)
def test_general_spec_errors_are_one_line(change, message):
    spec = {"name": "e", "layers": [{"name": "x", "size": 2}, {"name": "h", "size": 2}, {"name": "y", "size": 2}],
            "connections": [{"from": "x", "to": "h"}, {"from": "h", "to": "y"}, {"from": "x", "to": "y", "kind": "identity"}]}
    change(spec)
    with pytest.raises(SpecError) as exc:
        parse_general(spec, "net.json", 10**6)
    assert str(exc.value) == f"net.json: {message}"


BLOCK = {"name": "block", "layers": [{"name": "b", "size": 1}, {"name": "x", "size": 2}, {"name": "h", "size": 2}, {"name": "y", "size": 2}],
         "connections": [{"from": "x", "to": "h", "taps": 3}, {"from": "h", "to": "y"}, {"from": "x", "to": "y", "kind": "identity"},
                         {"from": "b", "to": "h"}, {"from": "b", "to": "y"}]}


def test_verify_cli_certifies_a_general_basis(tmp_path):
    spec = tmp_path / "block.json"
    spec.write_text(json.dumps(BLOCK))
    chosen, vectors = [], []
    for p in oracle_paths(BLOCK):
        if exact_rank(vectors + [oracle_vector(p)]) > len(vectors):
            chosen.append(_path_json(p))
            vectors.append(oracle_vector(p))
    basis = tmp_path / "basis.json"
    basis.write_text(json.dumps({"basis": chosen}))
    assert cli("verify", str(spec), str(basis), check=0).stdout == "certified: 18 independent paths = m - H = 20 - 2\n"
    basis.write_text(json.dumps(chosen[:-1]))
    assert cli("verify", str(spec), str(basis), check=1).stdout == "not certified: size 17 != m - H = 18\n"
    bad = [dict(chosen[0], taps=[7] + chosen[0]["taps"][1:])] + chosen[1:]
    basis.write_text(json.dumps(bad))
    assert chosen[0] == {"nodes": [["b", 0], ["h", 0], ["y", 0]], "taps": [0, 0]}  # the oracle's first path
    assert cli("verify", str(spec), str(basis), check=1).stdout == (
        "not certified: path 0 (b:0 -[7]-> h:0 -[0]-> y:0): tap 7 out of range on b -> h (taps 1)\n")
    basis.write_text(json.dumps([{"nodes": [["q", 0]], "taps": []}]))
    assert cli("verify", str(spec), str(basis), check=2).stderr == f'error: {basis}: basis[0]: nodes[0] names no layer: "q"\n'


def test_spec_info_and_the_commands_that_do_not_read_general_specs_yet(tmp_path):
    path = Path(__file__).resolve().parents[1] / "examples" / "general" / "resnet-block.json"
    spec = json.loads(path.read_text())
    info = json.loads(cli("spec", "info", str(path), "--json", check=0).stdout)
    assert (info["m"], info["H"], info["basis_size"]) == (oracle_m(spec), oracle_H(spec), oracle_m(spec) - oracle_H(spec))
    assert info["kind"] == "general" and info["inputs"] == ["bias", "input"] and info["outputs"] == ["fc"]
    assert info["connections"] == {"dense": 8, "diagonal": 0, "identity": 1}
    # (run and ingest read general specs too: tests/test_general_store.py)
    r = cli("express", str(path), str(path), "0:0,1:0", check=2)
    assert r.stderr == (f"error: {path}: a general network (layers and connections); so far only 'basispath spec info', "
                        "'basispath verify', 'basispath solve', 'basispath run', 'basispath ingest' and 'basispath compare' read it "
                        "(docs/general-networks.md)\n")


# ---------------------------------------------------------------- the skeleton engine


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(general_specs())
def test_skeleton_of_a_general_network_is_certified_against_brute_force(spec):
    """The skeleton's paths are paths of the network (checked one by one), m - H of them, and
    independent: the oracle's exact rank of their vectors says so, not only the product's
    certifier. Identity edges that branch or merge are solved through the identity forest; a
    refusal is allowed only where a layer is reached or left through identity connections alone
    (never here: every layer has a trainable connection in and out), never a wrong answer."""
    net = parse_general(spec, "<spec>", 10**6)
    try:
        blocks = skeleton_blocks(net)
    except UnsupportedIdentity as exc:
        assert identity_free_problem(net) is not None, f"refused: {exc}"
        return
    paths = [p for b in blocks for p in block_paths(net, b)]
    as_read = [read_general_path(net, p, "p") for p in paths]
    assert certify_general(net, as_read).certified
    all_paths = {(tuple(n), t) for n, t in oracle_paths(spec)}
    assert all((tuple((l, i) for l, i in p["nodes"]), tuple(p["taps"])) in all_paths for p in paths)
    vectors = [oracle_vector((tuple((l, i) for l, i in p["nodes"]), tuple(p["taps"]))) for p in paths]
    assert exact_rank(vectors) == len(paths) == net.m - net.H


def test_branching_identities_are_solved_through_the_identity_forest():
    """Two through-paths that differ only in identity hops are one vector, so the walks with
    identity designations fall short here; the skeleton of N plus the identity forest is a basis
    (the oracle's exact rank says so)."""
    spec = {"name": "r297", "layers": [{"name": f"l{k}", "size": s} for k, s in enumerate([1, 2, 2, 2, 2])],
            "connections": [{"from": "l0", "to": "l1"}, {"from": "l0", "to": "l3", "taps": 2}, {"from": "l1", "to": "l2", "taps": 2},
                            {"from": "l1", "to": "l2", "kind": "identity"}, {"from": "l1", "to": "l3", "taps": 2},
                            {"from": "l1", "to": "l3", "kind": "identity"}, {"from": "l1", "to": "l4", "kind": "diagonal", "taps": 2},
                            {"from": "l1", "to": "l4", "kind": "identity"}, {"from": "l2", "to": "l3"},
                            {"from": "l2", "to": "l3", "kind": "identity"}, {"from": "l2", "to": "l4"},
                            {"from": "l3", "to": "l4", "kind": "diagonal", "taps": 2}]}
    net = parse_general(spec, "r297", 10**6)
    paths = [p for b in skeleton_blocks(net) for p in block_paths(net, b)]
    vectors = [oracle_vector((tuple((l, i) for l, i in p["nodes"]), tuple(p["taps"]))) for p in paths]
    assert exact_rank(vectors) == len(paths) == oracle_m(spec) - oracle_H(spec)


@settings(max_examples=40, deadline=None)
@given(networks(max_layers=5, max_width=3))
def test_skeleton_of_a_layered_network_read_as_general(net):
    g = from_layered(net)
    assert certify_blocks(g, skeleton_blocks(g)).certified


def test_solve_and_verify_a_general_spec_from_the_cli(tmp_path):
    path = Path(__file__).resolve().parents[1] / "examples" / "general" / "resnet-block.json"
    spec = json.loads(path.read_text())
    export = tmp_path / "basis.json"
    summary = json.loads(cli("solve", str(path), "--export", str(export), "--json", check=0).stdout)
    m, H = oracle_m(spec), oracle_H(spec)
    assert (summary["m"], summary["H"], summary["basis_size"], summary["certified"]) == (m, H, m - H, True)
    doc = json.loads(export.read_text())
    assert doc["engine"] == "skeleton" and len(doc["basis"]) == m - H
    assert parse_general(doc["spec"], "export", 10**6).to_dict() == parse_general(spec, "spec", 10**6).to_dict()
    assert cli("verify", str(path), str(export), check=0).stdout == f"certified: {m - H} independent paths = m - H = {m} - {H}\n"


# ---------------------------------------------------------------- real architectures


def test_real_architecture_presets_count_their_tensors():
    """m is the model's own tensor count with each BatchNorm folded into a per-channel bias:
    torchvision's resnet18 has 11,678,912 conv/fc weights, 1,000 fc biases and 4,800 BatchNorm
    channels (64 + 4*64 + 5*128 + 5*256 + 5*512, projections included); vgg11 has 132,863,336
    parameters. H: every conv's channels are a class, except that identity shortcuts join a
    stage's block outputs (and the stem with layer1) into one class per channel."""
    from basispath_graph.general.presets import general_preset_spec

    r18 = parse_general(general_preset_spec("resnet18"), "resnet18", 10**9)
    assert r18.m == 11_678_912 + 1_000 + 4_800
    assert r18.H == 64 + (2 * 64 + 2 * 128 + 2 * 256 + 2 * 512) + (128 + 256 + 512)
    vgg = parse_general(general_preset_spec("vgg11"), "vgg11", 10**9)
    assert (vgg.m, vgg.H) == (132_863_336, 64 + 128 + 256 * 2 + 512 * 4 + 4096 * 2)
    r34 = parse_general(general_preset_spec("resnet34"), "resnet34", 10**9)
    assert r34.m == 21_797_672 - 1_000 - 2 * 8_512 + 8_512 + 1_000  # torchvision: 21,797,672 with 2 BN params per channel


def test_resnet20_preset_is_solved_and_certified_from_the_cli(tmp_path):
    spec = tmp_path / "resnet20.json"
    r = cli("spec", "preset", "resnet20", "-o", str(spec), check=0)
    assert r.stderr == f"resnet20: general network, 22 layers, 49 connections, m = 271690, H = 448 (written to {spec})\n"
    out = json.loads(cli("solve", str(spec), "--json", check=0).stdout)
    assert (out["basis_size"], out["certified"]) == (271690 - 448, True)
    r = cli("spec", "preset", "resnet18", "--width", "3", check=2)
    assert r.stderr == "error: resnet18 is a real architecture with fixed channels: it takes no --depth, --width, --in, --out or --stride\n"
    r = cli("spec", "preset", "resnet", "--width", "3", check=2)
    assert r.stderr == "error: family resnet needs --depth (see 'basispath presets')\n"


def test_densenet_bc_preset_counts_and_solves():
    """DenseNet-BC-40 (k = 12): m from the architecture's own formula, every BatchNorm over a
    concatenation 2 parameters per channel and consumer, the bottleneck's BatchNorm folded into
    a bias of its 1x1 conv; no identity edges, so H = every neuron but the input, bias and fc."""
    from basispath_graph.general.presets import general_preset_spec
    from basispath_graph.general.solve import solve_general

    k, m = 12, 3 * 24 * 9
    channels = 24
    for block in range(3):
        for n in range(6):
            c_in = channels + n * k
            m += 2 * c_in + c_in * 4 * k + 4 * k + 4 * k * k * 9
        channels += 6 * k
        if block < 2:
            m += 2 * channels + channels * (channels // 2)
            channels //= 2
    m += 2 * channels + channels * 10 + 10
    spec = general_preset_spec("densenet-bc-40")
    net = parse_general(spec, "densenet-bc-40", 10**9)
    assert net.m == m
    assert net.H == sum(l["size"] for l in spec["layers"]) - (1 + 3 + 10)
    result = solve_general(net)
    assert result.certified and result.basis_size == net.m - net.H
