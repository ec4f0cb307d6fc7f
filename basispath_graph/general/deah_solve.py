"""The DEAH engines (deah-complete, faithful deah) on a general network in the paper's setting.

``paper_setting`` splits the network into a layered core and extra layers. Then:

1. **Core, tap 0.** The layered engine (``solver.solve``: Steps 1-3, certified, repaired visibly
   for faithful deah) runs on the core with one weight per neuron pair, read as tap 0. Its kept
   paths, discards and certificates are those of a layered run, unchanged.
2. **Tap lift.** For every other tap t of a core weight (u, v): the first kept path through
   (u, v) (in basis order), with tap t instead of 0 on that hop (a weight on no kept path, which
   only an unrepaired faithful deah union can leave, gets none: the count then falls short). The weight (u, v, t) lies on
   that path only, so the lifted paths are independent of everything else.
3. **Extra layers.** Every weight of an extra connection gets one path: from an extra input
   neuron x into core neuron v, x + (x, v) + the core walk forward from v along each layer's
   connection to the next, at neuron 0 and tap 0; from core neuron u into an extra output z,
   the core walk back to the main input + (u, z); between two extra layers, the single hop.
   Again each such weight lies on its own path only.
4. **Identity shortcuts.** One path per edge of a spanning forest of the identity edges
   (``identity_forest``): the core walk back to a_i, the identity hop, the core walk forward
   from b_i; H_N - H paths (H_N: the core's hidden neurons).

Count: (m - H_N) from parts 1-3 (the extra layers hold no hidden neuron) + (H_N - H) = m - H.
The union is certified exactly from its parts (``union_certificate``): the core's verdict, one
private weight per path of parts 2 and 3, the forest's acyclicity, the count.
"""

from __future__ import annotations

import time

import numpy as np

from ..deah.subroutine_rows import KeptRows
from ..network import PathBlock
from ..result import Result
from ..solver import solve
from .blocks import GeneralBlock, connection_weights
from .identity_forest import forest_blocks
from .lazy_blocks import LazyBlocks, SpelledRows
from .model import GeneralNetwork
from .paper_setting import PaperSetting, paper_setting
from .union_certificate import certify_union

__all__ = ["solve_general_deah", "general_result", "core_block"]


def core_block(setting: PaperSetting, block: PathBlock) -> GeneralBlock:
    """A block of core paths (tap 0 on every hop) in the general network's terms."""
    layers = tuple(setting.core_layers[l] for l in block.layers)
    hops = tuple(setting.pair_connection[(a, b)] for a, b in zip(block.layers, block.layers[1:]))
    return GeneralBlock(layers, hops, block.nodes.astype(np.int32), np.zeros((len(block), len(hops)), dtype=np.int32))


class CorePart:
    """A block of the layered run's basis, spelled in the general network when asked for (one
    block, not chunked: the core's kept paths keep their block structure; a described run's
    blocks, ``KeptRows``, are cut into chunks like any made part). ``chunk`` gives rows made
    only as far as asked (``iter_chunks``)."""

    def __init__(self, setting: PaperSetting, block: PathBlock):
        self.setting, self.source, self.size = setting, block, len(block)
        self.chunked = isinstance(block, KeptRows)

    def block(self, start: int, stop: int) -> GeneralBlock:
        return core_block(self.setting, self.source.take(slice(start, stop)))

    def chunk(self, start: int, stop: int) -> SpelledRows:
        return SpelledRows(self.source.view(np.arange(start, stop, dtype=np.int64)), lambda made, at: core_block(self.setting, made))


