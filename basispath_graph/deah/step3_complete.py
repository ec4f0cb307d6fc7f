"""Step 3 made complete (engine ``deah-complete``): hop ownership along an ear order.

Steps 1 and 2 are DEAH's: the same selected substructures and the same B_r from Subroutine with
the shared choice rule. Step 3 is replaced (docs/deah-complete.md has the argument):

1. **Ear order.** p_0 first; then repeatedly the earliest selected substructure (in Step 1 order)
   that has exactly one hop (layer pair) no earlier substructure has: its *new hop* h_r = (a, b).
   When none has, one with no new hop, else one with the fewest.
2. **Ear rule.** From p_0 keep all of B_0. From an ear r keep X_r(f) for every weight f = (u, v)
   of h_r: the path of B_r that reaches u by designated predecessors, crosses f, and leaves v by
   direct edges. Everything else in B_r is discarded ("prefix" / "suffix": where it differs).
3. **Local rule** (any other substructure, or an ear that pays a layer debt): keep a maximal set
   of B_r rows whose *witness vectors* (new weights, phi_z of paid debts, an alpha functional:
   all vanish on everything kept before) are independent; discard the rest ("local").
4. **Why that is independent.** Every witness vanishes on the earlier kept paths, so rows with
   independent witnesses are independent of them. For a pure ear order the count is
   (m_0 - H) + sum over skips of w_a * w_b = m - H; with local blocks it is measured.
5. **Certificates** (``ear_recursion``, ``witness_certificates``): recursion on the latest
   owner among a path's skip hops, and for local blocks' hops each block's witness system peeled
   down the order. Every certificate is checked by vector addition in ``solve``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..choices import ChoiceRule
from ..network import Network, PathBlock
from ..rowkeys import RowIndex, first_of_each
from ..linalg.peeling import peel_entries
from ..linalg.elimination import forest_in_order, independent_in_order
from .step1_substructures import Step1Result
from .discard_table import DiscardTable
from .step3_sdvchain import Step3Result
from .subroutine_rows import EarRows, SubroutineRows, ear_rows
from .walks import ChoiceWalks, owner_rows, route_hops

__all__ = ["COMPLETE_STEPS", "BlockPlan", "CompleteStep3", "LayerDebt", "PaidDebt", "ear_order", "plan_blocks", "run_step3_complete"]


# Discard.step values of deah-complete: the ear's hop rule ("prefix": differs from the kept path
# owning the same new-hop weight before that hop; "suffix": after it) and the local rule.
COMPLETE_STEPS = ("prefix", "suffix", "local")


@dataclass
class CompleteStep3(Step3Result):
    """Step3Result of deah-complete: ``discards`` is a ``DiscardTable`` (steps "prefix", "suffix"
    and "local"); ``chains``/``q_sets`` stay empty."""

    order: list[int] = field(default_factory=list)  # processing order of the selected substructures, p_0 first
    new_hops: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # idx -> hops new at its turn
    rules: dict[int, str] = field(default_factory=dict)  # idx -> "p0", "ear" or "local"
    # idx -> debts paid by that local block, as (layer, into hops, out-of hops) when paid: its
    # phi_z witness coordinates, in the order WitnessCertificates numbers them (witness_certificates.py)
    paid_debts: dict[int, list[tuple[int, frozenset, frozenset]]] = field(default_factory=dict)
    # B_r described (p_0 and the ears): Subroutine's rows by index, and each ear's kept rows and
    # discards by index arithmetic (subroutine_rows.py); what ear_certificate certifies from
    described: dict[int, SubroutineRows] = field(default_factory=dict)
    ears: dict[int, EarRows] = field(default_factory=dict)

    @property
    def ear_orderable(self) -> bool:
        """Every substructure is an ear: the ear recursion (``ear_recursion.EarRecursion``) applies."""
        return all(r in ("p0", "ear") for r in self.rules.values())


    def rule_counts(self) -> dict[str, int]:
        return dict(self.discards.step_counts())


def ear_order(step1: Step1Result) -> tuple[list[int], dict[int, list[tuple[int, int]]]]:
    """p_0, then repeatedly the earliest substructure bringing exactly one new hop; when none
    does, one bringing none, else the one bringing the fewest. Returns (order, new hops each)."""
    return _ear_order({idx: step1.paths[idx].layers for idx in step1.selected}, list(step1.selected))


def _ear_order(layers_of: dict[int, tuple[int, ...]], selected: list[int]) -> tuple[list[int], dict[int, list[tuple[int, int]]]]:
    p0 = selected[0]
    covered = set(route_hops(layers_of[p0]))
    order, news_of = [p0], {p0: []}
    rest = list(selected[1:])
    while rest:
        news = {idx: [h for h in route_hops(layers_of[idx]) if h not in covered] for idx in rest}
        pick = next((idx for idx in rest if len(news[idx]) == 1), None)
        if pick is None:
            pick = next((idx for idx in rest if not news[idx]), None)
        if pick is None:
            pick = min(rest, key=lambda idx: len(news[idx]))
        news_of[pick] = news[pick]
        covered.update(news[pick])
        order.append(pick)
        rest.remove(pick)
    return order, news_of


@dataclass
class LayerDebt:
    """New hops through an old layer c: on the kept paths, at every neuron z of c, the flow in
    over the hops ``into`` equals the flow out over ``out_of`` (phi_z = 0), while the network
    has flows with phi_z != 0; so w_c directions are still owed.

    A later substructure whose hop into c is in ``into`` xor its hop out of c is in ``out_of``
    either extends the debt (the other hop is one of its new hops: phi_z plus that hop's flow
    still vanishes on everything kept) or pays it (phi_z joins its witness coordinates).
    """

    layer: int
    into: set
    out_of: set


def _runs_debts(news: list[tuple[int, int]]) -> list[LayerDebt]:
    ends = {a: (a, b) for a, b in news}
    return [LayerDebt(b, {(a, b)}, {ends[b]}) for a, b in news if b in ends]


def _settle(debts: list[LayerDebt], layers: tuple[int, ...], news) -> list[tuple[LayerDebt, int, int]]:
    """Extend or pay each open debt for a substructure visiting ``layers``; returns the paid ones
    as (debt, column of layer c, sign of phi_z on its paths) and drops them from ``debts``."""
    paid = []
    for debt in list(debts):
        if debt.layer not in layers[1:-1]:
            continue
        k = layers.index(debt.layer)
        h_in, h_out = (layers[k - 1], debt.layer), (debt.layer, layers[k + 1])
        sign = (h_in in debt.into) - (h_out in debt.out_of)
        if sign == 0:
            continue
        other = h_out if sign > 0 else h_in
        if other in news:
            (debt.out_of if sign > 0 else debt.into).add(other)
        else:
            paid.append((debt, k, sign))
            debts.remove(debt)
    return paid


@dataclass(frozen=True)
class PaidDebt:
    """A debt as a local block pays it: phi_z for every neuron z of ``layer`` becomes one of its
    witness coordinates. phi_z(path) = [enters z over a hop in ``into``] - [leaves z over a hop
    in ``out_of``]; on the block's own paths it is ``sign`` (``column``: where ``layer`` sits
    in the block's layers)."""

    layer: int
    into: frozenset
    out_of: frozenset
    column: int
    sign: int


