"""Certifying a paths file as it is read: a layered network's here (the checks' order, for every
certifier: ``verify.certify.verdict_of``).

``json.load`` holds a paths file as Python lists, about 20 bytes a byte of file. Here the file's
``basis`` list (or the file, a bare list) is read a path at a time (``json_stream``) into rows of
integers (``LayeredRows``; a general network's: ``general.streamed_verify.PathRows``), checked
for shape as ``export.basis_paths_of`` does, a new block at every change of layer sequence as in
``network.blocks_from_json`` (so path k of the file is path k of the blocks). Peeling keeps a
count and a sum of holder ids per weight (``linalg.peel_by_holders``); duplicates are searched
only when the rank falls short (full rank implies distinct paths). The verdict and the defect
are those of reading the whole document (``certify``), tests/test_streamed_verify.py compares
them.
"""

from __future__ import annotations

from array import array

import numpy as np

from ..errors import BadInput
from ..export import json_file_errors
from ..json_stream import STREAMED, stream_list
from ..linalg.peeling import peel_by_holders
from ..network import Network, PathBlock
from .certify import Verdict, block_first_problem, find_duplicate, find_invalid, format_path, verdict_of

__all__ = ["LayeredRows", "stream_basis_file", "listed_rows", "certify_layered_rows"]

_INT64 = (-(2**63), 2**63)


class LayeredRows:
    """A layered network's paths, read one at a time into blocks of consecutive paths with the
    same layer sequence, rows of 2-byte integers where every width allows (else 8).

    ``error``: ``basis_paths_of``'s message for the first path not in the form of a path (raised
    once the document is known not to be a described basis); ``invalid``: the message of the
    first path with a neuron out of the rows' integer type (no row is kept after it: an earlier
    invalid path is still found in the rows)."""

    def __init__(self, network: Network, source: str) -> None:
        self.network, self.source = network, source
        self.code = "h" if max(network.widths) < 2**15 else "q"
        self.restart()

    def restart(self) -> None:
        self.runs: list[tuple[tuple[int, ...], array]] = []
        self.count = 0
        self.error: str | None = None
        self.invalid: str | None = None

    def add(self, k: int, raw: object) -> None:
        if self.error is not None:
            return
        ok = type(raw) is list and len(raw) > 0 and all(
            type(x) is list and len(x) == 2 and type(x[0]) is int and type(x[1]) is int for x in raw
        )
        if not ok:
            self.error = f"{self.source}: basis[{k}] is not a list of [layer, index] integer pairs"
            return
        layers, idx = tuple([x[0] for x in raw]), [x[1] for x in raw]
        self.count += 1
        if not self.runs or self.runs[-1][0] != layers:
            if not all(_INT64[0] <= l < _INT64[1] for l in layers):
                self.error = f"{self.source}: basis[{k}] has an integer out of the 64-bit range"
                return
            if self.invalid is None:
                self.runs.append((layers, array(self.code)))
        if self.invalid is not None:  # no row is kept, but the form is checked to the end
            if not all(_INT64[0] <= i < _INT64[1] for i in idx):
                self.error = f"{self.source}: basis[{k}] has an integer out of the 64-bit range"
            return
        run = self.runs[-1][1]
        try:
            run.extend(idx)
        except OverflowError:
            del run[(len(run) // len(layers)) * len(layers):]
            if not all(_INT64[0] <= i < _INT64[1] for i in idx):
                self.error = f"{self.source}: basis[{k}] has an integer out of the 64-bit range"
            else:  # a neuron past every width
                block = PathBlock(layers, np.array([idx], dtype=np.int64))
                _, problem = block_first_problem(self.network, block)
                self.invalid = f"path {k} ({format_path(layers, idx)}): {problem}"

    def blocks(self) -> list["_Rows"]:
        return [_Rows(layers, np.frombuffer(run, dtype=np.dtype(self.code)).reshape(-1, len(layers)))
                for layers, run in self.runs if len(run)]


class _Rows:
    """A block of ``LayeredRows``: read as a ``PathBlock`` (layers, nodes, len), whose ``take``
    makes a ``PathBlock`` (int64 rows) of a few rows."""

    def __init__(self, layers: tuple[int, ...], nodes: np.ndarray) -> None:
        self.layers, self.nodes = layers, nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def take(self, rows) -> PathBlock:
        return PathBlock(self.layers, self.nodes[rows])

    def column(self, k: int) -> np.ndarray:
        return self.nodes[:, k].astype(np.int64)


def stream_basis_file(path, source: str, rows) -> dict | None:
    """Read the basis file ``path`` into ``rows`` (``add``, ``restart``) a path at a time: the
    document's top-level scalars (None for a bare list; ``json_stream.stream_list``). BadInput
    (one line naming ``source``) when it is not JSON, or neither a list nor an object."""
    with json_file_errors(source):
        with open(path, encoding="utf-8") as f:
            doc = stream_list(f, "basis", rows.add, rows.restart)
    if doc is not None and not isinstance(doc, dict):
        raise BadInput(f"{source}: expected a list of paths or an object with a 'basis' list")
    return doc


def listed_rows(rows, doc: dict | None):
    """``rows`` when the document read was a list of paths; BadInput as ``basis_paths_of`` says
    it otherwise, or for its first path not in the form of a path."""
    if doc is not None and doc.get("basis") is not STREAMED:
        raise BadInput(f"{rows.source}: expected a list of paths or an object with a 'basis' list")
    if rows.error is not None:
        raise BadInput(rows.error)
    return rows


def certify_layered_rows(rows: LayeredRows) -> Verdict:
    """``certify`` on the paths read into ``rows``: the same verdict and defect."""
    net, blocks = rows.network, rows.blocks()
    return verdict_of(rows.count, net.basis_size, find_invalid(net, blocks) or rows.invalid,
                            lambda: peel_by_holders(blocks, net.weight_ids, net.m), lambda: find_duplicate(net, blocks))
