"""deah-complete: certified with 0 repairs on random networks, every certificate re-summed here.

The checks are the tests' own: ``assert_basis`` (own weight numbering, own rank mod p) for the
basis, and a sum of path vectors in that numbering for every certificate.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basispath_graph.choices import ChoiceRule
from basispath_graph.deah.witness_certificates import WitnessCertificates
from basispath_graph.network import Network, paths_to_json
from basispath_graph.presets import preset_network
from basispath_graph.solver import solve
from basispath_graph.verify import Expresser

from .oracle import Oracle
from .strategies import assert_basis, edge_vectors, networks


def _vector(network: Network, layers, indices) -> Counter:
    (ids,) = edge_vectors(network, [list(zip(layers, indices))])
    return Counter(ids)


def assert_certificates_sum(result) -> None:
    """Every discarded path equals the signed sum of the basis paths its certificate names."""
    net = result.network
    basis = [tuple(map(tuple, p)) for p in paths_to_json(result.basis)]
    vectors = [Counter(v) for v in edge_vectors(net, basis)]
    for d in result.discarded:
        assert d.certificate, f"no certificate for {d.layers} {d.indices}"
        total: Counter = Counter()
        for k, coef in d.certificate:
            for w, c in vectors[k].items():
                total[w] += coef * c
        assert {w: c for w, c in total.items() if c} == dict(_vector(net, d.layers, d.indices))


def solve_complete(net: Network, seed: int = 0):
    return solve(net, "deah-complete", seed, repair=False)


@given(networks(max_layers=7, max_width=5), st.integers(0, 5))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
def test_random_networks_are_certified_without_repair(net, seed):
    r = solve_complete(net, seed)
    assert r.repairs_needed == 0 and r.repairs == []
    assert r.certified, r.verdict.defect
    assert_basis(net, paths_to_json(r.basis))
    assert_certificates_sum(r)
    if r.discarded:  # always one of the two local methods, never the global solve; the peel
        # only where a block brought several hops at once (one new hop: its X_r(f) are all kept)
        several = any(len(h) >= 2 for h in r.deah.step3.new_hops.values())
        assert r.certificate_method == ("ear recursion + witness peeling" if several else "ear recursion")
    assert_certificates_start_at_the_discarding_block(r)


def assert_certificates_start_at_the_discarding_block(result) -> None:
    """A discard of block r names only kept paths of r and of blocks before it in the order, and
    at least one of r's own (the rule that discarded it gives the first coefficients)."""
    bounds, base = {}, 0
    for idx, block in zip(result.basis_substructures, result.basis):
        bounds[idx] = (base, base + len(block))
        base += len(block)
    for d in result.discarded:
        lo, hi = bounds[d.substructure]
        assert max(k for k, _ in d.certificate) < hi
        assert any(lo <= k < hi for k, _ in d.certificate), (d.layers, d.indices, d.certificate)


@given(networks(max_layers=7, max_width=4), st.integers(0, 3))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
def test_witness_peeling_gives_the_unique_certificates_of_the_other_two_methods(net, seed):
    # Over a basis a path's coefficients are unique, so the witness peeling (any selection), the
    # ear recursion (ear-ordered selections) and the global Expresser must agree to the last term.
    r = solve_complete(net, seed)
    if not r.discarded:
        return
    d = r.deah
    peel = WitnessCertificates(net, d.bases, d.step3, ChoiceRule(net.widths, seed))
    expresser = Expresser(net, r.basis)
    for q in r.discarded:
        rows, idx, coef = peel.expand(q.layers, np.array([q.indices]))
        assert sorted(zip(idx.tolist(), coef.tolist())) == sorted(q.certificate) == expresser.express(q.layers, q.indices)


