"""Sparse arrays without a sparse-matrix library: CSR index ranges and term lists.

A *term list* (``Terms``) is three int64 arrays (row, column, value): row ``r`` of a sparse
matrix is the sum of its terms. Certificates are term lists (row = discarded path, column =
basis index, value = coefficient); so are witness vectors (column = witness coordinate). A
*CSR table* is (ptr, column, value) with row ``k`` at ``ptr[k]:ptr[k + 1]``.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "Terms", "Table", "as_table", "combine", "concat_terms", "csr_of_matrix", "empty_terms", "gather", "group_by",
    "AllBut", "BitIds", "CodedValues", "PackedMask", "compact_ids", "compact_values", "grouped_by_value", "narrow_index",
    "narrow_nonzero", "present_ids", "search_index", "take_rows", "where",
]

Terms = tuple[np.ndarray, np.ndarray, np.ndarray]  # (row, column, value)
Table = tuple[np.ndarray, np.ndarray, np.ndarray]  # CSR over keys: (ptr, column, value)


def gather(ptr: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Concatenated index ranges ptr[i]:ptr[i+1] for every i in idx (vectorised).

    >>> gather(np.array([0, 2, 5, 6]), np.array([2, 0])).tolist()
    [5, 0, 1]
    """
    starts = ptr[idx]
    lens = ptr[idx + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    shift = starts - (np.cumsum(lens) - lens)
    return np.arange(total, dtype=np.int64) + np.repeat(shift, lens)


def csr_of_matrix(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ptr, values): the rows of a (rows, width) matrix as CSR arrays, the values a view where
    the matrix is contiguous (a run of paths' weight ids, each row a path)."""
    return np.arange(len(matrix) + 1, dtype=np.int64) * matrix.shape[1], matrix.ravel()


def narrow_index(index: np.ndarray) -> np.ndarray:
    """Non-negative indices as int32 where they fit, else as they are: arrays of one index per
    candidate path (rows kept or dropped, a core's ids) are held for a whole run, and at 8 bytes
    each they were a third of GoogLeNet x0.25's faithful peak (9.3 M candidates). An ``AllBut``
    is as small as it gets already."""
    if isinstance(index, AllBut):
        return index
    return index.astype(np.int32) if len(index) and int(index.max()) < 2**31 else index


class AllBut:
    """The ids 0..n-1 but ``missing`` (sorted, distinct), ascending: an index array held as what
    it lacks. Faithful deah's raw union keeps 97% of the rows of its B_r, its core is nearly all
    of the union, and the repair drops nearly all of the core (whole GoogLeNet: 147 M candidate
    paths, each in three such int32 arrays). Read as such an array is: ``len``, an id, a slice,
    the ids at positions, a mask (``where``), ``search_index``; ``np.asarray`` makes it whole.

    >>> ids = AllBut(8, np.array([1, 2, 6]))
    >>> len(ids), ids[:].tolist(), int(ids[2]), ids[np.array([4, 0])].tolist()
    (5, [0, 3, 4, 5, 7], 4, [7, 0])
    >>> search_index(ids, np.array([0, 3, 6, 8])).tolist()
    [0, 1, 4, 5]
    """

    def __init__(self, n: int, missing: np.ndarray):
        self.n = int(n)
        self.dtype = np.dtype(np.int32 if self.n < 2**31 else np.int64)
        self.missing = np.asarray(missing).astype(self.dtype, copy=False)
        # present ids below each missing one: the k-th present id is k plus the missing ones
        # whose count is <= k
        self._below = self.missing - np.arange(len(self.missing), dtype=self.dtype)

    def __len__(self) -> int:
        return self.n - len(self.missing)

    @property
    def nbytes(self) -> int:
        return self.missing.nbytes + self._below.nbytes

    def at(self, k: np.ndarray) -> np.ndarray:
        """The ids at positions ``k`` (0 <= k < len)."""
        k = np.asarray(k, dtype=self.dtype)
        return k + np.searchsorted(self._below, k, side="right").astype(self.dtype)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.at(np.arange(*index.indices(len(self)), dtype=self.dtype))
        if isinstance(index, (int, np.integer)):
            k = int(index) + (len(self) if index < 0 else 0)
            if not 0 <= k < len(self):
                raise IndexError(index)
            return self.dtype.type(self.at(np.array([k]))[0])
        index = np.asarray(index)
        if index.dtype == bool:
            return where(self, index)
        if len(index) and (int(index.min()) < -len(self) or int(index.max()) >= len(self)):
            raise IndexError(f"index out of range for {len(self)} ids")
        return self.at(np.where(index < 0, index + len(self), index))

    def searchsorted(self, values: np.ndarray, side: str = "left") -> np.ndarray:
        """``np.searchsorted`` of ``values`` among the ids (0 <= values <= n)."""
        values = np.asarray(values, dtype=np.int64)
        if side == "left":  # ids < v: v less the missing ones < v
            return values - np.searchsorted(self.missing, values, side="left")
        return values + 1 - np.searchsorted(self.missing, values, side="right") - (values >= self.n)

    def __array__(self, dtype=None, copy=None):
        whole = np.ones(self.n, dtype=bool)
        whole[self.missing] = False
        out = narrow_nonzero(whole)
        return out if dtype is None else out.astype(dtype)

    def tolist(self) -> list[int]:
        return np.asarray(self).tolist()


def present_ids(mask: np.ndarray) -> "np.ndarray | AllBut":
    """``narrow_nonzero(mask)``, or an ``AllBut`` where the mask is mostly True (then fewer missing
    ids than present ones)."""
    mask = np.asarray(mask)  # (a PackedMask made whole)
    missing = len(mask) - int(np.count_nonzero(mask))
    return AllBut(len(mask), narrow_nonzero(~mask)) if missing < len(mask) // 2 else narrow_nonzero(mask)


class PackedMask:
    """A bool per row held as bits (``np.packbits``): Step 3's B'_r masks, a byte per candidate
    path, were 540 MB of whole Inception-v3's faithful run (540 M candidates), held to its end.
    Read as the bool array is (``np.asarray`` makes it, as numpy's functions and indexing do:
    ``np.flatnonzero(mask)``, ``rows[mask]``); ``mask[rows] = value`` sets rows.

    >>> mask = PackedMask(10)
    >>> mask[[2, 7]] = False
    >>> np.flatnonzero(mask).tolist(), int(mask.sum()), bool(mask[2]), mask.all(), len(mask)
    ([0, 1, 3, 4, 5, 6, 8, 9], 8, False, False, 10)
    >>> mask[6:10].tolist()  # a slice unpacks only its own bytes
    [True, False, True, True]
    """

    def __init__(self, n: int, fill: bool = True):
        self.n = n
        self.bits = np.packbits(np.full(n, fill, dtype=bool))

    @classmethod
    def of(cls, mask: np.ndarray) -> "PackedMask":
        """The bool array ``mask`` held as bits."""
        out = cls(0)
        out.n, out.bits = len(mask), np.packbits(mask)
        return out

    def __len__(self) -> int:
        return self.n

    @property
    def nbytes(self) -> int:
        return self.bits.nbytes

    def __array__(self, dtype=None, copy=None):
        out = np.unpackbits(self.bits, count=self.n).view(bool)
        return out if dtype is None else out.astype(dtype)

    def __getitem__(self, index):
        if isinstance(index, (int, np.integer)):
            k = int(index) + (self.n if index < 0 else 0)
            if not 0 <= k < self.n:
                raise IndexError(index)
            return bool(self.bits[k >> 3] >> (7 - (k & 7)) & 1)
        if isinstance(index, slice) and index.step in (None, 1):
            a, b = index.indices(self.n)[:2]
            if a >= b:
                return np.zeros(0, dtype=bool)
            byte = a >> 3  # only the bytes that hold rows a .. b - 1, the bits before a cut off
            return np.unpackbits(self.bits[byte : (b + 7) >> 3], count=b - 8 * byte).view(bool)[a - 8 * byte :]
        return np.asarray(self)[index]

    def __setitem__(self, index, value) -> None:
        whole = np.asarray(self)
        whole[index] = value
        self.bits = np.packbits(whole)

    def __invert__(self) -> np.ndarray:
        return ~np.asarray(self)

    def sum(self) -> int:
        return int(np.unpackbits(self.bits, count=self.n).sum(dtype=np.int64))

    def all(self) -> bool:
        return self.sum() == self.n


def where(ids: "np.ndarray | AllBut", mask: np.ndarray) -> "np.ndarray | AllBut":
    """``ids[mask]`` (``mask`` a bool per id): an ``AllBut`` where ``ids`` is one and the mask
    keeps most of them (the repair's drops: nearly all of the core), else an array."""
    if not isinstance(ids, AllBut):
        return ids[mask]
    if len(mask) != len(ids):
        raise IndexError(f"mask of {len(mask)} for {len(ids)} ids")
    off = np.flatnonzero(~mask)
    if len(off) < len(ids) // 2:
        return AllBut(ids.n, np.union1d(ids.missing, ids.at(off)))
    return ids.at(np.flatnonzero(mask))


class BitIds:
    """Ascending distinct ids held as a bit per id of their span, with the count of ids before
    each block of ``_BLOCK`` bits to find the k-th: a sorted index array where the ids are dense
    in their span. Step 3's SDVChain calls discard most of the rows of B_to between their first
    and last (Inception-v3 x1/8: 7.8 M discarded rows, 31 MB as int32, 2.4 MB as bits). Read as the
    array is: ``len``, a slice (made a block range at a time), an id; ``np.asarray`` makes it whole.

    >>> ids = BitIds(np.array([3, 4, 9, 5000, 5001]))
    >>> len(ids), ids[1:4].tolist(), int(ids[-1]), np.asarray(ids).tolist()
    (5, [4, 9, 5000], 5001, [3, 4, 9, 5000, 5001])
    """

    _BLOCK = 1 << 12

    def __init__(self, ids: np.ndarray):
        ids = np.asarray(ids, dtype=np.int64)
        self.n = len(ids)
        self.lo = int(ids[0]) if self.n else 0
        rel = ids - self.lo
        span = int(rel[-1]) + 1 if self.n else 0
        mask = np.zeros(span, dtype=bool)
        mask[rel] = True
        self.bits = np.packbits(mask)
        counts = np.bincount(rel // self._BLOCK, minlength=-(-span // self._BLOCK))
        self.before = np.concatenate([[0], np.cumsum(counts)])  # ids before each block

    def __len__(self) -> int:
        return self.n

    @property
    def nbytes(self) -> int:
        return self.bits.nbytes + self.before.nbytes

    def between(self, a: int, b: int) -> np.ndarray:
        """The ids at positions a .. b - 1, int64."""
        if a >= b:
            return np.zeros(0, dtype=np.int64)
        first = int(np.searchsorted(self.before, a, side="right")) - 1
        last = int(np.searchsorted(self.before, b - 1, side="right")) - 1
        step = self._BLOCK // 8
        found = np.flatnonzero(np.unpackbits(self.bits[first * step : (last + 1) * step])) + (self.lo + first * self._BLOCK)
        skip = a - int(self.before[first])
        return found[skip : skip + b - a]

    def __getitem__(self, index):
        if isinstance(index, slice) and index.step in (None, 1):
            return self.between(*index.indices(self.n)[:2])
        if isinstance(index, (int, np.integer)):
            k = int(index) + (self.n if index < 0 else 0)
            if not 0 <= k < self.n:
                raise IndexError(index)
            return self.between(k, k + 1)[0]
        return np.asarray(self)[index]

    def __array__(self, dtype=None, copy=None):
        out = self.between(0, self.n)
        return out if dtype is None else out.astype(dtype)


def compact_ids(ids: np.ndarray) -> "np.ndarray | BitIds":
    """Ascending distinct ids as bits over their span (``BitIds``) where that is smaller than
    ``narrow_index``'s array, else that array."""
    narrow = narrow_index(ids)
    span = int(ids[-1]) - int(ids[0]) + 1 if len(ids) else 0
    as_bits = -(-span // 8) + 8 * (-(-span // BitIds._BLOCK) + 1)  # BitIds(ids).nbytes
    return BitIds(ids) if len(ids) and as_bits < narrow.nbytes else narrow


class CodedValues:
    """Values held as their distinct ones and, per value, a narrow code into them: where few
    distinct values repeat (an SDVChain call's discards name a UCP_j* row each, from few
    groups: Inception-v3 x1/8, 23,606 distinct among 7.8 M). Read as the array is: ``len``, a
    slice or an index (``np.asarray`` makes it whole).

    >>> v = CodedValues(*np.unique(np.array([7, 7, 2, 7, 2]), return_inverse=True))
    >>> len(v), v[1:4].tolist(), int(v[0]), np.asarray(v).tolist()
    (5, [7, 2, 7], 7, [7, 7, 2, 7, 2])
    """

    def __init__(self, distinct: np.ndarray, codes: np.ndarray):  # as np.unique(values, return_inverse=True) gives them
        self.distinct = narrow_index(distinct)
        self.codes = codes.astype(_code_dtype(len(distinct)))

    def __len__(self) -> int:
        return len(self.codes)

    @property
    def nbytes(self) -> int:
        return self.distinct.nbytes + self.codes.nbytes

    def __getitem__(self, index):
        return self.distinct[self.codes[index]]

    def __array__(self, dtype=None, copy=None):
        out = self.distinct[self.codes]
        return out if dtype is None else out.astype(dtype)


def _code_dtype(n: int) -> np.dtype:
    return np.dtype(np.uint8 if n <= 2**8 else np.uint16 if n <= 2**16 else np.int32)


def compact_values(values: np.ndarray) -> "np.ndarray | CodedValues":
    """Non-negative values as ``CodedValues`` where that is smaller than ``narrow_index``'s
    array, else that array."""
    narrow = narrow_index(values)
    if len(values) < 64:
        return narrow
    distinct, codes = np.unique(values, return_inverse=True)
    coded = 4 * len(distinct) + _code_dtype(len(distinct)).itemsize * len(values)
    return CodedValues(distinct, codes) if coded < narrow.nbytes else narrow


_NONZERO_SLICE = 1 << 20


def narrow_nonzero(mask: np.ndarray) -> np.ndarray:
    """``narrow_index(np.flatnonzero(mask))`` made a slice of the mask at a time into its int32
    result: the int64 array of a whole mask over candidate paths was itself the peak (GoogLeNet
    x0.5: 280 MB), and int32 parts joined at the end held the result twice."""
    if len(mask) >= 2**31:
        return np.flatnonzero(mask)
    out = np.empty(int(np.count_nonzero(mask)), dtype=np.int32)
    at = 0
    for a in range(0, len(mask), _NONZERO_SLICE):
        part = np.flatnonzero(mask[a : a + _NONZERO_SLICE])
        out[at : at + len(part)] = part
        out[at : at + len(part)] += a
        at += len(part)
    return out


def search_index(index: np.ndarray, values: np.ndarray, side: str = "left") -> np.ndarray:
    """``np.searchsorted`` in a sorted ``index`` (perhaps narrowed) without widening it: numpy
    would make an int64 copy of an int32 index to meet int64 values."""
    if isinstance(index, AllBut):
        return index.searchsorted(values, side)
    values = np.asarray(values)
    if index.dtype == np.int32 and values.dtype != np.int32:
        if len(values) and int(values.max()) >= 2**31:
            return np.searchsorted(index.astype(np.int64), values, side=side)
        values = values.astype(np.int32)
    return np.searchsorted(index, values, side=side)


def grouped_by_value(values: np.ndarray) -> np.ndarray:
    """Positions of ``values`` (non-negative) grouped by value, ascending within a group: one
    plain sort of (value, position) packed into int64 when both fit 31 bits (a plain sort is
    several times faster than an argsort), else a stable argsort."""
    n = len(values)
    if n < 2**31 and (n == 0 or int(values.max()) < 2**31):
        packed = np.sort((values.astype(np.int64) << 31) | np.arange(n, dtype=np.int64))
        return packed & (2**31 - 1)
    return np.argsort(values, kind="stable")


def group_by(keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(ptr, order): positions of ``keys`` (values 0..n-1) grouped by key, stable."""
    order = grouped_by_value(keys)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=ptr[1:])
    return ptr, order


def empty_terms() -> Terms:
    z = np.zeros(0, dtype=np.int64)
    return z, z, z


def concat_terms(parts: list[Terms]) -> Terms:
    """The terms of all ``parts`` (not merged)."""
    parts = [p for p in parts if len(p[0])]
    if not parts:
        return empty_terms()
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))  # type: ignore[return-value]


def combine(terms: Terms, n_rows: int, size: int, modulus: int | None = None) -> Terms:
    """Merge equal (row, column) terms, drop zero values; sorted by row, then column (columns
    0..size-1). With ``modulus``, values are summed modulo it (values in 0..modulus-1).

    >>> [a.tolist() for a in combine((np.array([1, 0, 1]), np.array([2, 2, 2]), np.array([1, 5, -1])), 2, 3)]
    [[0], [2], [5]]
    """
    rows, idx, coef = terms
    if len(rows) == 0:
        return empty_terms()
    key = rows * size + idx
    packed = _packed_sort(key, coef) if modulus is None else None
    if packed is not None:
        key, coef_sorted = packed
    else:
        order = np.argsort(key)
        key, coef_sorted = key[order], coef[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    if modulus is None:
        total = np.add.reduceat(coef_sorted, starts)
    else:
        total = np.add.reduceat(coef_sorted % modulus, starts) % modulus
    keep = total != 0
    uniq, total = key[starts][keep], total[keep]
    return uniq // size, uniq % size, total


def _packed_sort(key: np.ndarray, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Sort (key, coef) pairs by key with one value sort: small coefficients ride in the low bits
    of the key (a plain sort is several times faster than an argsort). None when they do not fit."""
    lo, hi = int(coef.min()), int(coef.max())
    span = hi - lo + 1
    bits = max(1, (span - 1).bit_length())
    if span > 1 << 16 or int(key.max()) >= 1 << (62 - bits):
        return None
    packed = np.sort((key << bits) | (coef - lo))
    return packed >> bits, (packed & ((1 << bits) - 1)) + lo


def as_table(terms: Terms, n: int) -> Table:
    """Terms sorted by row (``combine`` output) of rows 0..n-1 as a CSR table (ptr, column, value)."""
    rows, idx, coef = terms
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=ptr[1:])
    return ptr, idx, coef


def take_rows(table: Table, keys: np.ndarray, rows: np.ndarray) -> Terms:
    """Rows ``keys`` of a CSR table, as terms of the target rows ``rows``."""
    ptr, idx, coef = table
    take = gather(ptr, keys)
    return np.repeat(rows, ptr[keys + 1] - ptr[keys]), idx[take], coef[take]
