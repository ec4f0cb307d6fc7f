"""Exact certification of deah-complete's kept set from its description, when every block is p_0
or an ear (docs/deah-complete.md), without listing the kept paths.

The kept set is B_0 (all of Subroutine's rows of p_0's route) and, per ear r in the ear order,
the owners X_r(f) of every weight f of its new hop h_r (``subroutine_rows.EarRows``). It is a
basis path set when:

1. **Routes and rule.** Every route runs from the input layer to the output layer over
   connected layer pairs; the choice rule's direct and predecessor maps are in range. Every row
   is then a path: a predecessor walk, one edge, a direct walk (``SubroutineRows.take``).
2. **B_0, peeled.** A row of B_0 made at a cross edge f that is no designated edge (no
   predecessor edge, and cross edges are no direct edges) is the only kept path holding f: other
   rows of B_0 hold f only if made at it, and every row of every block holds, off its own edge,
   designated edges only (walks of the same rule; an ear's edge is on its new hop, no hop of
   p_0). A row with a weight of its own is independent of all the others. B_0's other rows, the
   all-direct rows and those made at predecessor edges (at most one per neuron), peel too, hop by
   hop from the last: a row made at the predecessor edge e = (pred(v), v) of hop k (not direct:
   it is a cross edge) is the only one of them still there that holds e. A row made at a later
   hop holds e only on its backward walk, and it has peeled; a row made at an earlier hop holds
   direct edges from there on; a row made at hop k at another edge holds its own edge there; an
   all-direct row holds direct edges only. Last, the w_0 all-direct rows start at distinct
   input neurons: each holds its first edge alone. So B_0 is independent for any rule whose maps
   are in range (1); what the proof takes from the code (a row made at (u, v) of hop k is the
   predecessor walk to u, the edge, the direct walk from v) is checked on a spread sample of
   these rows (``B0_SPOT_CHECKS``). Their rank used to be taken exactly (``verify.rank``):
   ResNet-152's 30 M numbers cost 1.8 s and 0.9 GB, most of the run; the proof costs neither.
3. **Ears.** h_r is a hop of no route before r, and r's kept rows own each weight of h_r once
   (the section of h_r, one row per cross edge, and the distinct p* rows of its source layer,
   made before the section, one per direct edge). In a combination of kept paths that vanishes,
   take the last ear with a non-zero coefficient: on h_r's weights only its own rows are
   non-zero, one per weight with coefficient 1, so all of its coefficients vanish.
4. **Count.** |B_0| + sum of w_a * w_b over the ears = m - H.

(1)-(4) prove the kept set independent with m - H paths. Any failed premise falls back to the
explicit certifier (``verify.certify`` over the listed paths), whose verdict names the defect:
the description proves, it never refuses on its own. tests/test_ear_certificate.py compares the
verdict with the explicit one on random networks.
"""

from __future__ import annotations

import numpy as np

from ..network import Network, PathBlock
from ..verify import Verdict
from .subroutine_rows import EarRows, SubroutineRows

__all__ = ["certify_ear_union"]


def _route_problem(network: Network, rows: SubroutineRows) -> str | None:
    layers, w = rows.layers, network.widths
    if layers[0] != 0 or layers[-1] != network.L or any(b <= a for a, b in zip(layers, layers[1:])):
        return f"route {layers} does not run from layer 0 to layer {network.L}"
    pairs = set(network.pairs)
    for k, (a, b) in enumerate(zip(layers, layers[1:])):
        if (a, b) not in pairs:
            return f"route {layers}: layers {a}, {b} are not connected"
        if len(rows.direct[k]) != w[a] or len(rows.pred[k]) != w[b] or \
                (w[a] and not 0 <= rows.direct[k].min() <= rows.direct[k].max() < w[b]) or \
                (w[b] and not 0 <= rows.pred[k].min() <= rows.pred[k].max() < w[a]):
            return f"route {layers}: the choice rule is out of range on hop {a} -> {b}"
    return None


#: Rows of B_0 without a weight of their own made and checked against the proof's premise
#: (spread over them): an implementation check beside the proof of (2).
B0_SPOT_CHECKS = 4096


