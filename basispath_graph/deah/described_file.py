"""The described deah-complete file (``basispath solve --export`` of a run held described): the run
in O(core neurons + substructures) numbers, read back and certified from the description.

Format ``basispath-described-deah/1`` (docs/deah-complete.md, "Held described"), JSON::

    {"format": "basispath-described-deah/1", "spec": {...}, "engine": "deah-complete", "seed": 0,
     "m": .., "H": .., "certified": true, "basis_size": .., "discarded": ..,
     "core_layers": [NAME, ...],                      # a general network's core (absent: layered)
     "orders": [[neuron, ...], ...],                  # per core layer, its neurons by rank
     "substructures": [{"idx": k, "layers": [LAYER, ...]}, ...],   # Step 1's selection, p_0 first
     "blocks": [{"substructure": k, "rule": "p0" | "ear", "hop": [LAYER, LAYER], "kept_first": ..,
                 "kept": .., "discard_first": .., "discards": .., "prefix": ..}, ...],
     "parts": {...}}                                  # a general network's parts (counts)

LAYER is a core layer's name (general) or index (layered). The basis it describes: B_0 of p_0's
route and, per ear in the ear order, the owners of its new hop's weights (Subroutine's rows under
the rule the orders give, deah/subroutine_rows.py); on a general network then the tap lift, the
extra layers' paths and the identity forest, made from the spec by the rules of
``general/deah_solve.py``. ``blocks`` say what the rebuilt plan must be (a check, not input);
``discard_first`` counts from the first discard. ``verify`` rebuilds the run and certifies it
from the description (``ear_certificate``, ``union_certificate``): exact, no path listed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import BadInput
from ..verify import Verdict
from .described_run import BlockRow, DescriptionMismatch, RunDescription, describe, rebuild

__all__ = ["DESCRIBED_DEAH_FORMAT", "described_deah_document", "is_described_deah_document", "certify_described_deah"]

DESCRIBED_DEAH_FORMAT = "basispath-described-deah/1"


def described_deah_document(result) -> dict:
    """The described file of a described deah-complete result (layered, or general with a core)."""
    net = result.network
    layered = result.core if result.core is not None else result
    d = describe(layered)
    name = (lambda k: result.parts["core_layers"][k]) if result.core is not None else int  # noqa: E731
    doc = {
        "format": DESCRIBED_DEAH_FORMAT, "spec": net.to_dict(), "engine": result.engine, "seed": result.seed, "m": net.m, "H": net.H,
        "certified": result.certified, "basis_size": result.basis_size, "discarded": len(result.discarded),
    }
    if result.core is not None:
        doc["core_layers"] = list(result.parts["core_layers"])
    doc.update(
        orders=[o.tolist() for o in d.orders],
        substructures=[{"idx": idx, "layers": [name(l) for l in layers]} for idx, layers in d.selected],
        blocks=[{"substructure": b.substructure, "rule": b.rule, "hop": [name(l) for l in b.hop], "kept_first": b.kept_first,
                 "kept": b.kept, "discard_first": b.discard_first, "discards": b.discards, "prefix": b.prefix} for b in d.blocks],
    )
    if result.core is not None:
        doc["parts"] = result.parts
    return doc


def is_described_deah_document(data: object) -> bool:
    return isinstance(data, Mapping) and data.get("format") == DESCRIBED_DEAH_FORMAT


def _int(value, where: str) -> int:
    if type(value) is not int or value < 0:
        raise BadInput(f"{where}: expected a non-negative integer")
    return value


def _list(value, where: str) -> list:
    if not isinstance(value, list):
        raise BadInput(f"{where}: expected a list")
    return value


def certify_described_deah(network, data: Mapping, source: str) -> Verdict:
    """Rebuild the run a ``basispath-described-deah/1`` document describes over ``network`` and
    certify it from the description; BadInput (one line naming the file and the entry) when the
    document is not in that form or does not describe a run of this network's core."""
    from ..general.deah_solve import general_result
    from ..general.paper_setting import paper_setting

    for key in ("seed", "orders", "substructures", "blocks"):
        if key not in data:
            raise BadInput(f"{source}: a {DESCRIBED_DEAH_FORMAT} document needs '{key}'")
    general = not network.is_layered
    setting = paper_setting(network, "deah-complete") if general else None
    core = setting.core if general else network
    if general:
        names = [network.layers[k].name for k in setting.core_layers]
        if data.get("core_layers") != names:
            raise BadInput(f"{source}: core_layers are not the core of this network ({', '.join(names[:3])}, ...)")
        position = {name: k for k, name in enumerate(names)}
    else:
        position = {k: k for k in range(core.L + 1)}

    def layer(value, where: str) -> int:
        if isinstance(value, bool) or value not in position:
            raise BadInput(f"{where}: {value!r} is not a layer of the core")
        return position[value]

    orders = []
    for k, order in enumerate(_list(data["orders"], f"{source}: orders")):
        values = _list(order, f"{source}: orders[{k}]")
        if not all(type(v) is int for v in values):
            raise BadInput(f"{source}: orders[{k}]: expected a list of integers")
        orders.append(np.asarray(values, dtype=np.int64))
    selected = []
    for n, s in enumerate(_list(data["substructures"], f"{source}: substructures")):
        where = f"{source}: substructures[{n}]"
        if not isinstance(s, Mapping) or set(s) != {"idx", "layers"}:
            raise BadInput(f"{where}: expected {{\"idx\", \"layers\"}}")
        selected.append((_int(s["idx"], f"{where}.idx"), tuple(layer(l, f"{where}.layers") for l in _list(s["layers"], f"{where}.layers"))))
    keys = {"substructure", "rule", "hop", "kept_first", "kept", "discard_first", "discards", "prefix"}
    blocks = []
    for n, b in enumerate(_list(data["blocks"], f"{source}: blocks")):
        where = f"{source}: blocks[{n}]"
        if not isinstance(b, Mapping) or set(b) != keys:
            raise BadInput(f"{where}: expected {{{', '.join(sorted(keys))}}}")
        blocks.append(BlockRow(_int(b["substructure"], where), str(b["rule"]), tuple(layer(l, f"{where}.hop") for l in _list(b["hop"], where)),
                               *(_int(b[k], f"{where}.{k}") for k in ("kept_first", "kept", "discard_first", "discards", "prefix"))))
    try:
        layered = rebuild(core, RunDescription(_int(data["seed"], f"{source}: seed"), orders, selected, blocks))
    except DescriptionMismatch as exc:
        raise BadInput(f"{source}: does not describe a deah-complete run of this network: {exc}") from None
    verdict = general_result(setting, "deah-complete", layered.seed, layered).verdict if general else layered.verdict
    claimed = data.get("basis_size")
    if claimed is not None and claimed != verdict.size:
        raise BadInput(f"{source}: basis_size says {claimed}, the description has {verdict.size} paths")
    return verdict
