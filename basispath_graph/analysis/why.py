"""Why did DEAH keep or discard a path? Read from the store, certificate re-verified now.

One answer for every run: the path is looked up with ``why.cypher``; a discarded path gets the
rule of its stored records (SDVChain call, hop rule, local rule with its witness coordinates,
repair) and its certificate, a kept one its substructure, a path the run never had its
coordinates over the stored basis. Only the spelling differs between a layered run (layers
0..L, ``0:1,2:0,4:2``, weights ``[a, i, b, j]``) and a general one (layer names, JSON paths
``{"nodes", "taps"}``, weights ``[a, i, b, j, tap]``; ``analysis/why_general.py``), whose DEAH
artifacts are those of its core (docs/general-networks.md).

The certificate stored as CERTIFIED_BY {coef} is never trusted: the answer re-adds the kept
paths' weight vectors with their coefficients and compares with the path, using the network's
structure read from the store (weights as (layer, index, layer, index) tuples, independent of any
stored numbering).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..deah.local_witness import explain_local
from ..errors import BadInput
from ..export import NEVER_A_CANDIDATE, REPAIR_DETAILS, kept_reason
from ..general.model import GeneralNetwork
from .coordinates import check_certificate, coordinates, path_weights
from .why_dag import dag_answer
from .why_described import described_answer
from .why_general import GeneralSpelling
from ..network import Network, blocks_from_json, weight_endpoints
from ..store import Store, StoreError
from ..store.relations import decode_edge
from ..general.paper_setting import reads_as_layer_dag
from ..store.dag_runs import load_dag_run
from ..store.described_deah import load_described_deah
from ..store.general_networks import stored_network
from ..store.path_forms import stored_form
from ..store.runs import stored_plan
from ..verify import ExpressError, parse_path

__all__ = ["WhyError", "explain", "path_weights", "check_certificate", "LayeredSpelling"]


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
    row: dict | None = None  # its get_run row


def load_context(store: Store, run_id: str) -> RunContext:
    rows = store.run("get_run", id=run_id)
    if not rows:
        raise WhyError(f"no run {run_id!r} in this store")
    return RunContext(run_id, stored_network(store, rows[0]), rows[0]["status"], rows[0])


class LayeredSpelling:
    """A layered run's paths (``[[layer, index], ...]``, text ``0:1,2:0,4:2``), layers (0..L)
    and weights (``[a, i, b, j]``) in a ``why`` answer; ``GeneralSpelling`` is the general run's."""

    #: A stored path not kept and without a certificate gets its coordinates (else: not verified).
    without_certificate = False
    #: The detail of a path the run never had as a candidate (answered with its coordinates).
    never_a_candidate = NEVER_A_CANDIDATE

    def __init__(self, store: Store, ctx: RunContext) -> None:
        self.store, self.ctx, self.network = store, ctx, ctx.network

    def argument(self, path: str) -> tuple[str, int]:
        """(text, id) to look the path up by: a stored id, or a path ``0:1,2:0,4:2``."""
        if path.strip().lstrip("-").isdigit():
            return "", int(path)
        try:
            layers, indices = parse_path(path)
        except ValueError as exc:
            raise WhyError(f"cannot read path {path!r}: {exc}") from None
        problem = _validate(self.network, layers, indices)
        if problem:
            raise WhyError(f"{path} is not a path of network {self.network.name or self.ctx.run_id}: {problem}")
        return ",".join(f"{l}:{i}" for l, i in zip(layers, indices)), -1

    def stored_path(self, row: dict):
        """A stored path (a ``why`` row or certificate term) as (layers, indices)."""
        return parse_path(row["text"])

    def answer_head(self, path, row: dict, status: str) -> dict:
        return {"run": self.ctx.run_id, "path": _pairs(*path), "id": row["id"], "status": status,
                "substructure": row["substructure"]}

    def term(self, coef: int, path, row: dict) -> dict:
        """A certificate term; ``index`` into the basis is the kept path's stored id."""
        return {"coef": coef, "path": _pairs(*path), "index": row["id"]}

    def kept_detail(self, row: dict) -> str:
        return kept_reason(row["substructure"] is not None)["detail"]

    def check(self, target, terms) -> bool:
        return check_certificate(target, terms)

    def layers(self, layers):
        return layers

    def weights(self, ids) -> list:
        return weight_endpoints(self.network, ids or [])

    def edge(self, code: int) -> list:
        return list(decode_edge(self.network.L, code))

    def twin(self, text: str) -> dict:
        return {"twin": _pairs(*parse_path(text))}

    def local(self, sub: int, path, terms) -> dict:
        return explain_local(self.network, stored_plan(self.store, self.ctx.run_id), sub, path, list(terms))

    def not_found(self, pid: int) -> str:
        return f"path id {pid} is not a path of run {self.ctx.run_id} (neither kept nor discarded by it)"

    def unlisted(self, path: str, pid: int) -> None:
        """A layered run stores every path it has: none is unlisted."""
        return None

    def coordinates(self, path: str, text: str, row: dict | None = None) -> dict:
        """A valid path the run never had as a candidate: its coordinates over the run's basis,
        in the shape of a certificate (each term with the kept path's stored id)."""
        store, ctx = self.store, self.ctx
        if ctx.status != "complete":
            raise WhyError(f"path {text} is not a path of run {ctx.run_id}, and the run is {ctx.status}: no basis to express it over")
        kept = store.run("kept_paths", run=ctx.run_id)
        ids = [r["id"] for r in kept]
        blocks = blocks_from_json([[[l, i] for l, i in zip(*parse_path(r["text"]))] for r in kept])
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
            "reason": {"step": "coordinates", "detail": self.never_a_candidate},
            "certificate": [{"coef": t["coef"], "path": t["path"], "index": t["index"], "id": ids[t["index"]]} for t in answer["coordinates"]],
            "verified": answer["verified"],
        }


