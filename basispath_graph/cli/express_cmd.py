"""``basispath express``: the coordinates of any path over an exported basis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from ..analysis.coordinates import coordinates
from ..errors import BadInput
from ..export import read_basis_file
from ..network import blocks_from_json
from ..verify import ExpressError, InvalidPathError
from .common import EXIT_NOT_CERTIFIED, fail, failure, read_network


def express_command(
    spec: Path = typer.Argument(..., help="Network spec (JSON or YAML)."),
    basis: Path = typer.Argument(..., help="Basis JSON: an export of 'solve' or a bare list of paths."),
    path: str = typer.Argument(..., help="A path of the network as layer:index pairs, e.g. 0:1,2:0,4:2."),
    as_json: bool = typer.Option(False, "--json", help="Print the answer as JSON."),
    max_weights: Optional[int] = typer.Option(None, "--max-weights", min=1, help="Refuse networks with more weights."),
) -> None:
    """Coordinates of a path over a basis: integer coefficients with path = sum of coef x basis
    path, re-checked by vector addition. This is the path's coordinate vector in basis-path
    space, what G-SGD works with.

    Exit code 0 when expressed and checked, 1 when the basis cannot express it (dependent
    paths, a path outside its span, or a coefficient that is not an integer: the message
    says which), 2 for refused input (a path that is not a path of the network).

    The basis file is an export of 'basispath solve --export' or a bare list of paths.

    Example:

        basispath express examples/fig1b.json basis.json 0:1,1:0,2:2,3:1,4:0
    """
    network = read_network(spec, max_weights)
    try:
        blocks = blocks_from_json(read_basis_file(basis))
    except BadInput as exc:
        raise failure(exc) from None
    try:
        answer = coordinates(network, blocks, path)
    except InvalidPathError as exc:
        message = str(exc)
        if message.startswith("query"):  # "query (PATH): what is wrong"
            raise fail(f"{path} is not a path of network {network.name or spec}: {message.split('): ', 1)[-1]}") from None
        raise fail(f"{basis}: {message}") from None
    except ExpressError as exc:
        raise fail(f"{basis}: {exc}", EXIT_NOT_CERTIFIED) from None
    except BadInput as exc:
        raise failure(exc) from None
    if as_json:
        print(json.dumps(answer))
    else:
        c = Console(soft_wrap=True, highlight=False)
        c.print(f"path [bold]{answer['text']}[/] = sum of coef x basis path ({len(answer['coordinates'])} non-zero of {sum(len(b) for b in blocks)}):")
        for t in answer["coordinates"]:
            text = ",".join(f"{l}:{i}" for l, i in t["path"])
            c.print(f"  {t['coef']:+d} x {text}   (basis path {t['index']})")
        c.print("[green]verified by vector addition[/]" if answer["verified"] else "[bold red]DOES NOT CHECK[/]")
    if not answer["verified"]:
        raise typer.Exit(EXIT_NOT_CERTIFIED)
