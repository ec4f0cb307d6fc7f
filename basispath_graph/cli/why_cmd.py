"""``basispath why``: why a path of a stored run was kept or discarded, with its certificate."""

from __future__ import annotations

import json
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape

from ..analysis.why import WhyError, explain
from ..store import StoreError
from .common import fail
from .common import failure
from .store_cmds import STORE_HELP, WAIT_HELP, open_for_cli

EXIT_NOT_VERIFIED = 1


def _path_text(path) -> str:
    return ",".join(f"{l}:{i}" for l, i in path)


def _show(value) -> str:
    """Layers and layer pairs as lists, ``[0, 2, 4]`` or (a general run's names) ``[input, stem, fc]``,
    escaped as a whole: rich reads an unescaped ``[x, bn1, fc]`` as a markup tag and prints nothing."""
    return escape(_plain(value))


def _plain(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_plain(v) for v in value) + "]"
    return str(value)


def _edge(w) -> str:
    """A weight: ``a:i->b:j`` (layered), ``a:i -[tap]-> b:j`` (a general run's, layer names)."""
    if len(w) == 5:
        a, i, b, j, t = w
        return f"{a}:{i} -[{t}]-> {b}:{j}"
    a, i, b, j = w
    return f"{a}:{i}->{b}:{j}"


def _edges(ws) -> str:
    sep = ", " if ws and len(ws[0]) == 5 else " "  # a general weight's text has spaces
    return sep.join(_edge(w) for w in ws) or "-"


def _coords(values: dict) -> str:
    return ", ".join(f"{name} = {v:+d}" for name, v in values.items()) or "all 0"


def _print_local(c: Console, w: dict) -> None:
    """The local rule's decision (deah/local_witness.py): the block's witness coordinates, the
    path's values on them, and the kept paths of the block that add up to them."""
    b = w["block"]
    hops = ", ".join(f"{a}->{z}" for a, z in b["new_hops"]) or "none"
    c.print(f"  block #{b['position'] + 1} of the ear order (p_0 is #1, as in 'basispath show'); new layer pairs it owns: {hops}")
    for d in b["paid_debts"]:
        into, out_of = (", ".join(f"{a}->{z}" for a, z in d[k]) for k in ("into", "out_of"))
        c.print(f"  it pays the layer debt at layer {d['layer']}: phi_z = flow into z over {into} - flow out of z over {out_of} ({d['sign']:+d} on its paths)")
    c.print("  witness coordinates: its new weights, phi_z of each debt it pays, one alpha functional (+1 on its paths);")
    c.print("  all of them vanish on every path kept before this block")
    c.print(f"  this path on them: {_coords(w['witness'])}")
    c.print(f"  the same values from {len(w['block_terms'])} kept path(s) of this block:")
    for t in w["block_terms"]:
        c.print(f"    {t['coef']:+d} x {escape(t.get('text') or _path_text(t['path']))}   [{_coords(t['witness'])}]")
    earlier = "all vanish there (checked)" if w["earlier_vanish"] else "DO NOT all vanish there"
    c.print(f"  the certificate's other {w['earlier_terms']} path(s) were kept before this block: {earlier}")
    if w["dependent"]:
        c.print("  so its witness vector is a combination of kept rows': dependent, discarded (checked now)")
    else:
        c.print("  [bold red]the block's terms do not add up to this path on the witness coordinates[/]")