@dataclass(frozen=True)
class BlockPlan:
    """What Step 3 decides for one selected substructure before looking at any path: its place
    in the ear order, its rule, the hops it brings and the debts it pays."""

    idx: int
    position: int  # in the ear order, p_0 = 0
    layers: tuple[int, ...]
    rule: str  # "p0", "ear" or "local"
    new_hops: tuple[tuple[int, int], ...]
    paid: tuple[PaidDebt, ...]


def plan_blocks(layers_of: dict[int, tuple[int, ...]], selected: list[int]) -> list[BlockPlan]:
    """The ear order with each block's rule, new hops and paid debts, from layer sequences alone
    (Step 1's selection, p_0 first): what ``run_step3_complete`` follows, and what ``why`` and
    ``show`` rebuild from a stored run."""
    order, news_of = _ear_order(layers_of, selected)
    debts: list[LayerDebt] = []
    plans = []
    for position, idx in enumerate(order):
        layers, news = tuple(layers_of[idx]), news_of[idx]
        paying = _settle(debts, layers, set(news))
        if position == 0:
            rule = "p0"
        elif len(news) == 1 and not paying:
            rule = "ear"
        else:
            rule = "local"
        paid = tuple(PaidDebt(d.layer, frozenset(d.into), frozenset(d.out_of), col, sign) for d, col, sign in paying)
        plans.append(BlockPlan(idx, position, layers, rule, tuple(news), paid))
        debts += _runs_debts(news)
    return plans


