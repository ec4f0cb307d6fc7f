"""How deah-complete's certificates are assembled and checked (split_certificates.py,
linalg/peeling.py, the witness systems' inverse, the forest test of the local rule).

The end results (every certificate re-summed by the tests' own arithmetic, compared with the
global Expresser) are in test_deah_complete.py; here each piece is held against a plain
reference: exact elimination, brute force, or a deliberately broken input that must be caught.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basispath_graph.choices import ChoiceRule
from basispath_graph.deah.ear_recursion import EarRecursion
from basispath_graph.linalg.peeling import peel_entries
from basispath_graph.deah.split_certificates import Packing, SplitCertificates
from basispath_graph.linalg.elimination import forest_in_order as _forest, independent_in_order as _eliminate
from basispath_graph.deah.walks import ChoiceWalks
from basispath_graph.deah.witness_certificates import P, WitnessCertificates
from basispath_graph.linalg.sparse_inverse import inverse_on_pivots
from basispath_graph.network import Network, PathBlock
from basispath_graph.presets import preset_network
from basispath_graph.rowkeys import RowIndex
from basispath_graph.solver import _recheck, solve
from basispath_graph.verify import CertificateMismatchError, Expresser, flatten_blocks
from basispath_graph.verify.checks import Checker, check_vector_certificates

from .strategies import networks


def _split(result) -> SplitCertificates:
    d = result.deah
    rule = ChoiceRule(result.network.widths, d.seed)
    flat = flatten_blocks(result.network, result.basis)
    ears = EarRecursion(result.network, d.bases, d.step3, rule, Checker(result.network, flat))
    return SplitCertificates(result.network, ears, ChoiceWalks(result.network, rule), flat)


@given(networks(max_layers=6, max_width=4), st.integers(0, 3))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
def test_every_subroutine_row_splits_where_subroutine_made_it(net, seed):
    # The row-number guess is right for every row of every B_r (no fallback needed), and the
    # hop it names satisfies the definition (r's walks before and after it).
    r = solve(net, "deah-complete", seed, repair=False)
    assert r.certified
    split = _split(r)
    for idx, block in r.deah.bases.items():
        rows = np.arange(len(block))
        at = split.split_subroutine_rows(block.layers, block.nodes, rows)
        assert (at >= 0).all()
        valid = split.split(block.layers, block.nodes)
        assert (valid >= 0).all()
        chains = split.chains
        for row, j in zip(rows.tolist(), at.tolist()):
            nodes = block.nodes[row]
            walk_in = chains.backward(block.layers[: j + 1], [nodes[j]])[0]
            walk_out = chains.forward(block.layers[j + 1 :], [nodes[j + 1]])[0]
            assert (nodes[: j + 1] == walk_in).all() and (nodes[j + 1 :] == walk_out).all()


def test_rows_that_are_not_subroutine_rows_fall_back_and_still_get_the_unique_certificate():
    net = preset_network("resnet", 6, 3)
    r = solve(net, "deah-complete", 0, repair=False)
    split = _split(r)
    expresser = Expresser(net, r.basis)
    rng = np.random.default_rng(3)
    for idx in r.deah.step3.order[1:4]:
        layers = r.deah.bases[idx].layers
        nodes = np.stack([rng.integers(0, net.widths[l], 12) for l in layers], axis=1)
        nodes = np.unique(nodes, axis=0)
        rows, bidx, coef = split.certificates(layers, nodes)  # no row numbers: split searched
        for k in range(len(nodes)):
            mine = sorted(zip(bidx[rows == k].tolist(), coef[rows == k].tolist()))
            assert mine == expresser.express(layers, nodes[k].tolist())


def test_packing_widens_when_a_coefficient_does_not_fit():
    r = solve(preset_network("resnet", 6, 3), "deah-complete", 0, repair=False)
    split = _split(r)
    split.packing = Packing(2, np.int32)  # |coef| < 2: the brackets' coefficients do not fit
    subs, rows = r.discarded.subs, r.discarded.rows
    k = int(np.flatnonzero(subs == subs[-1])[0])
    block = r.deah.bases[int(subs[k])]
    got = split.certificates(block.layers, block.nodes[rows[k:]], rows[k:])
    assert split.packing.bits == 16 and split.packing.dtype == np.int64
    ptr = r.discarded.ptr
    assert np.array_equal(got[1], r.discarded.idx[ptr[k]:]) and np.array_equal(got[2], r.discarded.coef[ptr[k]:])


def test_a_wrong_rectangle_certificate_is_caught():
    net = Network.build([2, 3, 2, 2], [(0, 2)])
    basis = [PathBlock((0, 1, 2, 3), np.array([[0, 0, 0, 0]]))]
    flat = flatten_blocks(net, basis)
    w = net.weight_ids(basis[0])[0]
    # the vector of that path, written as entries, is its own certificate ...
    check_vector_certificates(net, flat, np.zeros(3, dtype=np.int64), w, np.ones(3, dtype=np.int64), (np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.ones(1, dtype=np.int64)))
    # ... and a coefficient 2 is not
    with pytest.raises(CertificateMismatchError, match="certificate of vector 0 does not sum to it"):
        check_vector_certificates(net, flat, np.zeros(3, dtype=np.int64), w, np.ones(3, dtype=np.int64), (np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.full(1, 2, dtype=np.int64)))


def test_recheck_catches_a_corrupted_certificate_and_names_it():
    r = solve(preset_network("resnet", 6, 2), "deah-complete", 0, repair=False)
    assert r.certificates_rechecked == len(r.discarded)  # small: all of them
    flat = flatten_blocks(r.network, r.basis)
    d = r.discarded
    d.coef = d.coef.copy()
    d.coef[d.ptr[5]] += 1
    with pytest.raises(CertificateMismatchError, match="certificate of discarded path 5 does not sum to the path"):
        _recheck(r.network, r.deah, flat, d)


def test_recheck_takes_a_spread_sample_above_its_limit(monkeypatch):
    import basispath_graph.solver as solve_module

    monkeypatch.setattr(solve_module, "RECHECK_LIMIT", 7)
    r = solve(preset_network("resnet", 6, 2), "deah-complete", 0, repair=False)
    assert r.certificates_rechecked == 7 < len(r.discarded)


def test_row_index_finds_rows_exactly_even_when_every_hash_collides():
    rng = np.random.default_rng(0)
    nodes = np.unique(rng.integers(0, 5, (200, 4)), axis=0)
    index = RowIndex(nodes)
    order = rng.permutation(len(nodes))
    assert (index.find(nodes[order]) == order).all()
    missing = np.array([[9, 9, 9, 9]])
    with pytest.raises(KeyError):
        index.find(missing)
    assert index.find(missing, missing_ok=True).tolist() == [-1]
    index.mix = np.zeros_like(index.mix)  # every row hashes alike: the exact fallback answers
    index.sorted = np.zeros_like(index.sorted)
    assert (index.find(nodes[order]) == order).all()


def _random_sparse_rows(rng, n, width, density):
    """Independent-or-not sparse vectors mod P as (row, col, value) entries and as dicts."""
    vectors = []
    for _ in range(n):
        cols = rng.choice(width, size=max(1, rng.binomial(width, density)), replace=False)
        vectors.append({int(c): int(rng.integers(1, P)) for c in cols})
    r = np.array([i for i, v in enumerate(vectors) for _ in v], dtype=np.int64)
    c = np.array([k for v in vectors for k in v], dtype=np.int64)
    x = np.array([val for v in vectors for val in v.values()], dtype=np.int64)
    return vectors, r, c, x


@pytest.mark.parametrize("seed", range(40))
def test_peel_then_core_keeps_what_greedy_elimination_keeps(seed):
    rng = np.random.default_rng(seed)
    n, width = int(rng.integers(1, 25)), int(rng.integers(1, 25))
    vectors, r, c, x = _random_sparse_rows(rng, n, width, float(rng.uniform(0.05, 0.4)))
    reference = _eliminate(np.arange(n), vectors, n)
    core = peel_entries(r, c, n, width).core_mask(n)
    keep = ~core
    at = np.flatnonzero(core)
    keep[at] = _eliminate(at, [vectors[k] for k in at], n)[at]
    assert (keep == reference).all()


@pytest.mark.parametrize("seed", range(40))
def test_sparse_inverse_recovers_every_combination(seed):
    rng = np.random.default_rng(100 + seed)
    width = int(rng.integers(2, 20))
    vectors, r, c, x = _random_sparse_rows(rng, int(rng.integers(1, width + 1)), width, float(rng.uniform(0.1, 0.5)))
    kept = np.flatnonzero(_eliminate(np.arange(len(vectors)), vectors, len(vectors)))
    vectors = [vectors[k] for k in kept]
    r = np.array([i for i, v in enumerate(vectors) for _ in v], dtype=np.int64)
    c = np.array([k for v in vectors for k in v], dtype=np.int64)
    x = np.array([val for v in vectors for val in v.values()], dtype=np.int64)
    ptr, rows, coef = inverse_on_pivots(r, c, x, len(vectors), width, P)
    for _ in range(5):
        want = rng.integers(0, P, len(vectors))
        target = np.zeros(width, dtype=object)
        for k, v in enumerate(vectors):
            for col, val in v.items():
                target[col] = (target[col] + int(want[k]) * val) % P
        got = np.zeros(len(vectors), dtype=object)
        for col in range(width):
            for k, a in zip(rows[ptr[col]:ptr[col + 1]].tolist(), coef[ptr[col]:ptr[col + 1]].tolist()):
                got[k] = (got[k] + int(target[col]) * a) % P
        assert [int(g) for g in got] == want.tolist()


@pytest.mark.parametrize("seed", range(30))
def test_forest_test_is_the_elimination_of_edge_vectors(seed):
    rng = random.Random(seed)
    width, n = rng.randint(1, 8), rng.randint(0, 30)
    z_q = np.array([rng.randrange(width) for _ in range(n)], dtype=np.int64)
    z_x = np.array([rng.randrange(width) for _ in range(n)], dtype=np.int64)
    sign = rng.choice((1, -1))
    vectors = [{} if a == b else {int(a): sign, int(b): -sign} for a, b in zip(z_q, z_x)]
    tested = np.arange(n, dtype=np.int64)
    assert (_forest(tested, z_q, z_x, n) == _eliminate(tested, vectors, n)).all()


def _merge_reference(pieces: list[list[list[tuple[int, int]]]]) -> list[tuple[int, int, int]]:
    """(row, basis index, coef) of each row's summed terms, zero sums dropped."""
    out = []
    for row, parts in enumerate(pieces):
        total: dict[int, int] = {}
        for part in parts:
            for i, c in part:
                total[i] = total.get(i, 0) + c
        out += [(row, i, c) for i, c in sorted(total.items()) if c]
    return out


