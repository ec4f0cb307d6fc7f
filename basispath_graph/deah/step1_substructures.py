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
import heapq
from math import prod

from ..errors import LimitExceeded
from ..network import Network
from ..linalg.elimination import ExactSpan

__all__ = ["SubstructurePath", "Step1Result", "run_step1", "substructure_path_count", "TooManySubstructures"]

DEFAULT_MAX_SUBSTRUCTURE_PATHS = 1 << 16  # list all of P^S up to this size
DEFAULT_MAX_CANDIDATES = 5_000_000  # lazy generation gives up after examining this many


class TooManySubstructures(LimitExceeded):
    """P^S is too large to enumerate (up to 2^(L-1) paths: one per set of hidden layers visited)."""


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
    paths: dict[int, SubstructurePath]  # by idx: all of P^S when it was listed, else the paths examined
    order: list[int]  # r_0 = p_0, then r_1, r_2, ... by |U_r| descending (as far as examined)
    rank: int  # R = Rank({alpha_r})
    selected: list[int]  # P_ind^S in selection order, p_0 first
    events: list[SelectionEvent] = field(default_factory=list)
    total: int = 0  # |P^S|, counted

    @property
    def listed(self) -> bool:
        """Was all of P^S materialised (small networks), or only the examined prefix?"""
        return len(self.paths) == self.total

    @property
    def p0(self) -> int:
        return self.order[0]


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


def _lexicographic_rank(network: Network, count, layers) -> int:
    """Position of a path in the lexicographic (depth-first) order of P^S, by counting."""
    L, nxt = network.L, network.successors
    rank = 0
    for x, y in zip(layers, layers[1:]):
        rank += sum(count[z][L] for z in nxt[x] if z < y)
    return rank


def _descending_u(network: Network, count, seen: dict, max_candidates: int):
    """P^S minus p_0 in the order (-|U_r|, layers), generated lazily by best-first search.

    |U_r| + 1 is the product over the hops (a, b) of #paths a -> b. A partial path's priority is
    its product so far times the best product any completion can add (``best``), which is exact,
    so complete paths leave the heap in non-increasing |U_r|; ties leave in lexicographic order
    because a prefix sorts before everything that extends it. Paths generated are recorded in
    ``seen``. Memory grows with the paths examined, not with |P^S|.
    """
    L, nxt = network.L, network.successors
    best = [0] * (L + 1)
    best[L] = 1
    for x in range(L - 1, -1, -1):
        best[x] = max(count[x][y] * best[y] for y in nxt[x])
    full = tuple(range(L + 1))
    heap = [(-best[0], (0,), 1)]
    produced = 0
    while heap:
        neg_bound, layers, product = heapq.heappop(heap)
        x = layers[-1]
        if x == L:
            if layers == full:
                continue  # p_0 is handled by the caller
            produced += 1
            if produced > max_candidates:
                raise TooManySubstructures(
                    f"Step 1 examined {max_candidates} substructure paths without reaching R"
                )
            idx = _lexicographic_rank(network, count, layers)
            path = seen[idx] = SubstructurePath(idx, layers, product - 1)
            yield path
            continue
        for y in nxt[x]:
            p = product * count[x][y]
            heapq.heappush(heap, (-p * best[y], layers + (y,), p))


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


def run_step1(
    network: Network,
    max_paths: int = DEFAULT_MAX_SUBSTRUCTURE_PATHS,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
) -> Step1Result:
    """DEAH Step 1: P^S, |U_r|, R, and the independent selection P_ind^S with the Case-2 rule.

    |U_r| comes from path counting (|U_r| = prod over hops (a, b) of #paths a->b, minus 1), not
    from pairwise comparison. When |P^S| <= max_paths all of P^S is listed (and later stored);
    otherwise the paths are generated lazily in the selection order, best-first, and only until
    R are selected: O(K * L * log) for the K paths examined, never all of P^S.
    The selection is the same either way.

    Raises
    ------
    TooManySubstructures when more than ``max_candidates`` paths are examined without reaching R.

    Examples
    --------
    >>> r = run_step1(Network.build([2, 2, 3, 2, 2], skips=[(0, 2), (2, 4)]))
    >>> [r.paths[i].layers for i in r.selected]
    [(0, 1, 2, 3, 4), (0, 2, 4), (0, 1, 2, 4)]
    """
    count = _path_counts(network)
    total = count[0][network.L]
    full = tuple(range(network.L + 1))
    if total <= max_paths:
        paths = {}
        for idx, layers in enumerate(_enumerate(network)):
            paths[idx] = SubstructurePath(idx, layers, prod(count[a][b] for a, b in zip(layers, layers[1:])) - 1)
        ranked = iter(sorted((p for p in paths.values() if p.layers != full), key=lambda p: (-p.u_size, p.layers)))
    else:
        # Too many to list (up to 2^(L-1)): generate them lazily in the same order instead.
        paths = {}
        ranked = _descending_u(network, count, paths, max_candidates)
    p0 = _lexicographic_rank(network, count, full)
    paths[p0] = SubstructurePath(p0, full, 0)
    order = [p0]
    edge_col = {pair: k for k, pair in enumerate(network.pairs)}
    rank_all = len(network.pairs) - (network.L - 1)  # m - H of G^S (all widths 1)

    span = ExactSpan()
    span.add([edge_col[e] for e in paths[p0].edges])
    selected, events = [p0], [SelectionEvent(p0, "selected", "underlying path p_0")]
    passed_over: list[int] = []
    prev = paths[p0]
    for cur in ranked:
        if len(selected) >= rank_all:
            break
        order.append(cur.idx)
        prev, previous = cur, prev  # r_{i-1}: the previous path in the order, selected or not
        support = [edge_col[e] for e in cur.edges]
        if not span.raises_rank(support):
            events.append(SelectionEvent(cur.idx, "dependent"))
            continue
        if cur.u_size == previous.u_size and _mutual_edge_subdivision(previous, cur) and _common_subdivided_path_exists(
            network, set(previous.layers) & set(cur.layers)
        ):
            events.append(SelectionEvent(cur.idx, "case2-skip", f"ties with {previous.layers}"))
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
    if span.rank != rank_all:  # P^S spans R dimensions, so the selection always completes
        raise AssertionError(
            f"internal error: Step 1 selected substructures of rank {span.rank}, not R = {rank_all}"
        )
    return Step1Result(network, paths, order, rank_all, selected, events, total)
