"""The compiled greedy elimination mod p (linalg/greedy_mod_p.py, its loop in C) keeps exactly the rows that
Python's Echelon keeps, one at a time in order: modulo small primes (where rows independent over
Q are dropped, and pivot rows fill in) and the two big ones, with the echelon's pools grown
from a few entries, and through every caller (rank, exact rank, the repair's greedy choice)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from basispath_graph.linalg import greedy_mod_p
from basispath_graph.linalg.elimination import P1, P2, ModPElimination
from basispath_graph.linalg.greedy_mod_p import greedy_mask
from basispath_graph.verify.rank import IncrementalBasis, exact_rank_of_rows, greedy_choice, rank_of_rows

ROWS = st.lists(st.lists(st.integers(0, 40), min_size=0, max_size=12, unique=True), max_size=60)


def csr(rows, scale=1):
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=ptr[1:])
    return ptr, np.array([w * scale for r in rows for w in r], dtype=np.int64)


def kept_by_echelon(rows, p):
    el = ModPElimination(p)
    return [el.add(r) for r in rows]


@given(ROWS, st.sampled_from([2, 3, 5, 7, 13, P1, P2]), st.sampled_from([1, 7, 1000003]))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])  # set once, same each time
def test_compiled_greedy_keeps_what_the_echelon_keeps(monkeypatch, rows, p, scale):
    # coordinates spread out (scale) are renumbered in order: the highest stays the pivot
    monkeypatch.setattr(greedy_mod_p, "FIRST_POOL_ENTRIES", 1)  # every residual grows the pools
    want = kept_by_echelon([[w * scale for w in r] for r in rows], p)
    assert greedy_mask(*csr(rows, scale), p, compiled=True).tolist() == want
    assert greedy_mask(*csr(rows, scale), p, compiled=False).tolist() == want


def test_dense_rows_fill_in_and_a_prime_dividing_a_minor():
    # 60 rows over 40 coordinates, half of them ones: pivot rows fill in; rank 40 over Q
    rng = np.random.default_rng(5)
    rows = [sorted(rng.choice(40, size=20, replace=False).tolist()) for _ in range(60)]
    for p in (2, 3, P1):
        mask = greedy_mask(*csr(rows), p, compiled=True)
        assert mask.tolist() == kept_by_echelon(rows, p)
    assert int(greedy_mask(*csr(rows), P1, compiled=True).sum()) == 40
    # {0,1}, {1,2}, {0,2}: independent over Q, dependent modulo 2
    tri = [[0, 1], [1, 2], [0, 2]]
    assert greedy_mask(*csr(tri), 2, compiled=True).tolist() == [True, True, False]
    assert greedy_mask(*csr(tri), 3, compiled=True).tolist() == [True, True, True]


def test_the_c_loop_is_built_by_the_install():
    # setup.py builds it optionally; make test's install (a C compiler on every machine of this
    # project) must have built it, or every test above compares Python with itself
    assert greedy_mod_p.COMPILED, "basispath_graph.linalg.greedy_mod_p_ext was not built: see setup.py"


def test_a_prime_too_big_for_64_bit_products_is_refused():
    with pytest.raises(ValueError, match=r"p = 4294967311: a prime below 2\*\*31 is needed"):
        greedy_mask(*csr([[0]]), 4294967311)


@given(ROWS, st.integers(1, 7), st.sampled_from([(2, 3), (3, 2), (P1, P2)]))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_caller_chooses_alike_compiled_or_not(monkeypatch, rows, run, primes):
    runs = [rows[i : i + run] for i in range(0, len(rows), run)]
    made = lambda: (np.array(r, dtype=object) if len({len(x) for x in r}) != 1 else np.array(r) for r in runs)
    inc = IncrementalBasis(None, primes=primes)
    want_greedy = [inc.add(r) for r in rows]
    results = []
    for threshold in (0, 10**9):  # compiled for every input, then never
        monkeypatch.setattr(greedy_mod_p, "COMPILED_ROWS", threshold)
        choice = greedy_choice(made, primes)
        assert [bool(k) for keep in choice for k in keep] == want_greedy
        results.append((rank_of_rows(rows, primes), exact_rank_of_rows(rows, primes[0])))
    assert results[0] == results[1]
