"""Property tests for basispath_graph.verify against the brute-force oracle (tests/oracle.py)."""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path as FsPath

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(__file__))
from oracle import Span, count_paths, oracle_for, skeleton_basis  # noqa: E402

from basispath_graph.network import Network, PathBlock  # noqa: E402
from basispath_graph.verify import (  # noqa: E402
    P1,
    P2,
    DependentBasisError,
    Expresser,
    IncrementalBasis,
    InvalidPathError,
    NonIntegralError,
    NotInSpanError,
    certify,
    flatten_blocks,
    format_path,
    independent_mask,
    parse_path,
    peel_blocks,
    rank_of,
    rank_of_rows,
    exact_rank_of_rows,
)

MAX_PATHS = 90
MAX_M = 70
SETTINGS = settings(max_examples=int(os.environ.get("VERIFY_EXAMPLES", "40")), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def networks(draw) -> Network:
    L = draw(st.integers(1, 5))
    widths = draw(st.lists(st.integers(1, 4), min_size=L + 1, max_size=L + 1))
    cand = [(a, b) for a in range(L + 1) for b in range(a + 2, L + 1)]
    skips = draw(st.lists(st.sampled_from(cand), unique=True)) if cand else []
    net = Network.build(widths, skips)
    # Keep the oracle cheap: shrink the widest layer until the network is small.
    while count_paths(net.widths, net.pairs) > MAX_PATHS or net.m > MAX_M:
        w = list(net.widths)
        w[w.index(max(w))] -= 1
        net = Network.build(w, skips)
    return net


def oracle(net: Network):
    return oracle_for(net.widths, net.pairs)


def blocks_of(paths) -> list[PathBlock]:
    """Blocks in path order: consecutive paths with the same layers share a block."""
    out: list[PathBlock] = []
    run: list = []
    for p in paths:
        if run and tuple(l for l, _ in run[0]) != tuple(l for l, _ in p):
            out.append(_block(run))
            run = []
        run.append(p)
    if run:
        out.append(_block(run))
    return out


def _block(run) -> PathBlock:
    layers = tuple(l for l, _ in run[0])
    return PathBlock(layers, np.array([[i for _, i in p] for p in run], dtype=np.int64))


def text(p) -> str:
    return format_path([l for l, _ in p], [i for _, i in p])


def greedy_basis(net: Network, rng: random.Random):
    """A maximal independent subset of all paths, chosen by the oracle in random order."""
    o = oracle(net)
    paths = list(o.paths)
    rng.shuffle(paths)
    return [p for p, keep in zip(paths, o.greedy(paths)) if keep]


def dense_sum(o, basis, coefs) -> list[int]:
    acc = [0] * o.m
    for b, c in coefs:
        for e, x in enumerate(o.vec(basis[b])):
            acc[e] += c * x
    return acc


# ---------------------------------------------------------------------------------------


@SETTINGS
@given(networks(), st.randoms(use_true_random=False))
def test_rank_of_all_paths_is_m_minus_H(net, rng):
    o = oracle(net)
    assert o.rank(o.paths) == net.m - net.H  # rank of all paths = m - H, by brute force
    assert rank_of(net, blocks_of(o.paths)) == net.basis_size
    paths = list(o.paths)
    rng.shuffle(paths)
    assert independent_mask(net, blocks_of(paths)).tolist() == o.greedy(paths)


@SETTINGS
@given(networks(), st.randoms(use_true_random=False))
def test_greedy_basis_is_certified(net, rng):
    basis = greedy_basis(net, rng)
    v = certify(net, blocks_of(basis))
    assert (v.certified, v.defect, v.size, v.expected, v.rank) == (True, None, len(basis), net.basis_size, len(basis))


@SETTINGS
@given(networks(), st.randoms(use_true_random=False))
def test_removing_a_path_gives_size_defect(net, rng):
    basis = greedy_basis(net, rng)
    n = len(basis)
    del basis[rng.randrange(n)]
    v = certify(net, blocks_of(basis))
    assert not v.certified
    assert v.defect == f"size {n - 1} != m - H = {n}"
    assert v.rank == n - 1


@SETTINGS
@given(networks(), st.randoms(use_true_random=False))
def test_duplicate_is_named(net, rng):
    basis = greedy_basis(net, rng)
    i = rng.randrange(len(basis))
    j = rng.randrange(len(basis) + 1)
    dup = basis[i]
    basis.insert(j, dup)
    first, second = sorted(k for k, p in enumerate(basis) if p == dup)
    v = certify(net, blocks_of(basis))
    assert not v.certified
    assert v.defect == f"path {second} ({text(dup)}) duplicates path {first}"


@SETTINGS
@given(networks(), st.randoms(use_true_random=False))
def test_swap_gives_exact_verdict(net, rng):
    o = oracle(net)
    basis = greedy_basis(net, rng)
    outside = [p for p in o.paths if p not in set(basis)]
    if not outside:
        return  # every path is in the basis (e.g. L = 1)
    del basis[rng.randrange(len(basis))]
    basis.insert(rng.randrange(len(basis) + 1), rng.choice(outside))
    n = len(basis)
    r = o.rank(basis)
    v = certify(net, blocks_of(basis))
    assert v.rank == r
    if r == n:
        assert (v.certified, v.defect) == (True, None)
    else:
        assert (v.certified, v.defect) == (False, f"dependent: rank {r} < {n}")


@SETTINGS
@given(networks(), st.randoms(use_true_random=False), st.data())
def test_invalid_paths_exact_messages(net, rng, data):
    L, w = net.L, net.widths
    basis = greedy_basis(net, rng)
    good = basis[rng.randrange(len(basis))]
    bad_cases = []
    # neuron index out of range
    k = rng.randrange(len(good))
    l = good[k][0]
    p = good[:k] + ((l, w[l]),) + good[k + 1 :]
    bad_cases.append((p, f"neuron index {w[l]} out of range at layer {l} (width {w[l]})"))
    # layer out of range
    bad_cases.append((good + ((L + 1, 0),), f"layer {L + 1} out of range 0..{L}"))
    # does not end at L / does not start at 0
    if len(good) >= 3:
        bad_cases.append((good[:-1], f"ends at layer {good[-2][0]}, not L = {L}"))
        bad_cases.append((good[1:], f"starts at layer {good[1][0]}, not 0"))
        q = (good[0], good[2], good[1]) + good[3:]
        bad_cases.append((q, f"layers not strictly ascending ({good[2][0]} then {good[1][0]})"))
    # unconnected hop
    missing = [(a, b) for a in range(L + 1) for b in range(a + 2, L + 1) if (a, b) not in net.pairs]
    if missing:
        a, b = rng.choice(missing)
        q = tuple((x, 0) for x in range(a + 1)) + tuple((x, 0) for x in range(b, L + 1))
        bad_cases.append((q, f"hop {a}->{b} is not a connected layer pair"))
    bad, msg = data.draw(st.sampled_from(bad_cases))
    pos = rng.randrange(len(basis) + 1)
    paths = basis[:pos] + [bad] + basis[pos:]
    # a second bad path later must not be the one reported
    paths.append(good + ((L + 1, 0),))
    v = certify(net, blocks_of(paths))
    assert (v.certified, v.rank) == (False, None)
    assert v.defect == f"path {pos} ({text(bad)}): {msg}"


@SETTINGS
@given(networks(), st.randoms(use_true_random=False))
def test_express_every_non_basis_path(net, rng):
    o = oracle(net)
    basis = greedy_basis(net, rng)
    ex = Expresser(net, blocks_of(basis))
    index = {p: k for k, p in enumerate(basis)}
    for q in o.paths:
        layers, idx = [l for l, _ in q], [i for _, i in q]
        if q in index:
            assert ex.express(layers, idx) == [(index[q], 1)]
            continue
        try:
            coefs = ex.express(layers, idx)
        except NonIntegralError:
            sol = o.solve(basis, q)  # only acceptable if the rational solution really is fractional
            assert sol is not None and any(c.denominator != 1 for c in sol)
            continue
        assert all(isinstance(c, int) and c != 0 for _, c in coefs)
        assert dense_sum(o, basis, coefs) == o.vec(q)


@SETTINGS
@given(networks(), st.randoms(use_true_random=False))
def test_express_errors(net, rng):
    o = oracle(net)
    basis = greedy_basis(net, rng)
    dropped = basis.pop(rng.randrange(len(basis)))
    ex = Expresser(net, blocks_of(basis))
    with pytest.raises(NotInSpanError, match="not in the span"):
        ex.express([l for l, _ in dropped], [i for _, i in dropped])
    with pytest.raises(InvalidPathError, match="out of range"):
        ex.express([l for l, _ in dropped], [net.widths[l] for l, _ in dropped])
    outside = [p for p in o.paths if p not in set(basis)]
    extra = rng.choice(outside)
    if o.rank(basis + [extra]) == len(basis) + 1:
        return  # only the dropped path was outside the span
    with pytest.raises(DependentBasisError, match="dependent"):
        Expresser(net, blocks_of(basis + [extra]))


@SETTINGS
@given(networks(), st.randoms(use_true_random=False), st.data())
def test_incremental_basis_matches_oracle(net, rng, data):
    o = oracle(net)
    seq = data.draw(st.lists(st.sampled_from(o.paths), min_size=1, max_size=60))
    (ptr, wids) = flatten_blocks(net, [_block([p]) for p in seq])
    rows = [wids[ptr[k] : ptr[k + 1]] for k in range(len(seq))]
    inc, span = IncrementalBasis(net), Span(o.m)
    for p, row in zip(seq, rows):
        vec = o.vec(p)
        inside = span.contains(vec)
        assert (inc.reduce(row) == {}) == inside
        assert inc.add(row) == span.add(vec)
    assert inc.rank == span.rank == rank_of_rows([r.tolist() for r in rows])


def test_second_prime_confirms_shortfall():
    # {0,1}, {1,2}, {0,2} sum to zero mod 2 but are independent over Q (det = 2).
    rows = [[0, 1], [1, 2], [0, 2]]
    assert rank_of_rows(rows, primes=(2,)) == 2
    assert rank_of_rows(rows, primes=(2, 3)) == 3
    inc = IncrementalBasis(None, primes=(2, 3))
    assert [inc.add(r) for r in rows] == [True, True, True]
    assert inc.add([0, 1, 2]) is False  # 2 * (0,1,2) = sum of the three rows
    assert inc.add([3]) is True
    with pytest.raises(ValueError, match="repeats"):
        inc.add([4, 4])


@given(st.lists(st.lists(st.integers(0, 7), min_size=1, max_size=3, unique=True), max_size=24), st.integers(1, 6),
       st.sampled_from([(2, 3), (3, 2), (2, 5), (P1, P2)]))
@settings(max_examples=200, deadline=None)
def test_greedy_choice_keeps_what_incremental_basis_keeps(rows, run, primes):
    """verify.rank.greedy_choice (the repair's greedy over its union's core, one prime's
    elimination held at a time) keeps exactly the rows IncrementalBasis.add keeps, run by run,
    with small primes too: where one prime drops a row independent over Q ({0,1}, {1,2}, {0,2}
    modulo 2), IncrementalBasis is run instead."""
    from basispath_graph.verify.rank import greedy_choice

    inc = IncrementalBasis(None, primes=primes)
    want = [inc.add(r) for r in rows]
    runs = [rows[i : i + run] for i in range(0, len(rows), run)]
    got = greedy_choice(lambda: (np.array(r, dtype=object) if len({len(x) for x in r}) > 1 else np.array(r) for r in runs), primes)
    assert [bool(k) for keep in got for k in keep] == want and [len(k) for k in got] == [len(r) for r in runs]


def test_greedy_choice_falls_back_where_the_primes_disagree():
    # modulo 2 the third row is dropped, modulo 3 kept: IncrementalBasis keeps it (the second
    # prime separates it), and so does greedy_choice
    from basispath_graph.verify.rank import greedy_choice

    rows = np.array([[0, 1], [1, 2], [0, 2]])
    assert [k.tolist() for k in greedy_choice(lambda: [rows], (2, 3))] == [[True, True, True]]
    assert [k.tolist() for k in greedy_choice(lambda: [rows], (2,))] == [[True, True, False]]


def _rank_over_q(rows):
    from basispath_graph.linalg import Echelon

    e = Echelon(modulus=None)
    for r in rows:
        e.add(r)
    return e.rank


@pytest.mark.parametrize("p", [2, 3, 5, 7, 13, 2**31 - 1])
@pytest.mark.parametrize("seed", range(25))
def test_exact_rank_is_the_rank_over_q_even_where_the_prime_loses_rank(p, seed):
    # Small primes lose rank on rows independent over Q: the lift (or its fallback, exact
    # elimination) must still give the rank over Q; the modular rank is only a lower bound.
    rng = random.Random(seed)
    rows = [sorted(rng.sample(range(8), rng.randrange(1, 6))) for _ in range(rng.randrange(1, 12))]
    exact = _rank_over_q(rows)
    assert exact_rank_of_rows(rows, p=p) == exact
    assert rank_of_rows(rows, primes=(p,)) <= exact


def test_exact_rank_falls_back_when_a_coefficient_does_not_lift():
    # Independent over Q (det divisible by 5): modulo 5 the last row depends on the others with
    # a coefficient 2, which has no fraction a/b with |a|, b <= sqrt(5/2) = 1: no lift, so the
    # rank must come from elimination over Q, not from the modular rank.
    rows = [[0, 2, 3, 5], [0, 1, 3, 5], [0, 1, 2], [1, 2, 3, 4], [0, 1, 2, 4, 5], [0, 3]]
    assert _rank_over_q(rows) == 6 and rank_of_rows(rows, primes=(5,)) == 5
    assert exact_rank_of_rows(rows, p=5) == 6


def test_exact_rank_proves_a_dependence_by_lifting_not_by_fallback(monkeypatch):
    # 2 (0,1,2) = (0,1) + (1,2) + (0,2): modulo P1 the coefficient 1/2 lifts, so no exact
    # elimination over Q is needed (it is made to fail here), and the rank is exact.
    from basispath_graph.linalg import elimination

    real = elimination.Echelon.__init__

    def no_rationals(self, modulus=elimination.P1, recipes=False):
        assert modulus is not None, "fell back to elimination over Q"
        real(self, modulus, recipes)

    monkeypatch.setattr(elimination.Echelon, "__init__", no_rationals)
    assert exact_rank_of_rows([[0, 1], [1, 2], [0, 2], [0, 1, 2], [3]]) == 4
    # integer coefficients (denominator 1), and a kept row reaching past the target's support
    assert exact_rank_of_rows([[0, 1], [1], [0]]) == 2


@SETTINGS
@given(networks(), st.randoms(use_true_random=False))
def test_peel_order_is_triangular(net, rng):
    o = oracle(net)
    paths = list(o.paths)
    rng.shuffle(paths)
    subset = paths[: rng.randrange(1, len(paths) + 1)]
    pr = peel_blocks(net, blocks_of(subset))
    ptr, wids = flatten_blocks(net, blocks_of(subset))
    held = [set(wids[ptr[k] : ptr[k + 1]].tolist()) for k in range(len(subset))]
    assert sorted(pr.order.tolist() + pr.core.tolist()) == list(range(len(subset)))
    later = [held[i] for i in pr.core.tolist()]
    for i, e in reversed(list(zip(pr.order.tolist(), pr.private.tolist()))):
        assert e in held[i] and all(e not in h for h in later)
        later.append(held[i])
    # the core has no weight held by exactly one core path
    cnt: dict[int, int] = {}
    for i in pr.core.tolist():
        for e in held[i]:
            cnt[e] = cnt.get(e, 0) + 1
    assert 1 not in cnt.values()


@SETTINGS
@given(networks())
def test_skeleton_basis_certified_and_peels(net):
    basis = skeleton_basis(net.widths, net.pairs)
    o = oracle(net)
    assert o.rank(basis) == len(basis) == net.basis_size
    v = certify(net, blocks_of(basis))
    assert v.certified, v.defect


@given(
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)), min_size=1, max_size=8)
)
@settings(max_examples=50, deadline=None)
def test_format_parse_roundtrip(pairs):
    layers, idx = [l for l, _ in pairs], [i for _, i in pairs]
    s = format_path(layers, idx)
    assert parse_path(s) == (tuple(layers), tuple(idx))
    assert parse_path(" " + s.replace(",", " , ") + " ") == (tuple(layers), tuple(idx))


