"""A general run's paths as bulk columns (``GeneralResult.blocks``, any engine), for the one
artifact writer (``store/artifacts.py``, through ``store/path_forms.GeneralForm``).

A ``BasisPath`` of a general run has ``layers`` (layer positions in the spec), ``nodes`` (global
neuron ids: ``GeneralNetwork.neuron_offset[layer] + index``), ``taps`` (one per hop, -1 on an
identity hop) and ``text``, the path as ``general.paths.format_general_path`` writes it
(``x:0 -[3]-> h:1 -[id]-> y:1``). Columns are numpy arrays, ``Ragged`` lists and Arrow strings,
no Python object per path, so a few hundred thousand paths load in one COPY.
"""

from __future__ import annotations

import numpy as np

from ..general.blocks import GeneralBlock
from ..general.model import GeneralNetwork
from .base import ArrowStrings, Ragged

__all__ = ["general_path_columns", "general_path_texts"]


def general_path_texts(net: GeneralNetwork, block: GeneralBlock) -> ArrowStrings:
    """``format_general_path`` of every path of ``block``, built by Arrow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(block)
    if n == 0:
        return ArrowStrings(pa.array([], type=pa.string()))
    parts: list = []
    for k, layer in enumerate(block.layers):
        if k:
            c_idx = block.hops[k - 1]
            if net.connections[c_idx].trainable:
                parts += [" -[", pc.cast(pa.array(np.asarray(block.taps[:, k - 1], dtype=np.int64)), pa.string()), "]-> "]
            else:
                parts.append(" -[id]-> ")
        parts += [f"{net.layers[layer].name}:", pc.cast(pa.array(np.asarray(block.nodes[:, k], dtype=np.int64)), pa.string())]
    return ArrowStrings(pc.binary_join_element_wise(*parts, ""))


def _taps(net: GeneralNetwork, block: GeneralBlock) -> np.ndarray:
    """(paths, hops) taps, -1 on identity hops."""
    taps = np.asarray(block.taps, dtype=np.int64).reshape(len(block), len(block.hops)).copy()
    for k, c_idx in enumerate(block.hops):
        if not net.connections[c_idx].trainable:
            taps[:, k] = -1
    return taps


def general_path_columns(run_id: str, net: GeneralNetwork, blocks: list[GeneralBlock], start_id: int, kept: bool) -> dict:
    """Columns for ``insert_basis_paths`` of every path of ``blocks`` (ids start_id, ...), in
    the table's column order."""
    n = sum(len(b) for b in blocks)
    ids = np.arange(start_id, start_id + n, dtype=np.int64)
    offsets = np.asarray(net.neuron_offset, dtype=np.int64)
    return {
        "uid": ArrowStrings.keys(f"{run_id}:", ids),
        "run": [run_id] * n,
        "id": ids,
        "nodes": Ragged.from_rows([np.asarray(b.nodes, dtype=np.int64) + offsets[list(b.layers)] for b in blocks]),
        "layers": Ragged.from_rows([np.broadcast_to(np.array(b.layers, dtype=np.int64), (len(b), len(b.layers))) for b in blocks]),
        "text": ArrowStrings.concat([general_path_texts(net, b) for b in blocks]),
        "kept": np.full(n, kept),
        "taps": Ragged.from_rows([_taps(net, b) for b in blocks]),
    }
