"""JSON forms of a solve result: the ``--export`` file and the ``--json`` summary.

A PATH is a list of [layer, neuron_index] pairs from layer 0 to layer L (layers ascending,
indices 0-based). Weights in discard reasons are [layer_a, index_a, layer_b, index_b].
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager

import numpy as np

from .deah.discard_table import HopDiscard, LocalDiscard, PartTable
from .deah.local_witness import explain_local
from .deah.repair_list import repair_counts
from .deah.step3_complete import COMPLETE_STEPS, plan_blocks
from .deah.step3_sdvchain import SDVCHAIN_STEPS, Discard
from .discarded import ITER_ROWS, DiscardedList, DiscardedPath, certificate_lengths
from .errors import BadInput
from .network import paths_to_json, weight_endpoints
from .verify import format_path, read_path

__all__ = ["export_document", "discard_document", "read_basis_file", "read_json_file", "json_file_errors", "basis_paths_of", "summary", "reason_document", "rule_document", "discards_by_step", "certificate_sizes", "kept_reason", "why_reason", "NEVER_A_CANDIDATE", "NEVER_A_CANDIDATE_GENERAL"]


def _path(layers, indices) -> list[list[int]]:
    return [[int(l), int(i)] for l, i in zip(layers, indices)]


#: What each action of the repair means, as ``why`` says it.
REPAIR_DETAILS = {"drop": "dropped: dependent on the paths kept before it", "readmit": "re-admitted: it raises the rank",
                  "add": "added: a skeleton path was needed to reach m - H"}


def kept_reason(has_substructure: bool) -> dict:
    """Why a kept path is kept, as ``why`` says it (a stored run's or a solve's answer alike)."""
    detail = "kept: in B_r of its substructure and never discarded" if has_substructure else "kept: a path of the basis"
    return {"step": "kept", "detail": detail}


#: The detail of a path a run never had as a candidate, answered with its coordinates: on a layered
#: network, paths in no B_r; a general run's (skeleton, tap lift) have no B_r to name.
NEVER_A_CANDIDATE = "never a candidate of this run (in no B_r): its coordinates over the run's basis"
NEVER_A_CANDIDATE_GENERAL = "never a candidate of this run: its coordinates over the run's basis"


def why_reason(reason: dict) -> dict:
    """A discard's ``reason_document`` as ``why`` answers it, stored run or solve alike: a rule's
    action is "discard", a repair's says what it did (``REPAIR_DETAILS``)."""
    if reason["step"] == "repair":
        return {**reason, "detail": REPAIR_DETAILS.get(reason["action"], reason["action"])}
    return {"step": reason["step"], "action": "discard", **{k: v for k, v in reason.items() if k != "step"}}


def reason_document(result: "Result", d: DiscardedPath) -> dict:
    """Why the discarded path ``d`` was discarded: ``rule_document`` of its reason."""
    return rule_document(result, d.reason)


def rule_document(result: "Result", r) -> dict:
    """A rule's record (a Step 3 discard, a hop- or local-rule discard, a repair) in its shape.

    SDVChain ("chain", "head"): the call (chain, pair of substructures, shared layer pairs, Ep,
    UCP*, IEp). deah-complete's hop rule ("prefix", "suffix"): the substructure, the new layer
    pair it owns, the weight where the path crosses it, the kept twin X_r(f) and where the two
    differ. The local rule ("local"): the substructure. A repair: its action. Weights are
    [layer_a, index_a, layer_b, index_b]; layer lists are a substructure's layers.
    """
    net = result.network
    if isinstance(r, HopDiscard):
        block = result.deah.bases[r.substructure]
        return {
            "step": r.step,
            "substructure": list(block.layers),
            "hop": list(r.hop),
            "crossing": weight_endpoints(net, [r.crossing])[0],
            "twin": _path(block.layers, block.take([r.twin]).nodes[0]),  # a described B_r: that row alone
            "differs": weight_endpoints(net, r.differs),
            "twin_differs": weight_endpoints(net, r.twin_differs),
            "agrees": weight_endpoints(net, r.agrees),
        }
    if isinstance(r, LocalDiscard):
        return {"step": r.step, "substructure": list(result.deah.bases[r.substructure].layers)}
    if isinstance(r, Discard):
        paths = result.deah.step1.paths
        return {
            "step": r.step,
            "chain": r.chain,
            "pair": {"from": list(paths[r.pair[0]].layers), "to": list(paths[r.pair[1]].layers)},
            "shared_layers": [list(p) for p in r.shared_pairs],
            "ep": weight_endpoints(net, r.ep),
            "ucp_star": weight_endpoints(net, r.ucp_star),
            "iep": weight_endpoints(net, r.iep),
            "shared": weight_endpoints(net, r.shared),
        }
    return {"step": "repair", "action": r.action}