@pytest.mark.parametrize("bad", ["", "  ", "0:1,", "a:b", "0-1", "0:1:2", "-1:0", "0:1;2:0", "0:"])
def test_parse_rejects(bad):
    with pytest.raises(ValueError, match="path text|bad item"):
        parse_path(bad)


def test_format_path_example():
    assert format_path((0, 2, 4), (1, 0, 2)) == "0:1,2:0,4:2"
    assert parse_path("0:1,2:0,4:2") == ((0, 2, 4), (1, 0, 2))


EXAMPLES = FsPath("/work/shared/examples")


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="shared examples not present")
@pytest.mark.parametrize("name", ["mlp", "fig1b", "resnet-style", "densenet-style"])
def test_public_examples_skeleton(name):
    f = EXAMPLES / f"{name}.json"
    if not f.exists():
        pytest.skip(f"{f} missing")
    spec = json.loads(f.read_text())
    net = Network.build(spec["widths"], spec.get("skips", []))
    basis = skeleton_basis(net.widths, net.pairs)
    v = certify(net, blocks_of(basis))
    assert v.certified, v.defect
    ex = Expresser(net, blocks_of(basis))
    # A few non-basis paths: two skeleton paths with one neuron changed.
    rng = random.Random(0)
    for _ in range(50):
        p = list(rng.choice(basis))
        k = rng.randrange(len(p))
        p[k] = (p[k][0], rng.randrange(net.widths[p[k][0]]))
        coefs = ex.express([l for l, _ in p], [i for _, i in p])
        acc: dict[int, int] = {}
        ptr, wids = flatten_blocks(net, blocks_of(basis))
        for b, c in coefs:
            for e in wids[ptr[b] : ptr[b + 1]].tolist():
                acc[e] = acc.get(e, 0) + c
        q = flatten_blocks(net, [_block([tuple(p)])])[1].tolist()
        assert {e: c for e, c in acc.items() if c} == dict.fromkeys(q, 1)


