"""Subroutine's basis B_r described, not listed: any row made from its index, in O(route) numbers.

Subroutine (``subroutine.py``) lists B_r as rows in a fixed order: first the w_0 all-direct
paths (row x starts at neuron x of layer 0 and follows direct edges), then, hop by hop along the
route, one row per cross edge (u, v) of that hop, sources ascending and targets ascending (the
*section* of the hop): p*(u) + (u, v) + the direct walk from v, where p*(u) = in_r(u) is the
predecessor walk to u. So row q is a function of q and the choice rule alone:

- q < w_0: the direct walk from neuron q of layer 0;
- else, in the section of hop k (q - start_k = u * (w_b - 1) + t): the cross edge (u, v) with
  v = t if t < direct(u) else t + 1, the predecessor walk back from u, the direct walk on from v.

``SubroutineRows`` holds the route, the section starts and, per route position, the row index of
each neuron's p* (what Subroutine's ``pstar`` tracks): w_a numbers per layer. ``take(rows)`` makes
any rows as a ``PathBlock`` (grouped by section, vectorised); ``len`` is |B_r| without making any.
tests/test_subroutine_rows.py checks every row against ``subroutine``'s listing.

For an ear (docs/deah-complete.md) this gives its kept rows and discards by index arithmetic
(``ear_rows``): the owners X_r(f) of the new hop h = route[j] -> route[j + 1] are the rows p*(u)
of layer route[j] (continuing over their direct edge: f = (u, direct(u))) and the whole section
of h (f a cross edge); the other rows made before h differ from their owner before h ("prefix"),
the rows made after h only after it ("suffix").
"""

from __future__ import annotations

import numpy as np

from ..choices import ChoiceRule
from ..network import Network, PathBlock

__all__ = ["EarRows", "KeptRows", "SubroutineRows", "ear_rows", "positions"]