def _spelling(store: Store, ctx: RunContext):
    if not ctx.network.is_layered:
        return GeneralSpelling(store, ctx, WhyError)
    return LayeredSpelling(store, ctx)


def _substructure_layers(store: Store, ctx: RunContext, idxs) -> dict:
    return {row["idx"]: row["layers"] for row in store.run("substructure_layers", run=ctx.run_id, idxs=list(idxs))}


def _reason(store: Store, ctx: RunContext, spell, d: dict, path=None, terms=()) -> dict:
    if d["step"] == "repair":
        return {"step": "repair", "action": d["action"], "detail": REPAIR_DETAILS.get(d["action"], d["action"])}
    if d["step"] in ("prefix", "suffix", "local"):  # deah-complete's rules (export.reason_document's shape)
        sub = d.get("substructure", -1)
        layers = _substructure_layers(store, ctx, [sub])
        out = {"step": d["step"], "action": d["action"], "substructure": spell.layers(layers[sub]) if sub in layers else None}
        if d["step"] != "local" and d.get("twin"):  # (a store written before these properties has none)
            out.update(hop=spell.layers(list(d["hop"])), crossing=spell.weights([d["crossing"]])[0])
            out.update(spell.twin(d["twin"]))
            out.update(differs=spell.weights(d["differs"]), twin_differs=spell.weights(d["twin_differs"]), agrees=spell.weights(d["agrees"]))
        if d["step"] == "local" and path is not None and sub >= 0:
            out["witness"] = spell.local(sub, path, terms)
        return out
    pair = list(d["pair"] or [])
    layers = _substructure_layers(store, ctx, pair)
    return {
        "step": d["step"],
        "action": d["action"],
        "chain": d["chain"],
        "pair": {"from": spell.layers(layers.get(pair[0])), "to": spell.layers(layers.get(pair[1]))} if len(pair) == 2 else None,
        "shared_layers": [spell.edge(c) for c in d["shared_pairs"] or []],
        "ep": spell.weights(d["ep"]),
        "ucp_star": spell.weights(d["ucp_star"]),
        "iep": spell.weights(d["iep"]),
        "shared": spell.weights(d["shared"]),
    }


