"""Certifying a paths file of a general network as it is read, in memory far below the file's.

``certify_general`` holds every path as Python tuples and peels CSR arrays of int64 weight ids:
about 20 bytes a byte of JSON to read and 40 a path entry to peel (faithful deah's 4.2 GB export
of ResNet-18, 222 M path entries, was killed by the kernel). Here:

* the file is read an element at a time (``json_stream``); each path is checked for shape as
  ``read_general_path`` does and kept as a row of small integers in the block of its layer
  sequence and hop kinds (2 bytes a neuron and a tap where the network's sizes allow);
* validity is checked on whole blocks, the first invalid path in file order reported with
  ``path_problem``'s message;
* peeling keeps, per weight, how many remaining paths hold it and the sum of their ids
  (``linalg.peel_by_holders``): a weight held once names its holder by that sum, so a path's
  weight ids are made from its row only when it peels (O(m) memory besides the rows); the core
  (what never peels) goes to the same exact rank as ``certify_blocks``;
* duplicates are looked for only when the rank falls short (distinct paths are implied by full
  rank), by sorting each block's rows.

The verdict is ``certify_general``'s on every file (tests/test_streamed_verify.py compares them).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np

from ..errors import BadInput
from ..linalg.peeling import peel_by_holders
from ..verify.certify import Verdict, verdict_of
from .blocks import GeneralBlock, block_weight_ids
from .model import GeneralNetwork
from .paths import format_general_path, path_problem, read_general_path

__all__ = ["PathRows", "certify_path_rows", "invalid_rows"]

@dataclass
class _Slot:
    """The paths of one layer sequence and hop kinds: rows of neurons and taps, file indices."""

    layers: tuple[int, ...]
    hops: tuple[int, ...]
    nodes: array
    taps: array
    index: array = field(default_factory=lambda: array("q"))


class PathRows:
    """The paths of a basis file, read one at a time, kept as rows of their blocks.

    ``invalid``: (file index, message) of the first path found invalid while reading (its layer
    sequence or hops, or a number out of the row's integer type); rows after it are not kept
    (an earlier invalid path may still be found in the rows)."""

    def __init__(self, net: GeneralNetwork, source: str) -> None:
        self.net, self.source = net, source
        small = max([l.size for l in net.layers] + [c.taps for c in net.connections]) < 2**15
        self.code = "h" if small else "i"
        self.restart()

    def restart(self) -> None:
        self.slots: list[_Slot] = []
        self.keys: dict[tuple, int | None] = {}  # (names, tap kinds) -> slot, None: not a path of net
        self.count = 0
        self.invalid: tuple[int, str] | None = None
        self.error: str | None = None  # the first path not in the form of a path (read_general_path's message)

    def add(self, k: int, raw: object) -> None:
        if self.error is not None:
            return
        try:
            self._add(k, raw)
        except BadInput as exc:  # raised once the document is known not to be a described basis
            self.error = str(exc)

    def _add(self, k: int, raw: object) -> None:
        shape = _fast_shape(raw)
        if shape is None:  # read_general_path says what is wrong (or accepts an unusual form)
            nodes, taps = read_general_path(self.net, raw, f"{self.source}: basis[{k}]")
            names = tuple(self.net.layers[l].name for l, _ in nodes)
            shape = names, [i for _, i in nodes], list(taps)
        names, idx, taps = shape
        self.count += 1
        key = (names, tuple(t is None for t in taps))
        slot = self.keys.get(key, -1)
        if slot == -1:
            slot = self._new_key(k, raw, key)
        if self.invalid is not None:
            return
        if slot is None:
            self._record_invalid(k, idx, taps, names)
            return
        s = self.slots[slot]
        try:
            s.nodes.extend(idx)
            s.taps.extend([0 if t is None else t for t in taps])
        except OverflowError:  # out of any layer's or connection's range: invalid
            del s.nodes[len(s.index) * len(s.layers):]
            del s.taps[len(s.index) * len(s.hops):]
            self._record_invalid(k, idx, taps, names)
            return
        s.index.append(k)

    def _new_key(self, k: int, raw: object, key: tuple) -> int | None:
        names, kinds = key
        index = self.net.index
        if not all(n in index for n in names):
            read_general_path(self.net, raw, f"{self.source}: basis[{k}]")  # raises: names no layer
        layers = tuple(index[n] for n in names)
        net = self.net
        hops = tuple(net.hop.get((a, b, not none)) for a, b, none in zip(layers, layers[1:], kinds))
        ok = (len(layers) >= 2 and len(kinds) == len(layers) - 1 and layers[0] in net.inputs
              and layers[-1] in net.outputs and None not in hops)
        slot = None
        if ok:
            slot = len(self.slots)
            self.slots.append(_Slot(layers, hops, array(self.code), array(self.code)))
        self.keys[key] = slot
        return slot

    def _record_invalid(self, k: int, idx: list, taps: list, names: tuple) -> None:
        path = (tuple(zip((self.net.index[n] for n in names), idx)), tuple(taps))
        self.invalid = (k, f"path {k} ({format_general_path(self.net, path)}): {path_problem(self.net, path)}")

    def blocks(self) -> list[tuple[GeneralBlock, np.ndarray]]:
        """Each slot as (block, file indices of its rows)."""
        out = []
        for s in self.slots:
            n = len(s.index)
            nodes = np.frombuffer(s.nodes, dtype=np.dtype(self.code)).reshape(n, len(s.layers))
            taps = np.frombuffer(s.taps, dtype=np.dtype(self.code)).reshape(n, len(s.hops))
            out.append((GeneralBlock(s.layers, s.hops, nodes, taps), np.frombuffer(s.index, dtype=np.int64)))
        return out


def _fast_shape(raw: object):
    """(layer names, neuron indices, taps) of a path in the usual form, or None for anything
    ``read_general_path`` must look at (it raises, or reads an unusual but valid form)."""
    if type(raw) is not dict or len(raw) != 2:
        return None
    nodes, taps = raw.get("nodes"), raw.get("taps")
    if type(nodes) is not list or type(taps) is not list:
        return None
    if not all(type(n) is list and len(n) == 2 for n in nodes):
        return None
    names, idx = tuple([n[0] for n in nodes]), [n[1] for n in nodes]
    if not all(type(n) is str for n in names) or not all(type(i) is int for i in idx):
        return None
    if not all(t is None or type(t) is int for t in taps):
        return None
    return names, idx, taps


def certify_path_rows(rows: PathRows) -> Verdict:
    """``certify_general`` on the paths read into ``rows``: the same verdict and defect."""
    net, blocks = rows.net, rows.blocks()
    return verdict_of(rows.count, net.basis_size, _first_invalid(net, blocks, rows.invalid),
                            lambda: peel_by_holders([b for b, _ in blocks], lambda b: block_weight_ids(net, b), net.m),
                            lambda: _first_duplicate(net, blocks))


def _path(net: GeneralNetwork, block: GeneralBlock, row: int):
    trainable = [net.connections[k].trainable for k in block.hops]
    nodes = tuple(zip(block.layers, block.nodes[row].tolist()))
    return nodes, tuple(int(t) if tr else None for t, tr in zip(block.taps[row].tolist(), trainable))


def invalid_rows(net: GeneralNetwork, block: GeneralBlock) -> np.ndarray:
    """Per row of a block whose layer sequence and hops are a path's: whether the row is not a
    path (``path_problem``'s row checks: neuron ranges, index-keeping and grouped hops, taps)."""
    bad = np.zeros(len(block), dtype=bool)
    nodes, taps = block.nodes, block.taps
    for col, l in enumerate(block.layers):
        bad |= (nodes[:, col] < 0) | (nodes[:, col] >= net.layers[l].size)
    for h, k in enumerate(block.hops):
        c = net.connections[k]
        a, b = nodes[:, h].astype(np.int64), nodes[:, h + 1].astype(np.int64)
        if c.kind in ("diagonal", "identity"):
            bad |= a != b
        if c.kind == "grouped":
            ga, gb = net.group_sizes(c)
            bad |= (a // ga) != (b // gb)
        if c.trainable:
            bad |= (taps[:, h] < 0) | (taps[:, h] >= c.taps)
    return bad


def _first_invalid(net: GeneralNetwork, blocks, found: tuple[int, str] | None) -> str | None:
    """The message of the first invalid path in file order, or None."""
    best = found
    for block, index in blocks:
        bad = np.flatnonzero(invalid_rows(net, block))
        if bad.size and (best is None or index[bad[0]] < best[0]):
            path = _path(net, block, int(bad[0]))
            n = int(index[bad[0]])
            best = (n, f"path {n} ({format_general_path(net, path)}): {path_problem(net, path)}")
    return None if best is None else best[1]


def _first_duplicate(net: GeneralNetwork, blocks) -> str | None:
    """The message of the earliest path (file order) equal to an earlier one, or None."""
    best = None
    for block, index in blocks:
        if len(block) < 2:
            continue
        rows = np.ascontiguousarray(np.concatenate([block.nodes, block.taps], axis=1))
        keys = rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
        order = np.argsort(keys, kind="stable")  # equal rows keep file order: a run starts with the first
        same = np.concatenate([[False], keys[order][1:] == keys[order][:-1]])
        if not same.any():
            continue
        run_start = np.maximum.accumulate(np.where(same, 0, np.arange(len(order))))
        later = np.flatnonzero(same)
        pos = later[np.argmin(index[order[later]])]
        j, i = int(index[order[pos]]), int(index[order[run_start[pos]]])
        if best is None or j < best[0]:
            best = (j, i, format_general_path(net, _path(net, block, int(order[pos]))))
    return None if best is None else f"path {best[0]} ({best[2]}) duplicates path {best[1]}"