class SubroutineRows:
    """B_r of the route ``layers`` (Subroutine's rows, in its order), made on demand."""

    def __init__(self, network: Network, layers, rule: ChoiceRule):
        self.network, self.rule = network, rule
        self.layers = tuple(int(l) for l in layers)
        w = network.widths
        hops = list(zip(self.layers, self.layers[1:]))
        self.direct = [rule.direct(a, b, np.arange(w[a])) for a, b in hops]  # per hop: target of each source's direct edge
        self.pred = [rule.predecessor(a, b, np.arange(w[b])) for a, b in hops]  # per hop: each target's predecessor
        sizes = [w[self.layers[0]]] + [w[a] * (w[b] - 1) for a, b in hops]
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)  # section k + 1 is hop k's
        # row of p*(v) for every neuron v at each route position (Subroutine's pstar)
        pstar = [np.arange(w[self.layers[0]], dtype=np.int64)]
        for k, (a, b) in enumerate(hops):
            ends = np.arange(w[b], dtype=np.int64)
            p = self.pred[k]
            d = self.direct[k][p]
            pstar.append(np.where(d == ends, pstar[-1][p], self.cross_row(k, p, ends, d)))
        self.pstar = pstar

    def __len__(self) -> int:
        return int(self.starts[-1])

    def cross_row(self, k: int, u, v, d=None):
        """Row made at the cross edge (u, v) of hop k (v not u's direct target ``d``): hop k's
        section lists sources ascending, each source's cross targets ascending."""
        d = self.direct[k][u] if d is None else d
        wb = self.network.widths[self.layers[k + 1]]
        return self.starts[k + 1] + u * (wb - 1) + np.where(v < d, v, v - 1)

    @property
    def nodes(self) -> np.ndarray:
        """Every row (listed: only for small B_r and code that needs the whole array)."""
        return self.take(np.arange(len(self), dtype=np.int64)).nodes

    def backward(self, position: int, ends: np.ndarray) -> np.ndarray:
        """in_r: the predecessor walks to ``ends`` (neurons at route position ``position``),
        shape (len(ends), position + 1)."""
        ends = np.asarray(ends, dtype=np.int64)
        part = np.empty((len(self.layers), len(ends)), dtype=np.int64)
        self._walk_into(part, position, ends, forward=False)
        return np.ascontiguousarray(part[: position + 1].T)

    def forward(self, position: int, starts: np.ndarray) -> np.ndarray:
        """out_r: the direct walks from ``starts`` (neurons at route position ``position``) to
        the route's end, shape (len(starts), len(route) - position)."""
        starts = np.asarray(starts, dtype=np.int64)
        part = np.empty((len(self.layers), len(starts)), dtype=np.int64)
        self._walk_into(part, position, starts, forward=True)
        return np.ascontiguousarray(part[position:].T)

    def take(self, index) -> PathBlock:
        """Rows ``index`` (indices into B_r in any order, a slice or a mask) as a block."""
        rows = positions(index, len(self))
        if len(rows) and (rows.min() < 0 or rows.max() >= len(self)):
            raise IndexError(f"row {int(rows.max() if rows.max() >= len(self) else rows.min())} of {len(self)}")
        order = None
        if len(rows) > 1 and (np.diff(rows) < 0).any():  # made in row order, then put back in the order asked
            order = np.argsort(rows, kind="stable")
            rows = rows[order]
        # Made column by column into a (layers, rows) array, each column contiguous, then copied
        # once into rows: stacking walks and copying them into rows by fancy index cost ResNet-50's
        # 49 M discards 40 s of paths_through's 44 (handing out the transposed view instead made
        # the readers of rows, the certificates, 4x slower on dense-8x128).
        cols = np.empty((len(self.layers), len(rows)), dtype=np.int64)
        section = np.searchsorted(self.starts, rows, side="right") - 1
        cuts = np.flatnonzero(np.r_[True, np.diff(section) != 0, True]) if len(rows) else np.zeros(1, dtype=np.int64)
        w = self.network.widths
        for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist()):  # sorted rows: each section a slice
            s = int(section[lo])
            part = cols[:, lo:hi]
            pos = rows[lo:hi] - self.starts[s]
            if s == 0:  # the all-direct paths
                self._walk_into(part, 0, pos, forward=True)
                continue
            k = s - 1  # hop k: route[k] -> route[k + 1]
            wb = w[self.layers[k + 1]]
            u, t = np.divmod(pos, wb - 1)
            v = np.where(t < self.direct[k][u], t, t + 1)
            self._walk_into(part, k, u, forward=False)
            self._walk_into(part, k + 1, v, forward=True)
        if order is not None:
            unsorted = np.empty_like(cols)
            unsorted[:, order] = cols
            cols = unsorted
        return PathBlock(self.layers, np.ascontiguousarray(cols.T))

    def column(self, position: int, index) -> np.ndarray:
        """The neuron at route position ``position`` of rows ``index`` (as ``take`` reads it),
        without making the rows: a row of hop k's section is its source u's predecessor walk up
        to k and its target v's direct walk after, so each section needs one walk of its
        layer's neurons (O(width x route)) and then one number per row (``paths_through`` reads
        one column of ResNet-50's 74.6 M core paths this way instead of making them)."""
        rows = positions(index, len(self))
        order = np.argsort(rows, kind="stable") if len(rows) > 1 and (np.diff(rows) < 0).any() else None
        ordered = rows if order is None else rows[order]
        cuts = np.searchsorted(ordered, self.starts)  # sorted rows: each section a slice
        values = np.empty(len(rows), dtype=np.int64)
        w = self.network.widths
        for s in range(len(self.starts) - 1):
            lo, hi = int(cuts[s]), int(cuts[s + 1])
            if lo == hi:
                continue
            pos = ordered[lo:hi] - self.starts[s]
            if s == 0:  # the all-direct paths from layer 0
                values[lo:hi] = self._walk_table(0, position)[pos]
                continue
            k = s - 1  # hop k: route[k] -> route[k + 1]
            u, t = np.divmod(pos, w[self.layers[k + 1]] - 1)
            if position <= k:
                values[lo:hi] = self._walk_table(k, position)[u]
            else:
                v = np.where(t < self.direct[k][u], t, t + 1)
                values[lo:hi] = self._walk_table(k + 1, position)[v]
        if order is None:
            return values
        out = np.empty_like(values)
        out[order] = values
        return out

    def view(self, index) -> "KeptRows":
        """Rows ``index`` as a block made only as far as asked."""
        return KeptRows(self, positions(index, len(self)))

    def _walk_table(self, start: int, position: int) -> np.ndarray:
        """For every neuron at route position ``start``, the neuron its walk reaches at
        ``position``: the direct walk forward, the predecessor walk back."""
        col = np.arange(self.network.widths[self.layers[start]], dtype=np.int64)
        for k in (range(start, position) if position >= start else range(start - 1, position - 1, -1)):
            col = self.direct[k][col] if position >= start else self.pred[k][col]
        return col

    def _walk_into(self, part: np.ndarray, position: int, ends: np.ndarray, forward: bool) -> None:
        """Route positions ``position`` on (``forward``: the direct walks) or back to 0 (the
        predecessor walks) of ``part`` (one row per route position), from ``ends`` at
        ``position``: what ``forward`` / ``backward`` give, transposed."""
        col = np.asarray(ends, dtype=np.int64)
        part[position] = col
        steps = range(position, len(self.layers) - 1) if forward else range(position - 1, -1, -1)
        for k in steps:
            col = self.direct[k][col] if forward else self.pred[k][col]
            part[k + 1 if forward else k] = col

    def row_of(self, nodes) -> int | None:
        """The row of B_r that is the path ``nodes`` (its neurons along the route), or None: a
        row is made at its last cross edge (or is all-direct), so that edge names it."""
        nodes = [int(n) for n in nodes]
        w = self.network.widths
        if len(nodes) != len(self.layers) or any(not 0 <= n < w[l] for n, l in zip(nodes, self.layers)):
            return None
        row = nodes[0]
        for k in range(len(self.layers) - 2, -1, -1):
            u, v = nodes[k], nodes[k + 1]
            d = int(self.direct[k][u])
            if v != d:
                row = int(self.cross_row(k, u, v, d))
                break
        return row if self.take([row]).nodes[0].tolist() == nodes else None

    def owner_rows(self, j: int) -> np.ndarray:
        """Row of X_r(f) for every weight f = (u, v) of hop j (route[j] -> route[j + 1]), as a
        (w_a, w_b) table: the section's row for a cross edge, p*(u)'s row for the direct one."""
        w = self.network.widths
        wa, wb = w[self.layers[j]], w[self.layers[j + 1]]
        v = np.arange(wb, dtype=np.int64)[None, :]
        d = self.direct[j][:, None]
        table = self.cross_row(j, np.arange(wa, dtype=np.int64)[:, None], v, d)
        return np.where(v == d, self.pstar[j][:, None], table)


