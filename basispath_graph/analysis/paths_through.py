"""Which paths of a run go through neuron i of layer l, answered in Python from the run's blocks.

``paths_through_neuron.cypher`` asks this of the paths a run stores as ``BasisPath`` nodes. A
run stored described (a big skeleton run's families, a described deah-complete run, the
discards of a layer-DAG run: docs/graph-model.md) has no node for most of its paths, so the
same question is answered here: the run's kept paths, then its discarded ones, are made block by
block (in the memory of one block) and each block is filtered on the one column of that layer.
The rows are the Cypher question's: ``id`` (kept 0 .. |B| - 1 in basis order, then the discards
in their order, as a listed run numbers its ``BasisPath`` nodes), ``text`` (as a node's) and
``kept``. A skeleton family is filtered on the one column read from its designated walks and
only its matching paths are made (``described.FamilyChunk``: ResNet-50's 25.5 M skeleton paths in
about 2 s); so is a described DEAH core's block, its column read from each row's index
(``SubroutineRows.column``, through ``KeptRows`` and ``SpelledRows``: deah-complete's 74.6 M paths
of ResNet-50 in about 4 s, was 50 s made whole); a listed block is made.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ..errors import LimitExceeded
from ..general.paths import format_general_path
from ..store.base import ArrowStrings
from ..store.general_artifacts import general_path_texts
from ..verify.certify import format_path

__all__ = ["paths_through", "path_sources", "resolve_layer", "stored_described", "held_rows", "ROW_BYTES"]


def resolve_layer(network, layer: int | str) -> int:
    """A layer given by index (a layered network), position in the spec or name (a general one),
    as the index the paths use. A layer the network does not have is -1: no path goes through it."""
    if isinstance(layer, str) and not layer.lstrip("-").isdigit():
        index = getattr(network, "index", {})
        return int(index[layer]) if layer in index else -1
    layer = int(layer)
    layers = network.L + 1 if network.is_layered else len(network.layers)
    return layer if 0 <= layer < layers else -1


def _size(network, layer: int) -> int:
    return int(network.widths[layer]) if network.is_layered else int(network.layers[layer].size)


def path_sources(kept: Sequence, discarded: Sequence) -> list[tuple[int, bool, Sequence]]:
    """(first id, kept, paths) of a run's two sequences, in id order."""
    return [(0, True, kept), (len(kept), False, discarded)]


def paths_through(network, sources, layer: int | str, neuron: int, progress=None) -> Iterator[dict]:
    """Every path of ``sources`` (``path_sources``) through ``neuron`` of ``layer``, by id: rows
    ``{"id", "text", "kept"}``. A sequence with ``iter_blocks()`` (the made ones) is read block by
    block; any other (a listed run's) path by path. No row for a layer the network does not have
    or a neuron outside its size, as from the Cypher question. ``progress(paths)`` is called after
    each block with the paths read so far."""
    layer = resolve_layer(network, layer)
    if layer < 0 or not 0 <= int(neuron) < _size(network, layer):
        return
    neuron, done = int(neuron), 0
    for first, kept, paths in sources:
        blocks = getattr(paths, "iter_blocks", None)
        if blocks is None:
            for k, path in enumerate(paths):
                hit = _listed_hit(network, path, layer, neuron)
                if hit is not None:
                    yield {"id": first + k, "text": hit, "kept": kept}
            done += len(paths)
        else:
            at = first
            for block in blocks():
                yield from _block_hits(network, block, layer, neuron, at, kept)
                at += len(block)
                done += len(block)
                if progress is not None:
                    progress(done)
        if progress is not None:
            progress(done)


def _block_hits(network, block, layer: int, neuron: int, first: int, kept: bool) -> Iterator[dict]:
    """The rows of one block through (layer, neuron), with their stored texts."""
    if layer not in block.layers:
        return
    column = block.layers.index(layer)
    values = block.column(column) if hasattr(block, "column") else block.nodes[:, column]  # a family: from its walks
    rows = np.flatnonzero(np.asarray(values) == neuron)
    if not len(rows):
        return
    made = block.take(rows)  # only the rows that go through it
    if hasattr(block, "hops"):  # a general network's block
        texts = general_path_texts(network, made).tolist()
    else:
        texts = ArrowStrings.paths(block.layers, np.asarray(made.nodes)).tolist()
    for row, text in zip(rows.tolist(), texts):
        yield {"id": first + row, "text": text, "kept": kept}


def _listed_hit(network, path, layer: int, neuron: int) -> str | None:
    """The stored text of a listed path (``((layer, index), ...)``, or a general path with its
    taps) when it goes through (layer, neuron), else None."""
    general = not network.is_layered
    nodes = path[0] if general else path
    if (layer, neuron) not in ((int(l), int(i)) for l, i in nodes):
        return None
    if general:
        return format_general_path(network, path)
    return format_path([l for l, _ in nodes], [i for _, i in nodes])


def stored_described(store, run_id: str, basis_size: int) -> bool:
    """Whether a stored run keeps some of its paths as a description rather than as
    ``BasisPath`` nodes (so Cypher over the nodes would miss them): a described DEAH or
    layer-DAG run (``DescribedBlock`` rows), or a skeleton run whose families are not listed."""
    if store.run("run_described_blocks", run=run_id):
        return True
    if not store.run("run_families", run=run_id):
        return False
    (row,) = store.run("count_kept", run=run_id)
    return int(row["n"]) < basis_size


#: Bytes one answer row costs held in a list, beside its text (a dict of three keys, an int, a
#: bool and a str header; measured with sys.getsizeof, rounded up).
ROW_BYTES = 300


def held_rows(rows, where: str, budget: int) -> list[dict]:
    """``rows`` as a list, refused in one line (``LimitExceeded``) as soon as holding them would
    take more than ``budget`` bytes: on VGG-19's skeleton run over 100 M paths, each with a text
    of 700 characters, go through one neuron of its first layer (the kernel would kill the
    process long before the list was made). What does not fit is read as a stream instead
    (``GraphStore.iter_paths_through``, ``basispath through``)."""
    out, held = [], 0
    for row in rows:
        held += ROW_BYTES + len(row["text"])
        if held > budget:
            raise LimitExceeded(
                f"more than {len(out):,} paths go through {where}: as a list they would take over {budget / 1e9:.2f} GB"
                " (the memory limit); give a limit, read them one at a time (GraphStore.iter_paths_through), or stream"
                " them with 'basispath through'")
        out.append(row)
    return out
