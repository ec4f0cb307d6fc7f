"""Step 3 made complete (engine ``deah-complete``): hop ownership along an ear order.

Steps 1 and 2 are DEAH's: the same selected substructures and the same B_r from Subroutine with
the shared choice rule. Step 3 is replaced (docs/deah-complete.md has the argument):

1. **Ear order.** p_0 first; then repeatedly the earliest selected substructure (in Step 1 order)
   that has exactly one hop (layer pair) no earlier substructure has: its *new hop* h_r = (a, b).
   Substructures with no new hop come when nothing else fits; they own nothing.
2. **Keep rule.** From p_0 keep all of B_0. From r keep X_r(f) for every weight f = (u, v) of h_r:
   the path of B_r that reaches u by designated predecessors, crosses f, and leaves v by direct
   edges. Those w_a * w_b paths are exactly the rows of B_r that cross h_r "at their own edge".
   Everything else in B_r is discarded.
3. **Why that is a basis.** On the weights of h_r the kept paths of r form an identity block, and
   no earlier kept path touches h_r, so the kept set is independent (block triangular). It has
   (m_0 - H) + sum over skips of w_a * w_b = m - H paths.
4. **Certificates.** Any path p is expressed by recursion on the latest owner among its skip hops:
   p = Y(f) + [prefix difference] + [suffix difference], where Y(f) is the kept path owning p's
   weight f on that hop, and each difference is two paths whose skip hops all have earlier owners
   (completed by p_0's direct / predecessor chains). Paths of p_0 telescope over B_0:
   p = sum of S_0(edge) - sum of T_0(hidden neuron). Every discard's certificate is this expansion.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..choices import ChoiceRule
from ..network import Network, PathBlock
from ..verify import IncrementalBasis
from .step1_substructures import Step1Result
from .step3_sdvchain import Discard, Step3Result

__all__ = ["COMPLETE_STEPS", "CompleteStep3", "Chains", "ear_order", "run_step3_complete"]


# Discard.step values of deah-complete: the hop rule ("prefix": differs from the kept path owning
# the same new-hop weight before that hop; "suffix": after it), a substructure with no new hop,
# one whose new hops are separate runs, and the exact-elimination fallback.
COMPLETE_STEPS = ("prefix", "suffix", "no-new-hop", "multi-hop", "elimination")


@dataclass
class CompleteStep3(Step3Result):
    """Step3Result of deah-complete: ``discards`` use the steps "prefix", "suffix", "no-new-hop"
    and "elimination" (see module docstring); ``chains``/``q_sets`` stay empty."""

    order: list[int] = field(default_factory=list)  # processing order of the selected substructures, p_0 first
    new_hops: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # idx -> hops new at its turn
    rules: dict[int, str] = field(default_factory=dict)  # idx -> "p0", "ear", "alpha", "multi" or "elimination"

    @property
    def ear_orderable(self) -> bool:
        """Every substructure is an ear: the local certificates of ``PathExpander`` apply."""
        return all(r in ("p0", "ear") for r in self.rules.values())

    @property
    def eliminated(self) -> list[int]:
        return [idx for idx in self.order if self.rules[idx] == "elimination"]

    def rule_counts(self) -> dict[str, int]:
        return dict(Counter(d.step for d in self.discards))


def _hops(layers) -> list[tuple[int, int]]:
    return list(zip(layers, layers[1:]))


def _adjacent(hops) -> bool:
    """Do two of these hops meet at a layer (a run of new hops through an internal layer)?"""
    ends = [a for a, _ in hops] + [b for _, b in hops]
    return len(set(ends)) < len(ends)


def ear_order(step1: Step1Result) -> tuple[list[int], dict[int, list[tuple[int, int]]], dict[int, str]]:
    """Order the selected substructures and give each its rule (module docstring).

    Returns (order, new hops per substructure, rule per substructure). Preference at each step:
    exactly one new hop ("ear"); no new hop ("alpha": it keeps one path); several new hops none
    of which meet ("multi", fewest first); otherwise "elimination", and from the first
    elimination on every substructure also goes through exact elimination.
    """
    p0 = step1.selected[0]
    covered = set(_hops(step1.paths[p0].layers))
    order, news_of, rule_of = [p0], {p0: []}, {p0: "p0"}
    rest = list(step1.selected[1:])
    exact = False
    while rest:
        news = {idx: [h for h in _hops(step1.paths[idx].layers) if h not in covered] for idx in rest}
        pick = next((idx for idx in rest if len(news[idx]) == 1), None)
        rule = "ear"
        if pick is None:
            pick, rule = next((idx for idx in rest if not news[idx]), None), "alpha"
        if pick is None:
            multi = [idx for idx in rest if not _adjacent(news[idx])]
            if multi:
                pick, rule = min(multi, key=lambda idx: len(news[idx])), "multi"
            else:
                pick, rule = min(rest, key=lambda idx: len(news[idx])), "elimination"
        exact = exact or rule == "elimination"
        news_of[pick], rule_of[pick] = news[pick], ("elimination" if exact else rule)
        covered.update(news[pick])
        order.append(pick)
        rest.remove(pick)
    return order, news_of, rule_of


class Chains:
    """Designated-predecessor and direct-edge walks of the shared choice rule along any route."""

    def __init__(self, network: Network, rule: ChoiceRule):
        self.network, self.rule = network, rule
        self._pred: dict[tuple[int, int], np.ndarray] = {}
        self._direct: dict[tuple[int, int], np.ndarray] = {}

    def pred(self, a: int, b: int) -> np.ndarray:
        if (a, b) not in self._pred:
            self._pred[(a, b)] = self.rule.predecessor(a, b, np.arange(self.network.widths[b]))
        return self._pred[(a, b)]

    def direct(self, a: int, b: int) -> np.ndarray:
        if (a, b) not in self._direct:
            self._direct[(a, b)] = self.rule.direct(a, b, np.arange(self.network.widths[a]))
        return self._direct[(a, b)]

    def backward(self, route: tuple[int, ...], end) -> np.ndarray:
        """in(end): neurons of the predecessor walk along ``route`` (layers ascending, ending at
        end's layer) for each neuron in ``end``; shape (len(end), len(route))."""
        end = np.asarray(end, dtype=np.int64)
        cols = [end]
        for a, b in reversed(_hops(route)):
            cols.append(self.pred(a, b)[cols[-1]])
        return np.stack(cols[::-1], axis=1)

    def forward(self, route: tuple[int, ...], start) -> np.ndarray:
        """out(start): neurons of the direct-edge walk along ``route`` from each start neuron."""
        start = np.asarray(start, dtype=np.int64)
        cols = [start]
        for a, b in _hops(route):
            cols.append(self.direct(a, b)[cols[-1]])
        return np.stack(cols, axis=1)


def _owner_rows(block: PathBlock, hop: tuple[int, int], chains: Chains) -> tuple[int, np.ndarray]:
    """Position j of ``hop`` in the block's layers, and the mask of rows equal to X_r(their f)."""
    layers = block.layers
    j = layers.index(hop[0])
    nodes = block.nodes
    prefix = chains.backward(layers[: j + 1], nodes[:, j])
    suffix = chains.forward(layers[j + 1 :], nodes[:, j + 1])
    mask = np.all(nodes[:, : j + 1] == prefix, axis=1) & np.all(nodes[:, j + 1 :] == suffix, axis=1)
    return j, mask


def _differences(network: Network, block: PathBlock, rows: np.ndarray, partners: np.ndarray):
    """Per discarded row: (partner's unshared weights, own unshared weights, shared weights)."""
    mine = network.weight_ids(block.take(rows))
    theirs = network.weight_ids(block.take(partners))
    same = mine == theirs
    out = []
    for m_row, t_row, s_row in zip(mine.tolist(), theirs.tolist(), same.tolist()):
        out.append((
            tuple(t for t, eq in zip(t_row, s_row) if not eq),
            tuple(w for w, eq in zip(m_row, s_row) if not eq),
            tuple(w for w, eq in zip(m_row, s_row) if eq),
        ))
    return out


def _hop_discards(network: Network, idx: int, block: PathBlock, hop: tuple[int, int], j: int, keep: np.ndarray) -> list[Discard]:
    """Discards of the hop rule: each row shares its new-hop weight f with the kept X_r(f)."""
    wb = network.widths[hop[1]]
    nodes = block.nodes
    kept_rows = np.flatnonzero(keep)
    partner_of = np.empty(len(kept_rows), dtype=np.int64)
    partner_of[nodes[kept_rows, j] * wb + nodes[kept_rows, j + 1]] = kept_rows
    drop = np.flatnonzero(~keep)
    partners = partner_of[nodes[drop, j] * wb + nodes[drop, j + 1]]
    same_prefix = np.all(nodes[drop, : j + 1] == nodes[partners, : j + 1], axis=1)
    out = []
    for r, sp, (ep, iep, shared) in zip(drop.tolist(), same_prefix.tolist(), _differences(network, block, drop, partners)):
        f = network.offsets[hop] + int(nodes[r, j]) * wb + int(nodes[r, j + 1])
        out.append(Discard(idx, r, "suffix" if sp else "prefix", 0, (idx, idx), (hop,), ep, (f,), iep, shared))
    return out


def _discards(network: Network, idx: int, block: PathBlock, rows, step: str) -> list[Discard]:
    wids = network.weight_ids(block.take(np.asarray(rows, dtype=np.int64))).tolist()
    return [Discard(idx, r, step, 0, (idx, idx), (), (), (), tuple(w), ()) for r, w in zip(list(rows), wids)]


def run_step3_complete(network: Network, step1: Step1Result, bases: dict[int, PathBlock], rule: ChoiceRule) -> CompleteStep3:
    """Decide every path of every B_r: kept by its substructure's rule, or discarded with a reason.

    Certificates are computed afterwards (``PathExpander`` when every rule is "ear"), over the
    kept set in ``order``.
    """
    order, news_of, rule_of = ear_order(step1)
    chains = Chains(network, rule)
    alive: dict[int, np.ndarray] = {}
    discards: list[Discard] = []
    span = None  # exact elimination, built only once a substructure needs it
    for idx in order:
        block, news, how = bases[idx], news_of[idx], rule_of[idx]
        keep = np.zeros(len(block), dtype=bool)
        if how == "p0":
            keep[:] = True
        elif how == "alpha":
            # alpha_r is independent of the earlier alphas (Step 1), so a functional of hop totals
            # vanishes on every earlier kept path and not on any path of B_r: one path is new.
            keep[0] = True
        else:
            candidates = np.zeros(len(block), dtype=bool)
            for hop in news:
                candidates |= _owner_rows(block, hop, chains)[1]
            if how == "ear":
                keep = candidates
            else:
                # Keep the candidates independent on the new weights alone (a local system: the
                # earlier kept paths are zero there).
                local = IncrementalBasis()
                cols = [k for k, h in enumerate(_hops(block.layers)) if h in set(news)]
                wids = network.weight_ids(block)[:, cols]
                for r in np.flatnonzero(candidates).tolist() + np.flatnonzero(~candidates).tolist():
                    keep[r] = local.add(wids[r])
        if how == "elimination":
            if span is None:
                span = IncrementalBasis(network)
                for done in order[: order.index(idx)]:
                    for w in network.weight_ids(bases[done].take(np.flatnonzero(alive[done]))):
                        span.add(w)
            wids = network.weight_ids(block)
            for r in np.flatnonzero(keep).tolist():
                span.add(wids[r])
            rest = np.flatnonzero(~keep)
            keep[rest] = [span.add(wids[r]) for r in rest.tolist()]
        elif span is not None:
            for w in network.weight_ids(block.take(np.flatnonzero(keep))):
                span.add(w)
        alive[idx] = keep
        if how == "ear":
            j = block.layers.index(news[0][0])
            discards.extend(_hop_discards(network, idx, block, news[0], j, keep))
        elif how != "p0":
            step = {"alpha": "no-new-hop", "multi": "multi-hop"}.get(how, "elimination")
            discards.extend(_discards(network, idx, block, np.flatnonzero(~keep).tolist(), step))
    return CompleteStep3([], [], alive, discards, 0, order, news_of, rule_of)
