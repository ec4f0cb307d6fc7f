"""Exact rank of path sets: peeling plus sparse Gaussian elimination over GF(p).

A path is a 0/1 vector over the m weights, given here as the list (or int64 array) of its
weight ids. Two exact tools are combined, both from ``linalg``:

* **Peeling** (``linalg.peeling``): a path holding a weight that no other remaining path holds
  is independent of the rest; removed in batched rounds, triangular in peel order.
* **Elimination** (``linalg.elimination``): what does not peel (the *core*) is reduced row by
  row modulo a prime, pivoting on the highest weight id, like the reference checker. rank over
  GF(p) <= rank over Q, so "rank mod p == row count" proves independence over Q (exact).

A shortfall modulo a prime is not a proof of dependence over Q (the prime may divide a minor of
independent rows). :func:`exact_rank_of_rows` (used by :func:`rank_of`, and by ``certify`` when
the shortfall decides its verdict) makes it one: each row rejected modulo ``P1 = 2**31 - 1`` is
written over the kept rows (coefficients mod P1 lifted to fractions by rational reconstruction)
and the integer combination is re-added exactly; if a lift fails, the core is eliminated over Q.
:func:`rank_of_rows` and :class:`IncrementalBasis` (the repair) stay modular: a shortfall seen
modulo ``P1`` and again modulo ``P2 = 2**31 - 19`` is taken as dependence, which is evidence, not
proof (a repaired basis is still certified by ``certify``, whose "independent" is a proof).

This module holds what is specific to paths: their CSR form (``flatten_blocks``), rank of path
blocks, and the incremental basis of the repair step.
"""

from __future__ import annotations

from math import gcd
from typing import Callable, Iterable, Sequence

import numpy as np

from ..linalg.elimination import P1, P2, PRIMES, Echelon, ModPElimination, machine_row, rational_reconstruction
from ..linalg.greedy_mod_p import greedy_mask, greedy_masks, greedy_runs
from ..linalg.peeling import CoreRows, PeelResult, StreamedCore, peel
from ..linalg.sparse import PackedMask, csr_of_matrix
from ..network import Network, PathBlock

__all__ = [
    "P1",
    "P2",
    "PRIMES",
    "ModPElimination",
    "IncrementalBasis",
    "greedy_choice",
    "CoreChoice",
    "PeelResult",
    "flatten_blocks",
    "peel",
    "peel_blocks",
    "rank_of_rows",
    "exact_rank_of_rows",
    "rows_of",
    "rank_of",
    "independent_mask",
]


class CoreChoice:
    """What :func:`rank_of_rows` chose on a union's core, kept for the repair of the same union
    (``deah.repair.exact_repair``): the core's vector ids and, per prime tried, which rows
    raised the rank in order, which is :func:`greedy_choice`'s pass modulo that prime. A raw
    union short of rank was eliminated twice by the certifier and twice more by the repair's
    greedy choice, the same rows in the same order (SqueezeNet 1.1 x0.5: 34 s and 32 s). And
    what the repair reads of the peel that left the core (``peeled``: how many vectors peeled,
    ``held``: the core's coordinates), which it peeled again: the core's ids twice, and 2.5 of
    GoogLeNet x0.25's 3.3 s of repair. The peel's order and pivots, 16 bytes a peeled vector,
    are not kept: the repair peels again for them only where it must re-admit."""

    def __init__(self) -> None:
        self.ids: np.ndarray | None = None
        self.total = -1  # vectors in the union (``verify.certify.verdict_of``)
        self.peeled = -1  # of them, how many peeled (the same)
        self.held: np.ndarray | None = None  # which coordinates the core's vectors hold (bool)
        self.masks: dict[int, PackedMask] = {}  # per prime, its choice as bits (``mask``)

    def keep(self, p: int, mask: np.ndarray) -> None:
        """Keep prime ``p``'s choice, as bits: held from the certification through the repair,
        a byte a core row per prime was 2 of faithful deah's ~26 bytes a candidate path."""
        self.masks[p] = PackedMask.of(mask)

    def mask(self, p: int) -> np.ndarray:
        """Prime ``p``'s choice, a bool per core row."""
        return np.asarray(self.masks[p])

    def peel_for(self, total: int) -> tuple[int, np.ndarray, np.ndarray] | None:
        """(peeled, core ids, held) of the union certified, if it had ``total`` vectors and its
        core was kept with its ids; else None."""
        if self.total != total or self.ids is None or self.held is None or self.peeled < 0:
            return None
        return self.peeled, self.ids, self.held

    def runs_for(self, core: np.ndarray, total: int, lengths: Sequence[int]) -> dict[int, list[np.ndarray]]:
        """Each prime's mask cut into runs of ``lengths`` rows (``greedy_choice``'s ``known``), if
        it was chosen on the core ``core`` (vector ids) of a union of ``total`` vectors; else none."""
        same = self.ids is not None and self.total == total and len(self.ids) == len(core) and (self.ids is core or np.array_equal(self.ids, core))
        if not same or sum(lengths) != len(core):
            return {}
        bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return {p: PackedRuns(mask, bounds) for p, mask in self.masks.items()}


