"""Faithful DEAH (engine "deah") on layer DAG cores (general/dag_sdvchain.py), against the
brute-force oracle: every B_r, the chains, each discard's SDVChain record, the raw verdict, the
visible repair and every certificate, on random layer DAGs with branches, concatenations,
diagonal, grouped and identity connections, biases and taps."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np

from hypothesis import HealthCheck, given, settings

from basispath_graph import solve_general
from basispath_graph.deah.repair import BlockRows
from basispath_graph.deah.step3_sdvchain import Discard
from basispath_graph.general.blocks import block_general_paths, block_weight_ids
from basispath_graph.general.dag_sdvchain import outside_core
from basispath_graph.general.dag_substructures import call_layers
from basispath_graph.general.model import parse_general
from basispath_graph.linalg.peeling import rows_weight_ids

from .cli_runner import cli
from .reference_sdvchain import sdvchain_pair_reference
from .test_dag_deah import _named, layer_dag_specs
from .test_general_networks import exact_rank, oracle_H, oracle_m, oracle_paths, oracle_vector

SMALL_FIRE = {"name": "fire", "layers": [{"name": "x", "size": 2}, {"name": "s", "size": 2}, {"name": "e1", "size": 3},
                                   {"name": "e3", "size": 2}, {"name": "bn", "size": 3}, {"name": "y", "size": 2}],
        "connections": [{"from": "x", "to": "s"}, {"from": "s", "to": "e1"}, {"from": "s", "to": "e3", "taps": 9},
                        {"from": "e1", "to": "bn", "kind": "diagonal"}, {"from": "e1", "to": "y"},
                        {"from": "e3", "to": "y"}, {"from": "bn", "to": "y"}]}


#: A layer DAG (found by the property test's generator) whose raw union needs the repair's drops
#: and re-admissions; identity shortcuts and an extra output beside.
READMIT = {"name": "readmit", "layers": [{"name": "x", "size": 2}, {"name": "h0", "size": 1}, {"name": "h1", "size": 2}, {"name": "h2", "size": 2}, {"name": "h3", "size": 2}, {"name": "h4", "size": 2}, {"name": "y", "size": 2}, {"name": "aux", "size": 1}], "connections": [{"from": "x", "to": "h0", "kind": "dense", "taps": 1}, {"from": "x", "to": "h1", "kind": "dense", "taps": 2}, {"from": "h0", "to": "h2", "kind": "dense", "taps": 1}, {"from": "x", "to": "h3", "kind": "grouped", "taps": 1, "groups": 2}, {"from": "h2", "to": "h3", "kind": "dense", "taps": 1}, {"from": "h0", "to": "h3", "kind": "dense", "taps": 2}, {"from": "h0", "to": "h4", "kind": "dense", "taps": 3}, {"from": "h1", "to": "h4", "kind": "diagonal", "taps": 2}, {"from": "h1", "to": "h4", "kind": "identity"}, {"from": "h3", "to": "h4", "kind": "dense", "taps": 2}, {"from": "h0", "to": "h1", "kind": "dense", "taps": 1}, {"from": "h1", "to": "h2", "kind": "grouped", "taps": 2, "groups": 2}, {"from": "h3", "to": "y", "kind": "grouped", "taps": 1, "groups": 2}, {"from": "h3", "to": "y", "kind": "identity"}, {"from": "h4", "to": "y", "kind": "dense", "taps": 1}, {"from": "h4", "to": "aux", "kind": "dense"}]}


def _paths(net, block) -> list:
    # a listed block or a described B_r (RouteRows): every row listed
    return [_named(net, p) for p in block_general_paths(net, block.take(slice(None)))]


def _subdivides(a, b) -> bool:
    """Brute force: route a runs through every layer of route b, in order, and more; each hop of b
    is a hop of a or a path of a between its two layers."""
    if not set(b.layers) < set(a.layers):
        return False
    at = {l: k for k, l in enumerate(a.layers)}
    return all(at[x] < at[y] for x, y in zip(b.layers, b.layers[1:]))


class _Weights:
    def __init__(self, net):
        self.net = net

    def weight_ids(self, block):
        return block_weight_ids(self.net, block.take(slice(None)))


def _reference_step3(net, run):
    """Chains (greedy over the selection order, each stretched by every later set that
    subdivides its tail; heads in no earlier chain), Q_t (per other chain, its last non-head
    member sharing a connection with the head, not in t's chain) and the discards of every call
    by the literal SDVChain loop, on layer pairs (one connection per pair)."""
    paths = run.substructures.paths
    order, chains, in_chain = list(range(1, len(paths))), [], set()
    for i, head in enumerate(order):
        if head in in_chain:
            continue
        chain = [head]
        for cand in order[i + 1:]:
            if _subdivides(paths[cand], paths[chain[-1]]):
                chain.append(cand)
        in_chain.update(chain)
        chains.append(chain)
    shares = lambda a, b: set(paths[a].edges) & set(paths[b].edges)  # noqa: E731
    q_sets = []
    for t, chain in enumerate(chains):
        q = []
        for u, other in enumerate(chains):
            sharing = [idx for idx in other[1:] if shares(chain[0], idx)] if u != t else []
            if sharing and sharing[-1] not in chain and sharing[-1] not in q:
                q.append(sharing[-1])
        q_sets.append(q)
    alive = {n: np.ones(len(b), dtype=bool) for n, b in run.bases.items()}
    out = []

    def call(step, t, src, dst):
        pairs = tuple((net.connections[k].source, net.connections[k].target) for k in sorted(shares(src, dst)))
        found = sorted(sdvchain_pair_reference(_Weights(net), pairs, run.bases[src], run.bases[dst], alive[dst]))
        for row, ep, star, iep, shared in found:
            alive[dst][row] = False
            out.append((dst, row, step, t, (src, dst), ep, star, iep, shared))

    for t, (chain, q) in enumerate(zip(chains, q_sets), start=1):
        for src, dst in zip(chain + [0], chain[1:] + [0]):
            call("chain", t, src, dst)
        for src in q:
            call("head", t, src, chain[0])
    return chains, q_sets, out


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
    # Step 2: each B_r is m_r - H_r independent paths along its route, described: any rows taken
    # (a mask, a slice, indices in any order, repeated) are those rows of the whole
    for n, s in enumerate(run.substructures.paths):
        rows = _paths(net, run.bases[n])
        assert len(set(rows)) == len(rows) == run.plan.ears[n].rows == len(run.bases[n])
        every = run.bases[n].take(slice(None))
        pick = np.arange(len(rows))[::-1].repeat(2)
        for index in (pick, np.arange(len(rows)) % 2 == 0, slice(1, None, 2), []):
            got, want = run.bases[n].take(index), every.take(index)
            assert np.array_equal(got.nodes, want.nodes) and np.array_equal(got.taps, want.taps) and got.nodes.dtype == np.int32
        # a hop's weight ids made alone from the description (what Step 3 keys) are the listing's
        listed = block_weight_ids(net, every)
        # in any order (the reader keeps the last column it made for the next hop), each column
        # left as it was by the reads after it
        hops = range(len(s.connections))
        for order in (list(hops), list(hops)[::-1], [k for k in hops for _ in (0, 1)], [k for k in hops if k % 2] + list(hops)):
            read = run.bases[n].hop_reader()
            columns = [(k, read(k)) for k in order]
            assert all(col.tolist() == listed[:, k].tolist() for k, col in columns)
        # of some rows only (ascending: SDVChain keys B'_to's live rows)
        some = np.flatnonzero(np.arange(len(rows)) % 3 != 1)
        read = run.bases[n].hop_reader(some)
        assert all(read(k).tolist() == listed[some, k].tolist() for k in hops)
        # the rows' weight ids as the certifier reads them, rows in any order and repeated, and
        # through a view of some rows (the raw union's B'_r)
        for index in (pick, some, some[::-1], np.zeros(0, dtype=np.int64)):
            got = run.bases[n].weight_ids_at(index)
            assert got.tolist() == listed[index].tolist() and got.dtype == np.int32
        view, at = BlockRows(run.bases[n], some[::-1]), np.arange(len(some))[::-1].repeat(2)
        assert rows_weight_ids(view, at, None).tolist() == listed[some[::-1][at]].tolist()  # None: never the fallback
        assert all(p in all_paths for p in rows)
        assert exact_rank([oracle_vector(p) for p in rows]) == len(rows)
    # Step 3 replayed independently: chains by brute-force subdivision, Q_t, and every SDVChain
    # call by the literal loop of Appendix C (tests/reference_sdvchain.py) over the same B_r
    chains, q_sets, expected = _reference_step3(net, run)
    assert run.step3.chains == chains and run.step3.q_sets == q_sets
    assert [(d.substructure, d.row, d.step, d.chain, d.pair, d.ep, d.ucp_star, d.iep, d.shared) for d in run.step3.discards] == expected
    # the time guard's feature, counted from Steps 1-2: the rows x layers of both B_r of every call
    # (each chain link, the last member into p_0, each head against Q_t) whose routes share a connection
    paths = run.substructures.paths
    links = [(a, b) for chain in chains for a, b in zip(chain, chain[1:] + [0])]
    links += [(src, chain[0]) for chain, q in zip(chains, q_sets) for src in q]
    assert len(links) == run.step3.calls
    assert call_layers(run.plan) == sum(len(run.bases[a]) * len(paths[a].layers) + len(run.bases[b]) * len(paths[b].layers)
                                        for a, b in links if set(paths[a].connections) & set(paths[b].connections))
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
    raw = [p for n, b in run.kept_blocks() for p in _paths(net, b.materialise())]
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
    assert {(d.reason.step, d.reason.pair) for d in discards} == {("chain", (1, 0)), ("chain", (2, 0))}
    assert r.raw_verdict.size == 62 - len(discards) > net.m - net.H == 55
    assert Counter(x.action for x in r.repairs) == Counter({"drop": r.raw_verdict.size - 55})
    assert r.certified and r.basis_size == 55
    # why: a discard's SDVChain call, its certificate re-added now
    d = discards[0]
    answer = r.why({"nodes": [[net.layers[l].name, i] for l, i in zip(d.layers, d.indices)], "taps": list(d.taps)})
    assert answer["status"] == "discarded" and answer["verified"] and answer["reason"]["step"] == "chain"
    assert answer["reason"]["pair"]["to"] == ["x", "s", "e1", "bn", "y"] and answer["reason"]["shared_layers"][0] == ["x", "s"]
    dropped = next(x for x in r.repairs if x.action == "drop")
    answer = r.why({"nodes": [[net.layers[l].name, i] for l, i in zip(dropped.layers, dropped.indices)], "taps": list(dropped.taps)})
    assert answer["status"] == "discarded" and answer["verified"]
    assert answer["reason"] == {"step": "repair", "action": "drop", "detail": "dropped: dependent on the paths kept before it"}
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
    """Faithful deah lists every B_r: its models over sum |B_r| x layers (guards.LAYER_DAG_DEAH)
    guard it, and the refusal points to deah-complete: one line, exit 2, before Step 2."""
    spec = tmp_path / "fire.json"
    spec.write_text(json.dumps(SMALL_FIRE))
    r = cli("solve", str(spec), "--engine", "deah", "--max-seconds", "0.000001", check=2)
    assert r.stdout == "" and r.stderr.startswith(
        f"error: {spec}: deah (62 candidate paths in the B_r of 3 substructures of a layer DAG) would take about ")
    assert r.stderr.endswith("; use --engine deah-complete (described) or raise --max-seconds / BASISPATH_MAX_SECONDS\n")
    assert r.stderr.count("\n") == 1


def test_a_repair_that_readmits_sdvchain_discards():
    """Re-admitted paths are kept (``why`` says so) and keep no discard record; the repair's
    records name their substructure; the basis is certified."""
    net = parse_general(READMIT, "<spec>", 10**6)
    r = solve_general(net, "deah")
    readmits = [x for x in r.repairs if x.action == "readmit"]
    assert readmits and all(x.substructure is not None for x in readmits) and r.certified
    for x in readmits:
        assert r._discard_position(x.layers, x.indices, x.taps) is None
        path = {"nodes": [[net.layers[l].name, i] for l, i in zip(x.layers, x.indices)], "taps": list(x.taps)}
        assert r.why(path)["status"] == "kept"
    sdv = {(d.reason.substructure, d.reason.row) for d in r.discarded if isinstance(d.reason, Discard)}
    assert len(sdv) + len(readmits) == len(r.sdvchain.step3.discards)


def test_a_repair_holds_each_dropped_row_once_as_int32(monkeypatch):
    """The repair's drops are one int32 array per run, shared by its records and the outcome
    (two int64 copies were a quarter of GoogLeNet x0.25's peak), and the union it repairs is the
    certifier's views, not the B'_r's rows made again."""
    from basispath_graph.general import dag_sdvchain

    outcomes, unions = [], []
    real = dag_sdvchain.exact_repair

    def spy(target, m, union, *rest):
        union = list(union)
        unions.append(union)
        outcomes.append(real(target, m, union, *rest))
        return outcomes[-1]

    views: list = []  # the blocks of each certification, the raw union's first
    monkeypatch.setattr(dag_sdvchain, "exact_repair", spy)
    monkeypatch.setattr(dag_sdvchain, "certify_blocks", _record_views(dag_sdvchain.certify_blocks, views))
    r = solve_general(parse_general(READMIT, "<spec>", 10**6), "deah")
    assert r.certified and outcomes and outcomes[0].dropped
    for _, rows, drops in outcomes[0].dropped:
        assert drops.rows is rows and rows.dtype == np.int32
    certified = {id(v.rows) for v in views[0] if hasattr(v, "rows")}
    assert all(id(rows) in certified for key, _, rows in unions[0] if key is not None and len(rows))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])
