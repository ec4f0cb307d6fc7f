"""The compiled greedy elimination mod p (linalg/greedy_mod_p.py, its loop in C) keeps exactly the rows that
Python's Echelon keeps, one at a time in order: modulo small primes (where rows independent over
Q are dropped, and pivot rows fill in) and the two big ones, with the echelon's pool grown
from a few entries, and through every caller (rank, exact rank, the repair's greedy choice)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from basispath_graph.linalg import greedy_mod_p
from basispath_graph.linalg.elimination import P1, P2, ModPElimination
from basispath_graph.linalg.greedy_mod_p import greedy_mask, greedy_masks
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
    monkeypatch.setattr(greedy_mod_p, "FIRST_POOL_ENTRIES", 1)  # every residual grows the pool
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


@pytest.mark.parametrize("p", [2, P1])
def test_a_pivot_row_of_ones_is_stored_as_its_coordinates_and_a_reduced_one_with_its_values(p):
    # the pool holds a pivot row without its own entry (1 at the pivot), values only where one is
    # not 1: a row stored as it came costs an item an entry, a repair's echelon is mostly such rows
    if not greedy_mod_p.COMPILED:
        pytest.skip("the C loop was not built")
    greedy = greedy_mod_p.GreedyModP(6, p, compiled=True)
    used = []  # the pool's items after each row, or False where the row was dropped
    rows = [[0, 1, 5], [2, 5], [0, 1, 2], [0], [0, 1], [3, 4]]
    for row in rows:  # one at a time, to see what each one stored
        kept = bool(greedy.feed(*csr([row]))[0])
        used.append(greedy._used if kept else False)
    # {0,1,5}: pivot 5, stored as it came (0, 1). {2,5} - {0,1,5}: pivot 2 with -1 at 1 and 0
    # (2 coordinates and 2 values; modulo 2 -1 is 1, so 2 items). {0,1,2} minus that: 2 at 1 and
    # 0, normalised 1 and 1 (1 item). {0}: no entry but its pivot. {0,1} reduces to 0: dropped.
    assert used == ([2, 6, 7, 7, False, 8] if p == P1 else [2, 4, False, 4, 5, 6])
    assert [u is not False for u in used] == kept_by_echelon(rows, p)


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
    for compiled in (True, False):  # compiled for every input, then never
        monkeypatch.setattr(greedy_mod_p, "COMPILED_ROWS", 0 if compiled else 10**9)
        monkeypatch.setattr(greedy_mod_p, "COMPILED", compiled)
        choice = greedy_choice(made, primes)
        assert [bool(k) for keep in choice for k in keep] == want_greedy
        results.append((rank_of_rows(rows, primes), exact_rank_of_rows(rows, primes[0])))
    assert results[0] == results[1]


@given(ROWS, st.integers(1, 7), st.sampled_from([2, 3, 13, P1]), st.booleans(), st.booleans())
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_rows_fed_a_run_at_a_time_are_chosen_as_one_matrix(monkeypatch, rows, run, p, compiled, told):
    # the echelon is kept between runs (its pool grown while runs come), so cutting the rows
    # into runs made one at a time changes nothing; held: the coordinates, told or found
    monkeypatch.setattr(greedy_mod_p, "FIRST_POOL_ENTRIES", 1)
    monkeypatch.setattr(greedy_mod_p, "COMPILED", compiled)
    runs = lambda: (csr(rows[i : i + run], 1000003) for i in range(0, len(rows), run))
    held = np.zeros(41 * 1000003, dtype=bool)
    held[[w * 1000003 for r in rows for w in r]] = True
    masks = greedy_masks(runs, p, held if told else None)
    assert [len(k) for k in masks] == [len(rows[i : i + run]) for i in range(0, len(rows), run)]
    assert [bool(k) for keep in masks for k in keep] == kept_by_echelon([[w * 1000003 for w in r] for r in rows], p)


def test_a_core_streamed_from_its_blocks_is_chosen_as_its_listed_rows(monkeypatch):
    # the certifier's core (peel_by_holders) is made from the blocks for each prime's pass: the
    # rank and the choice it records for the repair are those of the same rows listed
    from basispath_graph.linalg import peeling
    from basispath_graph.verify.rank import CoreChoice

    from .test_streamed_verify import _Block as Block  # rows of weight ids, read as a block

    rng = np.random.default_rng(11)
    # 3 blocks of 4-weight rows over 30 weights: more rows than weights, so a core is left
    blocks = [Block(np.array([rng.choice(30, size=4, replace=False) for _ in range(25)])) for _ in range(3)]
    monkeypatch.setattr(peeling, "_ENTRIES", 8)  # runs of 2 rows
    peeled, core = peeling.peel_by_holders(blocks, lambda b: b.rows, 30)
    listed = core.materialise()
    assert len(listed) == len(core) > 0 and peeled + len(core) == 75
    streamed, whole = CoreChoice(), CoreChoice()
    rank = rank_of_rows(core, (2, P1), record=streamed)
    assert rank == rank_of_rows(listed, (2, P1), record=whole)
    assert peeled + rank == exact_rank_of_rows([r for b in blocks for r in b.rows.tolist()])  # the union's rank over Q
    assert streamed.ids.tolist() == whole.ids.tolist() and streamed.masks.keys() == whole.masks.keys()
    assert all(streamed.mask(p).tolist() == whole.mask(p).tolist() for p in whole.masks)
    assert exact_rank_of_rows(core) == exact_rank_of_rows(listed) == rank