class PackedRuns:
    """Runs of a mask kept as bits (``CoreChoice``), each unpacked when reached: the repair reads
    them a run at a time, and the whole core's masks unpacked were a byte a core row per prime."""

    def __init__(self, mask: PackedMask, bounds: np.ndarray):
        self.mask, self.bounds = mask, bounds

    def __len__(self) -> int:
        return len(self.bounds) - 1

    def __iter__(self):
        for a, b in zip(self.bounds[:-1].tolist(), self.bounds[1:].tolist()):
            yield self.mask[a:b]


def rank_of_rows(rows: Sequence[Sequence[int]], primes: Sequence[int] = PRIMES, record: CoreChoice | None = None) -> int:
    """Rank of 0/1 rows (lists of weight ids) modulo ``primes``: a lower bound on the rank over Q.

    Full rank modulo any prime proves full rank over Q. On a shortfall the next prime is
    tried and the largest rank seen is returned (each is a lower bound on the rank over Q;
    equal to it unless every prime divides a minor: :func:`exact_rank_of_rows` is exact).
    ``record``: where to keep each prime's choice (``CoreChoice``; ``rows`` a ``CoreRows`` with
    its ids).
    """
    best = 0
    if record is not None:  # (a core whose ids are not its rows' own, e.g. zero rows left out, is not kept)
        ids = getattr(rows, "ids", None)
        record.ids, record.masks = (ids if ids is not None and len(ids) == len(rows) else None), {}
        record.held = getattr(rows, "held", None)
    if isinstance(rows, StreamedCore):  # made a run at a time for each prime, never held together
        def mask_of(p: int) -> np.ndarray:
            out, at = np.empty(len(rows), dtype=bool), 0
            for keep in greedy_runs(rows.runs, p, rows.held):  # written in place: the runs' masks joined held it twice
                out[at : at + len(keep)] = keep
                at += len(keep)
            if at != len(out):
                raise AssertionError(f"the core's runs held {at} rows, not {len(out)}")
            return out
    else:
        ptr, wids = csr_of_rows(rows)

        def mask_of(p: int) -> np.ndarray:
            return greedy_mask(ptr, wids, p)
    for p in primes:
        mask = mask_of(p)
        if record is not None and record.ids is not None:
            record.keep(p, mask)
        best = max(best, int(mask.sum()))
        if best == len(rows):
            break
    return best


def csr_of_rows(rows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """(ptr, weight ids) of rows given as sequences of weight ids; a ``CoreRows``' own arrays."""
    if isinstance(rows, StreamedCore):
        rows = rows.materialise()
    if isinstance(rows, CoreRows):
        return rows.ptr, rows.wids
    lists = [list(r) for r in rows]
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in lists], out=ptr[1:])
    return ptr, np.fromiter((w for r in lists for w in r), dtype=np.int64, count=int(ptr[-1]))