def _merge(packing: Packing, pieces: list[list[list[tuple[int, int]]]]) -> list[tuple[int, int, int]]:
    # one CSR table per piece, as _assemble lays them side by side
    dense = []
    for k in range(len(pieces[0])):
        rows = [p[k] for p in pieces]
        ptr = np.cumsum([0] + [len(r) for r in rows])
        idx = np.array([i for r in rows for i, _ in r], dtype=np.int64)
        coef = np.array([c for r in rows for _, c in r], dtype=np.int64)
        dense.append(packing.dense((ptr, idx, coef)))
    r, i, c = packing.merge_rows(np.concatenate(dense, axis=1))
    return list(zip(r.tolist(), i.tolist(), c.tolist()))


@pytest.mark.parametrize("packing", [Packing(9, np.int32), Packing.wide()], ids=["narrow", "wide"])
def test_merge_rows_sums_runs_of_three_and_four_equal_basis_indices(packing):
    # Basis index 5 in all four pieces (a run of four), 7 in three, 2 in two, 9 once; the runs
    # of three and four sum to zero in row 1. Real certificates have not shown runs over two.
    pieces = [
        [[(5, 1), (7, 2)], [(5, 1), (2, 1)], [(5, -3), (7, 1), (9, 4)], [(5, 2), (7, 1), (2, 1)]],
        [[(5, 1), (7, 1)], [(5, 1), (7, 1)], [(5, -1), (7, -2)], [(5, -1)]],
        [[(3, 1)], [(3, 1)], [(3, 1)], [(3, 1)]],
    ]
    got = _merge(packing, pieces)
    assert got == _merge_reference(pieces)
    assert (0, 5, 1) in got and (0, 7, 4) in got and (2, 3, 4) in got and not [t for t in got if t[0] == 1]