class EarRows:
    """An ear's rows of B_r by index (``ear_rows``): ``kept`` (ascending), and the discards: the
    rows before ``first_suffix`` that are not kept ("prefix"), then every row from
    ``first_suffix`` on ("suffix"), in ascending order."""

    def __init__(self, rows: SubroutineRows, j: int):
        self.rows, self.j = rows, j
        section_start, section_end = int(rows.starts[j + 1]), int(rows.starts[j + 2])
        self.first_suffix = section_end
        self.kept_count = len(rows.pstar[j]) + section_end - section_start
        self.prefix_count = section_start - len(rows.pstar[j])
        self.discard_count = len(rows) - self.kept_count

    # kept and owners are w_a * w_b numbers each: made when asked for, not held (an ear over a
    # 512 x 512 hop would hold 4 MB for its whole life)
    @property
    def kept(self) -> np.ndarray:
        section_start = int(self.rows.starts[self.j + 1])
        return np.concatenate([np.sort(self.rows.pstar[self.j]), np.arange(section_start, self.first_suffix, dtype=np.int64)])

    @property
    def owners(self) -> np.ndarray:
        return self.rows.owner_rows(self.j)

    def discard_rows(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Rows of discards start .. stop - 1 (in ascending row order, the prefix ones first)."""
        stop = self.discard_count if stop is None else stop
        k = np.arange(start, stop, dtype=np.int64)
        out = k + (self.first_suffix - self.prefix_count)  # suffix discards: every row from first_suffix on
        pre = k < self.prefix_count
        # prefix discards: row r is the k-th row below the section that is no p* row
        holes = np.sort(self.rows.pstar[self.j]) - np.arange(len(self.rows.pstar[self.j]), dtype=np.int64)
        out[pre] = k[pre] + np.searchsorted(holes, k[pre], side="right")
        return out

    def twins(self, block: PathBlock) -> np.ndarray:
        """Row of the owner X_r(f) of each row of ``block`` (rows of B_r), f its weight on the hop."""
        rows, j = self.rows, self.j
        u, v = block.nodes[:, j], block.nodes[:, j + 1]
        d = rows.direct[j][u]
        return np.where(v == d, rows.pstar[j][u], rows.cross_row(j, u, v, d))


def ear_rows(rows: SubroutineRows, hop: tuple[int, int]) -> EarRows:
    """The kept rows and discards of an ear whose new hop is ``hop`` (a pair of its route)."""
    j = rows.layers.index(hop[0])
    if rows.layers[j + 1] != hop[1]:
        raise ValueError(f"{hop} is not a hop of the route {rows.layers}")
    return EarRows(rows, j)


def positions(index, n: int) -> np.ndarray:
    """Positions 0 .. n - 1 that ``index`` (a slice, a boolean mask, integers) selects."""
    if isinstance(index, slice):
        return np.arange(*index.indices(n), dtype=np.int64)
    index = np.asarray(index)
    if index.dtype == bool:
        return np.flatnonzero(index)
    return index.astype(np.int64).reshape(-1)


class KeptRows:
    """Rows of a described B_r as a block, each made when read: its kept rows as a block of
    the basis (``rows`` ascending), or a chunk of its discards (``DiscardedList.iter_blocks(lazy=True)``).
    ``rows`` are indices into B_r (None: every row, B_0). ``take`` selects by position among
    these rows, as ``PathBlock.take`` does among its own; ``column(k)`` reads one layer's
    neurons without making any row."""

    def __init__(self, source: SubroutineRows, rows: np.ndarray | None = None):
        self.source, self.rows = source, rows
        self.layers = source.layers

    def __len__(self) -> int:
        return len(self.source) if self.rows is None else len(self.rows)

    def take(self, index) -> PathBlock:
        return self.source.take(self._rows(index))

    def view(self, index) -> "KeptRows":
        """Rows ``index`` (by position here) as a ``KeptRows`` of the same B_r, made only as far
        as asked (``PathBlock.view`` is its ``take``)."""
        return KeptRows(self.source, self._rows(index))

    def column(self, k: int) -> np.ndarray:
        """The neuron at ``layers[k]`` of every row, without making the rows."""
        return self.source.column(k, self._rows(slice(None)))

    def _rows(self, index) -> np.ndarray:
        at = positions(index, len(self))
        return at if self.rows is None else self.rows[at]

    @property
    def nodes(self) -> np.ndarray:
        """Every kept row (listed: only for code that needs the whole array)."""
        return self.take(slice(None)).nodes
