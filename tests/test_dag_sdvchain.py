"""Faithful DEAH (engine "deah") on layer DAG cores (general/dag_sdvchain.py), against the
brute-force oracle: every B_r, the chains, each discard's SDVChain record, the raw verdict, the
visible repair and every certificate, on random layer DAGs with branches, concatenations,
diagonal, grouped and identity connections, biases and taps."""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import HealthCheck, given, settings

from basispath_graph import solve_general
from basispath_graph.deah.step3_sdvchain import Discard
from basispath_graph.general.blocks import block_general_paths, block_weight_ids
from basispath_graph.general.dag_sdvchain import outside_core
from basispath_graph.general.model import parse_general

from .cli_runner import cli
from .test_dag_deah import _named, layer_dag_specs
from .test_general_networks import exact_rank, oracle_H, oracle_m, oracle_paths, oracle_vector

SMALL_FIRE = {"name": "fire", "layers": [{"name": "x", "size": 2}, {"name": "s", "size": 2}, {"name": "e1", "size": 3},
                                   {"name": "e3", "size": 2}, {"name": "bn", "size": 3}, {"name": "y", "size": 2}],
        "connections": [{"from": "x", "to": "s"}, {"from": "s", "to": "e1"}, {"from": "s", "to": "e3", "taps": 9},
                        {"from": "e1", "to": "bn", "kind": "diagonal"}, {"from": "e1", "to": "y"},
                        {"from": "e3", "to": "y"}, {"from": "bn", "to": "y"}]}


def _paths(net, block) -> list:
    return [_named(net, p) for p in block_general_paths(net, block)]


def _subdivides(a, b) -> bool:
    """Brute force: route a runs through every layer of route b, in order, and more; each hop of b
    is a hop of a or a path of a between its two layers."""
    if not set(b.layers) < set(a.layers):
        return False
    at = {l: k for k, l in enumerate(a.layers)}
    return all(at[x] < at[y] for x, y in zip(b.layers, b.layers[1:]))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(spec=layer_dag_specs())
def test_faithful_deah_on_layer_dags_against_brute_force(spec):
    net = parse_general(spec, "<spec>", 10**6)
    all_paths = set(oracle_paths(spec))
    m, H = oracle_m(spec), oracle_H(spec)
    result = solve_general(net, "deah")
    run = result.sdvchain
    if run is None:  # a chain core: the layered engine's (tests/test_general_deah.py)
        return
    # Step 2: each B_r is m_r - H_r independent paths along its route
    for n, s in enumerate(run.substructures.paths):
        rows = _paths(net, run.bases[n])
        assert len(set(rows)) == len(rows) == run.plan.ears[n].rows
        assert all(p in all_paths for p in rows)
        assert exact_rank([oracle_vector(p) for p in rows]) == len(rows)
    # Step 3's chains: every member subdivides the one before; heads in no other chain
    for chain in run.step3.chains:
        for a, b in zip(chain, chain[1:]):
            assert _subdivides(run.substructures.paths[b], run.substructures.paths[a])
    # each discard's record splits the path: its weights on the shared connections and the rest
    for d in result.discarded:
        if not isinstance(d.reason, Discard):
            continue
        route = run.substructures.paths[d.substructure]
        assert d.layers == route.layers and d.reason.pair[1] == d.substructure
        wids = run.bases[d.substructure].take([d.reason.row])
        ids = dict(zip(route.connections, block_weight_ids(net, wids)[0].tolist()))
        shared = set(d.reason.shared_pairs)
        assert list(d.reason.shared) == [ids[k] for k in route.connections if k in shared]
        assert list(d.reason.iep) == [ids[k] for k in route.connections if k not in shared]
        assert d.reason.shared != d.reason.ucp_star
    # the raw union: its verdict is the oracle's
    raw = [p for n, b in run.kept_blocks() for p in _paths(net, b)]
    outside = [p for b in outside_core(net, run.plan) for p in _paths(net, b)]
    union = raw + outside
    raw_is_basis = len(union) == len(set(union)) == m - H and exact_rank([oracle_vector(p) for p in union]) == m - H
    assert result.raw_verdict.certified == raw_is_basis
    # the returned basis: certified, exact; repairs account for every difference from the raw union
    basis = [(tuple((l, i) for l, i in p["nodes"]), tuple(p["taps"])) for p in result.basis_paths]
    assert result.certified and len(basis) == m - H and all(p in all_paths for p in basis)
    assert exact_rank([oracle_vector(p) for p in basis]) == m - H
    actions = Counter(r.action for r in result.repairs)
    assert (actions == Counter()) == raw_is_basis and result.repairs_needed == len(result.repairs)

    def named(r):
        return _named(net, (tuple(zip(r.layers, r.indices)), r.taps))

    dropped = {named(r) for r in result.repairs if r.action == "drop"}
    added = {named(r) for r in result.repairs if r.action in ("readmit", "add")}
    assert set(basis) == (set(union) - dropped) | added
    # every discard: a path of the network outside the basis, its certificate re-adds exactly
    in_basis = set(basis)
    for d in result.discarded:
        p = named(d)
        assert p in all_paths and p not in in_basis
        total: Counter = Counter()
        for index, coef in d.certificate:
            for w in oracle_vector(basis[index]):
                total[w] += coef
        assert {w: c for w, c in total.items() if c} == {w: 1 for w in oracle_vector(p)}
    # repair=False returns the raw union with its verdict
    bare = solve_general(net, "deah", repair=False)
    assert bare.certified == raw_is_basis and bare.basis_size == len(union) and not bare.repairs



