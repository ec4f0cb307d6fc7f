"""A described deah-complete run rebuilt from its description.

A run held described (``guards.DESCRIBED_ABOVE``: every block p_0 or an ear) is a function of
its choice rule (per core layer, the neurons by rank), Step 1's selected substructure routes (in
selection order, p_0 first) and the plan Step 3 builds from those routes: its
``run_description.RunDescription``. ``rebuild`` makes the layered ``Result`` again, certified
from the description (``ear_certificate``) or with a verdict given (a stored run). The store
(``store/described_deah.py``) and the described file (``deah/described_file.py``,
``deah/described_verify.py``) are two spellings of this one description.
"""

from __future__ import annotations

from ..choices import ChoiceRule
from ..network import Network
from ..verify import Verdict
from .ear_certificate import certify_ear_union
from .engine import DeahResult
from .step1_substructures import Step1Result, SubstructurePath
from .step3_complete import run_step3_complete
from .run_description import DescriptionMismatch, RunDescription, block_rows, show_block
from .subroutine_rows import SubroutineRows

__all__ = ["rebuild"]


def rebuild(core: Network, description: RunDescription, verdict: Verdict | None = None):
    """The layered ``Result`` of ``description`` on ``core``: certified from the description when
    ``verdict`` is None (a failed premise is named, never listed: ``certify_ear_union``), else
    carrying ``verdict`` (a stored run's). DescriptionMismatch when the rule, the routes or the
    blocks do not fit the core or do not rebuild as described."""
    from ..solver import described_result

    try:
        rule = ChoiceRule.from_orders(description.orders, description.seed)
    except ValueError as exc:
        raise DescriptionMismatch(f"the choice rule: {exc}") from None
    if rule.widths != tuple(core.widths):
        raise DescriptionMismatch("the choice rule's layers are not the core's")
    pairs = set(core.pairs)
    for idx, layers in description.selected:
        if not layers or layers[0] != 0 or layers[-1] != core.L or any((a, b) not in pairs for a, b in zip(layers, layers[1:])):
            raise DescriptionMismatch(f"substructure {idx} ({list(layers)}) is not a route of the core from layer 0 to {core.L}")
    order = [idx for idx, _ in description.selected]
    if not order or len(set(order)) != len(order):
        raise DescriptionMismatch("the selected substructures are empty or repeated")
    paths = {idx: SubstructurePath(idx, tuple(layers), 0) for idx, layers in description.selected}
    step1 = Step1Result(core, paths, order, len(order), order, total=len(order))
    bases = {idx: SubroutineRows(core, paths[idx].layers, rule) for idx in order}
    step3 = run_step3_complete(core, step1, bases, rule)
    deah = DeahResult(core, description.seed, step1, bases, step3)
    if not step3.ear_orderable:
        raise DescriptionMismatch("its blocks are not all p_0 and ears: a run held described has no local block")
    if verdict is None:
        p0 = step3.order[0]
        verdict = certify_ear_union(core, step3.described[p0], [(step3.described[i], step3.ears[i]) for i in step3.order[1:]], None)
    layered = described_result(core, description.seed, deah, verdict)
    mine = block_rows(layered)
    for k, (a, b) in enumerate(zip(mine, description.blocks)):
        if a != b:
            raise DescriptionMismatch(f"block {k} rebuilds as {show_block(a)}, described as {show_block(b)}")
    if len(mine) != len(description.blocks):
        raise DescriptionMismatch(f"{len(mine)} blocks rebuilt, {len(description.blocks)} described")
    return layered
