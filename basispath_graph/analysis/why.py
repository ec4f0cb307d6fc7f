"""Why did DEAH keep or discard a path? Read from the store, certificate re-verified now.

The certificate stored as CERTIFIED_BY {coef} is never trusted: the answer re-adds the kept
paths' weight vectors with their coefficients and compares with the path, using the network's
structure read from the store (weights as (layer, index, layer, index) tuples, independent of any
stored numbering).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..deah.local_witness import explain_local
from ..errors import BadInput
from ..general.model import GeneralNetwork
from .coordinates import check_certificate, coordinates, path_weights
from .why_general import explain_general
from ..network import Network, blocks_from_json, weight_endpoints
from ..store import Store, StoreError
from ..store.relations import decode_edge
from ..store.general_networks import stored_network
from ..store.runs import stored_plan
from ..verify import ExpressError, parse_path

__all__ = ["WhyError", "explain", "path_weights", "check_certificate"]


class WhyError(BadInput):
    """The path is not a valid path of the network, or not a path of the run (exit code 2)."""


def _pairs(layers, indices) -> list[list[int]]:
    return [[int(l), int(i)] for l, i in zip(layers, indices)]


def _validate(network: Network, layers, indices) -> str | None:
    L, pairs, w = network.L, set(network.pairs), network.widths
    if not layers or layers[0] != 0 or layers[-1] != L:
        return f"a path runs from layer 0 to layer {L}"
    for l, i in zip(layers, indices):
        if not 0 <= l <= L:
            return f"layer {l} does not exist (layers 0..{L})"
        if not 0 <= i < w[l]:
            return f"neuron {i} does not exist in layer {l} (width {w[l]})"
    for a, b in zip(layers, layers[1:]):
        if (a, b) not in pairs:
            return f"layers {a} and {b} are not connected"
    return None


@dataclass
class RunContext:
    run_id: str
    network: Network | GeneralNetwork
    status: str


def load_context(store: Store, run_id: str) -> RunContext:
    rows = store.run("get_run", id=run_id)
    if not rows:
        raise WhyError(f"no run {run_id!r} in this store")
    return RunContext(run_id, stored_network(store, rows[0]), rows[0]["status"])


def _weights(network: Network, ids) -> list[list[int]]:
    return weight_endpoints(network, ids or [])


def _reason(store: Store, ctx: RunContext, d: dict, path=None, terms=()) -> dict:
    if d["step"] == "repair":
        what = {"drop": "dropped: dependent on the paths kept before it",
                "readmit": "re-admitted: it raises the rank",
                "add": "added: a skeleton path was needed to reach m - H"}
        return {"step": "repair", "action": d["action"], "detail": what.get(d["action"], d["action"])}
    net = ctx.network
    if d["step"] in ("prefix", "suffix", "local"):  # deah-complete's rules (export.reason_document's shape)
        sub = d.get("substructure", -1)
        layers = {row["idx"]: row["layers"] for row in store.run("substructure_layers", run=ctx.run_id, idxs=[sub])}
        out = {"step": d["step"], "action": d["action"], "substructure": layers.get(sub)}
        if d["step"] != "local" and d.get("twin"):  # (a store written before these properties has none)
            out.update(
                hop=list(d["hop"]),
                crossing=_weights(net, [d["crossing"]])[0],
                twin=_pairs(*parse_path(d["twin"])),
                differs=_weights(net, d["differs"]),
                twin_differs=_weights(net, d["twin_differs"]),
                agrees=_weights(net, d["agrees"]),
            )
        if d["step"] == "local" and path is not None and sub >= 0:
            out["witness"] = explain_local(net, stored_plan(store, ctx.run_id), sub, path, list(terms))
        return out
    pair = list(d["pair"] or [])
    layers = {row["idx"]: row["layers"] for row in store.run("substructure_layers", run=ctx.run_id, idxs=pair)}
    L = net.L
    return {
        "step": d["step"],
        "action": d["action"],
        "chain": d["chain"],
        "pair": {"from": layers.get(pair[0]), "to": layers.get(pair[1])} if len(pair) == 2 else None,
        "shared_layers": [list(decode_edge(L, c)) for c in d["shared_pairs"] or []],
        "ep": _weights(net, d["ep"]),
        "ucp_star": _weights(net, d["ucp_star"]),
        "iep": _weights(net, d["iep"]),
        "shared": _weights(net, d["shared"]),
    }


def _main_reason(store: Store, ctx: RunContext, row: dict, records: list[dict], path=None, terms=()) -> dict:
    """One reason object: the discard (SDVChain call or repair), or why a kept path is kept.

    A path SDVChain discarded and the repair re-admitted has two records: the repair is the
    reason, the SDVChain call is kept under "earlier".
    """
    if not records:
        detail = "kept: in B_r of its substructure and never discarded" if row["kept"] else "no record stored"
        return {"step": "kept" if row["kept"] else None, "detail": detail}
    reasons = [_reason(store, ctx, d, path, terms) for d in records]
    main = next((r for r in reasons if r["step"] == "repair"), reasons[0])
    earlier = [r for r in reasons if r is not main]
    if earlier:
        main = {**main, "earlier": earlier[0]}
    return main


def _coordinates_answer(store: Store, ctx: RunContext, text: str) -> dict:
    """A valid path the run never had as a candidate: its coordinates over the run's basis,
    in the shape of a certificate (each term with the kept path's stored id)."""
    if ctx.status != "complete":
        raise WhyError(f"path {text} is not a path of run {ctx.run_id}, and the run is {ctx.status}: no basis to express it over")
    kept = store.run("kept_paths", run=ctx.run_id)
    ids = [row["id"] for row in kept]
    blocks = blocks_from_json([[[l, i] for l, i in zip(*parse_path(row["text"]))] for row in kept])
    try:
        answer = coordinates(ctx.network, blocks, text)
    except ExpressError as exc:  # the stored basis is certified: this would be a damaged store
        raise WhyError(f"cannot express {text} over the basis of run {ctx.run_id}: {exc}") from None
    return {
        "run": ctx.run_id,
        "path": answer["path"],
        "id": None,
        "status": "not a candidate",
        "substructure": None,
        "reason": {"step": "coordinates", "detail": "never a candidate of this run (in no B_r): its coordinates over the run's basis"},
        "certificate": [{"coef": t["coef"], "path": t["path"], "id": ids[t["index"]]} for t in answer["coordinates"]],
        "verified": answer["verified"],
    }


def explain(store: Store, run_id: str, path: str) -> dict:
    """The ``why --json`` answer for a path given by stored id or as ``0:1,2:0,4:2`` (on a
    general run: by id or as a JSON path, text or file, ``analysis/why_general.py``)."""
    ctx = load_context(store, run_id)
    if not ctx.network.is_layered:
        return explain_general(store, run_id, ctx.status, ctx.network, path, WhyError)
    text, pid = "", -1
    if path.strip().lstrip("-").isdigit():
        pid = int(path)
    else:
        try:
            layers, indices = parse_path(path)
        except ValueError as exc:
            raise WhyError(f"cannot read path {path!r}: {exc}") from None
        problem = _validate(ctx.network, layers, indices)
        if problem:
            raise WhyError(f"{path} is not a path of network {ctx.network.name or run_id}: {problem}")
        text = ",".join(f"{l}:{i}" for l, i in zip(layers, indices))
    try:
        rows = store.run("why", run=run_id, text=text, id=pid)
    except StoreError as exc:
        raise WhyError(str(exc)) from None
    if not rows:
        if pid >= 0:
            raise WhyError(f"path id {pid} is not a path of run {run_id} (neither kept nor discarded by it)")
        return _coordinates_answer(store, ctx, text)
    row = rows[0]
    layers, indices = parse_path(row["text"])
    reasons = sorted(row["reasons"] or [], key=lambda d: int(str(d["uid"]).rsplit("d", 1)[-1]))
    terms = [c for c in row["certificate"] or [] if c.get("id") is not None]
    parsed = []
    if row["kept"]:
        certificate = [{"coef": 1, "path": _pairs(layers, indices)}]
        verified = True
    else:
        parsed = [(int(c["coef"]), parse_path(c["text"])) for c in sorted(terms, key=lambda c: c["id"])]
        certificate = [{"coef": coef, "path": _pairs(*p)} for coef, p in parsed]
        verified = bool(parsed) and check_certificate((layers, indices), parsed)
    return {
        "run": run_id,
        "path": _pairs(layers, indices),
        "id": row["id"],
        "status": "kept" if row["kept"] else "discarded",
        "substructure": row["substructure"],
        "reason": _main_reason(store, ctx, row, reasons, None if row["kept"] else (layers, indices), parsed),
        "certificate": certificate,
        "verified": verified,
    }
