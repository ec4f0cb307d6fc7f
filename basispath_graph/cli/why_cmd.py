"""``basispath why``: why a path of a stored run was kept or discarded, with its certificate."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.console import Console

from ..analysis.why import WhyError, explain
from ..store import StoreError
from .common import fail
from .common import failure
from .store_cmds import STORE_HELP, open_for_cli

EXIT_NOT_VERIFIED = 1


def _path_text(path) -> str:
    return ",".join(f"{l}:{i}" for l, i in path)


def _edges(ws) -> str:
    return " ".join(f"{a}:{i}->{b}:{j}" for a, i, b, j in ws) or "-"


def _print(answer: dict) -> None:
    c = Console(soft_wrap=True, highlight=False)
    c.print(f"path [bold]{_path_text(answer['path'])}[/] (id {answer['id']}) of run {answer['run']}: [bold]{answer['status']}[/]")
    c.print(f"substructure: {answer['substructure']}")
    r = answer["reason"]
    if r.get("step") in ("chain", "head"):
        how = "inside chain" if r["step"] == "chain" else "chain head against Q_t element, chain"
        c.print(f"discarded by SDVChain, {how} {r['chain']}: based on B of {r['pair']['from']}, discarding from {r['pair']['to']}")
        c.print(f"  shared layer pairs: {r['shared_layers']}")
        c.print(f"  Ep (unshared part of the B_from paths): {_edges(r['ep'])}")
        c.print(f"  UCP* (shared part kept):                {_edges(r['ucp_star'])}")
        c.print(f"  this path's shared part:                {_edges(r['shared'])}")
        c.print(f"  IEp (this path's unshared part, seen at least twice): {_edges(r['iep'])}")
    elif r.get("step") in ("prefix", "suffix"):
        where = "before" if r["step"] == "prefix" else "after"
        c.print(f"discarded by deah-complete's hop rule in substructure {r['substructure']}: it owns the new layer pair {r.get('hop')}")
        if "twin" in r:
            c.print(f"  this path crosses it at {_edges([r['crossing']])}, as does the kept path {_path_text(r['twin'])}, and differs {where} it:")
            c.print(f"  kept path's part: {_edges(r['twin_differs'])}")
            c.print(f"  this path's part: {_edges(r['differs'])}")
    elif r.get("step") == "local":
        c.print(
            f"discarded by deah-complete's local rule in substructure {r['substructure']}: on its witness coordinates "
            "(new weights, layer debts it pays, its alpha functional) it is a combination of the paths kept there, "
            "and those coordinates vanish on every path kept before (docs/deah-complete.md)"
        )
    elif r.get("step") == "repair":
        c.print(f"repair: {r['detail']}")
        if "earlier" in r:
            e = r["earlier"]
            c.print(f"  (SDVChain had discarded it: chain {e['chain']}, {e['pair']['from']} -> {e['pair']['to']})")
    else:
        c.print(r.get("detail", ""))
    if answer["status"] == "discarded":
        c.print("certificate (this path = sum of coef x kept path):")
        for term in answer["certificate"]:
            c.print(f"  {term['coef']:+d} x {_path_text(term['path'])}")
        if answer["verified"]:
            c.print("[green]verified now by vector addition[/]")
        else:
            c.print("[bold red]CERTIFICATE DOES NOT CHECK: the stored coefficients do not sum to this path[/]")


def _check_path_argument(path: str) -> None:
    """A path id must be a plain non-negative 64-bit integer (explain() reads anything
    str.isdigit() accepts, e.g. "²" or 5,000 digits, with int())."""
    text = path.strip()
    if text.lstrip("-").isdigit():
        if not (text.isascii() and text.isdigit()) or len(text) > 19 or int(text) >= 2**63:
            raise fail(f"path id {path!r} is not a stored path id: need a non-negative integer below 2^63")


def why_command(
    run_id: str = typer.Argument(..., help="Run id (see 'basispath runs')."),
    path: str = typer.Argument(..., help="A stored path id, or a path written layer:index pairs, e.g. 0:1,2:0,4:2."),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the answer as JSON."),
) -> None:
    """Why was a path kept or discarded? Shows the SDVChain call or repair and the certificate.

    The certificate is re-verified by vector addition every time; exit code 1 when it does
    not check.

    Example:

        basispath why 3fa2c1d0 0:1,1:0,2:0,4:0
    """
    _check_path_argument(path)
    with open_for_cli(store, write=False) as s:
        try:
            answer = explain(s, run_id, path)
        except WhyError as exc:
            raise fail(str(exc)) from None
        except StoreError as exc:
            raise failure(exc) from None
    if as_json:
        print(json.dumps(answer))
    else:
        _print(answer)
    if not answer["verified"]:
        raise typer.Exit(EXIT_NOT_VERIFIED)