@pytest.mark.parametrize("seed", range(30))
def test_merge_rows_matches_a_plain_sum(seed):
    rng = random.Random(seed)
    pieces = [
        [[(i, rng.choice([-2, -1, 1, 2, 3])) for i in sorted(rng.sample(range(6), rng.randrange(0, 5)))] for _ in range(4)]
        for _ in range(rng.randrange(1, 12))
    ]
    assert _merge(Packing(9, np.int32), pieces) == _merge_reference(pieces)


def test_ear_recursion_gives_the_unique_certificate_of_one_row_and_of_repeated_rows():
    # One row alone (no de-duplication to do) and rows given several times, each certificate
    # held against the global Expresser.
    r = solve(preset_network("resnet", 6, 3), "deah-complete", 0, repair=False)
    d = r.deah
    rule = ChoiceRule(r.network.widths, d.seed)
    ears = EarRecursion(r.network, d.bases, d.step3, rule, Checker(r.network, flatten_blocks(r.network, r.basis)))
    expresser = Expresser(r.network, r.basis)
    paths = r.discarded_paths[:: max(1, len(r.discarded_paths) // 6)]
    for path in paths:
        layers, nodes = (tuple(x) for x in zip(*path))
        want = expresser.express(layers, nodes)
        rows, idx, coef = ears.expand(layers, np.array([nodes]))
        assert rows.tolist() == [0] * len(want) and list(zip(idx.tolist(), coef.tolist())) == want
        same = [p for p in paths if len(p) == len(path) and tuple(l for l, _ in p) == layers]
        many = np.array([[i for _, i in p] for p in same + same[::-1]])
        rows, idx, coef = ears.expand(layers, many)
        for k, row in enumerate(many.tolist()):
            got = list(zip(idx[rows == k].tolist(), coef[rows == k].tolist()))
            assert got == expresser.express(layers, row)


def test_pivot_of_names_each_peeled_vectors_private_coordinate_and_minus_one_for_the_core():
    # a triangle (no private coordinate: the core) and a vector with a private coordinate 3
    from basispath_graph.linalg.peeling import peel

    pr = peel(np.array([0, 2, 4, 6, 8]), np.array([0, 1, 1, 2, 0, 2, 0, 3]), 4)
    assert pr.core.tolist() == [0, 1, 2] and pr.pivot_of(4).tolist() == [-1, -1, -1, 3]


def test_combine_does_not_pack_keys_that_would_overflow():
    # keys row * size + column near 2**62: packing the coefficients into the low bits would
    # overflow int64, so combine must sort the plain keys (the one large key decides, not the
    # smallest).
    from basispath_graph.linalg.sparse import combine

    size = 2**60
    rows, idx, coef = np.array([0, 3, 3, 3]), np.array([1, 5, 5, 7]), np.array([1, -3, 3, 2])
    got = combine((rows, idx, coef), 4, size)
    assert [a.tolist() for a in got] == [[0, 3], [1, 7], [1, 2]]


@pytest.mark.parametrize(
    "net",
    [preset_network("resnet", 6, 3), Network.build([2, 3, 4, 3, 2, 3], [(0, 2), (1, 3), (2, 5), (3, 5)])],
    ids=["equal-widths", "unequal-widths"],
)
def test_subroutine_row_numbers_are_guessed_right_without_the_search(net):
    # split_subroutine_rows guesses each row's hop from its row number (w_a (w_b - 1) rows per
    # hop (a, b): unequal widths tell a from b); for Subroutine's own rows the guess must be
    # right, so the search (``split``) is never needed.
    r = solve(net, "deah-complete", 0, repair=False)
    split = _split(r)

    def no_search(layers, nodes):
        raise AssertionError(f"row-number guess failed for {len(nodes)} row(s) of {layers}")

    split.split = no_search
    for block in r.deah.bases.values():
        assert (split.split_subroutine_rows(block.layers, block.nodes, np.arange(len(block))) >= 0).all()


@pytest.mark.parametrize(
    "earlier, mine",
    [
        ([[1, 0, 0]], [0, 1, 0]),
        ([[1, 1, 0], [0, 1, 1]], [1, 0, 0]),
        (np.zeros((0, 3), dtype=np.int64), [0, 0, 1]),
        ([[1, 1, 0]], [1, 0, 0]),  # mine . (null vector) = -1: the functional must be scaled
    ],
)
def test_alpha_functional_vanishes_on_earlier_alphas_and_is_one_on_mine(earlier, mine):
    from basispath_graph.deah.witness_certificates import alpha_functional

    earlier, mine = np.array(earlier, dtype=np.int64).reshape(-1, 3), np.array(mine, dtype=np.int64)
    lam = alpha_functional(earlier, mine)
    assert ((earlier @ lam) % P == 0).all() and int(mine @ lam) % P == 1


def test_alpha_functional_refuses_an_alpha_in_the_span_of_earlier_ones():
    from basispath_graph.deah.witness_certificates import WitnessPeelError, alpha_functional

    with pytest.raises(WitnessPeelError, match="span of earlier"):
        alpha_functional(np.array([[1, 1, 0], [0, 1, 1]]), np.array([1, 2, 1]))


def test_first_mismatch_finds_an_error_on_the_smallest_key_and_values_other_than_one():
    # basis vectors 0 = {0, 1}, 1 = {1, 2} over m = 3 coordinates
    from basispath_graph.linalg.checks import first_mismatch

    basis = (np.array([0, 2, 4]), np.array([0, 1, 1, 2]))

    def check(targets, terms):
        return first_mismatch(basis, 3, tuple(np.array(a) for a in targets), tuple(np.array(a) for a in terms))

    # row 0: target {0, 1} = vector 0; row 1: target {0, 1, 1, 2} as values (0:1, 1:2, 2:1) = 0 + 1
    good_targets = ([0, 0, 1, 1, 1], [0, 1, 0, 1, 2], [1, 1, 1, 2, 1])
    assert check(good_targets, ([0, 1, 1], [0, 0, 1], [1, 1, 1])) is None
    # row 1's value 2 on coordinate 1 is not met by vector 0 alone (which has 1 there) ...
    assert check(([1, 1], [0, 1], [1, 2]), ([1], [0], [1])) == 1
    assert check(([0, 0], [0, 1], [2, 1]), ([0], [0], [1])) == 0  # wrong on the first key only
    # ... and an error on the smallest (row, coordinate) key, with a coefficient too large for
    # the multiset comparison (the general sum decides): 100 x vector 0 is not {0, 1}
    assert check(([0, 0], [0, 1], [1, 1]), ([0], [0], [100])) == 0
    assert check(([0, 0], [0, 1], [100, 100]), ([0], [0], [100])) is None


def _witness(r) -> WitnessCertificates:
    d = r.deah
    return WitnessCertificates(r.network, d.bases, d.step3, ChoiceRule(r.network.widths, d.seed))


def test_witness_certificates_of_several_blocks_are_numbered_across_them():
    # expand_blocks numbers the paths of all blocks in order: each row's certificate is that
    # path's, held against the global Expresser.
    r = solve(preset_network("resnet", 6, 3), "deah-complete", 0, repair=False)
    expresser = Expresser(r.network, r.basis)
    paths = r.discarded_paths[:: max(1, len(r.discarded_paths) // 6)]
    blocks = [PathBlock(tuple(l for l, _ in p), np.array([[i for _, i in p]])) for p in paths]
    rows, idx, coef = _witness(r).expand_blocks(blocks)
    for k, p in enumerate(paths):
        got = list(zip(idx[rows == k].tolist(), coef[rows == k].tolist()))
        assert got == expresser.express([l for l, _ in p], [i for _, i in p])


def test_the_witness_peel_refuses_a_skip_weight_left_for_p0():
    from basispath_graph.deah.witness_certificates import WitnessPeelError

    r = solve(preset_network("resnet", 6, 3), "deah-complete", 0, repair=False)
    skip = next(h for h in r.network.pairs if h[1] > h[0] + 1)
    left = (np.array([0]), np.array([r.network.offsets[skip]]), np.array([1]))
    with pytest.raises(WitnessPeelError, match="a skip weight is left after every block was peeled"):
        _witness(r)._telescope(left)


def test_certificates_of_interleaved_subroutine_and_other_rows_come_back_in_row_order():
    # Rows of a B_r (split at their hop, hops ascending) alternate with rows that are not
    # Subroutine rows (the recursion, given in descending order): the groups of rows start in
    # row order but interleave. Every row gets its own certificate, the terms come back sorted
    # by row.
    net = preset_network("resnet", 6, 3)
    r = solve(net, "deah-complete", 0, repair=False)
    split = _split(r)
    expresser = Expresser(net, r.basis)
    rng = np.random.default_rng(5)
    for idx in r.deah.step3.order[1:4]:
        block = r.deah.bases[idx]
        layers = block.layers
        other = np.unique(np.stack([rng.integers(0, net.widths[l], 30) for l in layers], axis=1), axis=0)
        other = other[split.split(layers, other) < 0][::-1][:5]
        own = block.nodes[rng.choice(len(block), len(other), replace=False)]
        own = own[np.argsort(split.split(layers, own), kind="stable")]  # groups start in row order
        assert len(other) >= 2
        nodes = np.empty((2 * len(other), len(layers)), dtype=np.int64)
        nodes[0::2], nodes[1::2] = other, own
        rows, bidx, coef = split.certificates(layers, nodes)
        assert (np.diff(rows) >= 0).all()
        for k in range(len(nodes)):
            mine = list(zip(bidx[rows == k].tolist(), coef[rows == k].tolist()))
            assert mine == expresser.express(layers, nodes[k].tolist())


def test_wrong_row_numbers_fall_back_to_the_search():
    # Row numbers that are not the rows' own (reversed, or past the end of B_r): the guessed hop
    # fails the walk check and the search finds a hop that satisfies the definition.
    net = Network.build([2, 3, 4, 3, 2, 3], [(0, 2), (1, 3), (2, 5), (3, 5)])
    r = solve(net, "deah-complete", 0, repair=False)
    split = _split(r)
    chains = split.chains
    for block in r.deah.bases.values():
        n = len(block)
        for numbers in (np.arange(n)[::-1], np.arange(n) + n):
            at = split.split_subroutine_rows(block.layers, block.nodes, numbers)
            assert (at >= 0).all()
            for nodes, j in zip(block.nodes, at.tolist()):
                walk_in = chains.backward(block.layers[: j + 1], [nodes[j]])[0]
                walk_out = chains.forward(block.layers[j + 1 :], [nodes[j + 1]])[0]
                assert (nodes[: j + 1] == walk_in).all() and (nodes[j + 1 :] == walk_out).all()


def test_narrow_packing_only_where_no_packed_term_can_look_like_an_empty_slot():
    narrow = Packing.for_size((1 << 22) - 2)  # basis indices up to 2**22 - 3, |coef| < 256
    assert (narrow.bits, narrow.dtype) == (9, np.int32)
    table = (np.array([0, 2]), np.array([(1 << 22) - 3, 0]), np.array([255, -255]))
    assert [a.tolist() for a in narrow.merge_rows(narrow.dense(table))] == [[0, 0], [0, (1 << 22) - 3], [-255, 255]]
    # basis index 2**22 - 1 with coefficient 255 packs to the int32 maximum, the empty slot: lost
    lost = Packing(9, np.int32).dense((np.array([0, 1]), np.array([(1 << 22) - 1]), np.array([255])))
    assert Packing(9, np.int32).merge_rows(lost)[0].tolist() == []
    wide = Packing.for_size(1 << 22)  # so 2**22 basis indices need the wide packing
    assert (wide.bits, wide.dtype) == (16, np.int64)