def exact_rank_of_rows(rows: Sequence[Sequence[int]], p: int = P1) -> int:
    """Rank over Q of 0/1 rows (lists of weight ids), exactly.

    Rows are eliminated modulo ``p`` in order; when all are kept, full rank mod p proves full
    rank over Q. Otherwise every row rejected modulo p is written over the kept rows (which are
    independent over Q): its coefficients mod p are lifted to fractions (rational
    reconstruction) and the integer combination, scaled by the common denominator, is re-added
    exactly; when each one adds up, each rejected row is in the span over Q of the kept rows and
    the rank mod p is the rank over Q. If a lift fails or does not add up, the rows are
    eliminated over Q (``fractions.Fraction``). The extra work is done only on a shortfall.

    >>> exact_rank_of_rows([[0, 1], [1, 2], [0, 2]], p=2)  # dependent mod 2, not over Q
    3
    >>> exact_rank_of_rows([[0, 1], [1, 2], [0, 2], [0, 1, 2]], p=2)  # 2 (0,1,2) = the sum
    3
    """
    rows = rows.materialise() if isinstance(rows, StreamedCore) else rows
    rows = rows if isinstance(rows, CoreRows) else [list(r) for r in rows]  # read twice, by index
    rank = int(greedy_mask(*csr_of_rows(rows), p).sum())
    if rank == len(rows):
        return rank
    ech = Echelon(modulus=p, recipes=True)
    kept: list[int] = []  # echelon index -> row index
    rejected: list[int] = []
    for i, row in enumerate(rows):
        if ech.add(row):
            kept.append(i)
        else:
            rejected.append(i)
    if all(_lifts_into_span(rows, kept, ech.coordinates(dict.fromkeys(rows[i], 1)), rows[i], p) for i in rejected):
        return len(kept)
    exact = Echelon(modulus=None)
    for row in rows:
        exact.add(row)
    return exact.rank


