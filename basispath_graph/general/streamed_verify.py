"""Certifying a paths file of a general network as it is read, in memory far below the file's.

``certify_general`` holds every path as Python tuples and peels CSR arrays of int64 weight ids:
about 20 bytes a byte of JSON to read and 40 a path entry to peel (faithful deah's 4.2 GB export
of ResNet-18, 222 M path entries, was killed by the kernel). Here:

* the file is read an element at a time (``json_stream``); each path is checked for shape as
  ``read_general_path`` does and kept as a row of small integers in the block of its layer
  sequence and hop kinds (2 bytes a neuron and a tap where the network's sizes allow);
* validity is checked on whole blocks, the first invalid path in file order reported with
  ``path_problem``'s message;
* peeling keeps, per weight, how many remaining paths hold it and the sum of their ids: a weight
  held once names its holder by that sum, so a path's weight ids are made from its row only when
  it peels (O(m) memory besides the rows); the core (what never peels) goes to the same exact
  rank as ``certify_blocks``;
* duplicates are looked for only when the rank falls short (distinct paths are implied by full
  rank), by sorting each block's rows.

The verdict is ``certify_general``'s on every file (tests/test_streamed_verify.py compares them).
"""

from __future__ import annotations

import json
from array import array
from dataclasses import dataclass, field

import numpy as np

from ..errors import BadInput
from ..json_stream import STREAMED, stream_list
from ..verify.certify import Verdict
from ..verify.rank import exact_rank_of_rows, rank_of_rows
from .blocks import GeneralBlock, block_weight_ids
from .model import GeneralNetwork
from .paths import format_general_path, path_problem, read_general_path

__all__ = ["PathRows", "read_path_rows", "paths_of_document", "certify_path_rows", "invalid_rows"]

_ROWS = 1 << 19  # paths turned into weight ids at a time


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


def read_path_rows(net: GeneralNetwork, path, source: str | None = None) -> tuple[PathRows, dict | None]:
    """Read the paths file ``path`` (a paths export, or a bare list of paths) into ``PathRows``,
    with the document's top-level scalars (``stream_list``; None for a list: a described basis is
    told by its ``format``, ``paths_of_document`` says what else is wrong); BadInput (one line
    naming the file) when it is not JSON, or neither a list nor an object."""
    source = str(path) if source is None else source
    rows = PathRows(net, source)
    try:
        with open(path, encoding="utf-8") as f:
            doc = stream_list(f, "basis", rows.add, rows.restart)
    except FileNotFoundError:
        raise BadInput(f"{source}: no such file") from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{source}: cannot read: {exc}") from None
    except RecursionError:
        raise BadInput(f"{source}: not valid JSON: nesting is too deep") from None
    except ValueError as exc:  # an integer literal beyond Python's digit limit
        raise BadInput(f"{source}: not valid JSON: {str(exc).split('; use sys.set_int_max_str_digits')[0]}") from None
    if doc is not None and not isinstance(doc, dict):
        raise BadInput(f"{source}: expected a list of paths or an object with a 'basis' list")
    return rows, doc


def paths_of_document(rows: PathRows, doc: dict | None) -> PathRows:
    """``rows`` when the document read (``read_path_rows``) was a list of paths; BadInput as
    ``general_basis_of`` says it otherwise, or for its first path not in the form of a path."""
    if doc is not None and doc.get("basis") is not STREAMED:
        raise BadInput(f"{rows.source}: expected a list of paths or an object with a 'basis' list")
    if rows.error is not None:
        raise BadInput(rows.error)
    return rows


def certify_path_rows(rows: PathRows) -> Verdict:
    """``certify_general`` on the paths read into ``rows``: the same verdict and defect."""
    net, size, expected = rows.net, rows.count, rows.net.basis_size
    blocks = rows.blocks()
    invalid = _first_invalid(net, blocks, rows.invalid)
    if invalid is not None:
        return Verdict(False, invalid, size, expected, None)
    peeled, core = _peel_rows(net, [b for b, _ in blocks])
    rank = peeled + rank_of_rows(core)
    if rank < size:
        duplicate = _first_duplicate(net, blocks)
        if duplicate:
            return Verdict(False, duplicate, size, expected, rank)
    if size != expected:
        return Verdict(False, f"size {size} != m - H = {expected}", size, expected, rank)
    if rank < size:
        rank = peeled + exact_rank_of_rows(core)
        if rank < size:
            return Verdict(False, f"dependent: rank {rank} < {size}", size, expected, rank)
    return Verdict(True, None, size, expected, size)


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


def _weights(net: GeneralNetwork, blocks: list[GeneralBlock], starts: np.ndarray, ids: np.ndarray):
    """(weight ids, path id of each) of the paths ``ids`` (ascending; a path's id is its block's
    start plus its row), a chunk of at most ``_ROWS`` paths at a time."""
    which = np.searchsorted(starts, ids, side="right") - 1
    cuts = np.flatnonzero(np.diff(which)) + 1
    for part in np.split(np.arange(len(ids)), cuts):
        if not part.size:
            continue
        b = int(which[part[0]])
        for lo in range(0, len(part), _ROWS):
            chunk = ids[part[lo:lo + _ROWS]]
            w = block_weight_ids(net, blocks[b].take(chunk - starts[b]))
            yield w.ravel(), np.repeat(chunk, w.shape[1])


def _peel_rows(net: GeneralNetwork, blocks: list[GeneralBlock]) -> tuple[int, list[list[int]]]:
    """(number of paths peeled, weight ids of each core path): ``linalg.peel``'s rounds with a
    count and a sum of holder ids per weight instead of the CSR arrays."""
    m = net.m
    sizes = [len(b) for b in blocks]
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(starts[-1])
    counts = np.zeros(m, dtype=np.int64)
    held = np.zeros(m, dtype=np.int64)  # sum of the ids of the remaining paths that hold each weight
    for w, who in _weights(net, blocks, starts, np.arange(n, dtype=np.int64)):
        counts += np.bincount(w, minlength=m)
        np.add.at(held, w, who)
    per_path = counts.sum() / max(n, 1)
    alive = np.ones(n, dtype=bool)
    peeled = 0
    cand = np.flatnonzero(counts == 1)
    while cand.size:
        holders = np.unique(held[cand])
        alive[holders] = False
        peeled += len(holders)
        dense = len(holders) * per_path > m // 8  # a big round: count densely (no sort)
        dec = np.zeros(m, dtype=np.int64) if dense else None
        touched = []
        for w, who in _weights(net, blocks, starts, holders):
            np.subtract.at(held, w, who)
            if dense:
                dec += np.bincount(w, minlength=m)
            else:
                touched.append(w)
        if dense:
            counts -= dec
            cand = np.flatnonzero((dec > 0) & (counts == 1))
        else:
            u, d = np.unique(np.concatenate(touched), return_counts=True)
            counts[u] -= d
            cand = u[counts[u] == 1]
    core = []
    for w, who in _weights(net, blocks, starts, np.flatnonzero(alive)):
        cuts = np.flatnonzero(np.diff(who)) + 1
        core.extend(part.tolist() for part in np.split(w, cuts))
    return peeled, core


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
