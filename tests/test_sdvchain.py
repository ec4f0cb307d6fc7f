"""The vectorised SDVChain step equals the literal loop of Appendix C (tests/reference_sdvchain)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from basispath_graph import Network
from basispath_graph.choices import ChoiceRule
from basispath_graph.deah.step1_substructures import run_step1
from basispath_graph.deah.step3_sdvchain import InMemoryRelations, _columns, sdvchain_pair
from basispath_graph.deah.subroutine import subroutine
from basispath_graph.deah.subroutine_rows import SubroutineRows

from .reference_sdvchain import sdvchain_pair_reference
from .strategies import networks


@given(networks(max_layers=6, max_width=4), st.integers(0, 5), st.integers(0, 2**31))
@settings(max_examples=60, deadline=None)
def test_vectorised_sdvchain_pair_equals_the_literal_loop(net, seed, mask_seed):
    s1 = run_step1(net)
    rule = ChoiceRule(net.widths, seed)
    bases = {i: subroutine(net, s1.paths[i].layers, rule) for i in s1.selected}
    rel = InMemoryRelations(s1)
    rng = np.random.default_rng(mask_seed)
    for src in s1.selected:
        for dst in s1.selected:
            if src == dst:
                continue
            shared = rel.shared_pairs(src, dst)
            alive = rng.random(len(bases[dst])) < 0.8
            rows, ep_rows, star_rows = sdvchain_pair(net, shared, bases[src], bases[dst], alive)
            expected = sdvchain_pair_reference(net, shared, bases[src], bases[dst], alive)
            assert sorted(r for r, *_ in expected) == rows.tolist()
            # the same from the B_r described (only B'_to's live rows keyed, each column made alone)
            described = [SubroutineRows(net, bases[i].layers, rule) for i in (src, dst)]
            again = sdvchain_pair(net, shared, *described, alive)
            assert all(np.array_equal(a, b) for a, b in zip(again, (rows, ep_rows, star_rows)))
            # same group (Ep_j) and the same UCP_j* for every discarded row
            wb = net.weight_ids(bases[src])
            sh, un = _columns(bases[src], set(shared))
            got = {
                int(r): (tuple(wb[e, un].tolist()), tuple(wb[s, sh].tolist()))
                for r, e, s in zip(rows, ep_rows, star_rows)
            }
            assert got == {r: (ep, star) for r, ep, star, _, _ in expected}


@given(networks(max_layers=6, max_width=4), st.integers(0, 5))
@settings(max_examples=40, deadline=None)
def test_sdvchain_s_discard_table_reads_alike_every_way(net, seed):
    """SdvDiscards builds a record when read: by index, by iteration (a call at a time) and its
    bulk reads (locate, rows, row_runs, step counts) agree, each record is the call that made it
    (its Ep_j and UCP_j* from B_from, its IEp and shared part its own weights), and a run's
    DiscardedList finds every discard at its place (Result.why's lookup)."""
    from collections import Counter

    from basispath_graph import solve
    from basispath_graph.discarded import DiscardedList

    r = solve(net, "deah", seed, certificates=False)
    table = r.deah.step3.discards
    records = list(table)
    assert [table[k] for k in range(len(table))] == records
    assert [table.locate(k) for k in range(len(table))] == [(d.substructure, d.row) for d in records]
    assert table.rows().tolist() == [d.row for d in records] == [x for _, rows in table.row_runs(3) for x in rows.tolist()]
    assert table.step_counts() == Counter(d.step for d in records)
    for d in records:
        src, dst = d.pair
        assert dst == d.substructure and not r.deah.step3.alive[dst][d.row]
        sh_t, un_t = _columns(r.deah.bases[dst], set(d.shared_pairs))
        mine = net.weight_ids(r.deah.bases[dst].take([d.row]))[0]
        assert (d.iep, d.shared) == (tuple(mine[un_t].tolist()), tuple(mine[sh_t].tolist()))
        # Ep_j and UCP_j* are the unshared and shared parts of one path of B_from, and the
        # discarded path's shared part is not UCP_j*
        sh_b, un_b = _columns(r.deah.bases[src], set(d.shared_pairs))
        theirs = net.weight_ids(r.deah.bases[src])
        assert (d.ep, d.ucp_star) in {(tuple(w[un_b].tolist()), tuple(w[sh_b].tolist())) for w in theirs}
        assert d.shared != d.ucp_star
    if isinstance(r.discarded, DiscardedList):
        for k, d in enumerate(r.discarded):
            assert r.discarded.position(d.layers, d.indices) == k


@given(networks(max_layers=6, max_width=4), st.integers(0, 5))
@example(Network([3, 3, 3, 3, 3, 3, 3], skips=[(0, 2), (2, 4), (4, 6)]), 0)  # no repair: 54 discards
@example(Network([4, 4, 4, 4, 4], skips=[(0, 2), (2, 4)]), 0)
@example(Network([3, 3, 2, 4, 4], skips=[(1, 3), (1, 4), (2, 4)]), 0)  # repaired: 6 drops, 1 re-admission
@settings(max_examples=30, deadline=None)
def test_faithful_certificates_are_made_when_read(net, seed):
    """Faithful deah makes each discard's certificate when it is read (``ExpressedCertificates``):
    by index, by iteration (a run at a time), in ``why`` and in the export it is the same,
    non-empty, and sums to the discarded path weight by weight; a repaired run's discards keep
    the listing's order (``RepairedDiscards``)."""
    from basispath_graph import solve
    from basispath_graph.analysis.coordinates import check_certificate
    from basispath_graph.discarded import DiscardedList

    r = solve(net, "deah", seed)
    assert isinstance(r.discarded, DiscardedList)
    if not len(r.discarded):
        assert r.certificate_method is None
        return
    assert r.certificate_method == "global elimination, when asked"
    # A repaired run's: Step 3's discards less the re-admitted ones, then the drops, in the
    # order a listing of records has them (RepairedDiscards)
    readmitted = {(x.substructure, x.layers, x.indices) for x in r.repairs if x.action == "readmit"}
    step3 = [d for d in DiscardedList(r.deah.bases, r.deah.step3.discards) if (d.substructure, d.layers, d.indices) not in readmitted]
    drops = [x for x in r.repairs if x.action == "drop"]
    assert [(d.layers, d.indices, d.substructure, d.reason) for d in r.discarded] == \
        [(d.layers, d.indices, d.substructure, d.reason) for d in step3] + [(x.layers, x.indices, x.substructure, x) for x in drops]
    assert r.summary()["certificate_max_size"] is None and r.discarded.certificate_lengths() is None
    certificates = [d.certificate for d in r.discarded]
    assert [r.discarded[k].certificate for k in range(len(r.discarded))] == certificates
    for d, terms in zip(r.discarded, certificates):
        assert terms and check_certificate((d.layers, d.indices), [(c, r.basis_path(i)) for i, c in terms])
    exported = r.export()["discard_reasons"]
    assert [[(t["coef"], t["path"]) for t in e["certificate"]] for e in exported] == [
        [(c, [list(p) for p in zip(*r.basis_path(i))]) for i, c in terms] for terms in certificates]
    d = r.discarded[len(r.discarded) - 1]
    why = r.why(list(zip(d.layers, d.indices)))
    assert [(t["coef"], t["index"]) for t in why["certificate"]] == [(c, i) for i, c in d.certificate]


@given(st.integers(0, 40), st.lists(st.sampled_from([2, 7, 1000, 2**20, 2**40, 2**61, -3]), min_size=1, max_size=9),
       st.integers(0, 2**31), st.sampled_from([None, 4, 64]))
@settings(max_examples=300, deadline=None)
def test_row_keys_are_the_rank_of_each_row_among_the_distinct_rows(n, highs, seed, table):
    """rowkeys.fold_keys (row_keys; SDVChain folds its hops this way): each row's key is the rank
    of that row among the distinct rows in lexicographic order, however many columns, wide values
    included (packed in mixed radix, renumbered by a table while the range is small, by a sort in
    the order of the last one before int64 would overflow). ``table``: a tiny table limit, so that
    tables and sorts alternate on a few rows; a column of ``-3``: three wide values, so that rows
    still tie when a sort is needed."""
    from basispath_graph import rowkeys
    from basispath_graph.rowkeys import fold_keys, row_keys

    rng = np.random.default_rng(seed)
    rows = np.stack([rng.integers(0, high, size=n) if high > 0 else rng.integers(0, 2**61, size=-high)[rng.integers(0, -high, size=n)]
                     for high in highs], axis=1).reshape(n, len(highs))
    if n > 1:
        rows[n // 2] = rows[0]  # a repeat
    rank = {row: k for k, row in enumerate(sorted(set(map(tuple, rows.tolist()))))}
    with pytest.MonkeyPatch.context() as patch:
        if table is not None:
            patch.setattr(rowkeys, "_table_limit", lambda n: table)
        keys, count = row_keys(rows)
        assert keys.tolist() == [rank[tuple(r)] for r in rows.tolist()] and count == len(rank)
        folded, count = fold_keys(iter(rows.T), n)
        assert folded.tolist() == keys.tolist() and count == len(rank)


@given(networks(max_layers=6, max_width=4), st.integers(0, 5))
@example(Network([3, 3, 2, 4, 4], skips=[(1, 3), (1, 4), (2, 4)]), 0)  # repaired: 6 drops, 1 re-admission
@settings(max_examples=60, deadline=None)
def test_why_finds_layered_discards_and_readmissions_by_rows_as_a_scan_of_the_records_does(net, seed):
    """On a layered faithful run, ``why``'s lookups by rows (``discarded.first_named``) agree
    with a scan of the records: each discard's first position, each re-admitted path's repair
    with Step 3's first discard of it as ``earlier``, no other kept path re-admitted."""
    from basispath_graph import solve
    from basispath_graph.deah.repair_list import path_key
    from basispath_graph.discarded import DiscardedList
    from basispath_graph.export import rule_document, why_reason

    r = solve(net, "deah", seed)
    first: dict = {}
    for k, d in enumerate(r.discarded):
        first.setdefault(path_key(d.layers, d.indices), k)
    for key, k in first.items():
        assert r._discard_position(*key) == k
    step3 = [path_key(d.layers, d.indices) for d in DiscardedList(r.deah.bases, r.deah.step3.discards)]
    readmitted = {path_key(x.layers, x.indices) for x in r.repairs if x.action == "readmit"}
    for key in readmitted:
        assert r._discard_position(*key) is None
        earlier = why_reason(rule_document(r, r.deah.step3.discards[step3.index(key)]))
        assert r._readmission(key) == {"step": "repair", "action": "readmit", "detail": "re-admitted: it raises the rank", "earlier": earlier}
    for block in r.basis:
        for nodes in block.take(np.arange(min(len(block), 5))).nodes.tolist():
            if path_key(block.layers, nodes) not in readmitted:
                assert r._readmission(path_key(block.layers, nodes)) is None
