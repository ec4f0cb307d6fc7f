"""deah-complete on layer DAG cores (issue 28): branches, concatenations, diagonal (BatchNorm over a
concatenation), grouped and identity connections, biases and taps. Checked against the
brute-force oracle of tests/test_general_networks.py (every path, exact rank over Q): the kept
basis, every B_r (kept rows plus discards: a basis of its route's chain), every discard's
certificate re-added weight by weight."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basispath_graph import solve_general
from basispath_graph.general.solve import solve_dag_deah
from basispath_graph.general.dag_discards import EarDiscards, RouteRow, certificate
from basispath_graph.general.paper_setting import in_paper_setting
from basispath_graph.general.blocks import block_general_paths
from basispath_graph.general.model import parse_general

from .cli_runner import cli
from .test_dag_deah_store import FIRE
from .test_general_networks import exact_rank, oracle_H, oracle_m, oracle_paths, oracle_vector


@st.composite
def layer_dag_specs(draw):
    """x -> hidden layers h0..hn-1 -> y, each hidden layer fed by one to three earlier layers
    (parallel branches, concatenations) and feeding a later one; connections dense (1-3 taps),
    grouped (2 groups, even sizes) or diagonal (equal sizes); sometimes an identity beside a
    trainable connection, a bias into some layers, an extra output."""
    n = draw(st.integers(2, 5))
    sizes = [draw(st.sampled_from([1, 2, 2, 3, 4])) for _ in range(n)]
    names = ["x"] + [f"h{k}" for k in range(n)] + ["y"]
    size = dict(zip(names, [2] + sizes + [2]))
    conns, pairs = [], set()

    def connect(a: str, b: str) -> None:
        if (a, b) in pairs:
            return
        pairs.add((a, b))
        kinds = ["dense"]
        if size[a] == size[b]:
            kinds.append("diagonal")
        if size[a] % 2 == 0 and size[b] % 2 == 0:
            kinds.append("grouped")
        kind = draw(st.sampled_from(kinds))
        c = {"from": a, "to": b, "kind": kind, "taps": draw(st.integers(1, 3 if kind == "dense" else 2))}
        if kind == "grouped":
            c["groups"] = 2
        conns.append(c)
        if size[a] == size[b] and draw(st.integers(0, 5)) == 0:
            conns.append({"from": a, "to": b, "kind": "identity"})

    for k in range(1, n + 1):  # into h_{k-1}: from one to three earlier layers
        for a in draw(st.lists(st.sampled_from(names[:k]), min_size=1, max_size=3, unique=True)):
            connect(a, names[k])
    fed = {c["from"] for c in conns}
    for k in range(1, n + 1):  # out of every hidden layer: a later one
        if names[k] not in fed or draw(st.integers(0, 3)) == 0:
            connect(names[k], draw(st.sampled_from(names[k + 1:])))
    if "y" not in {c["to"] for c in conns}:
        connect(names[n], "y")
    layers = [{"name": x, "size": size[x]} for x in names]
    if draw(st.booleans()):
        layers.insert(0, {"name": "bias", "size": 1})
        for k, x in enumerate(names[1:]):
            if k == 0 or draw(st.integers(0, 2)) == 0:
                conns.append({"from": "bias", "to": x, "kind": "dense"})
    if draw(st.integers(0, 3)) == 0:
        layers.append({"name": "aux", "size": 1})
        conns.append({"from": draw(st.sampled_from(names[1:-1])), "to": "aux", "kind": "dense"})
    return {"name": "dag", "layers": layers, "connections": conns}


def _named(net, path):
    nodes, taps = path
    return tuple((net.layers[l].name, int(i)) for l, i in nodes), tuple(taps)


def _vector(path) -> Counter:
    return Counter(oracle_vector(path))


def _route_count(spec) -> int:
    """Source-sink paths of the layer graph x .. y over trainable connections, by brute force."""
    out = {}
    for c in spec["connections"]:
        if c.get("kind", "dense") != "identity":
            out.setdefault(c["from"], set()).add(c["to"])

    def walks(layer):
        return 1 if layer == "y" else sum(walks(b) for b in out.get(layer, ()))

    return walks("x")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(spec=layer_dag_specs())
def test_layer_dag_runs_against_brute_force(spec):
    net = parse_general(spec, "<spec>", 10**6)
    result = solve_dag_deah(net)  # a chain core too (solve_general gives that one to the layered engine)
    if not in_paper_setting(net):
        assert solve_general(net, "deah-complete").dag is not None
    run = result.dag
    all_paths = set(oracle_paths(spec))
    basis = [(tuple((l, i) for l, i in p["nodes"]), tuple(p["taps"])) for p in result.basis_paths]
    m, H = oracle_m(spec), oracle_H(spec)
    # the kept basis: paths of the network, exact rank m - H, certified without repair
    assert result.certified and all(p in all_paths for p in basis)
    assert exact_rank([oracle_vector(p) for p in basis]) == len(basis) == m - H
    in_basis = set(basis)
    # Step 1: one substructure per ear beyond p_0, |connections| - |layers| + 2 in all
    core = run.decomposition.core
    assert len(run.ears) == len(core.connections) - len(core.layers) + 2
    assert run.decomposition.substructure_count == _route_count(spec)
    for n, ear in enumerate(run.ears):
        route_weights = {(net.layers[net.connections[k].source].name, net.layers[net.connections[k].target].name) for k in run.routes[n]}
        segment = run.routes[n][ear.segment[0]:ear.segment[1]]
        segment_hops = {(net.layers[net.connections[k].source].name, net.layers[net.connections[k].target].name) for k in segment}
        on_route = [p for p in basis if all(t is None or (a, b) in route_weights for (a, _), (b, _), t in zip(p[0], p[0][1:], p[1]))
                    and all(t is not None for t in p[1])]
        kept = [p for p in on_route if any((a, b) in segment_hops for (a, _), (b, _) in zip(p[0], p[0][1:]))]
        assert len(kept) == ear.kept
        index = EarDiscards(run, n) if n else None
        blocks = index.blocks() if n else []
        discards = [(reason, _named(net, p)) for reason, block in blocks for p in block_general_paths(net, block)]
        # numbered without being made: each discard found by its offset, and located by its path
        for offset, (reason, block) in enumerate((r, b.take([i])) for r, b in blocks for i in range(len(b))):
            assert index.at(offset)[0] == reason and np.array_equal(index.at(offset)[1].nodes, block.nodes)
            assert index.locate(block.nodes[0], block.taps[0]) == RouteRow("discarded", reason, offset)
        assert Counter(r for r, _ in discards) == Counter({"prefix": ear.prefix, "suffix": ear.suffix}) - Counter()
        paths = [p for _, p in discards]
        assert all(p in all_paths and p not in in_basis for p in paths) and len(set(paths)) == len(paths)
        # B_r = kept rows + discards: a basis of the route's chain (m_r - H_r paths, independent)
        assert exact_rank([oracle_vector(p) for p in kept + paths]) == len(kept) + len(paths) == ear.rows
        if n:  # every path along the route is located as kept, discarded (at its offset) or in no B_r
            names = tuple(net.layers[l].name for l in ear.layers)
            offset_of = {p: k for k, p in enumerate(paths)}
            for p in all_paths:
                if tuple(x for x, _ in p[0]) != names or None in p[1]:
                    continue
                where = index.locate([i for _, i in p[0]], p[1])
                expected = ("kept", None) if p in kept else ("discarded", offset_of[p]) if p in offset_of else ("not a row", None)
                assert (where.status, where.offset) == expected
        for _, p in discards:  # the certificate re-adds to the discarded path, over kept paths only
            layers = tuple(next(k for k, l in enumerate(net.layers) if l.name == x) for x, _ in p[0])
            hops = tuple(net.hop[(a, b, True)] for a, b in zip(layers, layers[1:]))
            terms = certificate(run, layers, hops, [i for _, i in p[0]], p[1])
            total: Counter = Counter()
            for coef, term in terms:
                named = _named(net, term)
                assert named in in_basis
                for w in oracle_vector(named):
                    total[w] += coef
            assert {w: c for w, c in total.items() if c} == {w: 1 for w in oracle_vector(p)}


def test_parallel_branches_and_a_concatenation_by_hand():
    """x -> s -> {e1, e3 (9 taps)} -> y (SqueezeNet's fire module, its two branches concatenated
    into y), and a kept BatchNorm scale of e1 (diagonal) read by y beside e1: p_0 and two ears,
    every count by hand."""
    spec = {"name": "fire", "layers": [{"name": "x", "size": 2}, {"name": "s", "size": 2}, {"name": "e1", "size": 3},
                                       {"name": "e3", "size": 2}, {"name": "bn", "size": 3}, {"name": "y", "size": 2}],
            "connections": [{"from": "x", "to": "s"}, {"from": "s", "to": "e1"}, {"from": "s", "to": "e3", "taps": 9},
                            {"from": "e1", "to": "bn", "kind": "diagonal"}, {"from": "e1", "to": "y"},
                            {"from": "e3", "to": "y"}, {"from": "bn", "to": "y"}]}
    net = parse_general(spec, "<spec>", 10**6)
    result = solve_general(net, "deah-complete")
    assert result.certified and result.basis_size == net.m - net.H == 4 + 6 + 36 + 3 + 6 + 4 + 6 - (2 + 3 + 2 + 3)
    # p_0 the longest route; ears by source layer: s -> e3 -> y (a new layer), then e1 -> y
    assert result.parts["p0"] == ["x", "s", "e1", "bn", "y"]
    assert result.parts["substructure_paths"] == 3 and result.parts["ears"] == 2
    # (|B_r| = m_r - H_r, kept = m_S - H_S): p_0 (4 + 6 + 3 + 6 - 8, all); ear s-e3-y on route
    # x s e3 y (4 + 36 + 4 - 4, 36 + 4 - 2); ear e1-y on route x s e1 y (4 + 6 + 6 - 5, 6)
    assert [(e.rows, e.kept) for e in result.dag.ears] == [(11, 11), (40, 38), (11, 6)]
    # prefix discards: on x -> s one weight the walks miss (x1, s1) and one T_r chain short of s
    # (x1's direct walk), so 2; on x -> s -> e1 1 + 2 such weights and 2 chains short of e1: 5
    assert result.dag.rule_counts() == {"prefix": 2 + 5, "suffix": 0}


def test_cli_export_lists_every_discard_with_a_certificate_that_adds_up(tmp_path):
    """``solve --export`` of a layer-DAG run: the basis verifies, and every discard (rule, ear) has
    a certificate over ``basis`` indices that re-adds to it weight by weight (the oracle's vectors)."""
    spec = tmp_path / "fire.json"
    spec.write_text(json.dumps(FIRE))
    export = tmp_path / "basis.json"
    s = json.loads(cli("solve", str(spec), "--engine", "deah-complete", "--export", str(export), "--json").stdout)
    m, H = oracle_m(FIRE), oracle_H(FIRE)
    assert (s["basis_size"], s["certified"], s["parts"]["core"]) == (m - H, True, "layer DAG")
    assert cli("verify", str(spec), str(export)).stdout == f"certified: {m - H} independent paths = m - H = {m} - {H}\n"
    doc = json.loads(export.read_text())
    basis = [oracle_vector((tuple(map(tuple, p["nodes"])), tuple(p["taps"]))) for p in doc["basis"]]
    assert len(doc["discarded"]) == sum(s["parts"]["discarded"].values()) > 0 and doc["repairs"] == 0
    assert Counter(d["rule"] for d in doc["discarded"]) == Counter(s["parts"]["discarded"]) - Counter()
    for d in doc["discarded"]:
        total: Counter = Counter()
        for term in d["certificate"]:
            for w in basis[term["index"]]:
                total[w] += term["coef"]
        path = oracle_vector((tuple(map(tuple, d["path"]["nodes"])), tuple(d["path"]["taps"])))
        assert {w: c for w, c in total.items() if c} == {w: 1 for w in path}


def test_result_why_answers_each_discard_with_its_ear_rule_and_certificate():
    """In a notebook, without a store: ``discarded_paths`` made when read, and ``why`` on each
    gives its ear and rule (as the store's ``why``: test_dag_deah_store.py) and a certificate that
    re-adds to it; a kept path is kept."""
    net = parse_general(FIRE, "<spec>", 10**6)
    result = solve_general(net, "deah-complete")
    discarded = result.discarded_paths
    assert len(discarded) == result.dag.discard_count == sum(result.parts["discarded"].values())
    everything = list(discarded)  # a sequence made when read: slices and negative indices as a list's
    assert discarded[:3] == everything[:3] and discarded[-1] == everything[-1] and discarded[5:1:-2] == everything[5:1:-2]
    seen = Counter()
    for path in discarded:
        answer = result.why(path)
        assert answer["status"] == "discarded" and answer["verified"] and answer["path"] == path
        seen[answer["reason"]["step"]] += 1
        total: Counter = Counter()
        for term in answer["certificate"]:
            assert result.basis_paths[term["index"]] == term["path"]
            for w in oracle_vector((tuple(map(tuple, term["path"]["nodes"])), tuple(term["path"]["taps"]))):
                total[w] += term["coef"]
        assert {w: c for w, c in total.items() if c} == {w: 1 for w in oracle_vector((tuple(map(tuple, path["nodes"])), tuple(path["taps"])))}
    assert seen == Counter(result.parts["discarded"]) - Counter()
    assert result.why(result.basis_paths[3])["status"] == "kept"


def test_guards_refuse_a_layer_dag_run_over_the_limits_naming_the_engine(tmp_path):
    """The skeleton's models guard a layer-DAG run (it holds a skeleton's paths), and the refusal
    names deah-complete: one line, exit 2, before any work."""
    spec = tmp_path / "fire.json"
    spec.write_text(json.dumps(FIRE))
    r = cli("solve", str(spec), "--engine", "deah-complete", "--max-seconds", "0.000001", check=2)
    assert r.stdout == "" and r.stderr.startswith(f"error: {spec}: deah-complete would take about ")
    assert r.stderr.endswith("; raise --max-seconds / BASISPATH_MAX_SECONDS\n") and r.stderr.count("\n") == 1
