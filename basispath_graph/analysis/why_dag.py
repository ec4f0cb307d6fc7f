"""``why`` on a stored deah-complete run of a layer DAG core (``store/dag_runs.py``): the run's plan is
rebuilt from its network and checked against its stored blocks, the path is located in the B_r of
the selected substructure along its route (``dag_discards.EarDiscards.locate``), and a discard is
answered with its ear, its rule and its certificate. The certificate is the path's coordinates
over the run's basis, computed and checked by vector addition now (over a basis they are unique:
the telescoping sum of ``dag_discards.certificate``). Kept paths and paths in no B_r take the
answer every described run gives (``why.py``)."""

from __future__ import annotations

import json
from bisect import bisect_right

from ..general.blocks import block_general_paths, general_path_json
from ..general.dag_deah import DagRun
from ..general.dag_discards import EarDiscards, discard_reason, locate_discard
from ..general.paths import format_general_path, read_general_path_argument

__all__ = ["dag_answer"]


def dag_answer(spell, ctx, run: DagRun, path: str, error) -> dict | None:
    """The answer for a discard of the run (by id or as a path); None for any other path (the
    caller answers: kept, or its coordinates)."""
    net = ctx.network
    text, pid = spell.argument(path)
    size = int(ctx.row["basis_size"])
    firsts = run.discard_firsts(size)
    if pid >= 0:
        if pid < size:
            return None
        if pid >= firsts[-1]:
            raise error(spell.not_found(pid))
        n = bisect_right(firsts, pid) - 1
        offset = pid - int(firsts[n])
        reason, block = EarDiscards(run, n).at(offset)
        target = block_general_paths(net, block)[0]
    else:
        target = read_general_path_argument(net, path, error)
        found = locate_discard(run, target)
        if found is None or found[1].status != "discarded":
            return None
        n, where = found
        reason, offset = where.reason, where.offset
    answer = spell.coordinates(json.dumps(general_path_json(net, target)), format_general_path(net, target))
    return {**answer, "id": int(firsts[n]) + offset, "status": "discarded",
            "substructure": [net.layers[l].name for l in run.ears[n].layers], "reason": discard_reason(run, n, reason)}
