"""Tables of kept paths that deah-complete's certificates are assembled from.

- ``mlp_tables``: p_0's walks and, by basis index, the paths S_0(e) and T_0(z) of B_0 that every
  path of p_0 telescopes over;
- ``owner_table``: for a block with one new hop, the kept path X_r(f) owning each weight f;
- ``SplicedTable``: certificates of the spliced paths Z(u, v) = in_0(u) + (u, v) + out_0(v) of a
  hop owned by a block with several new hops, in factored form (from the witness peel).

All are CSR tables or index arrays (``linalg.sparse``), built once per solve.
"""

from __future__ import annotations

import numpy as np

from ..linalg.sparse import Terms, as_table, combine, take_rows
from ..network import Network, PathBlock
from ..rowkeys import RowIndex
from .step3_complete import CompleteStep3
from .subroutine_rows import SubroutineRows
from .walks import ChoiceWalks, owner_rows

__all__ = ["SplicedTable", "mlp_tables", "owner_table"]


def mlp_tables(network: Network, chains: ChoiceWalks, b0: PathBlock, start: int):
    """p_0's walks and the basis indices of its telescoping paths (B_0 starts at ``start``).

    Returns (in0, out0, S0, T0): in0[b] / out0[a] are p_0's predecessor walks to / direct walks
    from every neuron of a layer; S0[a][u, v] indexes S_0(e) = in_0(u) + e + out_0(v) for the
    weight e = (u, v) of hop (a, a + 1); T0[z][x] indexes T_0(x) = in_0(x) + out_0(x) for a
    neuron x of hidden layer z (T0[0] is None). Every path p of p_0 telescopes over B_0 as
    p = sum over weights e of p of S_0(e) - sum over hidden neurons x of p of T_0(x).
    """
    w, L = network.widths, network.L
    mlp = tuple(range(L + 1))
    out0 = [chains.forward(mlp[a:], np.arange(w[a])) for a in range(L + 1)]
    in0 = [chains.backward(mlp[: b + 1], np.arange(w[b])) for b in range(L + 1)]
    if isinstance(b0, SubroutineRows) and b0.layers == mlp:  # described: the rows by index arithmetic
        return in0, out0, [start + b0.owner_rows(a) for a in range(L)], [None] + [start + b0.pstar[z] for z in range(1, L)]
    rows = RowIndex(b0.nodes)
    S0, T0 = [], [None]
    for a in range(L):
        u, v = np.divmod(np.arange(w[a] * w[a + 1]), w[a + 1])
        paths = np.concatenate([in0[a][u], out0[a + 1][v]], axis=1)
        S0.append(start + rows.find(paths).reshape(w[a], w[a + 1]))
    for z in range(1, L):
        paths = np.concatenate([in0[z], out0[z][:, 1:]], axis=1)
        T0.append(start + rows.find(paths))
    return in0, out0, S0, T0


def owner_table(network: Network, block: PathBlock, step3: CompleteStep3, idx: int, start: int, chains: ChoiceWalks) -> np.ndarray | None:
    """Y[u, v]: basis index of the kept X_r(f) for every weight f = (u, v) of the block's one new
    hop: an ear keeps exactly these rows; a local block with one new hop keeps them all too (their
    witnesses are the identity on the hop) plus rows for its debts. None for any other block."""
    if len(step3.new_hops[idx]) != 1:
        return None
    (a, b), = step3.new_hops[idx]
    w = network.widths
    alive = step3.alive[idx]
    ear = getattr(step3, "ears", {}).get(idx)
    if ear is not None and isinstance(block, SubroutineRows):  # described: owners by index arithmetic
        return start + np.searchsorted(ear.kept, ear.owners)
    j, owners = owner_rows(block, (a, b), chains)
    rows = np.flatnonzero(owners & alive)
    if len(rows) != w[a] * w[b]:
        return None
    Y = np.full((w[a], w[b]), -1, dtype=np.int64)
    Y[block.nodes[rows, j], block.nodes[rows, j + 1]] = start + (np.cumsum(alive) - 1)[rows]
    return None if (Y < 0).any() else Y


class SplicedTable:
    """Certificates of the spliced paths Z(u, v) of one hop in factored form:
    Z(u, v) = R(u, v) + A(u) + B(v), with R the rectangles' certificates,
    A(u) = Z(u, 0) - Z(0, 0) and B(v) = Z(0, v); each a CSR table (``as_table``)."""

    def __init__(self, wb: int, rect, a, b):
        self.wb, self.rect, self.a, self.b = wb, rect, a, b

    @classmethod
    def build(cls, wa: int, wb: int, cross: Terms, f: np.ndarray, rect: Terms, size: int) -> "SplicedTable":
        """``cross``: certificates of Z(u, 0) (rows 0..wa-1) then Z(0, v) (rows wa..wa+wb-1);
        ``rect``: of the rectangles of the weights ``f`` (rows in that order; u, v > 0);
        ``size``: the number of kept paths (basis indices)."""
        rows, idx, coef = cross
        first = rows < wa
        o = rows == 0  # Z(0, 0), subtracted from every Z(u, 0)
        u = np.arange(wa, dtype=np.int64)
        a_terms = (
            np.concatenate([rows[first], np.repeat(u, int(o.sum()))]),
            np.concatenate([idx[first], np.tile(idx[o], wa)]),
            np.concatenate([coef[first], np.tile(-coef[o], wa)]),
        )
        a = as_table(combine(a_terms, wa, size), wa)
        b = as_table((rows[~first] - wa, idx[~first], coef[~first]), wb)
        r, i, c = rect
        return cls(wb, as_table((f[r], i, c), wa * wb), a, b)

    def terms(self, u: np.ndarray, v: np.ndarray, rows: np.ndarray) -> list[Terms]:
        return [take_rows(self.rect, u * self.wb + v, rows), take_rows(self.a, u, rows), take_rows(self.b, v, rows)]