def test_a_dependent_verdict_is_exact_even_when_both_primes_lose_rank(monkeypatch):
    # Swap a discarded path q into a basis: for a basis path b in q's certificate the set is
    # still a basis, for one outside it the set is dependent (every path of it peels: the case of
    # a full exact rank over a core is test_a_full_exact_rank_certifies_even_when_the_modular_rank_falls_short).
    # Pretend P1 and P2 both divide a minor (modular rank 0): certify must still be exact.
    import importlib

    from basispath_graph.solver import solve

    certify_module = importlib.import_module("basispath_graph.verify.certify")  # not the function

    net = Network.build([3, 4, 2, 4, 3, 2], [(0, 2), (1, 3), (3, 5)])
    r = solve(net, "deah-complete")
    paths = [PathBlock(b.layers, b.nodes[k : k + 1]) for b in r.basis for k in range(len(b))]
    layers, nodes = zip(*r.discarded_paths[0])
    q = PathBlock(tuple(layers), np.array([nodes]))
    used = {b for b, _ in Expresser(net, r.basis).express(layers, nodes)}
    inside, outside = min(used), min(set(range(len(paths))) - used)
    swap_in = paths[:inside] + paths[inside + 1 :] + [q]
    swap_out = paths[:outside] + paths[outside + 1 :] + [q]
    for fake in (False, True):
        if fake:
            monkeypatch.setattr(certify_module, "rank_of_rows", lambda rows, **_: 0)
        assert certify(net, swap_in).certified
        v = certify(net, swap_out)
        assert v.defect == f"dependent: rank {len(paths) - 1} < {len(paths)}" and v.rank == rank_of(net, swap_out)


