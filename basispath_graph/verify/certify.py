"""Certify a basis path set: valid paths, distinct, |B| = m - H, independent (exact).

Checks run in that order and the first failure is reported as a one-line message. Paths
are numbered by their global index in the concatenation of the blocks (0-based) and printed
as ``layer:index`` pairs, e.g. ``0:1,2:0,4:2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import Iterable, Sequence

import numpy as np

from ..errors import BadInput
from ..network import Network, PathBlock
from ..linalg.peeling import peel_by_holders
from ..rowkeys import fold_keys
from .rank import exact_rank_of_rows, rank_of_rows

__all__ = [
    "Verdict",
    "certify",
    "verdict_of",
    "find_invalid",
    "block_first_problem",
    "find_duplicate",
    "format_path",
    "parse_path",
    "read_path",
    "describe_weight",
]


def format_path(layers: Sequence[int], indices: Sequence[int]) -> str:
    """``format_path((0, 2, 4), (1, 0, 2)) == "0:1,2:0,4:2"``."""
    if len(layers) != len(indices):
        raise BadInput(f"{len(layers)} layers but {len(indices)} indices")
    return ",".join(f"{int(l)}:{int(i)}" for l, i in zip(layers, indices))


def parse_path(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Inverse of :func:`format_path`: ``"0:1,2:0,4:2"`` -> ``((0, 2, 4), (1, 0, 2))``.

    Only syntax is checked (non-negative integers, ``layer:index`` items separated by
    commas); whether the path exists in a network is :func:`certify`'s business.
    Raises BadInput (a ValueError) naming the offending item.
    """
    if not isinstance(text, str):
        raise BadInput(f"path text must be a string, got {type(text).__name__}")
    if not text.strip():
        raise BadInput("empty path text; expected layer:index pairs like '0:1,2:0,4:2'")
    layers, indices = [], []
    for n, item in enumerate(text.split(",")):
        parts = item.strip().split(":")
        # isascii: str.isdigit() also accepts "²" (int() refuses it) and "٣" (int() reads 3).
        if len(parts) != 2 or not all(p.strip().isascii() and p.strip().isdigit() for p in parts):
            raise BadInput(
                f"bad item {n} {item.strip()!r} in path {text!r}; expected layer:index with "
                "non-negative integers, e.g. '0:1,2:0,4:2'"
            )
        layers.append(int(parts[0]))
        indices.append(int(parts[1]))
    return tuple(layers), tuple(indices)


