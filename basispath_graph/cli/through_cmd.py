"""``basispath through``: the paths of a stored run through one neuron, however the run is stored."""

from __future__ import annotations

from itertools import islice
from typing import Optional

import typer
from rich.console import Console

from ..analysis.paths_through import resolve_layer
from ..graph_store import GraphStore
from ..store import StoreError
from .common import TABLE_ROWS, fail, failure, print_rows, stream_json, stream_rows
from .progress import StageProgress
from .store_cmds import STORE_HELP, WAIT_HELP, open_for_cli


#: The columns, the path last: past a table's worth of rows they are printed as they are read,
#: as wide as the first ones were, and only the last column may then be wider.
HEADERS = ["id", "kept", "path"]


def _cells(row: dict) -> list[str]:
    return [str(row["id"]), "yes" if row["kept"] else "no", row["text"]]


def _checked_layer(store: GraphStore, run_id: str, layer: str, neuron: int) -> int:
    """The layer's index in the run's network; one error line for a layer it lacks or a neuron
    outside the layer (the Cypher question answers those with no row; a person typed them)."""
    try:
        network = store.network_of(run_id)
    except StoreError as exc:
        raise failure(exc) from None
    position = resolve_layer(network, layer)
    if position < 0:
        count = network.L + 1 if network.is_layered else len(network.layers)
        shown = [] if network.is_layered else [spec_layer.name for spec_layer in network.layers]
        names = "" if network.is_layered else f" or a name: {', '.join(shown[:6])}{', ...' if len(shown) > 6 else ''}"
        raise fail(f"run {run_id}'s network has no layer {layer!r} (give an index 0 .. {count - 1}{names})")
    size = int(network.widths[position]) if network.is_layered else int(network.layers[position].size)
    if neuron >= size:
        raise fail(f"layer {layer} has {size} neuron(s): no neuron {neuron}")
    return position


def through_command(
    run_id: str = typer.Argument(..., help="Run id (see 'basispath runs')."),
    layer: str = typer.Argument(..., help="The layer: an index (layered run), or a position in the spec or a name (general run)."),
    neuron: int = typer.Argument(..., min=0, help="The neuron's index in that layer."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Print the first N paths only (stops reading there)."),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print rows as JSON objects."),
    wait: float = typer.Option(0, "--wait", min=0, help=WAIT_HELP),
) -> None:
    """Which paths of a run go through a neuron? Kept and discarded, by id.

    A run whose paths are stored as nodes is asked in Cypher (the packaged
    paths_through_neuron query); a run stored described (a big network's) has no node for most
    of its paths, so they are made from its description and filtered in Python, with progress.

    Example:

        basispath through 3fa2c1d0 3 1
        basispath through 5b1e0c2a layer1.0.conv1 7 --limit 20
    """
    with open_for_cli(store, write=False, wait=wait) as s:
        graph = GraphStore(s, store)
        position = _checked_layer(graph, run_id, layer, neuron)
        read, reading = [0], [not as_json]
        with StageProgress(enabled=not as_json, verb="reading") as progress:
            progress.stage("paths")

            def advance(done: int) -> None:
                if reading[0]:
                    progress.advance(done - read[0])
                read[0] = done

            try:
                rows = islice(graph.iter_paths_through(run_id, position, neuron, progress=advance), limit)
                head = [] if as_json else list(islice(rows, TABLE_ROWS + 1))  # a table's worth, read with progress
            except StoreError as exc:
                raise failure(exc) from None
        reading[0] = False
        # More rows than a table holds are printed as they are read, never all held: on VGG-19's
        # skeleton run over 100 M paths go through one neuron of the first layer.
        if as_json:
            count = stream_json(rows)
        elif len(head) <= TABLE_ROWS:
            count = len(head)
            print_rows(HEADERS, [_cells(r) for r in head])
        else:
            count = stream_rows(HEADERS, [_cells(r) for r in head], map(_cells, rows))
    if not as_json:
        Console(stderr=True).print(f"{count} path(s) through {layer}:{neuron}{' (limit reached)' if limit and count == limit else ''}",
                                   style="dim")
