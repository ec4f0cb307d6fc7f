"""How the store spells a DEAH run's layers, weights and paths: the layered network's own way, or
a general network's (general path form), so one writer stores both (``store/artifacts.py``).

The DEAH engines solve a layered network: a layered run's network itself, or the *core* of a
general network (docs/general-networks.md), whose layer k is the general layer at position
``positions[k]`` in the spec. A form turns what the engine produced (core layer indices, weight
ids of the layered numbering, neuron indices) into what the store holds:

============  =====================================  ==============================================
              ``LayeredForm``                        ``GeneralForm``
============  =====================================  ==============================================
layers        indices 0..L                           positions in the spec
edge codes    ``a * (L + 1) + b``                    ``a * n + b`` over positions (n layers)
weight ids    layered numbering (pairs sorted)       general numbering (connection order, tap 0)
path rows     ``0:1,2:0,4:2``, ``taps`` ``[]``       ``x:0 -[0]-> h:1``, ``taps`` 0 per hop
============  =====================================  ==============================================

A general network written from a layered spec (layers "0".."L", ``general.model.from_layered``)
gets the same layers, edge codes, weight ids and neuron ids as the layered run; only the texts
and ``taps`` differ. Every method works on whole columns (numpy arrays), never a Python object
per path.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..general.blocks import GeneralBlock
from ..general.model import GeneralNetwork
from ..general.paths import path_block
from ..network import Network, PathBlock, blocks_from_json
from .base import ArrowStrings, Ragged, Store
from .general_artifacts import general_path_columns, general_path_texts

__all__ = ["LayeredForm", "GeneralForm", "DagForm", "stored_form", "core_network"]


class LayeredForm:
    """A layered run's spelling: everything as the engine produced it."""

    def __init__(self, network: Network) -> None:
        self.core = network
        self.positions = np.arange(network.L + 1, dtype=np.int64)  # core layer k -> stored layer
        self.size = network.L + 1  # stored layers: what edge codes and beta count

    def layers(self, layers: Sequence[int]) -> list[int]:
        """Core layer indices as stored layers."""
        return [int(self.positions[l]) for l in layers]

    def edge_code(self, a: int, b: int) -> int:
        """A core layer pair as an edge code of the stored layers (``relations.edge_code``)."""
        return int(self.positions[a]) * self.size + int(self.positions[b])

    def beta(self, layers: Sequence[int]) -> list[int]:
        """The 0/1 vector over the stored layers of a core layer sequence."""
        out = [0] * self.size
        for l in layers:
            out[int(self.positions[l])] = 1
        return out

    def weights(self, ids) -> np.ndarray:
        """Core weight ids as stored weight ids (any shape)."""
        return np.asarray(ids, dtype=np.int64)

    def hop_code(self, key) -> int:
        """A hop key of Step 3 (``step3_sdvchain.hop_keys``: a core layer pair) as an edge code."""
        return self.edge_code(*key)

    def discarded_blocks(self, discarded) -> list:
        """Discard records (``DiscardedPath``: core layers and neurons) as blocks of paths."""
        return blocks_from_json([[[l, i] for l, i in zip(d.layers, d.indices)] for d in discarded])

    def texts(self, layers: Sequence[int], nodes) -> ArrowStrings:
        """The stored text of every row of ``nodes`` (a path along core ``layers``)."""
        return ArrowStrings.paths(layers, nodes)  # verify.format_path

    def path_columns(self, run_id: str, blocks: list[PathBlock], start_id: int, kept: bool) -> dict:
        """Columns for ``insert_basis_paths`` of every path of core ``blocks`` (ids start_id, ...).

        List columns are ``Ragged`` (numpy values + offsets) and strings are built by Arrow
        (``ArrowStrings``), so that millions of paths never become Python objects on the way to a COPY.
        """
        net = self.core
        offs = np.concatenate([[0], np.cumsum(net.widths)[:-1]]).astype(np.int64)
        n = sum(len(b) for b in blocks)
        ids = np.arange(start_id, start_id + n, dtype=np.int64)
        return {
            "uid": ArrowStrings.keys(f"{run_id}:", ids),
            "run": [run_id] * n,
            "id": ids,
            "nodes": Ragged.from_rows([b.nodes + offs[list(b.layers)] for b in blocks]),
            "layers": Ragged.from_rows([np.broadcast_to(np.array(b.layers), (len(b), len(b.layers))) for b in blocks]),
            "text": ArrowStrings.concat([self.texts(b.layers, b.nodes) for b in blocks]),
            "kept": np.full(n, kept),
            "taps": Ragged.empty(n),  # a layered path has no taps
        }


