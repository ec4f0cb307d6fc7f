"""deah-complete's discards kept as arrays, one part per substructure, read as ``Discard`` records.

A large network discards millions of paths (dense-8x256: 3.07 M); one Python object per path
cost more time and memory than the rule that found them. The table keeps per part the
substructure, the discarded rows, the rule that discarded each one and, for the hop rule, the
new hop and the partner row X_r(f). A ``Discard`` (with the partner's and the path's weights
split into shared and unshared, as ``why`` shows them) is built only when someone reads it:
by index, or in bulk by iteration (the store writer, exports).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..network import Network, PathBlock
from .step3_sdvchain import Discard

__all__ = ["DiscardTable", "RecordSequence"]


@dataclass
class _Part:
    idx: int  # substructure
    rows: np.ndarray  # discarded rows of B_r
    steps: tuple[str, ...]  # rule names, indexed by ``codes``
    codes: np.ndarray  # per row: index into ``steps``
    hop: tuple[int, int] | None = None  # the new hop (hop rule only)
    partners: np.ndarray | None = None  # per row: the kept row X_r(f) sharing its new-hop weight


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


class DiscardTable(RecordSequence):
    """Every path deah-complete's Step 3 discarded, in the order the rules discarded them."""

    def __init__(self, network: Network, bases: dict[int, PathBlock]):
        self.network, self.bases = network, bases
        self._parts: list[_Part] = []
        self._starts: list[int] = [0]

    def add_local(self, idx: int, rows: np.ndarray) -> None:
        self._add(_Part(idx, np.asarray(rows, dtype=np.int64), ("local",), np.zeros(len(rows), dtype=np.int8)))

    def add_hop(self, idx: int, rows: np.ndarray, hop: tuple[int, int], partners: np.ndarray, same_prefix: np.ndarray) -> None:
        """Hop-rule discards: "suffix" where the row agrees with its partner up to the hop
        (so they differ after it), else "prefix"."""
        codes = np.where(same_prefix, 1, 0).astype(np.int8)
        self._add(_Part(idx, np.asarray(rows, dtype=np.int64), ("prefix", "suffix"), codes, hop, partners))

    def _add(self, part: _Part) -> None:
        if len(part.rows):
            self._parts.append(part)
            self._starts.append(self._starts[-1] + len(part.rows))

    def __len__(self) -> int:
        return self._starts[-1]

    def _item(self, k: int) -> Discard:
        p = bisect_right(self._starts, k) - 1
        return next(self._materialise(self._parts[p], slice(k - self._starts[p], k - self._starts[p] + 1)))

    def __iter__(self) -> Iterator[Discard]:
        for part in self._parts:
            yield from self._materialise(part, slice(None))

    def _materialise(self, part: _Part, which: slice) -> Iterator[Discard]:
        net, block, idx = self.network, self.bases[part.idx], part.idx
        rows = part.rows[which]
        mine = net.weight_ids(block.take(rows))
        steps = [part.steps[c] for c in part.codes[which].tolist()]
        if part.hop is None:
            for r, step, w in zip(rows.tolist(), steps, mine.tolist()):
                yield Discard(idx, r, step, 0, (idx, idx), (), (), (), tuple(w), ())
            return
        hop = part.hop
        j = block.layers.index(hop[0])
        theirs = net.weight_ids(block.take(part.partners[which]))
        same = mine == theirs
        for r, step, m_row, t_row, s_row in zip(rows.tolist(), steps, mine.tolist(), theirs.tolist(), same.tolist()):
            ep = tuple(t for t, eq in zip(t_row, s_row) if not eq)
            iep = tuple(w for w, eq in zip(m_row, s_row) if not eq)
            shared = tuple(w for w, eq in zip(m_row, s_row) if eq)
            yield Discard(idx, r, step, 0, (idx, idx), (hop,), ep, (m_row[j],), iep, shared)

    # -- bulk reads, no records built ---------------------------------------------------

    def step_counts(self) -> Counter:
        out: Counter = Counter()
        for part in self._parts:
            for code, n in zip(*np.unique(part.codes, return_counts=True)):
                out[part.steps[int(code)]] += int(n)
        return out

    def substructures(self) -> np.ndarray:
        """Substructure of every discard, in table order."""
        return np.concatenate([np.full(len(p.rows), p.idx, dtype=np.int64) for p in self._parts]) if self._parts else np.zeros(0, dtype=np.int64)

    def rows(self) -> np.ndarray:
        """Row in its substructure's B_r of every discard, in table order."""
        return np.concatenate([p.rows for p in self._parts]) if self._parts else np.zeros(0, dtype=np.int64)
