"""The compiled loop of :func:`.greedy_mod_p.greedy_mask` (numba; a module of its own so that
numba is imported only when the loop runs: its import costs about half a second)."""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["reduce_rows"]


@numba.njit(cache=True, nogil=True)
def _push(heap, size, k):
    """Push coordinate ``k`` on the binary max-heap ``heap[:size]``; the new size."""
    i = size
    heap[i] = k
    while i > 0:
        up = (i - 1) // 2
        if heap[up] >= heap[i]:
            break
        heap[up], heap[i] = heap[i], heap[up]
        i = up
    return size + 1


@numba.njit(cache=True, nogil=True)
def _pop(heap, size):
    """Remove the largest coordinate of ``heap[:size]`` (size > 0); (it, the new size)."""
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        big, left = i, 2 * i + 1
        if left < size and heap[left] > heap[big]:
            big = left
        if left + 1 < size and heap[left + 1] > heap[big]:
            big = left + 1
        if big == i:
            return top, size
        heap[big], heap[i] = heap[i], heap[big]
        i = big


@numba.njit(cache=True, nogil=True)
def _inverse(a, p):
    """a**(p - 2) mod p: the inverse of a (0 < a < p, p prime below 2**31)."""
    result, base, e = 1, a % p, p - 2
    while e > 0:
        if e & 1:
            result = result * base % p
        base = base * base % p
        e >>= 1
    return result


@numba.njit(cache=True, nogil=True)
def reduce_rows(ptr, cols, p, row, used, keep, acc, in_heap, heap, start, length, pool_c, pool_v):
    """Add rows ``row``, ``row + 1``, ... of the CSR 0/1 matrix (``ptr``, ``cols``) to the
    echelon modulo ``p``; ``keep[i]``: row i raised the rank.

    The echelon: pivot coordinate e (the highest of its row) holds a row normalised to 1 at e,
    ``pool_c``/``pool_v[start[e] : start[e] + length[e]]`` (``start[e]`` = -1: no pivot),
    ``used`` entries of the pools filled. Reduction eliminates the leading coordinate while it
    has a pivot: what a pivot row adds lies below its coordinate, so each coordinate enters the
    heap at most once. ``acc`` and ``in_heap`` are all zero between rows.

    Returns (next row, used, need): next row < number of rows when the pools have no room for
    that row's residual of ``need`` entries (nothing of it stored; grow them and call again).
    """
    n = len(ptr) - 1
    while row < n:
        size = 0
        for e in range(ptr[row], ptr[row + 1]):
            k = cols[e]
            acc[k] = 1
            in_heap[k] = True
            size = _push(heap, size, k)
        lead = -1
        while size > 0:
            e, size = _pop(heap, size)
            in_heap[e] = False
            f = acc[e]
            if f == 0:
                continue
            s = start[e]
            if s < 0:
                lead = e  # no pivot: the row is independent; its residual is e and the heap
                break
            for j in range(s, s + length[e]):
                k = pool_c[j]
                v = (acc[k] - f * pool_v[j]) % p
                acc[k] = v
                if v != 0 and not in_heap[k]:
                    in_heap[k] = True
                    size = _push(heap, size, k)
        if lead >= 0:
            count = 1
            for i in range(size):
                if acc[heap[i]] != 0:
                    count += 1
            if used + count > len(pool_c):
                acc[lead] = 0
                for i in range(size):
                    acc[heap[i]] = 0
                    in_heap[heap[i]] = False
                return row, used, count
            scale = _inverse(acc[lead], p)
            start[lead] = used
            length[lead] = count
            pool_c[used] = lead
            pool_v[used] = 1
            used += 1
            acc[lead] = 0
            for i in range(size):
                k = heap[i]
                in_heap[k] = False
                if acc[k] != 0:
                    pool_c[used] = k
                    pool_v[used] = acc[k] * scale % p
                    used += 1
                    acc[k] = 0
            keep[row] = True
        row += 1
    return row, used, 0