def _lifts_into_span(rows: list[list[int]], kept: list[int], coords: dict, target: list[int], p: int) -> bool:
    """Do the coefficients ``coords`` (mod p, over the kept rows) lift to fractions whose
    combination of the kept rows equals ``target`` exactly (checked over the integers)?"""
    lifted = {k: rational_reconstruction(int(c), p) for k, c in coords.items()}
    if any(f is None for f in lifted.values()):
        return False
    den = 1
    for f in lifted.values():
        den = den * f.denominator // gcd(den, f.denominator)
    acc: dict[int, int] = dict.fromkeys(target, -den)
    for k, f in lifted.items():
        c = f.numerator * (den // f.denominator)
        for w in rows[kept[k]]:
            acc[w] = acc.get(w, 0) + c
    return not any(acc.values())


# --------------------------------------------------------------------------------------
# Incremental basis (used by repair steps)
# --------------------------------------------------------------------------------------


class IncrementalBasis:
    """Grow an independent set of paths one row at a time, exactly.

    ``add(row)`` keeps the row iff it is independent of the rows kept so far. A row that
    reduces to zero modulo the working prime is re-checked modulo the next prime (that
    elimination is built lazily by replaying the kept rows) before being rejected; if the
    second prime separates it, that prime becomes the working one. A kept row is proved
    independent; a rejected one is dependent modulo both primes, which is evidence, not proof,
    of dependence over Q (the set is still independent, possibly not maximal).

    Rows are weight-id sequences (list, tuple or int64 array), each id at most once
    (``add``), or integer vectors {weight id: entry} (``add_vector``).
    """

    def __init__(self, network: Network | None = None, primes: Sequence[int] = PRIMES) -> None:
        self.m = network.m if network is not None else None
        self._elims = [ModPElimination(p) for p in primes]
        self._fed = [0] * len(primes)  # how many kept rows each elimination has seen
        self._full = [True] * len(primes)  # elimination has full rank on the rows it has seen
        self._work = 0  # index of the working prime
        # Kept rows as vectors, in order: (weight ids, entries) arrays, replayed only when a
        # second prime is needed (``_catch_up``), 16 bytes an entry instead of a dict's ~100.
        self.rows: list[tuple] = []

    def __len__(self) -> int:
        return len(self.rows)

    @property
    def rank(self) -> int:
        return len(self.rows)

    def _row(self, row) -> list[int]:
        r = row.tolist() if isinstance(row, np.ndarray) else [int(x) for x in row]
        if len(set(r)) != len(r):
            raise ValueError(f"row {r} repeats a weight id (rows are 0/1 vectors)")
        if self.m is not None and r and (min(r) < 0 or max(r) >= self.m):
            raise ValueError(f"row {r} has a weight id outside 0..{self.m - 1}")
        return r

    def _catch_up(self, k: int) -> None:
        el = self._elims[k]
        while self._fed[k] < len(self.rows):
            if not el.add_vector(dict(zip(*self.rows[self._fed[k]]))):
                self._full[k] = False
            self._fed[k] += 1

    def reduce(self, row) -> dict[int, int]:
        """Residual of ``row`` modulo the working prime (``{}``: in the span of the kept rows)."""
        k = self._work
        self._catch_up(k)
        return self._elims[k].reduce(self._row(row))

    def _separating_prime(self, v: dict[int, int], skip: int = -1) -> tuple[int, dict[int, int]] | None:
        """A prime (index, residual) modulo which ``v`` is independent of the kept rows."""
        for k in range(len(self._elims)):
            if k == skip or not self._full[k]:
                continue  # a prime that lost rank on the kept rows proves nothing
            self._catch_up(k)
            if not self._full[k]:
                continue
            r = self._elims[k].reduce_vector(dict(v))
            if r:
                return k, r
        return None

    def add(self, row) -> bool:
        """Keep ``row`` if it is independent of the kept rows; return whether it was kept."""
        return self.add_vector(dict.fromkeys(self._row(row), 1))

    def add_vector(self, v: dict[int, int]) -> bool:
        """``add`` of an integer vector {weight id: entry} (a path reduced modulo others: the
        repair's paths modulo the peeled ones); not consumed."""
        k = self._work
        self._catch_up(k)
        r = self._elims[k].reduce_vector(dict(v))
        if not r:
            # Zero modulo the working prime: confirm with the others before rejecting.
            hit = self._separating_prime(v, skip=k)
            if hit is None:
                return False
            self._full[k] = False  # the old working prime just lost rank
            k, r = hit
            self._work = k
        self._elims[k].insert_residual(r)
        self._fed[k] += 1
        self.rows.append(_packed(v))
        return True


def _packed(v: dict[int, int]) -> tuple:
    """(weight ids, entries) of ``v`` as machine-integer arrays (``machine_row``), or as tuples
    when an entry passes 64 bits (a path modulo peeled ones has integer entries that can grow)."""
    try:
        return machine_row(v, v.values())
    except OverflowError:
        return tuple(v), tuple(v.values())


def greedy_choice(runs: Callable[[], Iterable], primes: Sequence[int] = PRIMES, known: dict[int, list[np.ndarray]] | None = None,
                  held: np.ndarray | None = None) -> list[np.ndarray]:
    """Which rows ``IncrementalBasis.add`` keeps when fed the rows of ``runs()`` in order (each
    item a run of weight-id rows: a (rows, hops) array), one mask per run, holding one prime's
    elimination at a time instead of two: greedy modulo the first prime, then, if it dropped any,
    the same greedy modulo the second, replayed from ``runs()`` once the first is freed. When the
    two choose alike, IncrementalBasis chooses the same (a kept row raised the rank modulo the
    working prime; a dropped one is zero modulo both, the second of full rank on the kept rows);
    otherwise IncrementalBasis itself is run. (Whole ResNet-50's repair held both eliminations of
    its union's core at once: 6.3 GB.) Each pass reads ``runs()`` a run at a time
    (``greedy_masks``), never holding the rows together. ``known``: a prime's pass already made
    over the same rows in the same order (``CoreChoice``: the certifier's), one mask per run;
    ``held``: which weight ids the rows hold (bool), when known (else one more pass finds them)."""
    def greedy(p: int) -> list[np.ndarray]:
        if known and p in known:
            return known[p]
        return greedy_masks(lambda: (csr_of_run(run) for run in runs()), p, held)

    first = greedy(primes[0])
    if len(primes) < 2 or all(keep.all() for keep in first):
        return first
    second = greedy(primes[1])
    if all(np.array_equal(a, b) for a, b in zip(first, second)):
        return first
    basis = IncrementalBasis(None, primes)
    return [np.fromiter((basis.add(row) for row in np.asarray(run).tolist()), dtype=bool, count=len(run)) for run in runs()]


def csr_of_run(run) -> tuple[np.ndarray, np.ndarray]:
    """(ptr, weight ids) of a run of (rows, hops) weight ids, or of rows of any lengths."""
    run = np.asarray(run)
    if run.dtype == object or run.ndim != 2:  # rows of different lengths
        return csr_of_rows(run)
    ptr, wids = csr_of_matrix(run)
    return ptr, wids if run.size else np.zeros(0, dtype=np.int64)  # ([[]] reads as floats)


# --------------------------------------------------------------------------------------
# Peeling
# --------------------------------------------------------------------------------------


def flatten_blocks(network: Network, blocks: Iterable[PathBlock]) -> tuple[np.ndarray, np.ndarray]:
    """Weight ids of all paths of ``blocks`` (concatenated in order) as CSR arrays.

    Returns ``(ptr, wids)``: path i holds ``wids[ptr[i]:ptr[i + 1]]``. Paths must be valid.
    """
    lens, parts = [], []
    for b in blocks:
        if len(b) == 0:
            continue  # an empty block may carry any layer tuple; it holds no path
        w = network.weight_ids(b)
        parts.append(w.ravel())
        lens.append(np.full(len(b), w.shape[1], dtype=np.int64))
    if not parts:
        return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ptr = np.zeros(sum(len(x) for x in lens) + 1, dtype=np.int64)
    np.cumsum(np.concatenate(lens), out=ptr[1:])
    return ptr, np.concatenate(parts).astype(np.int64, copy=False)


def compact_csr(blocks: list, weight_ids, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``flatten_blocks`` (``weight_ids(block)``: a layered or a general network's) made a chunk
    of paths at a time into int32 weight ids where m allows: no block's (paths, hops) matrix is
    held whole (ResNet-18's faithful core basis, 34 M entries: 137 MB, not 274 MB plus a copy)."""
    hops = [weight_ids(b.take(slice(0, 1))).shape[1] if len(b) else 0 for b in blocks]
    lens = np.concatenate([np.full(len(b), h, dtype=np.int64) for b, h in zip(blocks, hops)]) if blocks else np.zeros(0, dtype=np.int64)
    ptr = np.zeros(len(lens) + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    wids = np.empty(int(ptr[-1]), dtype=np.int32 if m < 2**31 else np.int64)
    at = 0
    for b in blocks:
        for start in range(0, len(b), CSR_ROWS):
            w = weight_ids(b.take(slice(start, start + CSR_ROWS))).ravel()
            wids[at : at + len(w)] = w
            at += len(w)
    return ptr, wids


CSR_ROWS = 1 << 17  # paths turned into weight ids at a time (compact_csr)


def peel_blocks(network: Network, blocks: Iterable[PathBlock]) -> PeelResult:
    """:func:`peel` on the concatenated paths of ``blocks``."""
    ptr, wids = flatten_blocks(network, blocks)
    return peel(ptr, wids, network.m)


def rows_of(ptr: np.ndarray, wids: np.ndarray, idx: np.ndarray) -> list[list[int]]:
    """Rows ``idx`` of a CSR (``flatten_blocks``) as lists of weight ids."""
    return [wids[ptr[i] : ptr[i + 1]].tolist() for i in idx.tolist()]


def rank_of(network: Network, blocks: Iterable[PathBlock]) -> int:
    """Rank over Q of the paths in ``blocks``, exactly: peeled count + the core's
    :func:`exact_rank_of_rows`.

    Paths must be valid (see :func:`basispath_graph.verify.certify.find_invalid`).
    """
    ptr, wids = flatten_blocks(network, blocks)
    pr = peel(ptr, wids, network.m)
    return pr.n_peeled + exact_rank_of_rows(rows_of(ptr, wids, pr.core))


def independent_mask(network: Network, blocks: Iterable[PathBlock]) -> np.ndarray:
    """Greedy pass in the given order: ``mask[i]`` iff path i is independent of the kept
    paths before it (global index over the concatenated blocks).

    Peeled paths are always kept: a path with a private weight is outside the span of any
    set of other paths, and removing it never changes whether another path lies in the span
    of its predecessors. So only the core runs through :class:`IncrementalBasis`.
    """
    ptr, wids = flatten_blocks(network, blocks)
    n = len(ptr) - 1
    pr = peel(ptr, wids, network.m)
    mask = np.ones(n, dtype=bool)
    inc = IncrementalBasis(network)
    for i, row in zip(pr.core.tolist(), rows_of(ptr, wids, pr.core)):
        mask[i] = inc.add(row)
    return mask
