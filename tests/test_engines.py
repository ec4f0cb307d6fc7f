"""Subroutine, skeleton and DEAH against independent checks (tests/strategies, tests/oracle)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from basispath_graph.choices import ChoiceRule
from basispath_graph.deah.engine import run_deah
from basispath_graph.deah.step1_substructures import run_step1
from basispath_graph.network import Network, paths_to_json
from basispath_graph.skeleton import skeleton_basis
from basispath_graph.solver import solve
from basispath_graph.deah.subroutine import subroutine

from .oracle import Oracle
from .strategies import assert_basis, edge_vectors, networks, sparse_rank

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name: str) -> Network:
    spec = json.loads((EXAMPLES / f"{name}.json").read_text())
    return Network.build(spec["widths"], spec.get("skips", []), spec.get("name", ""))


# --- Subroutine (Appendix C) on plain layered networks -----------------------------------


@given(st.lists(st.integers(1, 6), min_size=2, max_size=8), st.integers(0, 50))
@settings(max_examples=60, deadline=None)
def test_subroutine_is_a_basis_of_unequal_width_mlps(widths, seed):
    net = Network.build(widths)
    block = subroutine(net, tuple(range(net.L + 1)), ChoiceRule(net.widths, seed))
    assert_basis(net, paths_to_json([block]))


def test_subroutine_matches_brute_force_span_on_a_small_mlp():
    net = Network.build([3, 2, 4, 2])
    block = subroutine(net, (0, 1, 2, 3), ChoiceRule(net.widths, 7))
    oracle = Oracle(net.widths, net.pairs)
    paths = [tuple(map(tuple, p)) for p in paths_to_json([block])]
    assert oracle.rank(paths) == len(paths) == oracle.rank(oracle.paths) == net.m - net.H


def test_subroutine_gives_each_neuron_one_direct_edge():
    # Every path reaching a neuron continues over its direct edge: with widths [2, 3, 1] the
    # 2 * 3 = 6 first-hop paths all continue to the single output neuron.
    net = Network.build([2, 3, 1])
    block = subroutine(net, (0, 1, 2), ChoiceRule(net.widths))
    assert len(block) == 2 * 3 + 3 * 1 - 3 == 6
    assert sorted(map(tuple, block.nodes[:, :2].tolist())) == [(i, j) for i in range(2) for j in range(3)]


def test_subroutine_on_a_skip_substructure_uses_its_own_layers():
    net = load_example("fig1b")
    block = subroutine(net, (0, 2, 4), ChoiceRule(net.widths))
    assert block.layers == (0, 2, 4)
    assert len(block) == 2 * 3 + 3 * 2 - 3
    sub = Network.build([2, 3, 2])
    assert sparse_rank(edge_vectors(sub, [[[0, a], [1, b], [2, c]] for a, b, c in block.nodes.tolist()])) == 9


# --- skeleton (basispath_graph/skeleton.py) --------------------------------------------------


@given(networks(), st.integers(0, 20))
@settings(max_examples=80, deadline=None)
def test_skeleton_is_a_basis_on_random_networks(net, seed):
    assert_basis(net, paths_to_json(skeleton_basis(net, seed)))


@pytest.mark.parametrize("name", ["fig1b", "mlp", "resnet-style", "densenet-style"])
def test_skeleton_certified_on_public_examples(name):
    net = load_example(name)
    assert_basis(net, paths_to_json(skeleton_basis(net)))


# --- DEAH ------------------------------------------------------------------------------


def test_fig1b_step1_matches_the_paper():
    # Fig. 1(b): p_1 = (0,1,2,3,4) subdivides p_2, p_3, p_4; U sizes 0, 1, 1, 3; R = 6 - 3.
    deah = run_deah(load_example("fig1b"))
    s1 = deah.step1
    by_layers = {p.layers: p for p in s1.paths.values()}
    assert {k: v.u_size for k, v in by_layers.items()} == {
        (0, 1, 2, 3, 4): 0,
        (0, 1, 2, 4): 1,
        (0, 2, 3, 4): 1,
        (0, 2, 4): 3,
    }
    assert s1.rank == 3
    assert [s1.paths[i].layers for i in s1.selected] == [(0, 1, 2, 3, 4), (0, 2, 4), (0, 1, 2, 4)]
    assert [[s1.paths[i].layers for i in c] for c in deah.step3.chains] == [[(0, 2, 4), (0, 1, 2, 4)]]


def test_case2_rule_skips_mutually_subdividing_tie():
    # Fig. 3(a) pattern: (0,2,3,5) and (0,3,4,5) tie on |U| = 3, each subdivides an edge of the
    # other ((0,3) by layer 2, (3,5) by layer 4) and both lie in U of (0,3,5): the second is
    # skipped so that the chain from (0,3,5) does not split in two.
    net = Network.build([1] * 6, skips=[(0, 2), (0, 3), (1, 3), (3, 5)])
    s1 = run_deah(net).step1
    order = [s1.paths[i].layers for i in s1.order]
    assert order.index((0, 3, 4, 5)) == order.index((0, 2, 3, 5)) + 1
    skipped = [s1.paths[e.idx].layers for e in s1.events if e.action == "case2-skip"]
    assert skipped == [(0, 3, 4, 5)]
    selected = [s1.paths[i].layers for i in s1.selected]
    assert selected == [(0, 1, 2, 3, 4, 5), (0, 3, 5), (0, 1, 3, 5), (0, 2, 3, 5), (0, 1, 2, 3, 5)]
    assert len(selected) == s1.rank == len(net.pairs) - (net.L - 1)


def test_case1_pattern_is_eliminated_by_sdvchain():
    # Case 1 (Fig. 2): p2 subdivides p1. Fig. 1(b)'s chain (0,2,4) > (0,1,2,4) must discard the
    # paths that repeat a (0,2,4) shared-layer swap; the union is then a basis without repair.
    result = solve(load_example("fig1b"), "deah", repair=False)
    assert result.raw_verdict.certified
    assert len(result.discarded) == 8
    assert {d.reason.step for d in result.discarded} == {"chain"}


@pytest.mark.parametrize("name", ["fig1b", "mlp", "resnet-style", "densenet-style"])
def test_deah_with_repair_certified_on_public_examples(name):
    net = load_example(name)
    result = solve(net, "deah")
    assert result.certified
    assert_basis(net, paths_to_json(result.basis))


def test_faithful_deah_fails_on_resnet_style_and_says_by_how_much():
    # Documented finding (docs/deah-interpretation.md): the chain heads (0,2,3,5) and (0,2,4,5)
    # share the pair (0,2) but the literal pseudo-code never compares them.
    result = solve(load_example("resnet-style"), "deah", repair=False)
    assert not result.certified
    assert result.raw_verdict.size == 140
    assert result.raw_verdict.defect == "size 140 != m - H = 130"
    repaired = solve(load_example("resnet-style"), "deah")
    assert repaired.certified and len(repaired.repairs) == 10
    assert {r.action for r in repaired.repairs} == {"drop"}


@given(networks(), st.integers(0, 5))
@settings(max_examples=120, deadline=None)
def test_deah_with_repair_is_a_basis_and_every_discard_has_a_checked_certificate(net, seed):
    result = solve(net, "deah", seed=seed)
    basis = paths_to_json(result.basis)
    assert_basis(net, basis)
    vectors = edge_vectors(net, basis)
    for d in result.discarded:
        total: dict[int, int] = {}
        for index, coef in d.certificate:
            for e in vectors[index]:
                total[e] = total.get(e, 0) + coef
        target = edge_vectors(net, [[[l, i] for l, i in zip(d.layers, d.indices)]])[0]
        assert {e: c for e, c in total.items() if c} == {e: 1 for e in target}


@given(networks(max_layers=5, max_width=4, max_weights=150), st.integers(0, 3))
@settings(max_examples=40, deadline=None)
def test_deah_basis_spans_every_path_brute_force(net, seed):
    oracle = Oracle(net.widths, net.pairs)
    basis = [tuple(map(tuple, p)) for p in paths_to_json(solve(net, "deah", seed=seed).basis)]
    assert oracle.rank(basis) == len(basis) == oracle.rank(oracle.paths) == net.m - net.H


@given(networks(max_layers=5, max_width=4), st.integers(0, 9))
@settings(max_examples=30, deadline=None)
def test_same_seed_same_result(net, seed):
    a, b = solve(net, "deah", seed=seed), solve(net, "deah", seed=seed)
    assert paths_to_json(a.basis) == paths_to_json(b.basis)
    assert [(d.layers, d.indices) for d in a.discarded] == [(d.layers, d.indices) for d in b.discarded]


def test_raw_deah_union_is_never_silently_reported_as_certified():
    # Across random networks, a raw union that certify() accepts really is a basis, and one it
    # refuses really is not (independent check).
    rng = np.random.default_rng(3)
    for _ in range(60):
        L = int(rng.integers(2, 6))
        widths = rng.integers(1, 5, L + 1).tolist()
        skips = [(a, b) for a in range(L + 1) for b in range(a + 2, L + 1) if rng.random() < 0.5]
        net = Network.build(widths, skips)
        r = solve(net, "deah", repair=False, certificates=False)
        paths = paths_to_json(r.basis)
        independent = sparse_rank(edge_vectors(net, paths)) == len(paths)
        assert r.certified == (independent and len(paths) == net.m - net.H)


@given(st.integers(2, 9), st.lists(st.booleans(), min_size=45, max_size=45))
@settings(max_examples=150, deadline=None)
def test_lazy_step1_selects_exactly_what_listing_all_of_ps_selects(L, coins):
    candidates = [(a, b) for a in range(L + 1) for b in range(a + 2, L + 1)]
    net = Network.build([1] * (L + 1), [p for p, c in zip(candidates, coins) if c])
    listed, lazy = run_step1(net), run_step1(net, max_paths=0)
    assert listed.listed and lazy.total == listed.total
    assert lazy.selected == listed.selected
    assert lazy.order == listed.order[: len(lazy.order)]
    assert [e.action for e in lazy.events] == [e.action for e in listed.events][: len(lazy.events)]


def test_step1_on_deep_32x16_never_lists_ps():
    # All 528 layer pairs of 33 layers: |P^S| = 2^31. Only a few hundred paths are examined.
    net = Network.build([16] * 33, [(a, b) for a in range(33) for b in range(a + 2, 33)])
    s1 = run_step1(net)
    assert s1.total == 2**31 and not s1.listed
    assert len(s1.selected) == s1.rank == 528 - 31
    assert len(s1.paths) < 1000