class _Witness:
    """Coordinates of the local system of one substructure: its new weights, phi_z of the debts
    it pays, and one alpha-level functional (constant over its paths)."""

    def __init__(self, network: Network, block: PathBlock, news, debts):
        self.network, self.block = network, block
        hops = route_hops(block.layers)
        self.new_cols = [k for k, h in enumerate(hops) if h in set(news)]
        self.debts = debts  # PaidDebt of each debt it pays
        self.base = network.m

    def keys(self) -> np.ndarray:
        """Per row: its weights on the new hops and its neuron at each paid debt's layer (the
        witness vector is a function of these), shape (rows, columns)."""
        cols = [self.network.weight_ids(self.block)[:, self.new_cols]]
        cols += [self.block.nodes[:, [d.column]] for d in self.debts]
        return np.concatenate(cols, axis=1)

    def entries(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """The witness vectors of ``rows`` as entries (position in rows, coordinate, value) and
        the number of coordinates (new weights by weight id, then phi_z per paid debt, then alpha)."""
        n = len(rows)
        wids = self.network.weight_ids(self.block.take(rows))[:, self.new_cols]
        at = np.arange(n, dtype=np.int64)
        parts = [(np.repeat(at, wids.shape[1]), wids.ravel().astype(np.int64), np.ones(wids.size, dtype=np.int64))]
        offset = self.base
        for debt in self.debts:
            parts.append((at, offset + self.block.nodes[rows, debt.column].astype(np.int64), np.full(n, debt.sign, dtype=np.int64)))
            offset += self.network.widths[debt.layer]
        parts.append((at, np.full(n, offset, dtype=np.int64), np.ones(n, dtype=np.int64)))
        return (*(np.concatenate([p[k] for p in parts]) for k in range(3)), offset + 1)


def _keep_independent(witness: _Witness, first: np.ndarray) -> np.ndarray:
    """The local rule in general: rows in order (the X_r(f) rows first) whose witness vectors are
    independent of the ones kept before."""
    order_rows = np.concatenate([np.flatnonzero(first), np.flatnonzero(~first)])
    # Rows with the same witness vector as an earlier row are dependent on it: only the first
    # row of each distinct vector goes through the elimination.
    tested = order_rows[first_of_each(witness.keys()[order_rows])]
    # Peeled vectors are independent of all the others, and any dependency lies within the core
    # (linalg/peeling.py): so greedy elimination in row order keeps every peeled row and, of the
    # core, what the elimination of the core alone keeps. Same rows, far fewer Python steps.
    r, c, v, width = witness.entries(tested)
    core = peel_entries(r, c, len(tested), width).core_mask(len(tested))
    keep = np.zeros(len(witness.block), dtype=bool)
    keep[tested[~core]] = True
    if core.any():
        at = np.flatnonzero(core)
        in_core = core[r]
        vectors: dict[int, dict[int, int]] = {int(k): {} for k in at}
        for ri, ci, vi in zip(r[in_core].tolist(), c[in_core].tolist(), v[in_core].tolist()):
            vectors[ri][ci] = vi
        keep |= independent_in_order(tested[at], [vectors[int(k)] for k in at], len(witness.block))
    return keep


def _keep_one_new_hop(network: Network, block: PathBlock, hop, first: np.ndarray, paying) -> np.ndarray:
    """The local rule for a block with one new hop (and debts it pays), in arrays; the same rows
    as ``_keep_independent``.

    The X_r(f) rows are one per new weight f (identity there): all kept. Any other row q with new
    weight f has witness(q) = witness(X_r(f)) + d_q, where d_q only lives on the debts' phi
    coordinates: sign x (e at q's neuron - e at X_r(f)'s neuron) per debt (alpha cancels). And
    witness(q) is in the span of the kept rows iff d_q is in the span of the d of the kept
    non-X rows. So only the few distinct d_q go through the elimination, in row order.
    """
    j = block.layers.index(hop[0])
    wb = network.widths[hop[1]]
    nodes = block.nodes
    x_rows = np.flatnonzero(first)
    partner_of = np.empty(network.widths[hop[0]] * wb, dtype=np.int64)
    partner_of[nodes[x_rows, j] * wb + nodes[x_rows, j + 1]] = x_rows
    rest = np.flatnonzero(~first)
    partner = partner_of[nodes[rest, j] * wb + nodes[rest, j + 1]]
    cols = [d.column for d in paying]
    key = np.concatenate([nodes[rest][:, cols], nodes[partner][:, cols]], axis=1)
    firsts = first_of_each(key)
    tested = rest[firsts]
    if len(paying) == 1:
        keep = forest_in_order(tested, key[firsts, 0], key[firsts, 1], len(block))
        keep[x_rows] = True
        return keep
    vectors, offset = [], 0
    offsets = []
    for debt in paying:
        offsets.append(offset)
        offset += network.widths[debt.layer]
    for k in firsts.tolist():
        v: dict[int, int] = {}
        for d, sign in enumerate(debt.sign for debt in paying):
            z_q, z_x = int(key[k, d]), int(key[k, len(cols) + d])
            if z_q != z_x:
                v[offsets[d] + z_q] = sign
                v[offsets[d] + z_x] = -sign
        vectors.append(v)
    keep = independent_in_order(tested, vectors, len(block))
    keep[x_rows] = True
    return keep


def _described(network: Network, block, rule: ChoiceRule) -> SubroutineRows:
    """B_r as its description: the block itself when the run holds it so (run_deah), else made."""
    return block if isinstance(block, SubroutineRows) else SubroutineRows(network, block.layers, rule)


def run_step3_complete(network: Network, step1: Step1Result, bases: dict[int, PathBlock], rule: ChoiceRule) -> CompleteStep3:
    """Decide every path of every B_r: kept by its substructure's rule, or discarded with a reason.

    "ear": exactly one new hop and no open debt touched: keep X_r(f) for its weights (no solve).
    "local": keep a maximal set of B_r independent on the witness coordinates (``_Witness``);
    every witness vanishes on all earlier kept paths, so what is kept is independent of them.
    Certificates are computed afterwards, over the kept set in ``order``.
    """
    plans = plan_blocks({idx: step1.paths[idx].layers for idx in step1.selected}, list(step1.selected))
    chains = ChoiceWalks(network, rule)
    alive: dict[int, np.ndarray] = {}
    discards = DiscardTable(network, bases)
    described: dict[int, SubroutineRows] = {}
    ears: dict[int, EarRows] = {}
    for plan in plans:
        idx, block, news, paying = plan.idx, bases[plan.idx], list(plan.new_hops), list(plan.paid)
        if plan.rule == "p0":
            keep = np.ones(len(block), dtype=bool)
            described[idx] = _described(network, block, rule)
        elif plan.rule == "ear":
            # B_r's owners and discards by index arithmetic on Subroutine's row order
            # (subroutine_rows.py): no row is looked up
            described[idx] = _described(network, block, rule)
            ear = ears[idx] = ear_rows(described[idx], news[0])
            keep = np.zeros(len(block), dtype=bool)
            keep[ear.kept] = True
            discards.add_ear(idx, news[0], ear)
        else:
            # X_r(f) rows of the new hops first (they carry the new weights), then the rest.
            first = np.zeros(len(block), dtype=bool)
            index = RowIndex(block.nodes) if news else None
            for hop in news:
                first |= owner_rows(block, hop, chains, index)[1]
            if len(news) == 1:
                keep = _keep_one_new_hop(network, block, news[0], first, paying)
            else:
                keep = _keep_independent(_Witness(network, block, news, paying), first)
            discards.add_local(idx, np.flatnonzero(~keep))
        alive[idx] = keep
    order = [p.idx for p in plans]
    news_of = {p.idx: list(p.new_hops) for p in plans}
    rules = {p.idx: p.rule for p in plans}
    paid_debts = {p.idx: [(d.layer, d.into, d.out_of) for d in p.paid] for p in plans if p.rule == "local"}
    return CompleteStep3([], [], alive, discards, 0, order, news_of, rules, paid_debts, described, ears)