class GeneralForm(LayeredForm):
    """A general run's spelling of its core (the general layers at ``positions``): layer
    positions, general weight ids (tap 0) and general path rows (``store/general_artifacts.py``).
    With no ``positions`` (a run with no core: skeleton) it spells general blocks only."""

    def __init__(self, network: GeneralNetwork, positions: Sequence[int] = ()) -> None:
        self.network = network
        self.positions = np.asarray(positions, dtype=np.int64)
        self.size = len(network.layers)
        if not len(positions):
            self.core, self.hops = None, {}
            return
        self.core = core_network(network, positions)
        self.hops = {(a, b): network.hop[(int(self.positions[a]), int(self.positions[b]), True)] for a, b in self.core.pairs}
        # Per core pair in weight-id order: its first layered id, first general id, taps, target width.
        pairs = sorted(self.core.pairs, key=lambda p: self.core.offsets[p])
        self._starts = np.array([self.core.offsets[p] for p in pairs], dtype=np.int64)
        self._general = np.array([network.connection_offsets[self.hops[p]] for p in pairs], dtype=np.int64)
        self._taps = np.array([network.connections[self.hops[p]].taps for p in pairs], dtype=np.int64)

    def weights(self, ids) -> np.ndarray:
        """Layered weight ids of the core (offset(a, b) + i * w_b + j) as general ones, tap 0
        (offset of connection (a, b) + (i * w_b + j) * taps)."""
        ids = np.asarray(ids, dtype=np.int64)
        k = np.searchsorted(self._starts, ids, side="right") - 1
        return self._general[k] + (ids - self._starts[k]) * self._taps[k]

    def block(self, layers: Sequence[int], nodes) -> GeneralBlock:
        """Core paths (along core ``layers``) as a block of general paths, tap 0 on every hop."""
        hops = tuple(self.hops[(a, b)] for a, b in zip(layers, layers[1:]))
        nodes = np.asarray(nodes)
        return GeneralBlock(tuple(self.layers(layers)), hops, nodes, np.zeros((len(nodes), len(hops)), dtype=np.int32))

    def texts(self, layers: Sequence[int], nodes) -> ArrowStrings:
        return general_path_texts(self.network, self.block(layers, nodes))

    def path_columns(self, run_id: str, blocks, start_id: int, kept: bool) -> dict:
        """Columns of core ``blocks`` (``PathBlock``) or of general ones (``GeneralBlock``: the
        run's basis, core paths first)."""
        general = [b if isinstance(b, GeneralBlock) else self.block(b.layers, b.nodes) for b in blocks]
        return general_path_columns(run_id, self.network, general, start_id, kept)


class DagForm(GeneralForm):
    """Faithful deah on a layer DAG core (``general/dag_sdvchain.py``): the engine works in the
    general network's own terms (layers, general weight ids, paths with taps); Step 3's hop keys
    are connections, stored as the edge code of their layer pair (one trainable connection per
    pair)."""

    def __init__(self, network: GeneralNetwork) -> None:
        super().__init__(network)
        self.positions = np.arange(len(network.layers), dtype=np.int64)

    def weights(self, ids) -> np.ndarray:
        return np.asarray(ids, dtype=np.int64)

    def hop_code(self, key) -> int:
        c = self.network.connections[key]
        return self.edge_code(c.source, c.target)

    def discarded_blocks(self, discarded) -> list:
        """Discard records with their taps (identity hops: None) as general blocks, consecutive
        records along the same route in one."""
        runs: list[list[GeneralBlock]] = []
        for d in discarded:
            b = path_block(self.network, (tuple(zip(d.layers, d.indices)), d.taps))
            if runs and (runs[-1][0].layers, runs[-1][0].hops) == (b.layers, b.hops):
                runs[-1].append(b)
            else:
                runs.append([b])
        return [GeneralBlock(r[0].layers, r[0].hops, np.concatenate([b.nodes for b in r]), np.concatenate([b.taps for b in r])) for r in runs]


def core_network(network: GeneralNetwork, positions: Sequence[int]) -> Network:
    """The layered network on the general layers at ``positions`` (the core of a DEAH engine):
    their sizes, and their trainable connections as layer pairs."""
    at = {int(p): k for k, p in enumerate(positions)}
    pairs = [(at[c.source], at[c.target]) for c in network.connections if c.trainable and c.source in at and c.target in at]
    return Network([network.layers[int(p)].size for p in positions], [list(p) for p in pairs if p[1] != p[0] + 1], network.name)


def stored_form(store: Store, run_id: str, network) -> LayeredForm | None:
    """The form a stored run was written in: ``LayeredForm`` for a layered network, a
    ``GeneralForm`` over the core its substructure paths run through for a general DEAH run,
    None for a general run with no substructure paths (skeleton) or whose substructures are
    routes of a layer DAG (deah-complete, ``store/dag_runs.py``: its basis is a skeleton's)."""
    if network.is_layered:
        return LayeredForm(network)
    from ..general.paper_setting import reads_as_layer_dag

    if reads_as_layer_dag(network):
        return None
    positions = [int(r["layer"]) for r in store.run("core_layers", run=run_id)]
    return GeneralForm(network, positions) if positions else None