@given(networks(max_layers=5, max_width=3, max_weights=120))
@settings(max_examples=40, deadline=None, derandomize=True)
def test_kept_paths_come_from_the_substructure_bases_and_match_brute_force_rank(net):
    r = solve_complete(net)
    candidates = {
        tuple(map(tuple, p)) for idx in r.deah.step1.selected for p in paths_to_json([r.deah.bases[idx]])
    }
    kept = [tuple(map(tuple, p)) for p in paths_to_json(r.basis)]
    assert set(kept) <= candidates
    oracle = Oracle(net.widths, net.pairs)
    assert oracle.rank(kept) == len(kept) == oracle.rank(oracle.paths)


def test_every_hop_rule_discard_names_its_owner_path_with_coefficient_one():
    # resnet-style-like: three skips, each an ear; the rule's partner is in the certificate.
    net = Network.build([3, 4, 2, 4, 3, 2], [(0, 2), (1, 3), (3, 5)])
    r = solve_complete(net)
    assert set(r.deah.step3.rules.values()) == {"p0", "ear"}
    assert r.certified and r.discarded
    starts, base = {}, 0
    for idx, block in zip(r.basis_substructures, r.basis):
        starts[idx] = base
        base += len(block)
    alive_rows = {idx: list(r.deah.step3.alive[idx].nonzero()[0]) for idx in r.deah.step3.order}
    for d in r.discarded:
        assert d.reason.step in ("prefix", "suffix"), d.reason.step
        block = r.deah.bases[d.substructure]
        hop = d.reason.hop
        j = block.layers.index(hop[0])
        partner = next(
            row for row in alive_rows[d.substructure]
            if tuple(block.nodes[row, j : j + 2]) == (d.indices[j], d.indices[j + 1])
        )
        assert d.reason.twin == partner  # the record names its twin, the kept X_r(f)
        index = starts[d.substructure] + alive_rows[d.substructure].index(partner)
        assert (index, 1) in d.certificate
        # the rule's name says where the two paths differ
        same_prefix = tuple(block.nodes[partner, : j + 1]) == d.indices[: j + 1]
        assert d.reason.step == ("suffix" if same_prefix else "prefix")
        # its weights: the crossing on the hop is shared; differs / twin_differs / agrees split both paths
        mine = [int(w) for w in r.network.weight_ids(block.take([d.reason.row]))[0]]
        twin = [int(w) for w in r.network.weight_ids(block.take([partner]))[0]]
        assert d.reason.crossing == mine[j] == twin[j] and d.reason.crossing in d.reason.agrees
        assert sorted(d.reason.differs + d.reason.agrees) == sorted(mine)
        assert sorted(d.reason.twin_differs + d.reason.agrees) == sorted(twin)


@pytest.mark.parametrize(
    "name, depth, width, rules",
    [
        ("densenet", 6, 3, {"p0", "ear"}),
        ("unet", 8, 3, {"p0", "ear"}),
        ("resnet", 6, 3, {"p0", "ear", "local"}),
        ("resnet", 8, 2, {"p0", "ear", "local"}),
    ],
)
def test_presets_certified_without_repair_and_rules_used(name, depth, width, rules):
    net = preset_network(name, depth, width)
    r = solve_complete(net)
    assert set(r.deah.step3.rules.values()) == rules
    assert r.certified and r.repairs_needed == 0
    assert r.certificate_method == ("ear recursion + witness peeling" if "local" in rules else "ear recursion")
    assert_basis(net, paths_to_json(r.basis))
    assert_certificates_sum(r)
    assert_certificates_start_at_the_discarding_block(r)


def test_a_selection_without_an_ear_order_uses_the_local_rule():
    # Found by the fidelity sweep: after p_0 and (0, 1, 7) every selected substructure brings
    # two or more new layer pairs.
    net = Network.build(
        [3, 2, 1, 4, 2, 4, 2, 4],
        [(0, 2), (0, 3), (0, 4), (1, 3), (1, 5), (1, 7), (2, 4), (2, 5), (2, 6), (3, 5), (4, 7), (5, 7)],
    )
    r = solve_complete(net)
    used = Counter(r.deah.step3.rules.values())
    assert used["local"] >= 1 and used["p0"] == 1
    assert r.certified and r.repairs_needed == 0
    assert r.certificate_method == "ear recursion + witness peeling"
    assert_certificates_sum(r)
    assert_certificates_start_at_the_discarding_block(r)