def test_incremental_basis_refuses_a_weight_id_past_m():
    net = Network.build([2, 2], [])
    inc = IncrementalBasis(net)
    with pytest.raises(ValueError, match="outside 0..3"):
        inc.add([0, 4])
    with pytest.raises(ValueError, match="outside 0..3"):
        inc.add([-1, 2])


def test_a_prime_that_loses_rank_on_the_kept_rows_is_not_used_to_keep_a_row():
    # Modulo 3 the three rows are independent (det 2) and kept; (0,1,2) = half their sum is in
    # their span over Q. Modulo 2 the kept rows lose rank (their sum is 0), so prime 2 must not
    # be trusted to declare (0,1,2) independent (modulo 2 it is outside their span).
    inc = IncrementalBasis(None, primes=(3, 2))
    assert [inc.add(r) for r in ([0, 1], [1, 2], [0, 2])] == [True, True, True]
    assert inc.add([0, 1, 2]) is False


def test_a_repeated_layer_is_named_as_not_ascending():
    net = Network.build([2, 2, 2], [])
    v = certify(net, [PathBlock((0, 1, 1, 2), np.array([[0, 0, 1, 0]]))])
    assert v.defect == "path 0 (0:0,1:0,1:1,2:0): layers not strictly ascending (1 then 1)"