def read_path(path) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(layers, indices) of a path given as text ``"0:1,1:0,2:1"`` (:func:`parse_path`) or as
    (layer, index) pairs; BadInput when it is neither."""
    if isinstance(path, str):
        return parse_path(path)
    try:
        layers, indices = (tuple(int(v) for v in col) for col in zip(*path))
    except (TypeError, ValueError):
        raise BadInput(f"a path is text like '0:1,1:0,2:1' or (layer, index) pairs, got {path!r}") from None
    return layers, indices


def describe_weight(network: Network, w: int) -> str:
    """Weight id -> ``"a:i->b:j"`` (the neuron pair it connects)."""
    for (a, b), off in network.offsets.items():
        size = network.widths[a] * network.widths[b]
        if off <= w < off + size:
            i, j = divmod(w - off, network.widths[b])
            return f"{a}:{i}->{b}:{j}"
    raise ValueError(f"weight id {w} out of range 0..{network.m - 1}")


@dataclass(frozen=True)
class Verdict:
    """Outcome of :func:`certify`.

    ``defect`` is None iff ``certified``; ``rank`` is None when a path is invalid. What is
    proved and what is not:

    - ``certified`` is a proof: the peeled paths are independent by a triangular structure, and
      the core has full rank modulo ``P1 = 2**31 - 1`` (or ``P2 = 2**31 - 19``), which implies
      full rank over Q (rank mod p <= rank over Q); ``rank`` is then the size.
    - a shortfall modulo a prime alone proves nothing (the prime may divide a minor of rows
      independent over Q). For the verdict ``dependent: rank r < n`` (size m - H, no duplicate)
      the rank is made exact by ``verify.rank.exact_rank_of_rows``: each row rejected modulo P1
      is written over the kept rows with rational coefficients (lifted from mod P1) and re-added
      exactly over the integers, or, if a lift fails, the core is eliminated over Q. So that
      verdict and its ``rank`` are proofs too.
    - with a duplicate or size defect the verdict does not depend on the rank, and ``rank`` is
      the rank modulo P1, or modulo P2 when larger: a lower bound on the rank over
      Q, equal to it unless both primes divide a minor (not proved; ``verify.rank.rank_of``
      gives the exact rank).
    """

    certified: bool
    defect: str | None
    size: int
    expected: int
    rank: int | None

    def __str__(self) -> str:
        if self.certified:
            return f"certified: {self.size} independent paths = m - H"
        return f"not a basis: {self.defect}"


def _layer_problem(layers: tuple[int, ...], network: Network) -> str | None:
    """What is wrong with a layer sequence (shared by all paths of a block), if anything."""
    L = network.L
    for l in layers:
        if not 0 <= l <= L:
            return f"layer {l} out of range 0..{L}"
    for a, b in zip(layers, layers[1:]):
        if b <= a:
            return f"layers not strictly ascending ({a} then {b})"
    if layers[0] != 0:
        return f"starts at layer {layers[0]}, not 0"
    if layers[-1] != L:
        return f"ends at layer {layers[-1]}, not L = {L}"
    pairs = set(network.pairs)
    for a, b in zip(layers, layers[1:]):
        if (a, b) not in pairs:
            return f"hop {a}->{b} is not a connected layer pair"
    return None


def block_first_problem(network: Network, block: PathBlock) -> tuple[int, str] | None:
    """(row, problem) of the first bad path of a block, or None."""
    if len(block) == 0:
        return None
    if not block.layers:
        return 0, "empty path"
    prob = _layer_problem(block.layers, network)
    if prob is not None:
        return 0, prob
    widths = np.array([network.widths[l] for l in block.layers], dtype=np.int64)
    chunk = max(1, CHECK_ENTRIES // len(block.layers))  # a described block's rows made a chunk at a time
    for start in range(0, len(block), chunk):
        nodes = block.take(slice(start, start + chunk)).nodes
        bad = (nodes < 0) | (nodes >= widths)
        rows = np.flatnonzero(bad.any(axis=1))
        if rows.size:
            r = int(rows[0])
            k = int(np.argmax(bad[r]))
            l = block.layers[k]
            return start + r, f"neuron index {int(nodes[r, k])} out of range at layer {l} (width {network.widths[l]})"
    return None


# Neurons checked for range at once: 2**18 paths at a time took 130 MB on ResNet-50 x1/8's
# 50-layer paths, more than its 3 MB of weights.
CHECK_ENTRIES = 1 << 21


def _path_text(block: PathBlock, row: int) -> str:
    return format_path(block.layers, block.take([row]).nodes[0].tolist())


def find_invalid(network: Network, blocks: Iterable[PathBlock]) -> str | None:
    """Message naming the first invalid path (global order), or None if all are valid."""
    start = 0
    for block in blocks:
        hit = block_first_problem(network, block)
        if hit is not None:
            r, prob = hit
            return f"path {start + r} ({_path_text(block, r)}): {prob}"
        start += len(block)
    return None


def find_duplicate(network: Network, blocks: Iterable[PathBlock]) -> str | None:
    """Message naming the earliest path j equal to an earlier path i, or None.

    Blocks with the same layer sequence are pooled, so duplicates across blocks count. Rows are
    told apart by exact dense keys folded a layer at a time (``rowkeys.fold_keys`` over each
    block's ``column``): a few numbers a path, not the paths listed (faithful deah's raw union
    of ResNet-50 x1/8: 251,440 paths of up to 50 layers).
    """
    groups: dict[tuple[int, ...], list[tuple[object, int]]] = {}
    start = 0
    for b in blocks:
        groups.setdefault(tuple(b.layers), []).append((b, start))
        start += len(b)
    best: tuple[int, int, tuple[int, ...], list] | None = None
    for layers, parts in groups.items():
        n = sum(len(b) for b, _ in parts)
        if n < 2:
            continue
        columns = (np.concatenate([b.column(k) for b, _ in parts]) for k in range(len(layers)))
        keys, count = fold_keys(columns, n)
        if count == n:
            continue
        gidx = np.concatenate([np.arange(s, s + len(b), dtype=np.int64) for b, s in parts])
        # Equal rows have equal keys; sorted by key, ties by global index, each run of equal rows
        # starts with its earliest occurrence.
        o = np.lexsort((gidx, keys))
        same = np.concatenate([[False], keys[o][1:] == keys[o][:-1]])
        run_start = np.maximum.accumulate(np.where(same, 0, np.arange(n)))
        dup = np.flatnonzero(same)
        j_pos = dup[np.argmin(gidx[o][dup])]
        j, i = int(gidx[o][j_pos]), int(gidx[o][run_start[j_pos]])
        if best is None or j < best[0]:
            best = (j, i, layers, parts)
    if best is None:
        return None
    j, i, layers, parts = best
    for b, s in parts:  # the duplicate's row, made alone
        if s <= j < s + len(b):
            row = b.take([j - s]).nodes[0]
    return f"path {j} ({format_path(layers, row.tolist())}) duplicates path {i}"


def certify(network: Network, blocks: Iterable[PathBlock], record=None) -> Verdict:
    """Decide exactly whether ``blocks`` form a basis path set of ``network``.

    Checks, first failure wins: every path valid; paths distinct; size == m - H;
    independence (rank by peeling, then elimination modulo 2**31-1, a shortfall re-checked
    modulo 2**31-19 and, when it decides the verdict, made exact by re-adding integer
    combinations: see :class:`Verdict`). Defect messages look like::

        path 3 (0:1,2:0,4:5): neuron index 5 out of range at layer 4 (width 3)
        path 7 (0:1,2:0,4:2) duplicates path 2
        size 41 != m - H = 44
        dependent: rank 40 < 44

    The rank is computed whenever all paths are valid (also for duplicate / size defects).
    Running time: linear in the number of weight entries for the peeled part, plus sparse
    elimination on the core (and, for a dependent set of m - H distinct paths, one more with one
    back substitution per dependent row). Memory: O(m) besides the blocks (peeling by holders:
    the m x depth weight ids of the paths are never listed together), and a few numbers a path
    when a set short of rank is searched for a duplicate. ``record``: a ``rank.CoreChoice`` that
    keeps the core's elimination choice for a repair of the same blocks.
    """
    blocks = list(blocks)
    return verdict_of(sum(len(b) for b in blocks), network.basis_size, find_invalid(network, blocks),
                      lambda: peel_by_holders(blocks, network.weight_ids, network.m),
                      lambda: find_duplicate(network, blocks), record)


def verdict_of(size: int, expected: int, invalid: str | None, peel: Callable[[], tuple[int, list]],
               duplicate: Callable[[], str | None], record=None) -> Verdict:
    """The checks of every certifier in one order, first failure wins: invalid, duplicate,
    size, rank (mod p, made exact when it decides). ``peel()``: (peeled, core rows);
    ``duplicate()``: the first duplicate's message, asked only when the rank falls short (m - H
    paths of full rank are distinct)."""
    if invalid is not None:
        return Verdict(False, invalid, size, expected, None)
    peeled, core = peel()
    if record is not None:
        record.total, record.peeled = size, peeled
    rank = peeled + rank_of_rows(core, record=record)  # record: the choice, for a repair (rank.CoreChoice)
    if rank < size:
        dup = duplicate()
        if dup is not None:
            return Verdict(False, dup, size, expected, rank)
    if size != expected:
        return Verdict(False, f"size {size} != m - H = {expected}", size, expected, rank)
    if rank < size:
        rank = peeled + exact_rank_of_rows(core)  # a shortfall mod p is not yet a proof
        if rank < size:
            return Verdict(False, f"dependent: rank {rank} < {size}", size, expected, rank)
    return Verdict(True, None, size, expected, rank)
