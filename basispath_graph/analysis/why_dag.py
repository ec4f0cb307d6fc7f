"""``why`` on a stored deah-complete run of a layer DAG core (``store/dag_runs.py``): the run's plan is
rebuilt from its network and checked against its stored blocks, the path is located in the B_r of
the selected substructure along its route (``dag_discards.EarDiscards.locate``), and a discard is
answered with its ear, its rule and its certificate. The certificate is the path's coordinates
over the run's basis, computed and checked by vector addition now (over a basis they are unique:
the telescoping sum of ``dag_discards.certificate``). Kept paths and paths in no B_r take the
answer every described run gives (``why.py``)."""

from __future__ import annotations

import json

from ..general.blocks import block_general_paths, general_path_json
from ..general.dag_deah import DagRun
from ..general.dag_discards import EarDiscards
from ..general.paths import format_general_path, read_general_path_argument

__all__ = ["dag_answer"]


def _ear_of(run: DagRun, layers: tuple[int, ...]) -> int | None:
    """The ear (1..) whose route visits exactly these layers (between two layers there is one
    trainable connection, so the layers name the route), or None (p_0 discards nothing)."""
    for n, summary in enumerate(run.ears):
        if n and tuple(summary.layers) == layers:
            return n
    return None


def dag_answer(spell, ctx, run: DagRun, path: str, error) -> dict | None:
    """The answer for a discard of the run (by id or as a path); None for any other path (the
    caller answers: kept, or its coordinates)."""
    net = ctx.network
    text, pid = spell.argument(path)
    size = int(ctx.row["basis_size"])
    firsts, n, offset = [], None, None
    first = size
    for summary in run.ears:
        firsts.append(first)
        first += summary.prefix + summary.suffix
    if pid >= 0:
        if pid < size:
            return None
        if pid >= first:
            raise error(spell.not_found(pid))
        n = max(k for k in range(1, len(run.ears)) if firsts[k] <= pid)
        offset = pid - firsts[n]
        reason, block = EarDiscards(run, n).at(offset)
        target = block_general_paths(net, block)[0]
    else:
        target = read_general_path_argument(net, path, error)
        layers = tuple(l for l, _ in target[0])
        n = _ear_of(run, layers)
        if n is None or None in target[1]:
            return None
        where = EarDiscards(run, n).locate([i for _, i in target[0]], target[1])
        if where.status != "discarded":
            return None
        reason, offset = where.reason, where.offset
    answer = spell.coordinates(json.dumps(general_path_json(net, target)), format_general_path(net, target))
    summary = run.ears[n]
    a, b = summary.segment
    side = "before" if reason == "prefix" else "after"
    segment = [net.layers[l].name for l in summary.layers[a:b + 1]]
    detail = (f"discarded by ear {n} (deah-complete on a layer DAG): a row of B_r of the substructure along "
              f"{', '.join(net.layers[l].name for l in summary.layers)} that differs from every kept row {side} the ear's new "
              f"connections {' -> '.join(segment)}; its certificate telescopes over the designated walks")
    return {**answer, "id": firsts[n] + offset, "status": "discarded",
            "substructure": [net.layers[l].name for l in summary.layers],
            "reason": {"step": reason, "action": "discard", "detail": detail, "ear": n, "segment": segment}}