@given(spec=layer_dag_specs())
def test_the_repair_reuses_the_certifiers_peel(monkeypatch, spec):
    """The repair of a raw union takes what the certifier's peel of the same union left
    (``CoreChoice.peel_for``: the core, its coordinates, how many peeled) and peels again only
    where it must re-admit (for the peel's order and pivots); what it keeps, re-admits and drops
    is what it decides peeling the union itself (READMIT's union needs re-admissions)."""
    from basispath_graph.deah import repair
    from basispath_graph.general import dag_sdvchain

    real, peels, seen = repair.exact_repair, [], []
    counted = repair.peel_result_by_holders
    monkeypatch.setattr(repair, "peel_result_by_holders", lambda *a: peels.append(1) or counted(*a))

    def both(target, m, union, discards, fallback, weight_ids, spell, certified=None):
        union, discards = list(union), list(discards())
        reused = real(target, m, union, lambda: iter(discards), fallback, weight_ids, spell, certified)
        assert certified is not None and certified.peel_for(sum(len(rows) for _, _, rows in union)) is not None
        assert len(peels) == bool(reused.readmitted or reused.added)  # peeled again only to re-admit
        peels.clear()
        again = real(target, m, union, lambda: iter(discards), fallback, weight_ids, spell, None)
        assert peels  # and without the certifier's choice, the union is peeled here
        seen.append(1)
        kept = lambda out: [(k, [(id(block), rows.tolist()) for block, rows in runs]) for k, runs in out.kept.items()]  # noqa: E731
        assert kept(reused) == kept(again) and reused.readmitted == again.readmitted
        assert [(k, rows.tolist()) for k, rows, _ in reused.dropped] == [(k, rows.tolist()) for k, rows, _ in again.dropped]
        assert [(r.action, r.layers, r.indices) for r in reused.repairs] == [(r.action, r.layers, r.indices) for r in again.repairs]
        return reused

    monkeypatch.setattr(dag_sdvchain, "exact_repair", both)
    for net in (parse_general(READMIT, "<spec>", 10**6), parse_general(spec, "<spec>", 10**6)):
        peels.clear()
        r = solve_general(net, "deah")
        assert r.certified
    assert seen  # READMIT's raw union is repaired


