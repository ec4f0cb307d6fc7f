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
