"""Hypothesis strategies and an independent sparse rank for the engine tests."""

from __future__ import annotations

from hypothesis import strategies as st

from basispath_graph.network import Network

P = 2_147_483_647


@st.composite
def networks(draw, max_layers: int = 7, max_width: int = 6, max_weights: int = 600):
    """Random networks: L in 1..max_layers, widths 1..max_width, any skips (m capped for speed)."""
    L = draw(st.integers(1, max_layers))
    widths = draw(st.lists(st.integers(1, max_width), min_size=L + 1, max_size=L + 1))
    candidates = [(a, b) for a in range(L + 1) for b in range(a + 2, L + 1)]
    skips = draw(st.lists(st.sampled_from(candidates), unique=True)) if candidates else []
    net = Network.build(widths, skips)
    while net.m > max_weights and net.skips:  # drop skips until small enough to brute-force
        net = Network.build(widths, net.skips[:-1])
    return net


def edge_vectors(network: Network, paths) -> list[list[int]]:
    """Paths ([layer, index] pairs) as sorted weight-id lists, with our own numbering."""
    w = network.widths
    off, base = {}, 0
    for a, b in sorted(network.pairs, key=lambda p: (p[1], p[0])):  # differs from the project's
        off[(a, b)] = base
        base += w[a] * w[b]
    return [sorted(off[(la, lb)] + ib * w[la] + ia for (la, ia), (lb, ib) in zip(p, p[1:])) for p in paths]


def sparse_rank(rows, p: int = P) -> int:
    """Rank over GF(p) of 0/1 rows given by their supports (a lower bound of the rank over Q)."""
    piv: dict[int, dict[int, int]] = {}
    for row in rows:
        v = {e: 1 for e in row}
        while v:
            e = max(v)
            if e not in piv:
                piv[e] = v
                break
            pr = piv[e]
            f = v[e] * pow(pr[e], p - 2, p) % p
            for k, c in pr.items():
                nv = (v.get(k, 0) - f * c) % p
                if nv:
                    v[k] = nv
                else:
                    v.pop(k, None)
    return len(piv)


def assert_basis(network: Network, paths) -> None:
    """Independent check: valid, distinct, m - H paths, full rank (rank mod p == count)."""
    L, w, pairs = network.L, network.widths, set(network.pairs)
    seen = set()
    for p in paths:
        t = tuple(map(tuple, p))
        assert t not in seen, f"duplicate path {p}"
        seen.add(t)
        assert t[0][0] == 0 and t[-1][0] == L, f"path {p} does not run 0..L"
        assert all((a, b) in pairs for (a, _), (b, _) in zip(t, t[1:])), f"bad hop in {p}"
        assert all(0 <= i < w[l] for l, i in t), f"index out of range in {p}"
    assert len(paths) == network.m - network.H, f"{len(paths)} paths, m - H = {network.m - network.H}"
    assert sparse_rank(edge_vectors(network, paths)) == len(paths), "paths are dependent"
