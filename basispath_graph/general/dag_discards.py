"""The discards of deah-complete on a layer DAG core (``dag_deah``), made when asked for, and their
certificates.

Ear r's discarded rows of B_r come in *parts*, in this order (their ids follow it): per side
(prefix: the route in, then suffix: the route out), per hop of that side the weights r's walks do
not use (one row R_r(e) = in_r(u) + e + out_r(v) each, by local weight id), then per layer of
that side the T_r chains that start there and do not reach the segment (one row
in_r(z) + out_r(z) each, at the chain's first neuron z). ``EarDiscards`` numbers them without
making them: a part's size is known (``dag_deah.hop_counts``, or the chains of one layer), so a
discard is found by its offset (``at``) or a path by its rows (``locate``) touching one hop or
layer only.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .blocks import GeneralBlock, general_path_json
from .lazy_blocks import CHUNK_ROWS
from .dag_deah import DagRun
from .model import GeneralNetwork
from .paths import GeneralPath
from .skeleton import designated_edges, designated_neighbour
from ..deah.subroutine_rows import positions

__all__ = ["LISTED_DAG_DISCARDS", "RouteRows", "route_rows", "chain_starts", "weight_rows", "chain_rows", "DiscardPart", "EarDiscards", "DagDiscardPaths", "discard_documents", "locate_discard", "discard_reason", "certificate", "kept_path", "through_path", "RouteRow"]


#: A layer-DAG run's export lists its discards with their certificates up to this many (each
#: certificate's terms are looked up in the described basis, or made by exact elimination for
#: faithful deah's); above, it gives their count, and faithful deah makes each certificate only
#: when asked for (SqueezeNet 1.1: millions of discards and dropped paths).
LISTED_DAG_DISCARDS = 100_000


def _route_walk(net: GeneralNetwork, hops: tuple[int, ...], at: int, idx: np.ndarray, forward: bool) -> np.ndarray:
    """(len(idx), ...) neurons of the walks along a route from position ``at``: back to its first
    layer by predecessor edges (``forward`` False) or on to its last by direct edges."""
    cols = [idx]
    if forward:
        for k in hops[at:]:
            cols.append(designated_neighbour(net, k, cols[-1], False, None))
        return np.stack(cols, axis=1)
    for k in reversed(hops[:at]):
        cols.append(designated_neighbour(net, k, cols[-1], True, None))
    return np.stack(cols[::-1], axis=1)


def _unused_weights(net: GeneralNetwork, k: int) -> np.ndarray:
    """Local ids of connection k's weights that are neither a direct edge nor a predecessor edge."""
    return np.setdiff1d(np.arange(net.connection_weights(net.connections[k]), dtype=np.int64), np.concatenate(designated_edges(net, k)))


def chain_starts(net: GeneralNetwork, layers: tuple[int, ...], hops: tuple[int, ...], p: int) -> np.ndarray:
    """Neurons at route position p whose T_r chain starts there: the chain goes on from the layer
    before when a neuron's predecessor edge is also a direct edge."""
    z = np.arange(net.layers[layers[p]].size, dtype=np.int64)
    if p > 0:
        k = hops[p - 1]
        z = z[designated_neighbour(net, k, designated_neighbour(net, k, z, True, None), False, None) != z]
    return z


def weight_rows(net: GeneralNetwork, layers: tuple[int, ...], hops: tuple[int, ...], h: int, local: np.ndarray) -> GeneralBlock:
    """R_r(e) = in_r(u) + e + out_r(v) for connection ``hops[h]``'s weights ``local`` (local ids)."""
    i, j, t = net.weight_ends(net.connections[hops[h]], local)
    nodes = np.concatenate([_route_walk(net, hops, h, i, False), _route_walk(net, hops, h + 1, j, True)], axis=1)
    taps = np.zeros((len(local), len(hops)), dtype=np.int64)
    taps[:, h] = t
    return GeneralBlock(layers, hops, nodes, taps)


def chain_rows(net: GeneralNetwork, layers: tuple[int, ...], hops: tuple[int, ...], p: int, z: np.ndarray) -> GeneralBlock:
    """T_r(z) = in_r(z) + out_r(z) for neurons ``z`` at route position p."""
    nodes = np.concatenate([_route_walk(net, hops, p, z, False), _route_walk(net, hops, p, z, True)[:, 1:]], axis=1)
    return GeneralBlock(layers, hops, nodes, np.zeros((len(z), len(hops)), dtype=np.int64))