def export_document(result: "Result") -> dict:
    """The ``--export`` file: spec, engine, m, H, basis, discarded, repairs (+ reasons)."""
    net = result.network
    doc = {
        "spec": net.to_dict(),
        "engine": result.engine,
        "seed": result.seed,
        "m": net.m,
        "H": net.H,
        "certified": result.certified,
        "basis": paths_to_json(result.basis),
        "discarded": _discarded_paths(result.discarded),
        "repairs": len(result.repairs),
    }
    if result.discarded:
        doc["discard_reasons"] = [_explained(result, d) for d in result.discarded]
    return doc


def _discarded_paths(discarded) -> list[list[list[int]]]:
    """The discarded paths as [layer, index] pairs: a ``DiscardedList``'s from its blocks (its
    records, and certificates made on demand, are made once, for ``discard_reasons``)."""
    if isinstance(discarded, DiscardedList):
        return paths_to_json(discarded.iter_blocks(ITER_ROWS))
    return [_path(d.layers, d.indices) for d in discarded]


def _explained(result: "Result", d: DiscardedPath) -> dict:
    """One entry of ``discard_reasons``: the reason and the certificate as paths."""
    return {
        "reason": reason_document(result, d),
        "certificate": [{"coef": c, "path": _path(*result.basis_path(i))} for i, c in d.certificate],
    }


def _local_witness(result: "Result", d: DiscardedPath) -> dict:
    """The local rule's decision on one discard, shown on its certificate (``explain_local``)."""
    s1 = result.deah.step1
    plans = plan_blocks({idx: s1.paths[idx].layers for idx in s1.selected}, list(s1.selected))
    terms = [(c, result.basis_path(i)) for i, c in d.certificate]
    return explain_local(result.network, plans, d.substructure, (d.layers, d.indices), terms)


def discard_document(result: "Result", path) -> dict:
    """{"path", "reason", "certificate"} of one discarded path of a layered result (``Result.why`` builds on it).

    ``path`` is text (``"0:1,1:0,2:1"``) or (layer, index) pairs; BadInput when it is not one
    of the result's discarded paths. O(number of discards) to find it."""
    layers, indices = read_path(path)
    if isinstance(result.discarded, DiscardedList):  # found by its rows: one record (and certificate) made
        k = result.discarded.position(layers, indices)
        found = None if k is None else result.discarded[k]
    else:
        found = next((d for d in result.discarded if d.layers == layers and d.indices == indices), None)
    if found is not None:
        return record_document(result, found)
    raise BadInput(f"{format_path(layers, indices)} is not a discarded path of this result")


def record_document(result: "Result", d: DiscardedPath) -> dict:
    """{"path", "reason", "certificate"} of a discard record of a layered result, found already."""
    doc = {"path": _path(d.layers, d.indices), **_explained(result, d)}
    if isinstance(d.reason, LocalDiscard):  # per path only: too heavy for a whole export
        doc["reason"]["witness"] = _local_witness(result, d)
    return doc


def union_fields(result: "Result") -> dict:
    """The summary's account of a DEAH engine's raw union and its repair (layered and general)."""
    counts = repair_counts(result.repairs)
    return {
        "raw_certified": result.raw_verdict.certified,
        "raw_defect": result.raw_verdict.defect,
        "raw_size": result.raw_verdict.size,
        "repairs": len(result.repairs),
        "repairs_needed": result.repairs_needed,
        "repairs_by_action": {a: counts[a] for a in ("drop", "readmit", "add")},
    }


