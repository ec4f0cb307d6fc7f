"""Why deah-complete's local rule discarded a path: its witness coordinates, path by path.

A local block r is tested on *witness coordinates* (docs/deah-complete.md, "The rules"): its
new weights, phi_z of every debt it pays, and one alpha functional. All of them vanish on every
path kept before r, and the rule kept a maximal set of B_r rows with independent witness
vectors; a discarded row's witness vector is therefore a combination of the kept rows' ones.

This module evaluates those coordinates on single paths, so ``why`` can show the dependency
with numbers: applied to the path's certificate (q = sum c_b b over kept paths of r and of
blocks before r), the witness map gives witness(q) = sum over r's own terms of c_b witness(b),
because it vanishes on the earlier terms. Everything is evaluated here, nothing is assumed:
``explain_local`` reports whether the earlier terms vanish and whether the sum matches.

Values are modulo P1 = 2^31 - 1 (the alpha functional is only defined modulo a prime, as in
``witness_certificates``); they are shown as the small signed integers they are.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from ..linalg.elimination import P1
from ..network import Network
from .step3_complete import BlockPlan
from .walks import route_hops
from .witness_certificates import alpha_functional

__all__ = ["BlockWitness", "explain_local"]

Path = tuple[Sequence[int], Sequence[int]]  # (layers, indices)


def _signed(v: int) -> int:
    v %= P1
    return v - P1 if v > P1 // 2 else v


class BlockWitness:
    """The witness coordinates of one block of a deah-complete plan, evaluated on any path."""

    def __init__(self, network: Network, plans: list[BlockPlan], idx: int) -> None:
        by_idx = {p.idx: p for p in plans}
        self.plan = by_idx[idx]
        k = self.plan.position
        hops = list(network.pairs)
        hop_id = {h: j for j, h in enumerate(hops)}
        ordered = sorted(plans, key=lambda p: p.position)[: k + 1]
        alphas = np.zeros((k + 1, len(hops)), dtype=np.int64)
        for row, p in enumerate(ordered):
            alphas[row, [hop_id[h] for h in route_hops(p.layers)]] = 1
        # lambda over hops: 0 on the alpha vector of every earlier block, 1 on this one's.
        self._lam = {h: int(alphas_l) for h, alphas_l in zip(hops, alpha_functional(alphas[:k], alphas[k]).tolist())}
        self._new = set(self.plan.new_hops)

    def describe(self) -> dict:
        """The block's coordinates in words: new hops, paid debts (layer, sign on its paths), alpha."""
        return {
            "position": self.plan.position,
            "rule": self.plan.rule,
            "new_hops": [list(h) for h in self.plan.new_hops],
            "paid_debts": [
                {"layer": d.layer, "sign": d.sign, "into": sorted(list(h) for h in d.into), "out_of": sorted(list(h) for h in d.out_of)}
                for d in self.plan.paid
            ],
        }

    def coordinates(self, layers: Sequence[int], indices: Sequence[int]) -> dict[str, int]:
        """The non-zero witness coordinates of one path: ``"a:i->b:j"`` for a new weight it
        uses, ``"phi c:z"`` for a paid debt at layer c (z its neuron there), ``"alpha"``."""
        out: dict[str, int] = {}
        steps = list(zip(zip(layers, indices), zip(layers[1:], indices[1:])))
        for (a, i), (b, j) in steps:
            if (a, b) in self._new:
                out[f"{a}:{i}->{b}:{j}"] = 1
        for d in self.plan.paid:
            if d.layer in layers[1:-1]:
                k = list(layers).index(d.layer)
                v = ((layers[k - 1], d.layer) in d.into) - ((d.layer, layers[k + 1]) in d.out_of)
                if v:
                    out[f"phi {d.layer}:{indices[k]}"] = v
        alpha = _signed(sum(self._lam[h] for h in route_hops(layers)))
        if alpha:
            out["alpha"] = alpha
        return out


def _combine(terms: list[tuple[int, dict[str, int]]]) -> dict[str, int]:
    total: Counter = Counter()
    for coef, coords in terms:
        for name, v in coords.items():
            total[name] += coef * v
    return {n: _signed(v) for n, v in total.items() if _signed(v)}


def explain_local(network: Network, plans: list[BlockPlan], idx: int, path: Path, certificate: list[tuple[int, Path]]) -> dict:
    """The local rule's decision on ``path`` (a discard of block ``idx``), shown on its certificate.

    Returns the block (``BlockWitness.describe``), the path's witness coordinates, the
    certificate's terms from this block with theirs, how many terms come from earlier blocks and
    whether the witnesses vanish on all of them, and whether the block's terms add up to the
    path on every witness coordinate (``dependent``).
    """
    witness = BlockWitness(network, plans, idx)
    own_layers = tuple(witness.plan.layers)
    later = {tuple(p.layers) for p in plans if p.position > witness.plan.position}
    target = witness.coordinates(*path)
    own, earlier_nonzero, earlier, later_terms = [], [], 0, 0
    for coef, (layers, indices) in certificate:
        coords = witness.coordinates(layers, indices)
        if tuple(layers) == own_layers:
            own.append({"coef": coef, "path": [[int(l), int(i)] for l, i in zip(layers, indices)], "witness": coords})
        elif tuple(layers) in later:
            later_terms += 1
        else:
            earlier += 1
            if coords:
                earlier_nonzero.append(coords)
    total = _combine([(t["coef"], t["witness"]) for t in own])
    return {
        "block": witness.describe(),
        "witness": target,
        "block_terms": own,
        "earlier_terms": earlier,
        "earlier_vanish": not earlier_nonzero,
        "later_terms": later_terms,
        "dependent": total == target and not earlier_nonzero and later_terms == 0,
    }
