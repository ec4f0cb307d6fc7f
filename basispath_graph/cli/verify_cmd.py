"""``basispath verify``: certify a basis path set file against a spec."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..errors import BadInput
from ..deah.described_file import DESCRIBED_DEAH_FORMAT, is_described_deah_document
from ..deah.described_verify import certify_described_deah
from ..export import read_json_file
from ..general.described import certify_described
from ..general.described_io import DESCRIBED_FORMAT, is_described_document, read_described
from ..general.streamed_verify import PathRows, certify_path_rows
from ..guards import ResourceLimit, check_basis_file, check_streamed_basis_file
from ..verify.streamed import LayeredRows, certify_layered_rows, listed_rows, stream_basis_file
from .common import EXIT_NOT_CERTIFIED, fail, failure, memory_limit, read_any_network


def verify_command(
    spec: Path = typer.Argument(..., help="Network spec (JSON or YAML)."),
    basis: Path = typer.Argument(..., help="Basis JSON: an export of 'solve' (paths or a described basis) or a bare list of paths."),
    max_weights: Optional[int] = typer.Option(None, "--max-weights", min=1, help="Refuse networks with more weights."),
    max_memory_gb: Optional[float] = typer.Option(
        None, "--max-memory-gb", help="Refuse a basis file whose reading is estimated over this (default: $BASISPATH_MAX_MEMORY_GB or 80% of RAM)."
    ),
) -> None:
    """Certify a basis path set exactly: valid, distinct, m - H paths, independent (rank mod p).

    SPEC is a layered spec (widths, skips) or a general one (layers, connections: paths then
    look like {"nodes": [["x", 0], ["h", 1], ...], "taps": [2, null, ...]}).

    Exit code 0 when certified, 1 when not (the defect is named), 2 for refused input.

    Example:

        basispath verify examples/fig1b.json basis.json
    """
    network = read_any_network(spec, max_weights)
    limit = memory_limit(max_memory_gb)
    # A layered network's described form is deah-complete's; a general one's also the skeleton's.
    described = (DESCRIBED_DEAH_FORMAT,) if network.is_layered else (DESCRIBED_FORMAT, DESCRIBED_DEAH_FORMAT)
    try:  # paths are read one at a time (verify.streamed), a described basis whole
        _guard(check_streamed_basis_file, basis, limit)
        rows = LayeredRows(network, str(basis)) if network.is_layered else PathRows(network, str(basis))
        doc = stream_basis_file(basis, str(basis), rows)
        if doc is not None and doc.get("format") in described:
            verdict = _verify_described(network, basis, limit)
        elif network.is_layered:
            verdict = certify_layered_rows(listed_rows(rows, doc))
        else:  # paths as {"nodes": [[layer, index], ...], "taps": [...]}
            verdict = certify_path_rows(listed_rows(rows, doc))
    except BadInput as exc:
        raise failure(exc) from None
    if verdict.certified:
        print(f"certified: {verdict.size} independent paths = m - H = {network.m} - {network.H}")
        return
    print(f"not certified: {verdict.defect}")
    raise typer.Exit(EXIT_NOT_CERTIFIED)


def _guard(check, basis: Path, limit: int) -> None:
    try:
        check(basis, limit)
    except ResourceLimit as exc:
        raise fail(str(exc)) from None


def _verify_described(network, basis: Path, limit: int):
    """The verdict on a described basis (read whole: a few numbers per neuron)."""
    _guard(check_basis_file, basis, limit)
    data = read_json_file(basis)
    if is_described_deah_document(data):  # a deah-complete run held described: rebuilt, certified from its description
        return certify_described_deah(network, data, str(basis))
    return certify_described(read_described(network, data, str(basis)))