def test_same_selection_and_bases_as_deah():
    net = preset_network("densenet", 5, 3)
    a, b = solve(net, "deah", 0), solve_complete(net)
    assert a.deah.step1.selected == b.deah.step1.selected
    for idx in a.deah.step1.selected:
        assert (a.deah.bases[idx].nodes == b.deah.bases[idx].nodes).all()


def test_a_layer_debt_is_extended_by_a_new_hop_and_paid_by_an_old_one():
    # (0, 5, 7) runs new hops through old layer 5; (0, 1, 2, 5, 7) enters 5 over its new hop
    # (2, 5) and extends the debt; (0, 4, 5, 7) enters over the old (4, 5) and pays it.
    net = Network.build([5, 1, 2, 4, 2, 4, 3, 3], [(0, 2), (0, 4), (0, 5), (0, 6), (1, 7), (2, 5), (2, 6), (3, 5), (4, 6), (5, 7)])
    r = solve_complete(net)
    rules = {r.deah.step1.paths[idx].layers: rule for idx, rule in r.deah.step3.rules.items()}
    assert rules[(0, 5, 7)] == "local" and rules[(0, 1, 2, 5, 7)] == "ear" and rules[(0, 4, 5, 7)] == "local"
    assert r.certified and r.repairs_needed == 0
    assert_certificates_sum(r)


def test_stored_run_why_and_compare_name_the_rules(tmp_path, store_uri):  # on both backends
    from .cli_runner import cli

    spec = tmp_path / "r6.json"
    spec.write_text(json.dumps(preset_network("resnet", 6, 2).to_dict()))
    store = str(store_uri)
    run = json.loads(cli("run", spec, "-e", "deah-complete", "--store", store, "--json", check=0).stdout)
    rows = json.loads(cli("query", "--store", store, "--json", "-p", f'run="{run["run_id"]}"',
                          "MATCH (d:Discard {run: $run}) RETURN d.step AS step, count(*) AS n ORDER BY step", check=0).stdout)
    assert rows == [{"step": "local", "n": 18}, {"step": "prefix", "n": 4}, {"step": "suffix", "n": 6}]
    ids = json.loads(cli("query", "--store", store, "--json", "-p", f'run="{run["run_id"]}"',
                         "MATCH (d:Discard {run: $run})<-[:REASON]-(b:BasisPath) RETURN b.id AS id, d.step AS step", check=0).stdout)
    for step, text in (("local", "local rule"), ("prefix", "hop rule"), ("suffix", "differs after it")):
        pid = next(r["id"] for r in ids if r["step"] == step)
        out = cli("why", run["run_id"], str(pid), "--store", store, check=0).stdout
        assert text in out and "verified now by vector addition" in out
    table = cli("compare", run["run_id"], "--store", store, check=0).stdout
    assert "discards: local rule (deah-complete)" in table and "18" in table
    # the blocks per rule, rebuilt from the stored substructures, are the solve's
    rules = Counter(solve(preset_network("resnet", 6, 2), "deah-complete").deah.step3.rules.values())
    [column] = json.loads(cli("compare", run["run_id"], "--store", store, "--json", check=0).stdout)
    assert (column["label"], column["ear_blocks"], column["local_blocks"]) == ("resnet-6x2 (deah-complete)", rules["ear"], rules["local"])
    assert "chains" not in column and "chain_discards" not in column  # SDVChain's rows are deah's