def _main_reason(store: Store, ctx: RunContext, spell, row: dict, records: list[dict], path=None, terms=()) -> dict:
    """One reason object: the discard (SDVChain call or repair), or why a kept path is kept.

    A path SDVChain discarded and the repair re-admitted has two records: the repair is the
    reason, the SDVChain call is kept under "earlier".
    """
    if not records:
        detail = spell.kept_detail(row) if row["kept"] else "no record stored"
        return {"step": "kept" if row["kept"] else None, "detail": detail}
    reasons = [_reason(store, ctx, spell, d, path, terms) for d in records]
    main = next((r for r in reasons if r["step"] == "repair"), reasons[0])
    earlier = [r for r in reasons if r is not main]
    if earlier:
        main = {**main, "earlier": earlier[0]}
    return main


def explain(store: Store, run_id: str, path: str) -> dict:
    """The ``why --json`` answer for a path given by stored id or as ``0:1,2:0,4:2`` (on a
    general run: by id or as a JSON path, text or file, ``analysis/why_general.py``)."""
    ctx = load_context(store, run_id)
    spell = _spelling(store, ctx)
    if ctx.row["engine"] == "deah-complete" and reads_as_layer_dag(ctx.network):
        try:  # a layer DAG core (store/dag_runs.py): its discards are functions of the network
            answer = dag_answer(spell, ctx, load_dag_run(store, run_id, ctx.network, ctx.row), path, WhyError)
        except StoreError as exc:
            raise WhyError(str(exc)) from None
        if answer is not None:
            return answer
    elif ctx.row["engine"] == "deah-complete":  # stored described (store/described_deah.py): answered from the description
        try:
            described = load_described_deah(store, run_id, ctx.network, ctx.row)
        except StoreError as exc:
            raise WhyError(str(exc)) from None
        if described is not None:
            return described_answer(spell, ctx, described, stored_form(store, run_id, ctx.network), path, WhyError)
    text, pid = spell.argument(path)
    try:
        rows = store.run("why", run=run_id, text=text, id=pid)
    except StoreError as exc:
        raise WhyError(str(exc)) from None
    if not rows:
        answer = spell.unlisted(path, pid)  # a described basis's path that has no node of its own
        if answer is not None:
            return answer
        if pid >= 0:
            raise WhyError(spell.not_found(pid))
        return spell.coordinates(path, text)
    row = rows[0]
    target = spell.stored_path(row)
    reasons = sorted(row["reasons"] or [], key=lambda d: int(str(d["uid"]).rsplit("d", 1)[-1]))
    terms = sorted((c for c in row["certificate"] or [] if c.get("id") is not None), key=lambda c: c["id"])
    parsed = []
    if row["kept"]:
        certificate = [spell.term(1, target, row)]
        verified = True
    else:
        if not terms and spell.without_certificate:  # a general DEAH run stored before its discards were
            answer = spell.coordinates(path, text, row)
            if reasons:  # a stored rule whose certificate is made when asked for (faithful deah on a layer DAG, many discards)
                answer.update(reason=_main_reason(store, ctx, spell, row, reasons, target, []),
                              substructure=spell.answer_head(target, row, "discarded")["substructure"])
            return answer
        parsed = [(int(c["coef"]), spell.stored_path(c)) for c in terms]
        certificate = [spell.term(coef, p, c) for (coef, p), c in zip(parsed, terms)]
        verified = bool(parsed) and spell.check(target, parsed)
    return {
        **spell.answer_head(target, row, "kept" if row["kept"] else "discarded"),
        "reason": _main_reason(store, ctx, spell, row, reasons, None if row["kept"] else target, parsed),
        "certificate": certificate,
        "verified": verified,
    }
