"""deah-complete's discards kept as arrays, one part per substructure, read as records of their rule.

A large network discards millions of paths (dense-8x256: 3.07 M); one Python object per path
cost more time and memory than the rule that found them. The table keeps per part the
substructure, the discarded rows, the rule that discarded each one and, for the hop rule, the
new hop and the twin row X_r(f). A record is built only when someone reads it, by index or in
bulk by iteration (the store writer, exports): a :class:`HopDiscard` (with the path's and its
twin's weights split into what they share and where they differ, as ``why`` shows them) or a
:class:`LocalDiscard`. SDVChain's discards are ``step3_sdvchain.Discard``: each rule has its
own record shape.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..network import Network, PathBlock

__all__ = ["DiscardTable", "PartArrays", "PartTable", "RecordSequence", "HopDiscard", "LocalDiscard"]


@dataclass(frozen=True)
class HopDiscard:
    """The hop rule: substructure r owns the new layer pair ``hop``; this path crosses it at the
    weight ``crossing``, as does the kept path X_r(crossing) (its ``twin``), and differs from the
    twin before the hop (step "prefix") or only after it ("suffix").

    Weights are weight ids (``network.weight_endpoints`` shows them as neurons)."""

    substructure: int  # idx of r
    row: int  # row of the path in B_r
    step: str  # "prefix" | "suffix"
    hop: tuple[int, int]  # the new layer pair (a, b) of r
    crossing: int  # the weight of ``hop`` this path (and its twin) uses
    twin: int  # row of the kept twin X_r(crossing) in B_r
    differs: tuple[int, ...]  # this path's weights the twin does not use
    twin_differs: tuple[int, ...]  # the twin's weights this path does not use
    agrees: tuple[int, ...]  # the weights both use, the crossing included


@dataclass(frozen=True)
class LocalDiscard:
    """The local rule: on the witness coordinates of its substructure's block (new weights,
    layer debts paid, the alpha functional; docs/deah-complete.md) this path is a combination of
    the paths kept in that block, and those coordinates vanish on every path kept before."""

    substructure: int  # idx of r
    row: int  # row of the path in B_r
    step: str = "local"


@dataclass
class _Part:
    idx: int  # substructure
    rows: np.ndarray  # discarded rows of B_r
    steps: tuple[str, ...]  # rule names, indexed by ``codes``
    codes: np.ndarray  # per row: index into ``steps``
    hop: tuple[int, int] | None = None  # the new hop (hop rule only)
    partners: np.ndarray | None = None  # per row: its twin, the kept row X_r(f) sharing its new-hop weight

    def __len__(self) -> int:
        return len(self.rows)

    def rows_of(self, which: slice) -> np.ndarray:
        return self.rows[which]

    def codes_of(self, which: slice) -> np.ndarray:
        return self.codes[which]

    def partners_of(self, which: slice, block) -> np.ndarray:
        return self.partners[which]


class _EarPart(_Part):
    """An ear's discards described (``subroutine_rows.EarRows``): rows, rules and twins made from
    their index when read, O(w_a) numbers held instead of three arrays of |B_r|."""

    def __init__(self, idx: int, hop: tuple[int, int], ear):
        self.idx, self.hop, self.ear, self.steps = idx, hop, ear, ("prefix", "suffix")

    def __len__(self) -> int:
        return self.ear.discard_count

    def _range(self, which: slice) -> tuple[int, int]:
        start, stop, _ = which.indices(len(self))
        return start, max(start, stop)

    def rows_of(self, which: slice) -> np.ndarray:
        return self.ear.discard_rows(*self._range(which))

    def codes_of(self, which: slice) -> np.ndarray:
        return (self.rows_of(which) >= self.ear.first_suffix).astype(np.int8)  # "prefix" 0, "suffix" 1

    def partners_of(self, which: slice, block) -> np.ndarray:
        return self.ear.twins(block.take(self.rows_of(which)))


@dataclass
class PartArrays:
    """One part of a ``DiscardTable`` as arrays: the fields of its records, row by row.
    For the hop rule, ``mine`` and ``theirs`` are the weight ids (one column per hop of the block)
    of each discarded path and of its twin: ``differs`` are ``mine`` where they differ."""

    substructure: int
    rows: np.ndarray
    steps: np.ndarray  # rule name per row
    block: PathBlock
    hop: tuple[int, int] | None = None
    crossing: np.ndarray | None = None
    twins: np.ndarray | None = None
    mine: np.ndarray | None = None
    theirs: np.ndarray | None = None


class RecordSequence(Sequence):
    """A sequence whose items are built on demand by ``_item(k)`` (0 <= k < len)."""

    def _item(self, k: int):
        raise NotImplementedError

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        return self._item(k)


class PartTable(RecordSequence):
    """Discards kept as arrays, one part after another (a part: its substructure ``idx``, its
    rows ``rows_of(slice)``, its length), in the order they were discarded; ``_materialise(part,
    which)`` builds the records of a slice of one part. What both Step 3s' tables share:
    deah-complete's ``DiscardTable`` and SDVChain's ``step3_sdvchain.SdvDiscards``."""

    def __init__(self, network: Network, bases: dict[int, PathBlock]):
        self.network, self.bases = network, bases
        self._parts: list = []
        self._starts: list[int] = [0]

    def _add(self, part) -> None:
        if len(part):
            self._parts.append(part)
            self._starts.append(self._starts[-1] + len(part))

    def __len__(self) -> int:
        return self._starts[-1]

    def _item(self, k: int):
        p = bisect_right(self._starts, k) - 1
        return next(self._materialise(self._parts[p], slice(k - self._starts[p], k - self._starts[p] + 1)))

    def __iter__(self) -> Iterator:
        for part in self._parts:
            yield from self._materialise(part, slice(None))

    def _materialise(self, part, which: slice) -> Iterator:
        raise NotImplementedError

    def locate(self, k: int) -> tuple[int, int]:
        """(substructure, row in its B_r) of discard k."""
        p = bisect_right(self._starts, k) - 1
        at = k - self._starts[p]
        return self._parts[p].idx, int(self._parts[p].rows_of(slice(at, at + 1))[0])

    def substructures(self) -> np.ndarray:
        """Substructure of every discard, in table order."""
        return np.concatenate([np.full(len(p), p.idx, dtype=np.int64) for p in self._parts]) if self._parts else np.zeros(0, dtype=np.int64)

    def row_runs(self, chunk_rows: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """(substructure, rows in its B_r) of the discards in table order, one per run of equal
        substructure, cut into at most ``chunk_rows`` rows when given; each part's rows made as
        they are reached (never all of ``rows()`` at once: ResNet-50 has 49 M)."""
        p = 0
        while p < len(self._parts):
            q = p + 1
            while q < len(self._parts) and self._parts[q].idx == self._parts[p].idx:
                q += 1
            lo, hi = self._starts[p], self._starts[q]
            step = chunk_rows or hi - lo
            for start in range(lo, hi, step):
                yield self._parts[p].idx, self._rows_between(start, min(hi, start + step))
            p = q

    def _rows_between(self, start: int, stop: int) -> np.ndarray:
        """Rows of discards start .. stop - 1 (in one part or several)."""
        p, out = bisect_right(self._starts, start) - 1, []
        while start < stop:
            at = start - self._starts[p]
            take = min(stop, self._starts[p + 1]) - start
            out.append(self._parts[p].rows_of(slice(at, at + take)))
            start += take
            p += 1
        return out[0] if len(out) == 1 else np.concatenate(out)

    def rows(self) -> np.ndarray:
        """Row in its substructure's B_r of every discard, in table order."""
        return np.concatenate([p.rows_of(slice(None)) for p in self._parts]) if self._parts else np.zeros(0, dtype=np.int64)


