"""``why`` on a described deah-complete run (``store/described_deah.py``): the run is rebuilt from
its stored description and the path found by index arithmetic (``general/described_lookup.py``),
so ResNet-50's answer takes well under a second, not a scan of 25 M kept and 49 M discarded
paths. The answer is ``Result.why``'s, in the shape every stored run's answer has (``why.py``):
the run and stored path ids, the substructure as layers, the rule with its ``action``, the
certificate's terms with their stored ids; the certificate is made and checked by vector
addition now, as every stored run's is re-checked.
"""

from __future__ import annotations

from ..general.described_lookup import ABSENT, described_core_lookup, described_lookup
from ..general.documents import general_core_path
from ..general.paths import read_general_path_argument
from ..verify import parse_path

__all__ = ["described_answer"]


def _lookup(result, target, layered: bool):
    if layered:
        return described_lookup(result, *target)
    return described_core_lookup(result, target)


def described_answer(spell, ctx, result, form, path: str, error) -> dict:
    """The stored answer for ``path`` (a stored id, or a path as ``why`` reads it) of the rebuilt
    described run ``result`` (``spell``: the run's ``LayeredSpelling`` / ``GeneralSpelling``;
    ``form``: how its layers are stored; ``error``: raised for an id the run does not have)."""
    net, layered = ctx.network, ctx.network.is_layered
    core = result if layered else result.core
    _, pid = spell.argument(path)  # validates a written path first
    size = result.basis_size
    if pid >= 0:
        if pid < size:
            target = result.basis_path(pid)
        elif pid < size + len(result.discarded):
            d = result.discarded[pid - size]
            target = (d.layers, d.indices) if layered else _general(net, result, d)
        else:
            raise error(spell.not_found(pid))
    else:
        target = parse_path(path) if layered else read_general_path_argument(net, path, error)
    found = _lookup(result, target, layered) or ABSENT
    argument = ",".join(f"{l}:{i}" for l, i in zip(*target)) if layered else {
        "nodes": [[net.layers[l].name, int(i)] for l, i in target[0]], "taps": list(target[1])}
    answer = result.why(argument)
    status, number = found
    row = {"id": None, "substructure": None}
    if status == "kept":
        row["id"] = number
        sub = core.basis_substructures[core._block_of(number)] if number < core.basis_size else None  # None past the core
        if sub is not None:
            row["substructure"] = form.layers(core.deah.step1.paths[sub].layers)
    elif status == "discarded":
        row["id"] = size + number
        row["substructure"] = form.layers(core.deah.step1.paths[int(core.discarded[number].substructure)].layers)
    if status == "absent":  # never a candidate: its coordinates over the basis
        head = {"run": ctx.run_id, **{k: answer[k] for k in answer if k not in ("run", "reason", "certificate", "verified")}}
        head["id"] = None
    else:
        head = spell.answer_head(target, row, status)
    reason = dict(answer["reason"])
    if status == "kept":
        reason = {"step": "kept", "detail": spell.kept_detail(row)}
    elif status == "discarded":
        reason = {**reason, "action": "discard"}
    else:
        reason = {"step": "coordinates", "detail": spell.never_a_candidate}
    certificate = [spell.term(t["coef"], result.basis_path(t["index"]), {"id": t["index"]}) for t in answer["certificate"]]
    if status == "absent":
        certificate = [{**c, "id": t["index"]} for c, t in zip(certificate, answer["certificate"])]
    return {**head, "reason": reason, "certificate": certificate, "verified": answer["verified"]}


def _general(net, result, d):
    """A core discard as a general path ((layer, index), ...), taps."""
    doc = general_core_path(result.parts, net, d.layers, d.indices)
    return tuple((net.index[name], i) for name, i in doc["nodes"]), tuple(doc["taps"])
