"""``basispath show``: draw a stored run (G^S and chains or ear order, or one path at neuron level)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from ..show import FORMATS, ShowError, load_overview, load_path_view, render
from ..show.output import write_atomic, write_stdout
from ..store import StoreError, open_store
from .common import fail
from .common import failure
from .store_cmds import STORE_HELP, WAIT_HELP

SUFFIXES = {".dot": "dot", ".gv": "dot", ".png": "png", ".svg": "svg"}


def _format(fmt: Optional[str], output: Optional[Path]) -> str:
    """--format, else -o's suffix, else dot; a known suffix must agree with --format, and any
    other suffix is refused (``-o x.jpg`` would otherwise get DOT text under a picture's name)."""
    suffix = output.suffix.lower() if output is not None and str(output) != "-" else ""
    if suffix and suffix not in SUFFIXES:
        raise fail(
            f"-o {output}: unknown extension '{output.suffix}'; use one of {', '.join(SUFFIXES)} "
            "(or no extension with --format, or - for stdout)"
        )
    implied = SUFFIXES.get(suffix)
    if fmt is None:
        return implied or "dot"
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise fail(f"unknown --format '{fmt}'; choose one of: {', '.join(FORMATS)}")
    if implied and implied != fmt:
        raise fail(f"--format {fmt} but -o {output} names a .{implied} file; make them agree")
    return fmt


def show_command(
    run_id: str = typer.Argument(..., help="Run id (see 'basispath runs')."),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    wait: float = typer.Option(0, "--wait", min=0, help=WAIT_HELP),
    fmt: Optional[str] = typer.Option(
        None, "--format", "-f", help="dot | png | svg. Default: from -o's suffix (.dot/.gv/.png/.svg), else dot."
    ),
    output: Optional[Path] = typer.Option(
        None,
        "--output",
        "-o",
        help="File to write (atomically), or - for stdout; its extension is .dot, .gv, .png or .svg (others are "
        "refused) or none. Default: stdout for dot; RUN_ID.png / RUN_ID.svg "
        "(RUN_ID-path-ID.png with --path) in the current folder for png and svg.",
    ),
    path: Optional[str] = typer.Option(
        None,
        "--path",
        help="Neuron-level picture of one path: a stored path id (e.g. 58) or its layers and indices "
        "(e.g. 0:1,2:0,4:2). Small networks only (64 neurons, 400 weights).",
    ),
    certificate: bool = typer.Option(
        False, "--certificate", help="With --path on a discarded path: also draw the kept paths of its certificate with their coefficients."
    ),
) -> None:
    """Draw a stored run: the substructure graph G^S with the selected substructure paths and, for
    deah, the path subdivision chains (one colour per chain); for deah-complete, the ear order with
    each block's rule (p_0 / ear / local), the layer pairs it owns and the layer debts it pays. With
    --path: every neuron and weight with one path highlighted. DOT is written as text; PNG and SVG
    are drawn with matplotlib (no Graphviz needed).

    Example:

        basispath show 3fa2c1d0 --format png -o run.png
        basispath show 3fa2c1d0 --format dot | dot -Tpdf -o run.pdf
        basispath show 3fa2c1d0 --path 58 --certificate -o path58.svg
    """
    fmt = _format(fmt, output)
    if certificate and path is None:
        raise fail("--certificate needs --path (the discarded path whose certificate to draw)")
    if output is not None and str(output) != "-" and not output.parent.is_dir():
        raise fail(f"cannot write {output}: folder {output.parent} does not exist")
    try:
        with open_store(store, write=False, wait=wait) as s:
            view = load_path_view(s, run_id, path, certificate) if path is not None else load_overview(s, run_id)
    except ShowError as exc:
        raise fail(str(exc)) from None
    except StoreError as exc:
        raise failure(exc) from None
    if output is None and fmt != "dot":
        output = Path(f"{run_id}-path-{view.path.id}.{fmt}" if path is not None else f"{run_id}.{fmt}")
    data = render(view, fmt)
    if output is None or str(output) == "-":
        if fmt == "png" and sys.stdout.isatty():
            raise fail("refusing to write PNG bytes to a terminal; use -o FILE")
        write_stdout(data)
        return
    try:
        write_atomic(output, data)
    except OSError as exc:
        raise fail(f"cannot write {output}: {exc.strerror or exc}") from None
    print(f"wrote {output} ({fmt}, {len(data)} bytes)")
