"""``basispath compare``: networks or runs side by side, as a table, JSON or a PNG."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from ..analysis.compare import Comparison, cell_text, column_counts, column_for_spec, column_from_run, column_label
from ..guards import ResourceLimit
from ..deah.step1_substructures import TooManySubstructures
from ..solver import DEFAULT_ENGINE, ENGINES
from ..store import StoreError, open_store
from ..errors import BadInput
from .common import fail, failure, memory_limit, read_any_network, table_console
from .help import ENGINE_HELP
from .store_cmds import STORE_HELP, WAIT_HELP


def compare_command(
    items: List[str] = typer.Argument(..., help="Run ids and/or spec files (solved now when not stored)."),
    engine: List[str] = typer.Option(
        [], "--engine", "-e",
        help=f"Engine(s) for specs; repeat to compare engines. {ENGINE_HELP} Default: {DEFAULT_ENGINE}, and skeleton for a general spec.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for specs."),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    wait: float = typer.Option(0, "--wait", min=0, help=WAIT_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the columns as JSON."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw the comparison to this PNG file."),
    fresh: bool = typer.Option(False, "--fresh", help="Solve specs now even when the store has a complete run of them."),
    counts: bool = typer.Option(False, "--counts", help="Compare the specs' sizes (m, H, |B|, layers and connections by kind) without solving them."),
    max_weights: Optional[int] = typer.Option(
        None, "--max-weights", min=1, help="Refuse networks with more weights (default 50,000,000 or $BASISPATH_MAX_WEIGHTS)."
    ),
    max_memory_gb: Optional[float] = typer.Option(
        None, "--max-memory-gb", help="Refuse before solving a spec whose estimated memory is over this (default: $BASISPATH_MAX_MEMORY_GB or 80% of RAM)."
    ),
) -> None:
    """Compare networks or runs side by side: m, H, |B|, R, chains or rule blocks, discards, repairs, times.

    A spec with a complete stored run (same structure, engine and seed) is read from the store
    (its column says "run ID", and its times include the store's work); --fresh solves it now.
    Each column is labelled "NETWORK (ENGINE)"; columns that would share a label get their
    source as well: "NETWORK (ENGINE, run ID)".

    Example:

        basispath compare examples/mlp.json examples/resnet-style.json examples/densenet-style.json --plot cmp.png
        basispath compare examples/resnet-style.json --engine deah --engine deah-complete
        basispath compare resnet18.json vgg11.json densenet.json --counts --max-weights 200000000
    """
    for e in engine:
        if e not in ENGINES:
            raise fail(f"unknown engine '{e}'; choose one of: {', '.join(ENGINES)}")
    if plot is not None and (plot.is_dir() or not plot.expanduser().parent.exists()):
        raise fail(f"cannot write plot file {plot}: not a file in an existing folder")
    specs = {item: read_any_network(Path(item), max_weights) for item in items if Path(item).is_file()}
    limit = memory_limit(max_memory_gb)
    try:
        opened = open_store(store, write=False, wait=wait)
    except StoreError as exc:
        if any(item not in specs for item in items):  # run ids need the store
            raise failure(exc) from None
        opened = None
    columns = []
    try:
        for item in items:
            if item in specs and counts:
                columns.append(column_counts(column_label(specs[item].name or Path(item).stem, "counts"), specs[item]))
            elif item in specs:
                from ..general.model import GeneralNetwork

                default = "skeleton" if not specs[item].is_layered else DEFAULT_ENGINE
                for e in engine or [default]:
                    try:
                        columns.append(column_for_spec(None if fresh else opened, Path(item), specs[item], e, seed, limit))
                    except ResourceLimit as exc:
                        raise fail(f"{item}: {exc}; or compare sizes only with --counts") from None
            else:
                col = column_from_run(opened, item)
                if col is None:
                    raise fail(f"{item}: neither a spec file nor a run id in this store")
                columns.append(col)
    except (TooManySubstructures, BadInput) as exc:
        raise fail(str(exc)) from None
    except StoreError as exc:
        raise failure(exc) from None
    finally:
        if opened is not None:
            opened.close()

    comparison = Comparison(columns)  # distinct labels, the same rows as in Python
    if plot is not None:
        comparison.plot(plot)
    if as_json:
        print(json.dumps(comparison.to_json()))
        return
    table = Table("", *(f"{escape(c.label)}\n[dim]{c.source}[/]" for c in comparison.columns))
    for label, values in comparison.rows():
        table.add_row(label, *(cell_text(v) for v in values))
    table_console().print(table)
    if plot is not None:
        table_console().print(f"plot written to {plot}")