class RouteRows:
    """Subroutine's B_r along a route, described (faithful deah's Step 2, ``dag_sdvchain``): per
    hop the rows R_r(e) of the weights r's walks do not use, then per layer its T_r chains,
    m_r - H_r rows, each made when read (``take``) from its weight or its chain's first neuron.
    What it holds is O(m_r): the unused weights of each hop and the chain starts of each layer,
    where the listing held |B_r| x layers neurons and taps (SqueezeNet 1.1: 3.8 M rows of 19
    layers, 580 MB as int32, for the whole run). ``unused``: a cache of each connection's unused
    weights, shared by the routes of one run."""

    def __init__(self, net: GeneralNetwork, layers: tuple[int, ...], hops: tuple[int, ...], unused: dict | None = None):
        self.net, self.layers, self.hops = net, tuple(layers), tuple(hops)
        unused = {} if unused is None else unused
        for k in self.hops:
            if k not in unused:
                unused[k] = _unused_weights(net, k)
        # (kind, position, values): a hop's unused local weight ids, a layer's chain starts
        self.parts = [("weight", h, unused[k]) for h, k in enumerate(self.hops)]
        self.parts += [("chain", p, chain_starts(net, self.layers, self.hops, p)) for p in range(len(self.layers))]
        self.starts = np.concatenate([[0], np.cumsum([len(v) for _, _, v in self.parts])]).astype(np.int64)

    def __len__(self) -> int:
        return int(self.starts[-1])

    @cached_property
    def _walk_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per route position p: every neuron's walk back to the first layer (size x (p + 1))
        and on to the last (size x (layers - p)), int32, each kind in one flat table: (back,
        start of each position's table in it, on, the same). A row is two of them side by side,
        looked up instead of walked (a take of a few rows walked every hop of its parts: the
        peeling's rounds took 4x the solve). O(neurons on the route x layers)."""
        net, layers, hops = self.net, self.layers, self.hops
        back, on = [], []
        for p, l in enumerate(layers):
            z = np.arange(net.layers[l].size, dtype=np.int64)
            back.append(_route_walk(net, hops, p, z, False).astype(np.int32).ravel())
            on.append(_route_walk(net, hops, p, z, True).astype(np.int32).ravel())
        starts = lambda tables: np.concatenate([[0], np.cumsum([len(t) for t in tables])]).astype(np.int64)  # noqa: E731
        return np.concatenate(back), starts(back), np.concatenate(on), starts(on)

    @property
    def _walks(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """The walk tables per position as (size x columns) views: (back, on)."""
        back, b_at, on, o_at = self._walk_tables
        n = len(self.layers)
        return ([back[b_at[p] : b_at[p + 1]].reshape(-1, p + 1) for p in range(n)],
                [on[o_at[p] : o_at[p + 1]].reshape(-1, n - p) for p in range(n)])

    def take(self, index) -> GeneralBlock:
        """Rows ``index`` (a slice, a mask, integers) as a block, int32 as ``route_rows`` lists them."""
        at = positions(index, len(self))
        part = np.searchsorted(self.starts, at, side="right") - 1
        nodes = np.empty((len(at), len(self.layers)), dtype=np.int32)
        taps = np.zeros((len(at), len(self.hops)), dtype=np.int32)
        back, on = self._walks
        order = np.argsort(part, kind="stable")
        bounds = np.searchsorted(part[order], np.arange(len(self.parts) + 1))
        for q in np.flatnonzero(np.diff(bounds)).tolist():
            sel = order[bounds[q] : bounds[q + 1]]
            kind, p, values = self.parts[q]
            picked = values[at[sel] - self.starts[q]]
            if kind == "weight":  # R_r(e) = in_r(u) + e + out_r(v), e on hop p
                i, j, t = self.net.weight_ends(self.net.connections[self.hops[p]], picked)
                nodes[sel, : p + 1], nodes[sel, p + 1 :], taps[sel, p] = back[p][i], on[p + 1][j], t
            else:  # T_r(z) = in_r(z) + out_r(z), z at layer p
                nodes[sel, : p + 1], nodes[sel, p + 1 :] = back[p][picked], on[p][picked][:, 1:]
        return GeneralBlock(self.layers, self.hops, nodes, taps)

    def hop_reader(self, rows: np.ndarray | None = None):
        """``read(k)``: the weight id of hop ``k`` (trainable) of every row (of ``rows``, ascending,
        when given: SDVChain keys only the live rows of B'_to), made from the
        description without the rows x hops matrix (``weight_ids``): Step 3 keys its shared and
        unshared parts a hop at a time, and two B_r's whole matrices were WRN-16-4's peak
        (2.4 M rows x 19 hops each). Each row's addresses in the walk tables are made once (a
        row's neuron in layer c is on its walk back up to its part's position p, on its walk on
        after it), 8 bytes a row and the weight rows' own weights; each hop is then four gathers
        over slices, whatever the number of parts (Inception-v3's routes have some 200): the
        weight parts come first by hop, then the chain parts by layer, so the rows whose layer c
        is on the walk back (p >= c) end each of the two."""
        net, L, H = self.net, len(self.layers), len(self.hops)
        n = len(self) if rows is None else len(rows)
        back, b_at, on, o_at = self._walk_tables
        small = np.int32 if max(len(back), len(on)) < 2**31 else np.int64
        at_back, at_on = np.empty(n, dtype=small), np.empty(n, dtype=small)
        ids = np.int32 if net.m < 2**31 else np.int64  # weight ids; neuron ids fit them too
        # weight part h: rows bound[h]..bound[h + 1]; chain part p: bound[H + p].. (of ``rows``: as
        # they are ascending, each part's are a slice of them too)
        bound = (self.starts if rows is None else np.searchsorted(rows, self.starts)).tolist()
        own = np.empty(bound[H], dtype=ids)  # a weight row's own weight (its tap may be any)
        for q, (kind, p, values) in enumerate(self.parts):
            lo, hi = bound[q], bound[q + 1]
            if lo == hi:
                continue
            if rows is not None:
                values = values[rows[lo:hi] - self.starts[q]]
            if kind == "weight":  # in_r(u) up to layer p, out_r(v) from p + 1
                c = self.net.connections[self.hops[p]]
                i, j, t = net.weight_ends(c, values)
                own[lo:hi] = net.connection_offsets[self.hops[p]] + net.local_weight(c, i, j, t)
                z_back, p_on, z_on = i, p + 1, j
            else:  # a chain through neuron z of layer p: back up to p, on from p + 1
                z_back, p_on, z_on = values, p, values
            at_back[lo:hi] = b_at[p] + z_back * (p + 1)
            at_on[lo:hi] = o_at[p_on] + z_on * (L - p_on) - p_on  # + c: column c - p_on of on[p_on]

        last: list = [None, None]  # (c, node(c)) of the last read: Step 3 reads hops in order

        def node(c: int) -> np.ndarray:
            if last[0] == c:
                return last[1]
            out = np.empty(n, dtype=ids)
            for lo, mid, hi in ((0, bound[min(c, H)], bound[H]), (bound[H], bound[H + c], n)):
                out[lo:mid] = on[at_on[lo:mid] + c]  # parts before layer c: c is on the walk on
                out[mid:hi] = back[at_back[mid:hi] + c]
            return out

        def read(k: int) -> np.ndarray:
            c_idx = self.hops[k]
            after = node(k + 1)
            w = net.local_weight(net.connections[c_idx], node(k), after, 0)
            last[:] = k + 1, after  # read(k + 1) starts from it: each column made once, not twice
            w += ids(net.connection_offsets[c_idx])
            w[bound[k] : bound[k + 1]] = own[bound[k] : bound[k + 1]]  # hop k's own weight rows
            return w

        return read

    def weight_ids(self, chunk: int = CHUNK_ROWS) -> np.ndarray:
        """(rows, trainable hops) weight ids of every row, made ``chunk`` rows at a time, int32
        where m allows (Step 3 keys a B_r's hops from them: int64 of the listing cost twice)."""
        n_trainable = sum(self.net.connections[k].trainable for k in self.hops)
        out = np.empty((len(self), n_trainable), dtype=np.int32 if self.net.m < 2**31 else np.int64)
        for a in range(0, len(self), chunk):
            out[a : a + chunk] = self.weight_ids_at(np.arange(a, min(a + chunk, len(self)), dtype=np.int64))
        return out

    def weight_ids_at(self, rows: np.ndarray) -> np.ndarray:
        """(rows, trainable hops) weight ids of ``rows`` (any order), ``block_weight_ids`` of
        ``take(rows)`` but int32 where m allows, made by ``hop_reader``: the certifier reads a raw
        union of B_r a chunk of rows at a time, and making the chunk's nodes, then casting and
        stacking their columns, was half its time (GoogLeNet x0.25: 8.4 of 15.6 s; the reader is
        3x faster on the same rows)."""
        rows = np.asarray(rows)
        if len(rows) > 1 and not bool(np.all(rows[1:] >= rows[:-1])):  # the reader needs them ascending
            order = np.argsort(rows, kind="stable")
            ascending = self.weight_ids_at(rows[order])
            out = np.empty_like(ascending)
            out[order] = ascending
            return out
        read = self.hop_reader(rows)
        trainable = [k for k, c in enumerate(self.hops) if self.net.connections[c].trainable]
        out = np.empty((len(rows), len(trainable)), dtype=np.int32 if self.net.m < 2**31 else np.int64)
        for col, k in enumerate(trainable):
            out[:, col] = read(k)
        return out


def route_rows(net: GeneralNetwork, layers: tuple[int, ...], hops: tuple[int, ...]) -> GeneralBlock:
    """Subroutine's B_r along a route, listed: ``RouteRows``' every row, int32."""
    return RouteRows(net, layers, hops).take(slice(None))


@dataclass(frozen=True)
class DiscardPart:
    """A run of an ear's discards made alike: the rows of one hop's unused weights, or the T_r
    chains that start at one layer of the route."""

    reason: str  # "prefix" or "suffix"
    kind: str  # "weight": rows R_r(e) of hop ``at``; "chain": T_r rows of chains starting at layer position ``at``
    at: int
    size: int
    first: int  # offset of its first row among the ear's discards


@dataclass(frozen=True)
class RouteRow:
    """Where a path of a selected substructure stands in its B_r: ``status`` "kept", "discarded"
    or "not a row" (a path along the route that Subroutine does not make); a discard's reason
    and offset among the ear's discards."""

    status: str
    reason: str | None = None
    offset: int | None = None


class EarDiscards:
    """The discards of selected substructure ``n`` (an ear: n >= 1), numbered by part."""

    def __init__(self, run: DagRun, n: int):
        if n < 1:
            raise ValueError("p_0 discards nothing")
        self.run, self.n = run, n
        self.net = run.network
        self.summary = run.ears[n]
        self.hops = run.routes[n]
        self.layers = self.summary.layers
        self.a, self.b = self.summary.segment

    @cached_property
    def parts(self) -> list[DiscardPart]:
        out, first = [], 0
        counts = self.run.hops
        for reason, positions, chain_positions in (("prefix", range(0, self.a), range(0, self.a)),
                                                   ("suffix", range(self.b, len(self.hops)), range(self.b + 1, len(self.layers)))):
            for h in positions:
                size = counts[self.hops[h]].undesignated
                if size:
                    out.append(DiscardPart(reason, "weight", h, size, first))
                    first += size
            for p in chain_positions:
                size = len(self._chain_starts(p))
                if size:
                    out.append(DiscardPart(reason, "chain", p, size, first))
                    first += size
        return out

    @property
    def size(self) -> int:
        return sum(p.size for p in self.parts)

    def _chain_starts(self, p: int) -> np.ndarray:
        """Neurons at route position p whose T_r chain starts there and is discarded (on the
        prefix side: does not reach a)."""
        net, hops = self.net, self.hops
        z = chain_starts(net, self.layers, hops, p)
        if p < self.a and len(z):
            fwd = _route_walk(net, hops, p, z, True)
            reach = np.ones(len(z), dtype=bool)
            for q in range(p, self.a):
                reach &= designated_neighbour(net, hops[q], fwd[:, q - p + 1], True, None) == fwd[:, q - p]
            z = z[~reach]
        return z

    def _rows(self, part: DiscardPart, rows: np.ndarray) -> GeneralBlock:
        """The discards at ``rows`` (offsets inside ``part``) as one block along the route."""
        if part.kind == "weight":
            return weight_rows(self.net, self.layers, self.hops, part.at, _unused_weights(self.net, self.hops[part.at])[rows])
        return chain_rows(self.net, self.layers, self.hops, part.at, self._chain_starts(part.at)[rows])

    def blocks(self) -> list[tuple[str, GeneralBlock]]:
        """Every discard, part by part, as (reason, block)."""
        return [(p.reason, self._rows(p, np.arange(p.size))) for p in self.parts]

    def iter_blocks(self, chunk_rows: int) -> Iterator[GeneralBlock]:
        """Every discard, part by part, in blocks of at most ``chunk_rows`` paths, each made when
        reached (a DenseNet ear's parts hold millions)."""
        for p in self.parts:
            for start in range(0, p.size, chunk_rows):
                yield self._rows(p, np.arange(start, min(p.size, start + chunk_rows)))

    def at(self, offset: int) -> tuple[str, GeneralBlock]:
        """The discard at ``offset`` (0 .. size - 1) as (reason, a block of one path)."""
        for p in self.parts:
            if p.first <= offset < p.first + p.size:
                return p.reason, self._rows(p, np.array([offset - p.first]))
        raise IndexError(f"ear {self.n} has {self.size} discards; no offset {offset}")

    def locate(self, nodes, taps) -> RouteRow:
        """Where a path along this substructure's route (``nodes`` per layer, ``taps`` per hop)
        stands in its B_r (see ``RouteRow``)."""
        net, hops = self.net, self.hops
        nodes = np.asarray(nodes, dtype=np.int64)
        taps = np.asarray(taps, dtype=np.int64)
        pred = np.array([taps[h] == 0 and designated_neighbour(net, k, nodes[h + 1:h + 2], True, None)[0] == nodes[h]
                         for h, k in enumerate(hops)], dtype=bool)
        direct = np.array([taps[h] == 0 and designated_neighbour(net, k, nodes[h:h + 1], False, None)[0] == nodes[h + 1]
                           for h, k in enumerate(hops)], dtype=bool)
        unused = np.flatnonzero(~pred & ~direct)
        before = np.concatenate([[True], np.cumprod(pred)]).astype(bool)  # every hop before position q a predecessor edge
        after = np.concatenate([np.cumprod(direct[::-1])[::-1], [True]]).astype(bool)  # every hop from q on a direct edge
        if len(unused) == 1:
            h = int(unused[0])
            if not (before[h] and after[h + 1]):
                return RouteRow("not a row")
            if self.a <= h < self.b:
                return RouteRow("kept")
            reason = "prefix" if h < self.a else "suffix"
            k = hops[h]
            local = net.local_weight(net.connections[k], nodes[h], nodes[h + 1], taps[h])
            rank = int(np.searchsorted(_unused_weights(net, k), local))
            part = next(p for p in self.parts if p.kind == "weight" and p.at == h)
            return RouteRow("discarded", reason, part.first + rank)
        if len(unused) > 1:
            return RouteRow("not a row")
        chain = np.flatnonzero(before & after)  # T_r(z) for z at these positions: one chain
        if not len(chain):
            return RouteRow("not a row")
        q0, q1 = int(chain[0]), int(chain[-1])
        if q1 >= self.a and q0 <= self.b:
            return RouteRow("kept")
        reason = "prefix" if q1 < self.a else "suffix"
        part = next(p for p in self.parts if p.kind == "chain" and p.at == q0)
        rank = int(np.searchsorted(self._chain_starts(q0), nodes[q0]))
        return RouteRow("discarded", reason, part.first + rank)


def locate_discard(run: DagRun, path) -> tuple[int, RouteRow] | None:
    """(ear, where it stands in the ear's B_r) of a general path ``((layer, index), ...), taps``
    along the route of an ear (between two layers there is one trainable connection, so the
    layers name the route); None for a path along no ear's route (p_0 discards nothing)."""
    nodes, taps = path
    layers = tuple(l for l, _ in nodes)
    if None in taps:
        return None
    n = next((n for n, e in enumerate(run.ears) if n and tuple(e.layers) == layers), None)
    if n is None:
        return None
    return n, EarDiscards(run, n).locate([i for _, i in nodes], taps)


def discard_reason(run: DagRun, n: int, reason: str) -> dict:
    """The ``why`` reason of a discard of ear ``n`` by ``reason`` (prefix / suffix)."""
    net, summary = run.network, run.ears[n]
    a, b = summary.segment
    segment = [net.layers[l].name for l in summary.layers[a:b + 1]]
    side = "before" if reason == "prefix" else "after"
    detail = (f"discarded by ear {n} (deah-complete on a layer DAG): a row of B_r of the substructure along "
              f"{', '.join(net.layers[l].name for l in summary.layers)} that differs from every kept row {side} the ear's new "
              f"connections {' -> '.join(segment)}; its certificate telescopes over the designated walks")
    return {"step": reason, "action": "discard", "detail": detail, "ear": n, "segment": segment}


class DagDiscardPaths(Sequence):
    """Every discard of a layer-DAG run in id order (ear by ear), as general paths
    ``(((layer, index), ...), taps)`` (or ``form`` of them), each made when read: DenseNet-121
    has 1.2 G of them."""

    def __init__(self, run: DagRun, form=None):
        self.run, self.form = run, form or (lambda path: path)
        self.firsts = np.asarray(run.discard_firsts(), dtype=np.int64)

    def __len__(self) -> int:
        return int(self.firsts[-1])

    def __getitem__(self, k):
        if isinstance(k, slice):  # a list of the paths in the slice, each made now
            return [self[i] for i in range(*k.indices(len(self)))]
        if not -len(self) <= k < len(self):
            raise IndexError(k)
        k %= len(self)
        n = int(np.searchsorted(self.firsts, k, side="right")) - 1
        _, block = EarDiscards(self.run, n).at(k - int(self.firsts[n]))
        nodes, taps = block.nodes[0], block.taps[0]
        return self.form((tuple((int(l), int(i)) for l, i in zip(block.layers, nodes)), tuple(int(t) for t in taps)))

    def iter_blocks(self) -> Iterator[GeneralBlock]:
        """Every discard in id order, in blocks of at most ``CHUNK_ROWS`` paths made when reached."""
        for n in range(1, len(self.run.ears)):
            yield from EarDiscards(self.run, n).iter_blocks(CHUNK_ROWS)

    def __iter__(self):
        for n in range(1, len(self.run.ears)):
            for _, block in EarDiscards(self.run, n).blocks():
                for nodes, taps in zip(block.nodes.tolist(), block.taps.tolist()):
                    yield self.form((tuple(zip(block.layers, nodes)), tuple(taps)))


def discard_documents(run: DagRun, basis) -> list[dict]:
    """Every discard in id order as the export lists it: its path, rule, ear and certificate over
    ``basis`` indices (``basis``: the run's described basis, ``index_of``)."""
    net, out = run.network, []
    for n in range(1, len(run.ears)):
        for reason, block in EarDiscards(run, n).blocks():
            for nodes, taps in zip(block.nodes.tolist(), block.taps.tolist()):
                terms = certificate(run, block.layers, block.hops, nodes, taps)
                out.append({"path": general_path_json(net, (tuple(zip(block.layers, nodes)), tuple(taps))), "rule": reason, "ear": n,
                            "certificate": [{"coef": int(c), "index": int(basis.index_of(p))} for c, p in terms]})
    return out


def kept_path(run: DagRun, layer_u: int, u: int, k: int, v: int, tap: int) -> GeneralPath:
    """S(e) = in(u) + e + out(v) for weight e = (u, v, tap) of connection k (designated walks)."""
    w, target = run.walks, run.network.connections[k].target
    layers = w.in_layers[layer_u] + w.out_layers[target]
    nodes = list(w.in_nodes[layer_u][u]) + list(w.out_nodes[target][v])
    taps = (0,) * len(w.in_hops[layer_u]) + (int(tap),) + (0,) * len(w.out_hops[target])
    return tuple((int(l), int(i)) for l, i in zip(layers, nodes)), taps


def through_path(run: DagRun, layer: int, z: int) -> GeneralPath:
    """T(z) = in(z) + out(z) (designated walks)."""
    w = run.walks
    layers = w.in_layers[layer] + w.out_layers[layer][1:]
    nodes = list(w.in_nodes[layer][z]) + list(w.out_nodes[layer][z][1:])
    return tuple((int(l), int(i)) for l, i in zip(layers, nodes)), (0,) * (len(layers) - 1)


def certificate(run: DagRun, layers: tuple[int, ...], hops: tuple[int, ...], nodes, taps) -> list[tuple[int, GeneralPath]]:
    """A path of the network (no identity hop) over the kept paths: sum of S(e) over its weights
    minus T(z) over its hidden neurons, equal paths merged, zero terms dropped (a vector identity:
    the walks telescope)."""
    terms: dict[GeneralPath, int] = {}
    for h, k in enumerate(hops):
        p = kept_path(run, layers[h], int(nodes[h]), k, int(nodes[h + 1]), int(taps[h]))
        terms[p] = terms.get(p, 0) + 1
    for h in range(1, len(layers) - 1):
        p = through_path(run, layers[h], int(nodes[h]))
        terms[p] = terms.get(p, 0) - 1
    return [(c, p) for p, c in terms.items() if c]