class TapLiftPart:
    """Taps 1 .. taps - 1 of the weights a hop of some core paths crosses: row r is template
    r // (taps - 1) (a row of a layered basis block) with tap 1 + r % (taps - 1) on ``hop``."""

    def __init__(self, setting: PaperSetting, source: PathBlock, rows: np.ndarray, hop: int, taps: int):
        self.setting, self.source, self.rows, self.hop, self.taps = setting, source, rows, hop, taps
        self.size = len(rows) * (taps - 1)

    def block(self, start: int, stop: int) -> GeneralBlock:
        return self.chunk(start, stop).take(slice(None))

    def chunk(self, start: int, stop: int) -> SpelledRows:
        """Rows start .. stop - 1, their templates made only as far as asked."""
        r = np.arange(start, stop, dtype=np.int64)
        return SpelledRows(self.source.view(self.rows[r // (self.taps - 1)]), lambda made, at: self._lifted(made, r[at]))

    def _lifted(self, templates: PathBlock, r: np.ndarray) -> GeneralBlock:
        template = core_block(self.setting, templates)
        taps = np.zeros((len(r), len(template.hops)), dtype=np.int32)
        taps[:, self.hop] = 1 + r % (self.taps - 1)
        return GeneralBlock(template.layers, template.hops, template.nodes, taps)


def _described_owners(layered: Result, pair: tuple[int, int]) -> tuple[int, np.ndarray, int] | None:
    """(basis block, row in it of the first kept path through each weight of ``pair`` in weight
    order, position of the pair in the block's layers) of a described run, by index arithmetic:
    a hop of p_0 is owned by B_0 (its first row through a cross edge is the one made at it, through
    a direct edge the first row reaching its source, ``first_rows``), an ear's new hop by the ear
    (its one kept row through each weight). None when no block has the pair."""
    step3 = layered.deah.step3
    for k, idx in enumerate(step3.order):
        rows = step3.described[idx]
        hops = list(zip(rows.layers, rows.layers[1:]))
        if pair not in hops:
            continue
        j = hops.index(pair)
        if idx in step3.ears:
            ear = step3.ears[idx]
            return k, np.searchsorted(ear.kept, ear.owners).ravel(), j
        owners = rows.owner_rows(j)  # B_0, kept whole: a row's place is its index
        direct = np.zeros(owners.shape, dtype=bool)
        direct[np.arange(owners.shape[0]), rows.direct[j]] = True
        return k, np.where(direct, first_rows(rows)[j][:, None], owners).ravel(), j
    return None


def first_rows(rows) -> list[np.ndarray]:
    """Per route position, the first row of a described B_r reaching each neuron there: a row of
    section 0 starts there, a row made at a cross edge reaches its target, and every row goes on
    over its last neuron's direct edge. Made once per B_r (kept on it)."""
    cached = getattr(rows, "_first_rows", None)
    if cached is not None:
        return cached
    w = rows.network.widths
    out = [np.arange(w[rows.layers[0]], dtype=np.int64)]
    for k in range(len(rows.layers) - 1):
        wa, wb = w[rows.layers[k]], w[rows.layers[k + 1]]
        d = rows.direct[k]
        nxt = np.full(wb, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(nxt, d, out[-1])
        # the first row made at a cross edge into v: the smallest source u whose direct target is not v
        u0 = np.zeros(wb, dtype=np.int64)
        taken = d[0] == np.arange(wb)
        if wa > 1:
            u0[taken] = 1
            clash = taken & (d[1] == np.arange(wb))
            for v in np.flatnonzero(clash).tolist():  # rare: sources 0 and 1 both go directly to v
                others = np.flatnonzero(d != v)
                u0[v] = others[0] if len(others) else -1
        v = np.arange(wb, dtype=np.int64)
        made = rows.cross_row(k, u0, v, d[u0])
        made[(u0 < 0) | ((wa == 1) & taken)] = np.iinfo(np.int64).max
        out.append(np.minimum(nxt, made))
    rows._first_rows = out
    return out


#: Lifted paths of a described run made and checked against their description (an
#: implementation check beside the proof: spread evenly over each lifted part).
LIFT_SPOT_CHECKS = 256


def described_lift_problem(setting: PaperSetting, layered: Result, lifted: LazyBlocks) -> str | None:
    """The tap lift of a described run from its description: one part per core pair with taps,
    each over that pair's w_a * w_b weights (its private weights (u, v, t), t = 1 .. taps - 1,
    distinct by construction); a spread sample of its paths is made and must cross the pair at
    the weight its description names, at the tap it names."""
    widths = setting.core.widths
    pairs = [pair for pair, taps in setting.taps.items() if taps > 1]
    parts = lifted.parts
    if len(parts) != len(pairs):
        return f"tap lift: {len(parts)} parts for {len(pairs)} core pairs with taps"
    for part, pair in zip(parts, pairs):
        a, b = pair
        if len(part.rows) != widths[a] * widths[b] or part.taps != setting.taps[pair]:
            return f"tap lift of {pair}: not one path per weight and tap"
        weights = np.unique(np.linspace(0, len(part.rows) - 1, min(LIFT_SPOT_CHECKS, len(part.rows))).astype(np.int64))
        made = part.source.take(part.rows[weights]).nodes  # the template core paths of a spread sample of weights
        u, v = np.divmod(weights, widths[b])
        wrong = np.flatnonzero((made[:, part.hop] != u) | (made[:, part.hop + 1] != v))
        if len(wrong):
            k = int(weights[wrong[0]])
            return f"tap lift of {pair}: the path lifted for weight ({k // widths[b]}, {k % widths[b]}) does not cross it"
    return None


def _tap_lift(setting: PaperSetting, basis: list[PathBlock], layered: Result | None = None) -> list[TapLiftPart]:
    """Tap t >= 1 of every core weight, on the first kept path through its tap 0."""
    widths = setting.core.widths
    out = []
    if layered is not None and layered.deah is not None and layered.deah.described:
        for pair, taps in setting.taps.items():
            found = _described_owners(layered, pair) if taps > 1 else None
            if found is not None:
                k, rows, j = found
                out.append(TapLiftPart(setting, basis[k], rows, j, taps))
        return out
    for pair, taps in setting.taps.items():
        if taps == 1:
            continue
        a, b = pair
        owner_block = np.full(widths[a] * widths[b], -1, dtype=np.int64)
        owner_row = np.full(widths[a] * widths[b], -1, dtype=np.int64)
        hop_at = {}  # block -> position of the pair's hop in its paths
        for k, block in enumerate(basis):
            hops = list(zip(block.layers, block.layers[1:]))
            if pair not in hops or len(block) == 0:
                continue
            h = hop_at[k] = hops.index(pair)
            local = block.column(h).astype(np.int64) * widths[b] + block.column(h + 1)  # a KeptRows' column made alone
            weights, first_row = np.unique(local, return_index=True)
            new = owner_block[weights] < 0
            owner_block[weights[new]] = k
            owner_row[weights[new]] = first_row[new]
        # A basis spans every path, so every weight lies on a kept path; faithful deah's raw union
        # (repair=False) may miss some: their taps are left out and the count shows it.
        for k in np.unique(owner_block[owner_block >= 0]):
            rows = owner_row[owner_block == k]
            out.append(TapLiftPart(setting, basis[int(k)], rows, hop_at[int(k)], taps))
    return out


def _extra_blocks(setting: PaperSetting) -> list[GeneralBlock]:
    """One path per weight of every connection that touches an extra layer: the core walk back to
    its source (none from an extra input), the weight, the core walk on from its target."""
    net = setting.network
    in_walk, out_walk = _core_walks(setting)
    out = []
    for k in setting.extra_connections:
        c = net.connections[k]
        i, j, t = connection_weights(net, k)
        in_layers, in_hops, in_nodes = in_walk(c.source, i)
        out_layers, out_hops, out_nodes = out_walk(c.target, j)
        hops = in_hops + (k,) + out_hops
        taps = np.zeros((len(i), len(hops)), dtype=np.int32)
        taps[:, len(in_hops)] = t
        nodes = np.concatenate([in_nodes, out_nodes], axis=1).astype(np.int32)
        out.append(GeneralBlock(in_layers + out_layers, hops, nodes, taps))
    return out


def _core_walks(setting: PaperSetting):
    """In- and out-walks along the core's chain (neuron 0, tap 0), empty from an extra layer."""
    net, core = setting.network, setting.core_layers

    def along(layers: tuple[int, ...], rows: np.ndarray, at: int):
        hops = tuple(net.hop[(x, y, True)] for x, y in zip(layers, layers[1:]))
        nodes = np.zeros((len(rows), len(layers)), dtype=np.int64)
        nodes[:, at] = rows
        return layers, hops, nodes

    def in_walk(layer: int, rows: np.ndarray):
        p = setting.core_position(layer)
        return along(core[: p + 1] if p is not None else (layer,), rows, -1)

    def out_walk(layer: int, rows: np.ndarray):
        p = setting.core_position(layer)
        return along(core[p:] if p is not None else (layer,), rows, 0)

    return in_walk, out_walk


def solve_general_deah(net: GeneralNetwork, engine: str = "deah-complete", seed: int = 0, **solve_options) -> Result:
    """``engine`` on a general network in the paper's setting: the certified general result, with
    the layered run on its core (discards, certificates, repairs) as ``core``. UnsupportedFeature
    otherwise; ``solve_options`` go to the layered ``solve``."""
    setting = paper_setting(net, engine)
    layered = solve(setting.core, engine=engine, seed=seed, **solve_options)
    return general_result(setting, engine, seed, layered)


def general_result(setting: PaperSetting, engine: str, seed: int, layered: Result, verdict=None) -> Result:
    """The general network's result from the layered run on its core: the core's kept paths, the
    tap lift, the extra layers' and the identity forest's paths, certified exactly from these
    parts (``union_certificate``). ``verdict``: a stored run's (``store/described_deah.py``
    rebuilds a described run from its stored description; it was certified when solved), then
    not certified again."""
    net = setting.network
    t0 = time.perf_counter()
    # core and tap lift are made block by block when read (lazy_blocks): m paths x depth never held
    core = LazyBlocks([CorePart(setting, b) for b in layered.basis])
    lifted = LazyBlocks(_tap_lift(setting, layered.basis, layered))
    extra, shortcuts = _extra_blocks(setting), forest_blocks(net, *_core_walks(setting))
    t1 = time.perf_counter()
    blocks = LazyBlocks(core.parts + lifted.parts + extra + shortcuts)
    if verdict is None:
        # exact from the parts: the core's own verdict, private weights, the forest (union_certificate)
        described = (lambda c, l: described_lift_problem(setting, layered, l)) if layered.deah is not None and layered.deah.described else None
        verdict = certify_union(net, layered.verdict, set(setting.pair_connection.values()), core, lifted, extra, shortcuts,
                                described)
    t2 = time.perf_counter()
    timings = {f"core {k}": v for k, v in layered.timings.items()} | {"lift": t1 - t0, "certify": t2 - t1}
    parts = {
        "core_layers": [net.layers[k].name for k in setting.core_layers],
        "core": core.path_count, "tap_lift": lifted.path_count, "extra": sum(map(len, extra)),
        "identity": sum(map(len, shortcuts)),
    }
    return Result.of_general(net, engine, seed, blocks, verdict, timings, parts, layered)