def test_first_mismatch_rejects_wrong_sums_that_look_right_as_multisets():
    # basis vectors 0 = {0, 1}, 1 = {0}, 2 = {1} over m = 3 coordinates
    from basispath_graph.linalg.checks import first_mismatch

    basis = (np.array([0, 2, 3, 4]), np.array([0, 1, 0, 1]))

    def check(targets, terms):
        as_arrays = [tuple(np.array(a, dtype=np.int64) for a in x) for x in (targets, terms)]
        return first_mismatch(basis, 3, *as_arrays)

    target = ([0, 0], [0, 1], [1, 1])  # row 0: {0, 1}
    assert check(target, ([0], [0], [1])) is None and check(target, ([0, 0], [1, 2], [1, 1])) is None
    # a coefficient 1 is positive: 2 x vector 0 + vector 1 + vector 2 is {0: 3, 1: 3}, not {0, 1}
    assert check(target, ([0, 0, 0], [0, 1, 2], [2, 1, 1])) == 0
    # targets given with explicit zero values are the zero vector, not {0, 1}
    assert check(([0, 0], [0, 1], [0, 0]), ([0], [0], [1])) == 0
    # one target entry and no terms at all; nothing at all
    assert check(([2], [1], [1]), ([], [], [])) == 2
    assert check(([], [], []), ([], [], [])) is None


def test_echelon_coordinates_back_substitute_and_need_recipes():
    from basispath_graph.linalg.elimination import Echelon

    # vectors 0 = e0 + e1 and 1 = e1; the second echelon row is e1 - (e0 + e1), so back
    # substitution must give e0 = vector 0 - vector 1 (over Q, and modulo 7: -1 = 6)
    for p, want in ((None, {0: 1, 1: -1}), (7, {0: 1, 1: 6})):
        e = Echelon(modulus=p, recipes=True)
        assert e.add([0, 1]) and e.add([1])
        assert e.coordinates({0: 1}) == want
    with pytest.raises(ValueError, match="coordinates need an Echelon built with recipes=True"):
        Echelon().coordinates({0: 1})


def test_rational_reconstruction_accepts_numerator_and_denominator_at_the_bound():
    from fractions import Fraction

    from basispath_graph.linalg.elimination import rational_reconstruction

    # p = 7919: the bound is isqrt(7919 // 2) = 62, so 62 and 1/62 still lift
    assert rational_reconstruction(62, 7919) == Fraction(62)
    assert rational_reconstruction(pow(62, -1, 7919), 7919) == Fraction(1, 62)
    assert rational_reconstruction(-62 * pow(61, -1, 7919) % 7919, 7919) == Fraction(-62, 61)


@pytest.mark.parametrize("m", [5, 100], ids=["dense-rounds", "sparse-rounds"])
def test_peel_peels_a_chain_completely_in_dense_and_in_sparse_rounds(m):
    # {0,1}, {1,2}, {2,3}, {3,4}: round 1 peels the ends (private 0 and 4), round 2 the middle
    # two (1 and 3 are private once the ends are gone). m = 100 makes the rounds small enough
    # for the per-round sort instead of the dense count; both must give the same peel.
    from basispath_graph.linalg.peeling import peel

    pr = peel(np.array([0, 2, 4, 6, 8]), np.array([0, 1, 1, 2, 2, 3, 3, 4]), m)
    assert (pr.order.tolist(), pr.private.tolist(), pr.core.tolist(), pr.rounds) == ([0, 3, 1, 2], [0, 4, 1, 3], [], 2)


@pytest.mark.parametrize("wids", [[0, -1], [4, 0]], ids=["negative", "m"])
def test_peel_refuses_a_weight_id_outside_0_to_m_minus_1(wids):
    from basispath_graph.linalg.peeling import peel

    with pytest.raises(ValueError, match=r"weight ids must lie in 0\.\.3"):
        peel(np.array([0, 2]), np.array(wids), 4)


