"""DEAH Step 1 (paper, Section 4, "Step 1. (The upper level)"): substructure paths and selection.

G^S has one node per layer and one edge per connected layer pair. P^S are its paths from layer 0
to layer L. For each p_r: alpha_r (adjacency vector, as its edge set), beta_r (layers visited),
U_r = the paths that strictly subdivide p_r (visit every layer of p_r and more). The selection
walks P^S by |U_r| descending, starting from the underlying path p_0 = (0, 1, ..., L) (the only
path with U = {}), keeps every path that raises Rank({alpha}) until R = Rank(P^S) are kept, and
applies the Case-2 skip rule. Every reading of an ambiguous sentence is listed in
docs/deah-interpretation.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from ..network import Network
from .exact_span import ExactSpan

__all__ = ["SubstructurePath", "Step1Result", "run_step1", "substructure_path_count", "TooManySubstructures"]

DEFAULT_MAX_SUBSTRUCTURE_PATHS = 1 << 16


class TooManySubstructures(ValueError):
    """P^S is too large to enumerate (it has up to 2^(L-1) paths; notes section 5)."""


@dataclass(frozen=True)
class SubstructurePath:
    """One path p_r of G^S. ``idx`` is its position in P^S (lexicographic order of layers)."""

    idx: int
    layers: tuple[int, ...]
    u_size: int  # |U_r|

    @property
    def mask(self) -> int:
        return sum(1 << l for l in self.layers)

    @property
    def edges(self) -> tuple[tuple[int, int], ...]:
        """E(p_r): its hops, i.e. the support of alpha_r."""
        return tuple(zip(self.layers, self.layers[1:]))

    def beta(self, L: int) -> list[int]:
        """Incidence vector over layers 0..L."""
        s = set(self.layers)
        return [1 if l in s else 0 for l in range(L + 1)]

    def alpha(self, L: int) -> list[int]:
        """Adjacency matrix M_r flattened row by row, (L+1)^2 entries."""
        out = [0] * ((L + 1) * (L + 1))
        for a, b in self.edges:
            out[a * (L + 1) + b] = 1
        return out

    def subdivides(self, other: "SubstructurePath") -> bool:
        """True when self is a path subdivision of ``other`` (Definition 6): strictly more layers."""
        return self.mask != other.mask and (self.mask & other.mask) == other.mask


@dataclass
class SelectionEvent:
    """Why a candidate was kept or passed over during the selection (for the decision log)."""

    idx: int
    action: str  # "selected", "dependent", "case2-skip", "selected-fallback"
    detail: str = ""


@dataclass
class Step1Result:
    network: Network
    paths: list[SubstructurePath]  # all of P^S, by idx
    order: list[int]  # r_0 = p_0, then r_1, r_2, ... by |U_r| descending
    rank: int  # R = Rank({alpha_r})
    selected: list[int]  # P_ind^S in selection order, p_0 first
    events: list[SelectionEvent] = field(default_factory=list)

    @property
    def p0(self) -> int:
        return self.order[0]

    def u_members(self, idx: int) -> list[int]:
        """U_r as a list of idx (materialised on demand; O(|P^S|))."""
        me = self.paths[idx]
        return [p.idx for p in self.paths if p.subdivides(me)]


def _path_counts(network: Network) -> list[list[int]]:
    """count[a][b] = number of G^S paths from layer a to layer b (1 when a == b)."""
    L = network.L
    count = [[0] * (L + 1) for _ in range(L + 1)]
    for a in range(L + 1):
        count[a][a] = 1
        for b in range(a + 1, L + 1):
            count[a][b] = sum(count[a][x] for x, y in network.pairs if y == b and x >= a)
    return count


def substructure_path_count(network: Network) -> int:
    """|P^S| without enumerating it."""
    return _path_counts(network)[0][network.L]


def _enumerate(network: Network) -> list[tuple[int, ...]]:
    """All G^S paths from 0 to L, lexicographic by layer sequence (depth first)."""
    L, nxt = network.L, network.successors
    out: list[tuple[int, ...]] = []
    stack = [(0,)]
    while stack:
        path = stack.pop()
        if path[-1] == L:
            out.append(path)
            continue
        for b in reversed(nxt[path[-1]]):
            stack.append(path + (b,))
    return out


def _mutual_edge_subdivision(p: SubstructurePath, q: SubstructurePath) -> bool:
    """p subdivides an edge of q and q subdivides an edge of p (Case 2, Fig. 3(a)).

    An edge (u, v) of q is subdivided by p when p visits u and v and some layer strictly between.
    """

    def subdivides_an_edge(x: SubstructurePath, y: SubstructurePath) -> bool:
        xs = set(x.layers)
        return any(u in xs and v in xs and any(u < l < v for l in xs) for u, v in y.edges)

    return subdivides_an_edge(p, q) and subdivides_an_edge(q, p)


def _common_subdivided_path_exists(network: Network, layers: set[int]) -> bool:
    """Is there a G^S path from 0 to L that uses only ``layers``? (some U_{r_j} holds both)."""
    reach = {0} if 0 in layers else set()
    for b in sorted(layers):
        if b and any(a in reach for a, bb in network.pairs if bb == b):
            reach.add(b)
    return network.L in reach


def run_step1(network: Network, max_paths: int = DEFAULT_MAX_SUBSTRUCTURE_PATHS) -> Step1Result:
    """DEAH Step 1: P^S, |U_r|, R, and the independent selection P_ind^S with the Case-2 rule.

    Running time O(|P^S| * (L + R * L)) with exact rational rank updates; |U_r| comes from
    path counting (|U_r| = prod over hops (a, b) of #paths a->b, minus 1), not from pairwise
    comparison.

    Raises
    ------
    TooManySubstructures when |P^S| > max_paths.

    Examples
    --------
    >>> r = run_step1(Network.build([2, 2, 3, 2, 2], skips=[(0, 2), (2, 4)]))
    >>> [r.paths[i].layers for i in r.selected]
    [(0, 1, 2, 3, 4), (0, 2, 4), (0, 1, 2, 4)]
    """
    total = substructure_path_count(network)
    if total > max_paths:
        raise TooManySubstructures(
            f"network has {total} substructure paths in G^S, over the limit of {max_paths} for the deah engine"
        )
    count = _path_counts(network)
    paths = []
    for idx, layers in enumerate(_enumerate(network)):
        u_size = prod(count[a][b] for a, b in zip(layers, layers[1:])) - 1
        paths.append(SubstructurePath(idx, layers, u_size))
    full = tuple(range(network.L + 1))
    p0 = next(p.idx for p in paths if p.layers == full)
    rest = sorted((p for p in paths if p.idx != p0), key=lambda p: (-p.u_size, p.layers))
    order = [p0] + [p.idx for p in rest]

    edge_col = {pair: k for k, pair in enumerate(network.pairs)}
    rank_all = len(network.pairs) - (network.L - 1)  # m - H of G^S (all widths 1)

    span = ExactSpan()
    span.add([edge_col[e] for e in paths[p0].edges])
    selected, events = [p0], [SelectionEvent(p0, "selected", "underlying path p_0")]
    passed_over: list[int] = []
    for i in range(1, len(order)):
        if len(selected) >= rank_all:
            break
        cur, prev = paths[order[i]], paths[order[i - 1]]
        support = [edge_col[e] for e in cur.edges]
        if not span.raises_rank(support):
            events.append(SelectionEvent(cur.idx, "dependent"))
            continue
        if cur.u_size == prev.u_size and _mutual_edge_subdivision(prev, cur) and _common_subdivided_path_exists(
            network, set(prev.layers) & set(cur.layers)
        ):
            events.append(SelectionEvent(cur.idx, "case2-skip", f"ties with {prev.layers}"))
            passed_over.append(cur.idx)
            continue
        span.add(support)
        selected.append(cur.idx)
        events.append(SelectionEvent(cur.idx, "selected"))
    # The Case-2 rule can pass over paths the rank still needs; the paper's loop assumes it never
    # does. Take them back in the same order rather than return fewer than R substructures.
    for idx in passed_over:
        if len(selected) >= rank_all:
            break
        if span.add([edge_col[e] for e in paths[idx].edges]):
            selected.append(idx)
            events.append(SelectionEvent(idx, "selected-fallback", "needed to reach R after a Case-2 skip"))
    assert span.rank == rank_all, "P^S spans R dimensions, so the selection always completes"
    return Step1Result(network, paths, order, rank_all, selected, events)
