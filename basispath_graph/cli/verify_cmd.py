"""``basispath verify``: certify a basis path set file against a spec."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..errors import BadInput
from ..export import read_basis_file
from ..network import blocks_from_json
from ..verify import certify
from .common import EXIT_NOT_CERTIFIED, failure, read_network


def verify_command(
    spec: Path = typer.Argument(..., help="Network spec (JSON or YAML)."),
    basis: Path = typer.Argument(..., help="Basis JSON: an export of 'solve' or a bare list of paths."),
    max_weights: Optional[int] = typer.Option(None, "--max-weights", min=1, help="Refuse networks with more weights."),
) -> None:
    """Certify a basis path set exactly: valid, distinct, m - H paths, independent (rank mod p).

    Exit code 0 when certified, 1 when not (the defect is named), 2 for refused input.

    Example:

        basispath verify examples/fig1b.json basis.json
    """
    network = read_network(spec, max_weights)
    try:
        paths = read_basis_file(basis)
    except BadInput as exc:
        raise failure(exc) from None
    verdict = certify(network, blocks_from_json(paths))
    if verdict.certified:
        print(f"certified: {verdict.size} independent paths = m - H = {network.m} - {network.H}")
        return
    print(f"not certified: {verdict.defect}")
    raise typer.Exit(EXIT_NOT_CERTIFIED)