def _print(answer: dict) -> None:
    c = Console(soft_wrap=True, highlight=False)
    stored = f" (id {answer['id']})" if answer["id"] is not None else ""
    shown = answer.get("text") or _path_text(answer["path"])  # a general run's path has its text
    c.print(f"path [bold]{escape(shown)}[/]{stored} of run {answer['run']}: [bold]{answer['status']}[/]")
    r = answer["reason"]
    if r.get("step") == "coordinates":
        c.print(f"{r['detail']}:")
        c.print("coordinates (this path = sum of coef x basis path):")
        _print_terms(c, answer)
        return
    if "text" not in answer or answer["substructure"] is not None:  # kept paths of a general run's other parts have none
        c.print(f"substructure: {_show(answer['substructure'])}")
    if r.get("step") in ("chain", "head"):
        how = "inside chain" if r["step"] == "chain" else "chain head against Q_t element, chain"
        c.print(f"discarded by SDVChain, {how} {r['chain']}: based on B of {_show(r['pair']['from'])}, discarding from {_show(r['pair']['to'])}")
        c.print(f"  shared layer pairs: {_show(r['shared_layers'])}")
        c.print(f"  Ep (unshared part of the B_from paths): {_edges(r['ep'])}")
        c.print(f"  UCP* (shared part kept):                {_edges(r['ucp_star'])}")
        c.print(f"  this path's shared part:                {_edges(r['shared'])}")
        c.print(f"  IEp (this path's unshared part, seen at least twice): {_edges(r['iep'])}")
    elif r.get("step") in ("prefix", "suffix") and "ear" in r:  # deah-complete on a layer DAG (analysis/why_dag.py)
        where = "before" if r["step"] == "prefix" else "after"
        c.print(f"discarded by deah-complete's ear rule on a layer DAG, ear {r['ear']}: it owns the new connections "
                f"{escape(' -> '.join(r['segment']))}, and this row of B_r differs from every kept row {where} them ({r['step']})")
    elif r.get("step") in ("prefix", "suffix"):
        where = "before" if r["step"] == "prefix" else "after"
        c.print(f"discarded by deah-complete's hop rule in substructure {_show(r['substructure'])}: it owns the new layer pair {_show(r.get('hop'))}")
        if "twin" in r:
            twin = escape(r.get("twin_text") or _path_text(r["twin"]))
            c.print(f"  this path crosses it at {_edges([r['crossing']])}, as does the kept path {twin}, and differs {where} it:")
            c.print(f"  kept path's part: {_edges(r['twin_differs'])}")
            c.print(f"  this path's part: {_edges(r['differs'])}")
    elif r.get("step") == "local":
        c.print(f"discarded by deah-complete's local rule in substructure {_show(r['substructure'])}")
        if "witness" in r:
            _print_local(c, r["witness"])
    elif r.get("step") == "repair":
        c.print(f"repair: {r['detail']}")
        if "earlier" in r:
            e = r["earlier"]
            c.print(f"  (SDVChain had discarded it: chain {e['chain']}, {_show(e['pair']['from'])} -> {_show(e['pair']['to'])})")
    else:
        c.print(r.get("detail", ""))
    if answer["status"] == "discarded":
        c.print("certificate (this path = sum of coef x kept path):")
        _print_terms(c, answer)


def _print_terms(c: Console, answer: dict) -> None:
    for term in answer["certificate"]:
        c.print(f"  {term['coef']:+d} x {escape(term.get('text') or _path_text(term['path']))}")
    if answer["verified"]:
        c.print("[green]verified now by vector addition[/]")
    else:
        c.print("[bold red]CERTIFICATE DOES NOT CHECK: the coefficients do not sum to this path[/]")


def _check_path_argument(path: str) -> None:
    """A path id must be a plain non-negative 64-bit integer (explain() reads anything
    str.isdigit() accepts, e.g. "²" or 5,000 digits, with int())."""
    text = path.strip()
    if text.lstrip("-").isdigit():
        if not (text.isascii() and text.isdigit()) or len(text) > 19 or int(text) >= 2**63:
            raise fail(f"path id {path!r} is not a stored path id: need a non-negative integer below 2^63")


def why_command(
    run_id: str = typer.Argument(..., help="Run id (see 'basispath runs')."),
    path: str = typer.Argument(
        ..., help="A stored path id, or a path written layer:index pairs, e.g. 0:1,2:0,4:2; on a general run a JSON path "
        '{"nodes": [[layer, index], ...], "taps": [...]} or a file holding one.'),
    store: Optional[str] = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the answer as JSON."),
    wait: float = typer.Option(0, "--wait", min=0, help=WAIT_HELP),
) -> None:
    """Why was a path kept or discarded? Shows the rule that decided it and the certificate.

    For a discard: the rule (SDVChain call, hop rule, local rule with its witness coordinates,
    repair) and the certificate. For a path of the network that was never a candidate: its
    coordinates over the run's basis. The coefficients are re-verified by vector addition every
    time; exit code 1 when they do not check.

    Example:

        basispath why 3fa2c1d0 0:1,1:0,2:0,4:0
        basispath why 5b1e0c2a '{"nodes": [["input", 0], ["stem", 1], ["conv1", 0], ["conv2", 0], ["fc", 1]], "taps": [4, 0, 8, 0]}'
    """
    _check_path_argument(path)
    with open_for_cli(store, write=False, wait=wait) as s:
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
