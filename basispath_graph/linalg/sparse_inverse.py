"""Inverse of independent sparse rows on pivot coordinates, modulo a prime: peeling first,
then elimination of what does not peel (the witness systems of deah-complete)."""

from __future__ import annotations

import numpy as np

from .elimination import P1, Echelon
from .peeling import peel_entries
from .sparse import Terms, combine, gather, group_by

__all__ = ["DependentRows", "inverse_mod", "inverse_on_pivots"]


class DependentRows(ValueError):
    """The rows given to :func:`inverse_on_pivots` are not independent (modulo p)."""


def inverse_mod(x: np.ndarray, p: int = P1) -> np.ndarray:
    """x^-1 mod p elementwise (Fermat: x^(p-2)), by square and multiply in int64 (p < 2^31).

    >>> inverse_mod(np.array([1, 2, 3]), 7).tolist()
    [1, 4, 5]
    """
    result = np.ones_like(x)
    base = x % p
    e = p - 2
    while e:
        if e & 1:
            result = result * base % p
        base = base * base % p
        e >>= 1
    return result


def _merge_mod(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, width: int, p: int) -> Terms:
    """Sum equal (row, col) entries modulo p and drop zeros; sorted by row, then col."""
    return combine((rows, cols, vals), 0, width, modulus=p)


def _system(vectors: list[dict[int, int]], p: int) -> Echelon:
    system = Echelon(p, recipes=True)
    for i, vec in enumerate(vectors):
        if not system.add_vector(vec):
            raise DependentRows(f"row {i} of the core is dependent on the ones before it")
    return system


def inverse_on_pivots(r: np.ndarray, c: np.ndarray, v: np.ndarray, n: int, width: int, p: int = P1):
    """Rows of W[:, Q]^-1 (mod p) for the independent rows W given as merged entries (row r,
    coordinate c, value v in 0..p-1) and a set Q of n pivot coordinates: returns (ptr over
    coordinates, row, coefficient), empty for coordinates outside Q. For any w in the row span,
    its coefficients are w[Q] . W[:, Q]^-1. Raises :class:`DependentRows` if the rows are not
    independent.

    Rows with a coordinate no other remaining row has are peeled in rounds (``peeling``): they are
    triangular, so their part is forward substitution in arrays, all unit targets at once. The few
    rows left (the core) have no entries on the peeled pivots and are inverted by the exact
    elimination of ``Echelon`` (with recipes).
    """
    peeled = peel_entries(r, c, n, width)
    rounds, pivot_of_row, alive = peeled.by_round(), peeled.pivot_of(n), peeled.core_mask(n)
    round_of_col = np.full(width, -1, dtype=np.int64)
    for k, holders in enumerate(rounds):
        round_of_col[pivot_of_row[holders]] = k
    row_ptr, row_order = group_by(r, n)
    core = np.flatnonzero(alive)
    # Entries of peeled rows by row, for the substitution; the core's exact elimination.
    diag_val = np.zeros(n, dtype=np.int64)
    on_pivot = pivot_of_row[r] == c
    diag_val[r[on_pivot]] = v[on_pivot]
    core_pivots: list[int] = []
    core_inverse: dict[int, dict[int, int]] = {}
    if len(core):
        sel = alive[r]
        vectors: dict[int, dict[int, int]] = {int(i): {} for i in core}
        for ri, ci, vi in zip(r[sel].tolist(), c[sel].tolist(), v[sel].tolist()):
            vectors[ri][ci] = vi
        core_rows = core.tolist()
        vecs = [vectors[i] for i in core_rows]
        core_pivots = sorted(_system(vecs, p).number)
        on_p = set(core_pivots)
        square = _system([{ci: vi for ci, vi in vec.items() if ci in on_p} for vec in vecs], p)
        for q in core_pivots:
            core_inverse[q] = {core_rows[k]: x for k, x in square.coordinates({q: 1}).items()}
    # Forward substitution for every peel pivot's unit target at once: entries (target, coord, value).
    peel_pivots = np.flatnonzero(round_of_col >= 0)
    core_col = np.zeros(width, dtype=bool)
    core_col[core_pivots] = True
    buckets: dict[int, list[Terms]] = {}
    rnd = round_of_col[peel_pivots]
    for k in np.unique(rnd).tolist():
        sel = np.flatnonzero(rnd == k)
        buckets.setdefault(k, []).append((sel, peel_pivots[sel], np.ones(len(sel), dtype=np.int64)))
    out_t, out_row, out_coef = [], [], []
    core_left: list[Terms] = []
    for k, holders in enumerate(rounds):
        parts = buckets.pop(k, [])
        if not parts:
            continue
        t, col, val = _merge_mod(*(np.concatenate([part[j] for part in parts]) for j in range(3)), width, p)
        row_at = np.full(width, -1, dtype=np.int64)
        row_at[pivot_of_row[holders]] = holders
        rows_k = row_at[col]
        coef = val * inverse_mod(diag_val[rows_k], p) % p
        out_t.append(t), out_row.append(rows_k), out_coef.append(coef)
        # residual -= coef x row, on later rounds' pivots and the core's pivots only.
        ent = row_order[gather(row_ptr, rows_k)]
        reps = row_ptr[rows_k + 1] - row_ptr[rows_k]
        tt, cc = np.repeat(t, reps), c[ent]
        vv = (p - np.repeat(coef, reps) * v[ent] % p) % p
        later = round_of_col[cc] > k
        for kk in np.unique(round_of_col[cc[later]]).tolist():
            s = later & (round_of_col[cc] == kk)
            buckets.setdefault(kk, []).append((tt[s], cc[s], vv[s]))
        s = core_col[cc]
        core_left.append((tt[s], cc[s], vv[s]))
    # D^-1 as CSR over the core pivots (position j of core pivot q: core_at[q]).
    core_at = np.full(width, -1, dtype=np.int64)
    core_at[core_pivots] = np.arange(len(core_pivots))
    d_ptr = np.zeros(len(core_pivots) + 1, dtype=np.int64)
    np.cumsum([len(core_inverse[q]) for q in core_pivots], out=d_ptr[1:])
    d_row = np.array([r for q in core_pivots for r in core_inverse[q]], dtype=np.int64)
    d_coef = np.array([x for q in core_pivots for x in core_inverse[q].values()], dtype=np.int64)
    # c_core = (what is left on the core pivots) . D^-1 for the peel pivots' targets ...
    if core_pivots and core_left:
        t, col, val = _merge_mod(*(np.concatenate([part[j] for part in core_left]) for j in range(3)), width, p)
        j = core_at[col]
        take = gather(d_ptr, j)
        reps = d_ptr[j + 1] - d_ptr[j]
        out_t.append(np.repeat(t, reps)), out_row.append(d_row[take]), out_coef.append(np.repeat(val, reps) * d_coef[take] % p)
    # ... and the core pivots' own targets: rows of D^-1.
    n_peel = len(peel_pivots)
    all_pivots = np.concatenate([peel_pivots, np.array(core_pivots, dtype=np.int64)])
    out_t.append(n_peel + np.repeat(np.arange(len(core_pivots), dtype=np.int64), np.diff(d_ptr)))
    out_row.append(d_row), out_coef.append(d_coef)
    if len(all_pivots) != n:
        raise DependentRows(f"{n} rows but {len(all_pivots)} pivot coordinates")
    t, row, coef = _merge_mod(np.concatenate(out_t), np.concatenate(out_row), np.concatenate(out_coef), n, p)
    # Back to rows indexed by coordinate.
    coord = all_pivots[t]
    ptr, order = group_by(coord, width)
    return ptr, row[order], coef[order]