def test_grouped_by_value_groups_values_too_wide_to_pack():
    from basispath_graph.linalg.sparse import grouped_by_value

    # 2**33 does not fit 31 bits beside the position: the stable argsort groups them
    assert grouped_by_value(np.array([2**33, 1, 2**33, 0])).tolist() == [3, 1, 0, 2]
    assert grouped_by_value(np.array([3, 1, 3, 0])).tolist() == [3, 1, 0, 2]  # the packed sort


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), max_size=300), st.integers(1, 64))
def test_narrow_nonzero_is_flatnonzero_as_int32_made_a_slice_at_a_time(bits, piece):
    import basispath_graph.linalg.sparse as sparse

    mask = np.array(bits, dtype=bool)
    old = sparse._NONZERO_SLICE
    sparse._NONZERO_SLICE = piece  # slices that cut the mask anywhere
    try:
        got = sparse.narrow_nonzero(mask)
    finally:
        sparse._NONZERO_SLICE = old
    assert got.dtype == np.int32 and got.tolist() == np.flatnonzero(mask).tolist()


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(0, 3 * 4096 + 5), min_size=1, max_size=400), st.integers(0, 10**6),
       st.lists(st.integers(0, 40), min_size=1, max_size=300), st.data())
def test_ids_held_as_bits_and_values_as_codes_read_as_the_array(chosen, offset, repeated, data):
    """Step 3's discards as ``compact_ids`` (``BitIds`` over their span: blocks of 4,096 bits,
    slices across them) and their UCP_j* rows as ``compact_values`` (``CodedValues``) read as
    the arrays they replace: length, slices, an id, whole; each form chosen only where smaller."""
    from basispath_graph.linalg.sparse import BitIds, CodedValues, compact_ids, compact_values, narrow_index

    want = np.array(sorted(chosen), dtype=np.int64) + offset
    n = len(want)
    for ids in (BitIds(want), compact_ids(want)):
        assert len(ids) == n and np.asarray(ids).tolist() == want.tolist()
        a, b = data.draw(st.integers(0, n)), data.draw(st.integers(0, n))
        assert np.asarray(ids[a:b]).tolist() == want[a:b].tolist() and np.asarray(ids[a:]).tolist() == want[a:].tolist()
        k = data.draw(st.integers(-n, n - 1))
        assert int(ids[k]) == int(want[k])
    assert isinstance(compact_ids(want), BitIds) == (BitIds(want).nbytes < narrow_index(want).nbytes)
    values = np.array(repeated, dtype=np.int64) * 1000 + offset
    coded = compact_values(values)
    assert isinstance(coded, CodedValues) == (len(values) >= 64 and 4 * len(set(repeated)) + len(values) < 4 * len(values))
    a, b = data.draw(st.integers(0, len(values))), data.draw(st.integers(0, len(values)))
    assert np.asarray(coded).tolist() == values.tolist() and np.asarray(coded[a:b]).tolist() == values[a:b].tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), max_size=70), st.data())
def test_a_mask_held_as_bits_reads_and_writes_as_the_bool_array(bits, data):
    """``PackedMask`` (Step 3's B'_r, the repair's kept rows, the certifier's choice per prime)
    reads as the bool array it holds: whole, a row, slices cut anywhere inside a byte (the
    repair's runs), a sum; and ``mask[rows] = value`` is the array's assignment."""
    from basispath_graph.linalg.sparse import PackedMask

    want = np.array(bits, dtype=bool)
    n = len(want)
    mask = PackedMask.of(want)
    assert len(mask) == n and np.asarray(mask).tolist() == want.tolist() and mask.sum() == int(want.sum())
    a, b = data.draw(st.integers(0, n)), data.draw(st.integers(0, n))
    assert mask[a:b].dtype == bool and mask[a:b].tolist() == want[a:b].tolist() and mask[a:].tolist() == want[a:].tolist()
    if n:
        k = data.draw(st.integers(-n, n - 1))
        assert mask[k] == bool(want[k])
        rows = data.draw(st.lists(st.integers(0, n - 1), max_size=10))
        mask[rows] = False
        want[rows] = False
        assert np.asarray(mask).tolist() == want.tolist() and mask.all() == bool(want.all())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=200), st.data())
def test_ids_held_as_those_missing_read_as_the_array(bits, data):
    """An index array held as the ids it lacks (``AllBut``: faithful deah's kept rows, its core,
    its drops) reads as the array: an id, slices, ids at positions in any order, a mask
    (``where``, itself an ``AllBut`` when it keeps most), search_index on both sides, whole."""
    from basispath_graph.linalg.sparse import AllBut, narrow_nonzero, present_ids, search_index, where

    mask = np.array(bits, dtype=bool)
    want = np.flatnonzero(mask)
    ids = AllBut(len(mask), np.flatnonzero(~mask))
    assert len(ids) == len(want) and ids.dtype == np.int32
    assert np.asarray(ids).tolist() == want.tolist() == ids.tolist() and np.asarray(ids).dtype == np.int32
    n = len(want)
    if n:
        k = data.draw(st.integers(-n, n - 1))
        assert int(ids[k]) == int(want[k])
        at = np.array(data.draw(st.lists(st.integers(-n, n - 1), max_size=20)), dtype=np.int64)
        assert ids[at].tolist() == want[at].tolist()
    a, b = data.draw(st.integers(0, n)), data.draw(st.integers(0, n))
    assert ids[a:b].tolist() == want[a:b].tolist() and ids[:].tolist() == want.tolist()
    values = np.array(data.draw(st.lists(st.integers(0, len(mask)), max_size=20)), dtype=np.int64)
    for side in ("left", "right"):
        assert search_index(ids, values, side).tolist() == np.searchsorted(want, values, side).tolist()
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    got = where(ids, keep)
    assert isinstance(got, AllBut) == (np.count_nonzero(~keep) < n // 2)
    assert np.asarray(got).tolist() == want[keep].tolist() and where(want, keep).tolist() == want[keep].tolist()
    # present_ids: an AllBut where fewer are missing, else the ids themselves
    made = present_ids(mask)
    assert isinstance(made, AllBut) == (np.count_nonzero(~mask) < len(mask) // 2)
    assert np.asarray(made).tolist() == want.tolist() == narrow_nonzero(mask).tolist()
    with pytest.raises(IndexError):
        ids[n]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**31 - 1), max_size=40), st.lists(st.integers(0, 2**32), max_size=10), st.sampled_from(["left", "right"]))
