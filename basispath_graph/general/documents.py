"""JSON documents of a general network's result: the ``--json`` summary and the ``--export`` file."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from ..errors import BadInput
from ..export import REPAIR_DETAILS, summary, union_fields
from ..deah.step3_sdvchain import Discard
from .blocks import block_paths, block_paths_text, general_path_json, general_weight_endpoints
from .dag_discards import LISTED_DAG_DISCARDS, discard_documents
from .described import DescribedBasis, DescribedPaths
from .lazy_blocks import LazyBlocks, path_count
from ..deah.described_file import described_deah_document
from .described_io import described_document
from .model import GeneralNetwork

#: Above this many paths ``--export`` writes a described basis (a few numbers per neuron) rather
#: than every path: a million paths of a deep network are already a few hundred MB of JSON.
EXPLICIT_EXPORT_PATHS = 1_000_000
_PIECE_ROWS = 4096

__all__ = ["general_summary", "general_export", "paths_export_pieces", "export_pieces", "EXPLICIT_EXPORT_PATHS", "general_core_path", "general_basis_paths", "sdvchain_reason", "sdvchain_rule"]


def general_basis_paths(result) -> Sequence[dict]:
    """The basis of a general result as general paths ``{"nodes": [[layer, index], ...], "taps": [...]}``:
    a list, or above ``EXPLICIT_EXPORT_PATHS`` paths a sequence that makes each path when read
    (ResNet-50's 25.5 M paths as dicts would be over 20 GB)."""
    basis = result.basis
    if path_count(basis) <= EXPLICIT_EXPORT_PATHS:
        return [p for b in basis for p in block_paths(result.network, b)]
    return DescribedPaths(basis if isinstance(basis, LazyBlocks) else LazyBlocks(basis), block_paths, result.network)


def general_summary(result) -> dict:
    """The ``--json`` summary; with the DEAH engines also the parts of the basis and the summary
    of the layered run on the core."""
    net = result.network
    doc = {
        "network": net.name, "engine": result.engine, "kind": "general", "m": net.m, "H": net.H,
        "basis_size": result.basis_size, "certified": result.certified, "defect": result.verdict.defect,
        "timings": {k: round(v, 6) for k, v in result.timings.items()},
    }
    if result.core is not None:
        doc["parts"] = result.parts
        doc["core"] = summary(result.core)
    elif result.dag is not None:  # deah-complete on a layer DAG core: Step 1's ears, discards by rule
        doc["parts"] = result.parts
    elif result.sdvchain is not None:  # faithful deah on a layer DAG core: SDVChain's counts, the raw union, the repair
        doc["parts"] = result.parts
        doc.update(union_fields(result), discarded=len(result.discarded), certificate_method=result.certificate_method,
                   certificates_rechecked=result.certificates_rechecked)
    return doc


def general_export(result, form: str = "auto") -> dict:
    """The ``--export`` file. ``form="paths"``: spec, engine, m, H, certified and the basis as
    general paths; with the DEAH engines also the core's discards as general paths, each with its
    certificate over the basis (``index`` counts in ``basis``: the core's kept paths come first,
    in the same order). ``form="described"``: the described-basis document
    (``described_io``) of a described basis; ``"auto"``: described when the basis is described
    and has more than ``EXPLICIT_EXPORT_PATHS`` paths, else paths."""
    if _exports_described(result, form):
        return _described_export(result)
    doc = export_head(result)
    doc["basis"] = general_basis_paths(result)
    doc.update(export_tail(result))
    return doc


def _described_export(result) -> dict:
    """The described document of a described basis (the skeleton's, or a deah-complete run's)."""
    return described_deah_document(result) if _described_deah(result) else described_document(result)


def _exports_described(result, form: str) -> bool:
    """Whether ``general_export(result, form)`` is the described document (else the paths one)."""
    if form not in ("auto", "paths", "described"):
        raise BadInput(f"unknown export form {form!r}; choose auto, paths or described")
    described = isinstance(result.basis, DescribedBasis) or _described_deah(result)
    if form == "described" and not described:
        raise BadInput(f"the {result.engine} engine's basis is a list of paths; a described export needs the skeleton's or a"
                       " deah-complete run held described")
    return form == "described" or (form == "auto" and described and result.basis_size > EXPLICIT_EXPORT_PATHS)


def export_pieces(result, form: str = "auto") -> Iterator[str]:
    """``general_export(result, form)`` as JSON text in pieces (``solve --export``): a paths
    export a block of paths at a time (``paths_export_pieces``: faithful deah lists ResNet-18's
    11.7 M paths, which as one document of dicts took more memory than the solve), a described
    one whole (a few numbers per neuron)."""
    if _exports_described(result, form):
        yield json.dumps(_described_export(result))
    else:
        yield from paths_export_pieces(result)


def paths_export_pieces(result) -> Iterator[str]:
    """The paths export (``general_export(result, "paths")``) as JSON text in pieces, a block of
    paths at a time: ``solve --export-paths`` streams a basis too big to hold as one document."""
    head = json.dumps(export_head(result))
    yield head[:-1] + ', "basis": ['
    first = True
    for block in result.basis:
        for start in range(0, len(block), _PIECE_ROWS):  # a piece's path dicts stay a few MB
            text = block_paths_text(result.network, block.take(slice(start, start + _PIECE_ROWS)))
            if text:
                yield ("" if first else ", ") + text
                first = False
    tail = json.dumps(export_tail(result))
    yield "]" + (", " + tail[1:] if tail != "{}" else "}")


def export_head(result) -> dict:
    """The fields of a paths export before its ``basis``."""
    net = result.network
    return {"spec": net.to_dict(), "engine": result.engine, "m": net.m, "H": net.H, "certified": result.certified}


def export_tail(result) -> dict:
    """The fields of a paths export after its ``basis``: the DEAH engines' parts, repairs and
    discards with their certificates."""
    net, doc = result.network, {}
    core = result.core
    if core is not None and _described_deah(result):  # millions of discards, certificates made when read
        doc["parts"] = result.parts
        doc["repairs"] = len(core.repairs)
        doc["discarded_on_demand"] = len(core.discarded)
    elif result.dag is not None:  # deah-complete on a layer DAG core: discards listed up to LISTED_DAG_DISCARDS
        doc["parts"] = result.parts
        doc["repairs"] = 0
        if result.dag.discard_count > LISTED_DAG_DISCARDS:
            doc["discarded_on_demand"] = result.dag.discard_count
        else:
            doc["discarded"] = discard_documents(result.dag, result.basis)
    elif result.sdvchain is not None and len(result.discarded) > LISTED_DAG_DISCARDS:
        doc["parts"] = result.parts
        doc["repairs"] = len(result.repairs)
        doc["discarded_on_demand"] = len(result.discarded)
    elif result.sdvchain is not None:  # faithful deah on a layer DAG core: every discard with its SDVChain call or repair
        doc["parts"] = result.parts
        doc["repairs"] = len(result.repairs)
        doc["discarded"] = [
            {"path": general_path_json(net, (tuple(zip(d.layers, d.indices)), d.taps)), "reason": sdvchain_reason(result, d),
             "certificate": [{"coef": int(c), "index": int(i)} for i, c in (d.certificate or [])]}
            for d in result.discarded
        ]
    elif core is not None and len(core.discarded) > LISTED_DAG_DISCARDS:  # faithful deah on ResNet-18: 4.1 M
        doc["parts"] = result.parts
        doc["repairs"] = len(core.repairs)
        doc["discarded_on_demand"] = len(core.discarded)
    elif core is not None:
        doc["parts"] = result.parts
        doc["repairs"] = len(core.repairs)
        doc["discarded"] = [
            {"path": general_core_path(result.parts, net, d.layers, d.indices),
             "certificate": [{"coef": int(c), "index": int(i)} for i, c in (d.certificate or [])]}
            for d in core.discarded
        ]
    return doc




def _described_deah(result) -> bool:
    """A deah-complete run whose core was held described (``guards.DESCRIBED_ABOVE``), unrepaired."""
    core = result.core
    return core is not None and core.deah is not None and core.deah.described and core.engine == "deah-complete" and not core.repairs


def general_core_path(parts: dict, net: GeneralNetwork, layers, indices) -> dict:
    """A core path (core layer positions, neuron indices) as a general path, tap 0 on every hop."""
    names = [parts["core_layers"][l] for l in layers]
    return {"nodes": [[n, int(i)] for n, i in zip(names, indices)], "taps": [0] * (len(names) - 1)}


def sdvchain_reason(result, d) -> dict:
    """Why faithful deah on a layer DAG core discarded ``d`` (``general/dag_sdvchain.py``), as a
    stored run's ``why`` says it (``analysis/why.py``): the SDVChain call (chain, pair of
    substructures by their layers, the connections they share as layer pairs, Ep, UCP*, IEp and
    the path's shared weights, ``[a, i, b, j, tap]``), or the repair that dropped it."""
    return sdvchain_rule(result, d.reason)


def sdvchain_rule(result, r) -> dict:
    """``sdvchain_reason`` of a rule's record: an SDVChain ``Discard`` or a ``Repair``."""
    net = result.network
    if not isinstance(r, Discard):
        return {"step": "repair", "action": r.action, "detail": REPAIR_DETAILS.get(r.action, r.action)}
    paths = result.sdvchain.substructures.paths
    names = lambda layers: [net.layers[l].name for l in layers]  # noqa: E731
    return {
        "step": r.step, "action": "discard", "chain": r.chain,
        "pair": {"from": names(paths[r.pair[0]].layers), "to": names(paths[r.pair[1]].layers)},
        "shared_layers": [names((net.connections[k].source, net.connections[k].target)) for k in r.shared_pairs],
        "ep": general_weight_endpoints(net, r.ep), "ucp_star": general_weight_endpoints(net, r.ucp_star),
        "iep": general_weight_endpoints(net, r.iep), "shared": general_weight_endpoints(net, r.shared),
    }