def _b0_made_edges(rows: SubroutineRows) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(row, hop, u, v) of B_0's rows without a weight of their own: the all-direct rows (hop -1,
    starting at u) and the rows made at a predecessor edge (u, v) = (pred(v), v) of a hop, v not
    u's direct target."""
    w = rows.network.widths
    starts = np.arange(int(rows.starts[1]), dtype=np.int64)
    out = [(starts, np.full(len(starts), -1, dtype=np.int64), starts, np.full(len(starts), -1, dtype=np.int64))]
    for k, (a, b) in enumerate(zip(rows.layers, rows.layers[1:])):
        v = np.arange(w[b], dtype=np.int64)
        u = rows.pred[k]
        d = rows.direct[k][u]
        cross = v != d
        made = rows.cross_row(k, u[cross], v[cross], d[cross])
        out.append((made, np.full(len(made), k, dtype=np.int64), u[cross], v[cross]))
    return tuple(np.concatenate([part[i] for part in out]) for i in range(4))


def _b0_problem(rows: SubroutineRows) -> str | None:
    """Where a spread sample of B_0's rows without a weight of their own is not what the proof
    of (2) reads them as (distinct rows; the predecessor walk to u, the edge (u, v), the direct
    walk on), or None."""
    made, hop, u, v = _b0_made_edges(rows)
    if len(np.unique(made)) != len(made):
        return "B_0's rows made at predecessor edges are not distinct rows"
    pick = np.unique(np.linspace(0, len(made) - 1, min(B0_SPOT_CHECKS, len(made))).astype(np.int64)) if len(made) else made
    nodes, k, a, b = rows.take(made[pick]).nodes, hop[pick], u[pick], v[pick]
    at = np.arange(len(pick))
    start = np.maximum(k + 1, 0)  # where the direct walk starts
    wrong = nodes[at, start] != np.where(k >= 0, b, a)
    wrong |= (k >= 0) & (nodes[at, np.maximum(k, 0)] != a)
    for i in range(nodes.shape[1] - 1):
        back, on = i < k, i >= start
        wrong |= back & (nodes[:, i] != rows.pred[i][nodes[:, i + 1]])
        wrong |= on & (nodes[:, i + 1] != rows.direct[i][nodes[:, i]])
    if wrong.any():
        return f"B_0's row {int(made[pick][np.flatnonzero(wrong)[0]])} is not the walk its section makes"
    return None


def certify_ear_union(network: Network, p0: SubroutineRows, ears: list[tuple[SubroutineRows, EarRows]],
                      listed: list[PathBlock] | None) -> Verdict:
    """The exact verdict on B_0 plus the ears' kept rows (see the module doc). ``listed``: the
    kept blocks in basis order, read only when a premise fails (the explicit certifier decides);
    None: a failed premise gives a verdict that names it, not certified (a described file of a
    big network, whose paths are not to be listed: ``deah/described_run.py``)."""
    expected = network.basis_size
    size = len(p0) + sum(ear.kept_count for _, ear in ears)
    premise = {"failed": "the description's premises"}

    def explicit() -> Verdict:
        if listed is None:
            return Verdict(False, f"not proved from the description: {premise['failed']} (docs/deah-complete.md)", size, expected, None)
        from ..verify import certify
        return certify(network, listed)

    problems = [p for p in (_route_problem(network, rows) for rows in [p0] + [r for r, _ in ears]) if p]
    if problems or size != expected:
        premise["failed"] = problems[0] if problems else f"size {size} != m - H = {expected}"
        return explicit()
    seen = set(zip(p0.layers, p0.layers[1:]))
    w = network.widths
    for rows, ear in ears:
        a, b = rows.layers[ear.j], rows.layers[ear.j + 1]
        # owners: the hop's section (one row per cross edge (u, v): u * (w_b - 1) plus v's place
        # among u's cross targets, a bijection) and the p* rows of its source layer, distinct and
        # made before the section
        pstar = rows.pstar[ear.j]
        if (a, b) in seen or ear.kept_count != w[a] * w[b] or len(np.unique(pstar)) != w[a] or \
                (w[a] and pstar.max() >= rows.starts[ear.j + 1]):
            premise["failed"] = f"the ear over {rows.layers} does not own its hop {a} -> {b} alone, once per weight"
            return explicit()
        seen.update(zip(rows.layers, rows.layers[1:]))
    problem = _b0_problem(p0)
    if problem:
        premise["failed"] = problem
        return explicit()
    return Verdict(True, None, size, expected, size)