def test_the_raw_union_and_its_core_are_held_as_the_rows_they_lack(monkeypatch):
    """Where a B'_r keeps most of its B_r, the raw union's view of it holds the rows Step 3
    discarded (``AllBut``), and a core that is most of the union is held as the peeled ids: whole
    GoogLeNet keeps 97% of 147 M candidate paths and peels few of them, and each index array was
    4 bytes a path. The run is the one the arrays make (``make hashes``), and certified."""
    from basispath_graph.general import dag_sdvchain
    from basispath_graph.linalg.sparse import AllBut

    spec = json.loads(json.dumps(SMALL_FIRE))
    for layer in spec["layers"]:
        layer["size"] *= 4
    views, choices = [], []
    monkeypatch.setattr(dag_sdvchain, "certify_blocks", _record_views(dag_sdvchain.certify_blocks, views))
    real = dag_sdvchain.exact_repair
    monkeypatch.setattr(dag_sdvchain, "exact_repair", lambda *a: choices.append(a[-1]) or real(*a))
    r = solve_general(parse_general(spec, "<spec>", 10**6), "deah")
    assert r.certified and choices and choices[0] is not None
    run = r.sdvchain
    for n, view in run.kept_blocks():
        alive = run.step3.alive[n]
        assert alive.nbytes == -(-len(alive) // 8)  # B'_r held as bits, not a byte a candidate
        lacks = np.count_nonzero(~alive)
        assert isinstance(view.rows, AllBut) == (lacks < len(alive) // 2)
        assert np.asarray(view.rows).tolist() == np.flatnonzero(alive).tolist()
        if isinstance(view.rows, AllBut):
            assert view.rows.nbytes == 8 * lacks  # the missing rows and their counts, int32
    assert any(isinstance(v.rows, AllBut) for v in views[0] if hasattr(v, "rows"))
    union = sum(len(v) for v in views[0])
    peeled, core, _ = choices[0].peel_for(union)
    assert isinstance(core, AllBut) == (union - len(core) < union // 2) and peeled + len(core) == union


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])
@given(spec=layer_dag_specs())
def test_index_arrays_held_as_the_ids_they_lack_decide_the_same(monkeypatch, spec):
    """Every view of the raw union, the core and the drops held as ``AllBut`` (not only where it
    is smaller, as on GoogLeNet): the same basis, discards, records and certificates."""
    from .all_but import hold_every_index_as_all_but

    net = parse_general(spec, "<spec>", 10**6)

    def outputs():
        r = solve_general(net, "deah")
        return (r.certified, [p for b in r.basis for p in block_general_paths(net, b.take(slice(None)))], r.basis_substructures,
                [(d.layers, d.indices, d.taps, d.substructure, repr(d.reason), d.certificate) for d in r.discarded])

    plain = outputs()
    hold_every_index_as_all_but(monkeypatch)
    assert outputs() == plain


def _record_views(certify, views):
    def record(net, blocks, **options):
        views.append(list(blocks))
        return certify(net, blocks, **options)
    return record


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])
@given(spec=layer_dag_specs())
def test_the_compiled_readmissions_are_the_python_passes(monkeypatch, spec):
    """The repair's second pass by the compiled elimination (over the whole kept union, modulo
    both primes) re-admits exactly the discards the one-at-a-time pass over residuals does, in
    the same order, with the same discards left; READMIT's repair goes through it, its
    re-admissions held as runs of rows spelled when read (``SpelledRun``), not records."""
    from basispath_graph.deah import repair
    from basispath_graph.deah.repair_list import SpelledRun

    used = []
    compiled = repair._greedy_readmissions
    monkeypatch.setattr(repair, "_greedy_readmissions", lambda *a: used.append(compiled(*a)) or used[-1])
    for net in (parse_general(READMIT, "<spec>", 10**6), parse_general(spec, "<spec>", 10**6)):
        used.clear()
        fast = solve_general(net, "deah")
        if net.name == "readmit":
            assert used and used[0] is not None and any(x.action == "readmit" for x in fast.repairs)
            readmits = [isinstance(part, SpelledRun) for part in fast.repairs.parts if any(x.action == "readmit" for x in part)]
            assert readmits and all(readmits)
        with monkeypatch.context() as python:
            python.setattr(repair, "COMPILED", False)
            slow = solve_general(net, "deah")
        assert fast.certified and slow.certified and fast.basis_paths == slow.basis_paths
        assert [(x.action, x.layers, x.indices, x.taps, x.substructure) for x in fast.repairs] == \
            [(x.action, x.layers, x.indices, x.taps, x.substructure) for x in slow.repairs]
        assert [(d.substructure, d.layers, d.indices, d.taps) for d in fast.discarded] == \
            [(d.substructure, d.layers, d.indices, d.taps) for d in slow.discarded]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture])