def test_discards_are_arrays_read_as_records_the_same_way_by_index_and_by_iteration():
    r = solve_complete(preset_network("resnet", 6, 2))  # hop rule and local rule both discard
    table, listed = r.deah.step3.discards, r.discarded
    records = list(table)
    assert len(records) == len(table) == len(listed) == 28
    assert [table[k] for k in range(len(table))] == records and table[-1] == records[-1]
    assert table.step_counts() == Counter(d.step for d in records) == Counter({"local": 18, "suffix": 6, "prefix": 4})
    with pytest.raises(IndexError):
        table[len(table)]
    paths = list(listed)
    assert [listed[k] for k in range(len(listed))] == paths
    assert [len(p.certificate) for p in paths] == listed.certificate_lengths().tolist()
    # blocks() gives the same paths in the same order, without records
    assert [tuple(map(tuple, p)) for p in paths_to_json(listed.blocks())] == [tuple(zip(p.layers, p.indices)) for p in paths]
    for p, d in zip(paths, records):
        block = r.deah.bases[d.substructure]
        assert (p.layers, p.indices, p.reason) == (block.layers, tuple(block.nodes[d.row].tolist()), d)


def test_a_wrong_certificate_is_caught_by_the_vector_addition_and_names_the_path():
    from basispath_graph.verify.checks import check_certificates
    from basispath_graph.verify import CertificateMismatchError

    r = solve_complete(preset_network("resnet", 6, 2))
    d = r.discarded
    target = [type(r.basis[0])(d[3].layers, np.array([d[3].indices]))]
    (k, c), *rest = d[3].certificate
    check_certificates(r.network, r.basis, target, (np.zeros(len(rest) + 1, dtype=np.int64), np.array([k] + [i for i, _ in rest]), np.array([c] + [x for _, x in rest])))
    with pytest.raises(CertificateMismatchError, match="certificate of discarded path 7 does not sum to the path"):
        check_certificates(r.network, r.basis, target, (np.zeros(len(rest) + 1, dtype=np.int64), np.array([k] + [i for i, _ in rest]), np.array([c + 1] + [x for _, x in rest])), row_ids=np.array([7]))


def test_witness_peel_refuses_what_is_not_in_the_span_of_a_block():
    # Drop one kept row of a local block: its witness system loses rank, and the peel of the
    # dropped path can no longer be written over what is left (the union is not a basis).
    from basispath_graph.deah.witness_certificates import WitnessCertificates, alpha_functional

    net = preset_network("resnet", 6, 2)
    r = solve_complete(net)
    d = r.deah
    idx = next(i for i in d.step3.order if d.step3.rules[i] == "local")
    alive = d.step3.alive[idx].copy()
    dropped = int(np.flatnonzero(alive)[0])
    d.step3.alive[idx][dropped] = False
    try:
        peel = WitnessCertificates(net, d.bases, d.step3, ChoiceRule(net.widths, 0))
        rows, idx_, coef = peel.expand(d.bases[idx].layers, d.bases[idx].nodes[[dropped]])
        # whatever came out cannot add up to the path
        from basispath_graph.verify.checks import check_certificates
        from basispath_graph.verify import CertificateMismatchError

        kept = [blk.take(d.step3.alive[i]) for i, blk in ((i, d.bases[i]) for i in d.step3.order)]
        with pytest.raises(CertificateMismatchError):
            check_certificates(net, kept, [d.bases[idx].take([dropped])], (rows, idx_, coef))
    finally:
        d.step3.alive[idx][dropped] = True
    # the alpha functional: vanishes on earlier alpha vectors, 1 on its own
    earlier = np.array([[1, 1, 0, 0], [0, 1, 1, 0]])
    lam = alpha_functional(earlier, np.array([1, 0, 0, 1]))
    assert ((earlier @ lam) % 2_147_483_647 == 0).all() and int(np.array([1, 0, 0, 1]) @ lam) % 2_147_483_647 == 1


# --- each rule has its own record shape (issue 15, finding 3) --------------------------------


def _weights_of(path):
    return Counter((a, i, b, j) for (a, i), (b, j) in zip(path, path[1:]))