class DiscardTable(PartTable):
    """Every path deah-complete's Step 3 discarded, in the order the rules discarded them."""

    def add_local(self, idx: int, rows: np.ndarray) -> None:
        self._add(_Part(idx, np.asarray(rows, dtype=np.int64), ("local",), np.zeros(len(rows), dtype=np.int8)))

    def add_hop(self, idx: int, rows: np.ndarray, hop: tuple[int, int], partners: np.ndarray, same_prefix: np.ndarray) -> None:
        """Hop-rule discards: "suffix" where the row agrees with its partner up to the hop
        (so they differ after it), else "prefix"."""
        codes = np.where(same_prefix, 1, 0).astype(np.int8)
        self._add(_Part(idx, np.asarray(rows, dtype=np.int64), ("prefix", "suffix"), codes, hop, partners))

    def add_ear(self, idx: int, hop: tuple[int, int], ear) -> None:
        """An ear's discards, described (``subroutine_rows.EarRows``): the same records as
        ``add_hop`` gives for them, in the same (ascending row) order."""
        self._add(_EarPart(idx, hop, ear))

    def _materialise(self, part: _Part, which: slice) -> Iterator[HopDiscard | LocalDiscard]:
        net, block, idx = self.network, self.bases[part.idx], part.idx
        rows = part.rows_of(which)
        if part.hop is None:
            for r in rows.tolist():
                yield LocalDiscard(idx, r)
            return
        steps = [part.steps[c] for c in part.codes_of(which).tolist()]
        mine = net.weight_ids(block.take(rows))
        hop = part.hop
        j = block.layers.index(hop[0])
        twins = part.partners_of(which, block)
        theirs = net.weight_ids(block.take(twins))
        same = mine == theirs
        for r, twin, step, m_row, t_row, s_row in zip(
            rows.tolist(), twins.tolist(), steps, mine.tolist(), theirs.tolist(), same.tolist()
        ):
            differs = tuple(w for w, eq in zip(m_row, s_row) if not eq)
            twin_differs = tuple(t for t, eq in zip(t_row, s_row) if not eq)
            agrees = tuple(w for w, eq in zip(m_row, s_row) if eq)
            yield HopDiscard(idx, r, step, hop, m_row[j], twin, differs, twin_differs, agrees)

    # -- bulk reads, no records built ---------------------------------------------------

    def part_arrays(self) -> Iterator["PartArrays"]:
        """The records' fields part by part as arrays, in table order (the store writer's bulk
        read: what ``__iter__`` yields, without an object per discard)."""
        net = self.network
        everything = slice(None)
        for part in self._parts:
            block = self.bases[part.idx]
            rows = part.rows_of(everything)
            steps = np.array(part.steps, dtype=object)[part.codes_of(everything)]
            if part.hop is None:
                yield PartArrays(part.idx, rows, steps, block)
                continue
            partners = part.partners_of(everything, block)
            mine = net.weight_ids(block.take(rows))
            theirs = net.weight_ids(block.take(partners))
            j = block.layers.index(part.hop[0])
            yield PartArrays(part.idx, rows, steps, block, part.hop, mine[:, j], partners, mine, theirs)

    def step_counts(self) -> Counter:
        out: Counter = Counter()
        for part in self._parts:
            if isinstance(part, _EarPart):  # counted from the description
                for step, n in (("prefix", part.ear.prefix_count), ("suffix", part.ear.discard_count - part.ear.prefix_count)):
                    if n:
                        out[step] += n
                continue
            for code, n in zip(*np.unique(part.codes, return_counts=True)):
                out[part.steps[int(code)]] += int(n)
        return out
