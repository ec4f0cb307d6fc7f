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
from the description (``deah/described_verify.py``): exact, no path listed.
"""

from __future__ import annotations

from collections.abc import Mapping


from .run_description import describe

__all__ = ["DESCRIBED_DEAH_FORMAT", "described_deah_document", "is_described_deah_document"]

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