def test_fire_module_by_hand_raw_union_repaired_visibly(tmp_path):
    """x -> s -> {e1 -> bn, e3 (9 taps)} -> y: p_0 x s e1 bn y and two ears, neither a subdivision
    of the other, so two chains of one member each, one SDVChain call each into B'_0 and no Q_t.
    The union is over m - H: the repair drops exactly the excess, visibly."""
    net = parse_general(SMALL_FIRE, "<spec>", 10**6)
    r = solve_general(net, "deah")
    run = r.sdvchain
    names = lambda n: [net.layers[l].name for l in run.substructures.paths[n].layers]  # noqa: E731
    assert [names(n) for n in range(3)] == [["x", "s", "e1", "bn", "y"], ["x", "s", "e3", "y"], ["x", "s", "e1", "y"]]
    # |B_r| = m_r - H_r: (4 + 6 + 3 + 6) - (2 + 3 + 3), (4 + 36 + 4) - (2 + 2), (4 + 6 + 6) - (2 + 3)
    assert [len(run.bases[n]) for n in range(3)] == [11, 40, 11]
    assert run.step3.chains == [[1], [2]] and run.step3.q_sets == [[], []] and run.step3.calls == 2
    discards = [d for d in r.discarded if d.reason.__class__ is Discard]
    assert {(d.reason.step, d.reason.pair) for d in discards} <= {("chain", (1, 0)), ("chain", (2, 0))}
    assert r.raw_verdict.size == 62 - len(discards) > net.m - net.H == 55
    assert Counter(x.action for x in r.repairs) == Counter({"drop": r.raw_verdict.size - 55})
    assert r.certified and r.basis_size == 55
    # why: a discard's SDVChain call, its certificate re-added now
    d = discards[0]
    answer = r.why({"nodes": [[net.layers[l].name, i] for l, i in zip(d.layers, d.indices)], "taps": list(d.taps)})
    assert answer["status"] == "discarded" and answer["verified"] and answer["reason"]["step"] == "chain"
    assert answer["reason"]["pair"]["to"] == ["x", "s", "e1", "bn", "y"] and answer["reason"]["shared_connections"][0] == ["x", "s"]
    dropped = next(x for x in r.repairs if x.action == "drop")
    answer = r.why({"nodes": [[net.layers[l].name, i] for l, i in zip(dropped.layers, dropped.indices)], "taps": list(dropped.taps)})
    assert answer["status"] == "discarded" and answer["reason"] == {"step": "repair", "action": "drop"} and answer["verified"]
    # the CLI: the report, --no-repair (exit 1), the export with every discard's reason and certificate, verify
    spec = tmp_path / "fire.json"
    spec.write_text(json.dumps(SMALL_FIRE))
    export = tmp_path / "basis.json"
    out = cli("solve", str(spec), "--engine", "deah", "--export", str(export)).stdout
    assert "Step 3: 2 chain(s), 2 SDVChain call(s)" in out
    assert f"faithful DEAH union: {r.raw_verdict.size} paths, NOT certified (size {r.raw_verdict.size} != m - H = 55)" in out
    assert f"repairs needed: {len(r.repairs)} ({len(r.repairs)} dropped, 0 re-admitted, 0 added)" in out and "basis: 55 paths, certified" in out
    bare = cli("solve", str(spec), "--engine", "deah", "--no-repair", check=1).stdout
    assert f"repairs needed: {len(r.repairs)} (not applied: --no-repair)" in bare
    doc = json.loads(export.read_text())
    assert len(doc["discarded"]) == len(r.discarded) and doc["repairs"] == len(r.repairs)
    assert {e["reason"]["step"] for e in doc["discarded"]} == {"chain", "repair"}
    assert cli("verify", str(spec), str(export)).stdout == "certified: 55 independent paths = m - H = 65 - 10\n"


def test_faithful_deah_refuses_a_layer_dag_over_the_limits_in_one_line(tmp_path):
    """Faithful deah lists every B_r: the layered engine's models over sum |B_r| guard it, and
    the refusal points to deah-complete: one line, exit 2, before Step 2."""
    spec = tmp_path / "fire.json"
    spec.write_text(json.dumps(SMALL_FIRE))
    r = cli("solve", str(spec), "--engine", "deah", "--max-seconds", "0.000001", check=2)
    assert r.stdout == "" and r.stderr.startswith(
        f"error: {spec}: deah (62 candidate paths in the B_r of 3 substructures of a layer DAG) would take about ")
    assert r.stderr.endswith("; use --engine deah-complete (described) or raise --max-seconds / BASISPATH_MAX_SECONDS\n")
    assert r.stderr.count("\n") == 1