def test_export_reasons_have_the_shape_of_their_rule():
    r = solve_complete(preset_network("resnet", 6, 2))
    doc = r.export()
    basis = {tuple(map(tuple, p)) for p in doc["basis"]}
    seen = Counter()
    for path, entry in zip(doc["discarded"], doc["discard_reasons"]):
        reason = entry["reason"]
        seen[reason["step"]] += 1
        assert "chain" not in reason and "pair" not in reason  # SDVChain's fields are SDVChain's
        layers = [l for l, _ in path]
        assert reason["substructure"] == layers
        if reason["step"] == "local":
            assert set(reason) == {"step", "substructure"}
            continue
        assert set(reason) == {"step", "substructure", "hop", "crossing", "twin", "differs", "twin_differs", "agrees"}
        assert tuple(map(tuple, reason["twin"])) in basis  # the twin X_r(f) is kept
        a, b = reason["hop"]
        assert reason["crossing"][0::2] == [a, b] and reason["crossing"] in reason["agrees"]
        mine, twin = _weights_of(path), _weights_of(reason["twin"])
        assert Counter(map(tuple, reason["differs"] + reason["agrees"])) == mine
        assert Counter(map(tuple, reason["twin_differs"] + reason["agrees"])) == twin
        first_difference = min(w[0] for w in reason["differs"])
        assert (first_difference < a) == (reason["step"] == "prefix")
    assert seen == {"local": 18, "prefix": 4, "suffix": 6}


def test_stored_why_json_of_a_hop_rule_discard_names_hop_crossing_and_twin(tmp_path, store_uri):
    from .cli_runner import cli

    spec = tmp_path / "r6.json"
    spec.write_text(json.dumps(preset_network("resnet", 6, 2).to_dict()))
    store = str(store_uri)
    run = json.loads(cli("run", spec, "-e", "deah-complete", "--store", store, "--json", check=0).stdout)
    exported = tmp_path / "basis.json"
    cli("solve", spec, "-e", "deah-complete", "--export", exported, "-q", check=0)
    doc = json.loads(exported.read_text())
    for path, entry in zip(doc["discarded"], doc["discard_reasons"]):
        text = ",".join(f"{l}:{i}" for l, i in path)
        answer = json.loads(cli("why", run["run_id"], text, "--store", store, "--json", check=0).stdout)
        # The export leaves out the local rule's witness explanation (per path only: why computes it)
        reason = {k: v for k, v in answer["reason"].items() if k not in ("action", "witness")}
        assert ("witness" in answer["reason"]) == (entry["reason"]["step"] == "local")
        assert answer["verified"] and reason == entry["reason"]  # the stored record says what the export says
        if entry["reason"]["step"] == "suffix":
            break


def test_a_store_made_before_the_hop_rule_properties_gets_them_when_opened_for_writing(tmp_path):
    # The Discard table as stores had it before (7daad87): no substructure, hop, crossing, twin, ...
    import ladybug

    from basispath_graph import Network, open_store
    from basispath_graph.store.ladybug_store import DB_FILE

    folder = tmp_path / "old-store"
    folder.mkdir()
    db = ladybug.Database(str(folder / DB_FILE))
    conn = ladybug.Connection(db)
    conn.execute(
        "CREATE NODE TABLE Discard(uid STRING, run STRING, step STRING, action STRING, chain INT64, pair INT64[], "
        "shared_pairs INT64[], ep INT64[], ucp_star INT64[], iep INT64[], shared INT64[], PRIMARY KEY(uid))"
    )
    conn.execute("CREATE (:Discard {uid: 'old:d0', run: 'old', step: 'local', action: 'discard', chain: 0})")
    conn.close()
    db.close()
    with open_store(str(folder)) as store:
        run = store.run(Network([2, 2, 3, 2, 2], [(0, 2), (1, 3)], "fig1b"))
        assert store.why(run.id, run.discarded_paths[0])["reason"]["twin"]
        old = store.query("MATCH (d:Discard {run: 'old'}) RETURN d.step AS step, d.substructure AS s, d.twin AS twin, d.hop AS hop")
    assert old == [{"step": "local", "s": -1, "twin": "", "hop": []}]
