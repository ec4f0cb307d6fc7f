"""``basispath verify``: certify a basis path set file against a spec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ..network import blocks_from_json
from ..verify import certify
from .common import EXIT_NOT_CERTIFIED, fail, read_network


def _load_paths(path: Path, L: int):
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise fail(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"{path}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise fail(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise fail(f"{path}: not valid JSON: nesting is too deep") from None
    except ValueError as exc:  # an integer literal beyond Python's digit limit
        raise fail(f"{path}: not valid JSON: {str(exc).split('; use sys.set_int_max_str_digits')[0]}") from None
    paths = data.get("basis") if isinstance(data, dict) else data
    if not isinstance(paths, list):
        raise fail(f"{path}: expected a list of paths or an object with a 'basis' list")
    for k, p in enumerate(paths):
        ok = isinstance(p, list) and p and all(
            isinstance(x, list) and len(x) == 2 and all(type(v) is int for v in x) for x in p
        )
        if not ok:
            raise fail(f"{path}: basis[{k}] is not a list of [layer, index] integer pairs")
        if not all(-(2**63) <= v < 2**63 for x in p for v in x):  # paths become int64 arrays
            raise fail(f"{path}: basis[{k}] has an integer out of the 64-bit range")
    return paths


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
    paths = _load_paths(basis, network.L)
    verdict = certify(network, blocks_from_json(paths))
    if verdict.certified:
        print(f"certified: {verdict.size} independent paths = m - H = {network.m} - {network.H}")
        return
    print(f"not certified: {verdict.defect}")
    raise typer.Exit(EXIT_NOT_CERTIFIED)