def summary(result: "Result") -> dict:
    """The ``--json`` summary printed by ``solve``."""
    net = result.network
    doc = {
        "network": net.name,
        "engine": result.engine,
        "seed": result.seed,
        "m": net.m,
        "H": net.H,
        "basis_size": result.basis_size,
        "certified": result.certified,
        "defect": result.verdict.defect,
        **union_fields(result),
        "discarded": len(result.discarded),
        "timings": {k: round(v, 6) for k, v in result.timings.items()},
    }
    if result.deah is not None:
        s1, s3 = result.deah.step1, result.deah.step3
        doc.update(
            substructure_paths=s1.total,
            R=s1.rank,
            chains=len(s3.chains),
            sdvchain_calls=s3.calls,
            discards_by_step=discards_by_step(result),
            certificate_max_size=_max_length(result.discarded),
            certificate_sizes=certificate_sizes(result),
            certificate_method=result.certificate_method,
            certificates_rechecked=result.certificates_rechecked,
        )
        if result.engine == "deah-complete":
            doc["rules"] = dict(Counter(s3.rules.values()))
    return doc


def discards_by_step(result: "Result") -> dict[str, int]:
    """Step 3's discards per step (deah: chain / head; deah-complete: its rules), zeros included."""
    steps = COMPLETE_STEPS if result.engine == "deah-complete" else SDVCHAIN_STEPS
    discards = result.deah.step3.discards
    counts = discards.step_counts() if isinstance(discards, PartTable) else Counter(d.step for d in discards)
    return {s: counts.get(s, 0) for s in steps}


def _max_length(discarded) -> int | None:
    """The largest certificate (basis paths), None when they are made on demand."""
    lengths = certificate_lengths(discarded)
    return None if lengths is None else int(lengths.max(initial=0))


def certificate_sizes(result: "Result") -> dict[int, int] | None:
    """How many discarded paths have a certificate of each size (number of basis paths); None
    when the certificates are made on demand (a described deah-complete run, faithful deah:
    ``why`` makes each)."""
    lengths = certificate_lengths(result.discarded)
    if lengths is None:
        return None
    sizes, counts = np.unique(lengths, return_counts=True)
    return {int(s): int(n) for s, n in zip(sizes, counts) if s}


def read_basis_file(path) -> list[list[list[int]]]:
    """The basis paths of a JSON file: an export of ``solve`` or a bare list of paths.
    BadInput (one line naming the file) when it cannot be read or is not in that form."""
    return basis_paths_of(read_json_file(path), str(path))


def read_json_file(path) -> object:
    """A JSON file's content; BadInput (one line naming the file) when it cannot be read."""
    import json

    with json_file_errors(path):
        with open(path, encoding="utf-8") as f:
            return json.load(f)


@contextmanager
def json_file_errors(path):
    """Reading the JSON file ``path`` (whole or streamed: ``json_stream``): what goes wrong as
    BadInput, one line naming the file."""
    import json

    try:
        yield
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot read: {exc}") from None
    except RecursionError:
        raise BadInput(f"{path}: not valid JSON: nesting is too deep") from None
    except ValueError as exc:  # an integer literal beyond Python's digit limit
        raise BadInput(f"{path}: not valid JSON: {str(exc).split('; use sys.set_int_max_str_digits')[0]}") from None


def basis_paths_of(data, source: str = "basis") -> list[list[list[int]]]:
    """The paths of an export document (its "basis") or of a bare list of paths, checked to be
    lists of [layer, index] integer pairs within 64 bits; BadInput naming the first that is not."""
    paths = data.get("basis") if isinstance(data, dict) else data
    if not isinstance(paths, (list, tuple)):
        raise BadInput(f"{source}: expected a list of paths or an object with a 'basis' list")
    out = []
    for k, p in enumerate(paths):
        ok = isinstance(p, (list, tuple)) and len(p) > 0 and all(
            isinstance(x, (list, tuple)) and len(x) == 2 and all(type(v) is int or isinstance(v, np.integer) for v in x) for x in p
        )
        if not ok:
            raise BadInput(f"{source}: basis[{k}] is not a list of [layer, index] integer pairs")
        if not all(-(2**63) <= int(v) < 2**63 for x in p for v in x):  # paths become int64 arrays
            raise BadInput(f"{source}: basis[{k}] has an integer out of the 64-bit range")
        out.append([[int(l), int(i)] for l, i in p])
    return out