def test_search_index_is_searchsorted_without_widening_the_index(index, values, side):
    from basispath_graph.linalg.sparse import narrow_index, search_index

    index = narrow_index(np.sort(np.array(index, dtype=np.int64)))
    values = np.array(values, dtype=np.int64)  # int64, some past int32 (then the index is widened)
    assert search_index(index, values, side).tolist() == np.searchsorted(index.astype(np.int64), values, side).tolist()


def test_describe_weight_names_the_neuron_pair_and_the_expresser_its_size():
    from basispath_graph.verify import describe_weight

    net = Network.build([2, 3, 2], [])  # weights 0..5: 0:i->1:j (i * 3 + j), 6..11: 1:i->2:j
    assert [describe_weight(net, w) for w in (0, 5, 6, 11)] == ["0:0->1:0", "0:1->1:2", "1:0->2:0", "1:2->2:1"]
    with pytest.raises(ValueError, match=r"weight id 12 out of range 0\.\.11"):
        describe_weight(net, 12)
    basis = skeleton_basis(net.widths, net.pairs)
    assert Expresser(net, blocks_of(basis)).size == len(basis) == net.basis_size


def test_a_verdict_cannot_be_changed_after_certify():
    import dataclasses

    net = Network.build([2, 3, 2], [])
    v = certify(net, blocks_of(skeleton_basis(net.widths, net.pairs)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.certified = False
    assert v.certified and hash(v) == hash(dataclasses.replace(v))


def test_the_earliest_duplicate_is_named_across_layer_sequences():
    # paths 0..5: (0,1,2) x2, (0,2) x2, (0,1,2) x2; path 3 repeats path 2 (route 0,2) and path 5
    # repeats path 0 (route 0,1,2, seen first): the earliest repeat, path 3, is named.
    net = Network.build([2, 2, 2], [(0, 2)])
    blocks = [
        PathBlock((0, 1, 2), np.array([[0, 0, 0], [1, 1, 1]])),
        PathBlock((0, 2), np.array([[0, 0], [0, 0]])),
        PathBlock((0, 1, 2), np.array([[0, 1, 0], [0, 0, 0]])),
    ]
    assert certify(net, blocks).defect == "path 3 (0:0,2:0) duplicates path 2"


def test_incremental_basis_works_modulo_its_first_prime_until_that_prime_fails():
    inc = IncrementalBasis(None, primes=(2, 3))
    assert inc.add([0, 1]) and inc.add([1, 2])
    assert inc.reduce([0, 2]) == {}  # modulo 2, (0,2) = (0,1) + (1,2): the working prime is 2
    assert inc.add([0, 2])  # modulo 3 it is independent (det 2): kept, 3 takes over
    assert inc.reduce([0, 2]) == {} and inc.rank == 3
    one = IncrementalBasis(None, primes=(5,))  # a single prime is enough
    assert [one.add(r) for r in ([0, 1], [1, 0], [1])] == [True, False, True]


def test_a_full_exact_rank_certifies_even_when_the_modular_rank_falls_short(monkeypatch):
    # Nothing peeled and both primes pretending to lose rank (modular rank 0): the exact rank
    # of the rows decides, and it is full, so the set is certified.
    import importlib

    certify_module = importlib.import_module("basispath_graph.verify.certify")  # not the function
    net = Network.build([2, 3, 2, 2], [(0, 2)])
    blocks = blocks_of(skeleton_basis(net.widths, net.pairs))
    n = sum(len(b) for b in blocks)
    nothing_peeled = lambda blocks, weight_ids, m: (0, [row for b in blocks for row in weight_ids(b).tolist()])  # noqa: E731
    monkeypatch.setattr(certify_module, "peel_by_holders", nothing_peeled)
    monkeypatch.setattr(certify_module, "rank_of_rows", lambda rows, **_: 0)
    v = certify(net, blocks)
    assert (v.certified, v.defect, v.rank) == (True, None, n)


def test_a_non_integer_coefficient_is_named_with_its_basis_path():
    # Six of the ten coefficients of q in this basis are halves; the error names the one met
    # first in the core's back substitution (highest echelon index first), path 8.
    net = Network.build([3, 1, 1, 2, 2], [(1, 3), (2, 4)])
    basis = [
        ((0, 0), (1, 0), (3, 0), (4, 0)), ((0, 2), (1, 0), (3, 0), (4, 1)), ((0, 0), (1, 0), (3, 1), (4, 0)),
        ((0, 2), (1, 0), (2, 0), (4, 0)), ((0, 0), (1, 0), (2, 0), (3, 1), (4, 0)),
        ((0, 2), (1, 0), (2, 0), (3, 0), (4, 0)), ((0, 0), (1, 0), (3, 1), (4, 1)),
        ((0, 1), (1, 0), (2, 0), (3, 0), (4, 1)), ((0, 1), (1, 0), (2, 0), (3, 1), (4, 0)),
        ((0, 1), (1, 0), (2, 0), (4, 1)),
    ]
    sol = oracle(net).solve(basis, ((0, 0), (1, 0), (2, 0), (3, 0), (4, 0)))
    assert [k for k, c in enumerate(sol) if c.denominator != 1] == [0, 1, 4, 5, 7, 8]
    with pytest.raises(NonIntegralError) as err:
        Expresser(net, blocks_of(basis)).express([0, 1, 2, 3, 4], [0, 0, 0, 0, 0])
    assert str(err.value) == (
        "path 0:0,1:0,2:0,3:0,4:0: coefficient -1/2 on basis path 8 (0:1,1:0,2:0,3:1,4:0) is not an integer"
    )


@given(st.lists(st.lists(st.integers(0, 7), min_size=1, max_size=3, unique=True), max_size=24), st.integers(1, 6),
       st.sampled_from([(2, 3), (3, 2), (2, 5), (P1, P2)]))
@settings(max_examples=200, deadline=None)
def test_the_certifier_s_choice_is_the_greedy_choice_s_pass(rows, run, primes):
    """rank_of_rows keeps, per prime it tries (rank.CoreChoice), which rows raised the rank: the
    greedy choice's pass modulo that prime, so the repair reuses it and chooses the same."""
    from basispath_graph.linalg.peeling import CoreRows
    from basispath_graph.verify.rank import CoreChoice, greedy_choice

    ptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)
    core = CoreRows(ptr, np.array([w for r in rows for w in r], dtype=np.int64), np.arange(len(rows), dtype=np.int64))
    record = CoreChoice()
    rank = rank_of_rows(core, primes, record=record)
    record.total = len(rows)  # the union's size, as verify.certify.verdict_of sets it (here all core)
    # the second prime is tried only where the first fell short (it may then reach full rank:
    # {0,6,3}, {6,0,4}, {3,4} are dependent modulo 2, not modulo 3)
    assert set(record.masks) == ({primes[0]} if record.mask(primes[0]).all() else set(primes))
    assert all(record.mask(p).dtype == bool and len(record.mask(p)) == len(rows) for p in record.masks)
    assert rank == max(int(record.mask(p).sum()) for p in record.masks)
    runs = [rows[i : i + run] for i in range(0, len(rows), run)]
    made = lambda: (np.array(r, dtype=object) if len({len(x) for x in r}) > 1 else np.array(r) for r in runs)  # noqa: E731
    known = record.runs_for(np.arange(len(rows)), len(rows), [len(r) for r in runs])
    assert set(known) == set(record.masks)
    for p, masks in known.items():
        assert [k.tolist() for k in greedy_choice(made, (p,))] == [k.tolist() for k in masks]
    assert [k.tolist() for k in greedy_choice(made, primes, known=known)] == [k.tolist() for k in greedy_choice(made, primes)]
    assert record.runs_for(np.arange(len(rows)), len(rows) + 1, [len(r) for r in runs]) == {}  # another union: not reused


@pytest.mark.parametrize("family, depth, width", [("densenet", 6, 4), ("resnet", 8, 4)])
def test_the_repair_reuses_the_raw_certification_s_choice(family, depth, width, monkeypatch):
    """Faithful deah's repair (deah.repair.exact_repair) given the raw certification's choice on
    the same union makes the same repairs without eliminating the core again."""
    from basispath_graph import solver
    from basispath_graph.deah.engine import run_deah
    from basispath_graph.presets import preset_network
    from basispath_graph.verify import rank
    from basispath_graph.verify.rank import CoreChoice

    net = preset_network(family, depth, width)
    deah = run_deah(net, 0, complete=False)
    choice = CoreChoice()
    assert not solver._certify_raw(net, deah, [b for _, b in deah.kept_blocks()], choice).certified
    assert choice.masks  # the union is short of rank: both primes' passes kept
    plain = solver._repair(net, deah, 0)
    made = []
    monkeypatch.setattr(rank, "ModPElimination", lambda p: made.append(p) or rank.Echelon(p))
    reused = solver._repair(net, deah, 0, choice)
    assert made == []  # no greedy pass made again
    assert [list(r) for r in (reused[1], reused[3])] == [list(r) for r in (plain[1], plain[3])] and len(reused[3]) > 0
    assert {k: v.tolist() for k, v in reused[0].items()} == {k: v.tolist() for k, v in plain[0].items()}
