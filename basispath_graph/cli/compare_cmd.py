"""``basispath compare``: networks or runs side by side, as a table, JSON or a PNG."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from ..analysis.compare import METRICS, column_for_spec, column_from_run
from ..analysis.compare_plot import STEP_ORDER, plot_comparison
from ..deah.step1_substructures import TooManySubstructures
from ..solver import DEFAULT_ENGINE, ENGINES
from ..store import StoreError, open_store
from .common import fail, read_network
from .help import ENGINE_HELP
from .common import failure, table_console
from .store_cmds import STORE_HELP


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def compare_command(
    items: List[str] = typer.Argument(..., help="Run ids and/or spec files (solved now when not stored)."),
    engine: List[str] = typer.Option(
        [DEFAULT_ENGINE], "--engine", "-e",
        help=f"Engine(s) for specs; repeat to compare engines. {ENGINE_HELP}",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed for specs."),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the columns as JSON."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Also draw the comparison to this PNG file."),
    fresh: bool = typer.Option(False, "--fresh", help="Solve specs now even when the store has a complete run of them."),
) -> None:
    """Compare networks or runs side by side: m, H, |B|, |B|/m, R, chains, discards, repairs, times.

    A spec with a complete stored run (same structure, engine and seed) is read from the store
    (its column says "run ID", and its times include the store's work); --fresh solves it now.

    Example:

        basispath compare examples/mlp.json examples/resnet-style.json examples/densenet-style.json --plot cmp.png
        basispath compare examples/resnet-style.json --engine deah --engine deah-complete
    """
    for e in engine:
        if e not in ENGINES:
            raise fail(f"unknown engine '{e}'; choose one of: {', '.join(ENGINES)}")
    if plot is not None and (plot.is_dir() or not plot.expanduser().parent.exists()):
        raise fail(f"cannot write plot file {plot}: not a file in an existing folder")
    specs = {item: read_network(Path(item), None) for item in items if Path(item).is_file()}
    try:
        opened = open_store(store, write=False)
    except StoreError as exc:
        if len(specs) < len(items):  # run ids need the store
            raise failure(exc) from None
        opened = None
    columns = []
    try:
        for item in items:
            if item in specs:
                for e in engine:
                    columns.append(column_for_spec(None if fresh else opened, Path(item), specs[item], e, seed))
            else:
                col = column_from_run(opened, item)
                if col is None:
                    raise fail(f"{item}: neither a spec file nor a run id in this store")
                columns.append(col)
    except TooManySubstructures as exc:
        raise fail(str(exc)) from None
    except StoreError as exc:
        raise failure(exc) from None
    finally:
        if opened is not None:
            opened.close()

    if plot is not None:
        plot_comparison(columns, plot)
    if as_json:
        print(json.dumps([c.as_dict() for c in columns]))
        return
    table = Table("", *(f"{c.label}\n[dim]{c.source}[/]" for c in columns))
    for key, label in METRICS:
        if any(c.values.get(key) is not None for c in columns):  # e.g. rule rows only for deah-complete
            table.add_row(label, *(_cell(c.values.get(key)) for c in columns))
    known = {k for c in columns for k in c.timings}
    steps = [s for s in STEP_ORDER if s in known] + sorted(known - set(STEP_ORDER))
    for step in steps:
        table.add_row(f"time {step} (s)", *(_cell(c.timings.get(step)) for c in columns))
    table_console().print(table)
    if plot is not None:
        table_console().print(f"plot written to {plot}")