@given(spec=layer_dag_specs())
def test_why_finds_discards_and_readmissions_by_rows_as_a_scan_of_the_records_does(monkeypatch, spec):
    """``why``'s lookups by rows (``first_named``: no record spelled) give what a scan of the
    records gives: every discard's first position among the discards, every re-admitted path
    its repair and Step 3's first discard of it as ``earlier``, no kept path of the union a
    re-admission; with the re-admissions as runs (compiled) and as records (Python pass)."""
    from basispath_graph.deah import repair
    from basispath_graph.deah.repair_list import path_key
    from basispath_graph.general.blocks import general_path_keys
    from basispath_graph.general.documents import sdvchain_rule

    for net in (parse_general(READMIT, "<spec>", 10**6), parse_general(spec, "<spec>", 10**6)):
        for compiled in (True, False):
            with monkeypatch.context() as m:
                m.setattr(repair, "COMPILED", compiled)
                r = solve_general(net, "deah")
            first: dict = {}
            for k, d in enumerate(r.discarded):
                first.setdefault(path_key(d.layers, d.indices, d.taps), k)
            for key, k in first.items():
                assert r._discard_position(*key) == k
            if r.sdvchain is None:  # a network whose core is layered: the layered engine's run
                continue
            step3 = r.sdvchain.step3.discards
            made = [path_key(*p) for sub, rows in step3.row_runs() for p in general_path_keys(net, r.sdvchain.bases[sub].take(rows))]
            readmitted = {path_key(x.layers, x.indices, x.taps) for x in r.repairs if x.action == "readmit"}
            for key in readmitted:
                assert r._discard_position(*key) is None
                assert r._readmission(key) == {"step": "repair", "action": "readmit", "detail": "re-admitted: it raises the rank",
                                               "earlier": sdvchain_rule(r, step3[made.index(key)])}
            for block in r.basis:
                for p in general_path_keys(net, block.take(np.arange(min(len(block), 5)))):
                    if path_key(*p) not in readmitted:
                        assert r._readmission(path_key(*p)) is None
