"""What ``basispath show`` draws, read from the store as plain data (no drawing here).

Every value comes from the ``show_*`` named queries in ``cypher/queries``; the pictures in
:mod:`.dot` and :mod:`.draw` only lay these records out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..deah.step3_complete import BlockPlan
from ..errors import BadInput
from ..store import Store
from ..store.runs import network_from_row, stored_plan
from .general_model import load_general_overview
from ..verify import format_path, parse_path

__all__ = [
    "ShowError",
    "RunInfo",
    "Substructure",
    "ChainLink",
    "Chain",
    "Overview",
    "StoredPath",
    "PathView",
    "MAX_NEURONS",
    "MAX_WEIGHTS",
    "hop_text",
    "block_text",
    "load_run",
    "load_overview",
    "load_path_view",
    "find_path",
    "check_small",
]

# The neuron-level picture draws every weight: beyond this it is an unreadable hairball.
MAX_NEURONS = 64
MAX_WEIGHTS = 400


class ShowError(BadInput):
    """The request cannot be drawn (unknown run or path, network too big); one-line message."""


@dataclass(frozen=True)
class RunInfo:
    id: str
    engine: str
    seed: int
    status: str
    name: str
    widths: tuple[int, ...]
    pairs: tuple[tuple[int, int], ...]  # every connected layer pair (a, b), a < b, sorted
    m: int
    H: int
    basis_size: int | None
    certified: bool | None
    repairs: int | None
    discarded: int | None
    discard_steps: dict[str, int]  # DEAH step -> number of finally discarded paths

    @property
    def L(self) -> int:
        return len(self.widths) - 1

    @property
    def neurons(self) -> int:
        return sum(self.widths)

    @property
    def title(self) -> str:
        return f"{self.name or '(unnamed)'} - run {self.id} ({self.engine}, seed {self.seed}, {self.status})"

    def offsets(self) -> list[int]:
        """Global id of neuron 0 of each layer."""
        out, base = [], 0
        for w in self.widths:
            out.append(base)
            base += w
        return out


@dataclass(frozen=True)
class Substructure:
    idx: int
    layers: tuple[int, ...]
    edges: tuple[tuple[int, int], ...]  # G^S edges of the path (decoded from alpha)
    selected: bool
    position: int  # order of selection, -1 if not selected
    u_size: int


@dataclass(frozen=True)
class ChainLink:
    r: int  # idx of the substructure path the SubdivisionSet U_r belongs to
    layers: tuple[int, ...]
    size: int  # |U_r|


@dataclass(frozen=True)
class Chain:
    t: int
    links: tuple[ChainLink, ...]  # LINK pos order, U_0 last


@dataclass(frozen=True)
class Overview:
    run: RunInfo
    substructures: tuple[Substructure, ...]
    chains: tuple[Chain, ...]  # deah's path subdivision chains (deah-complete has none)
    plan: tuple[BlockPlan, ...] = ()  # deah-complete's ear order, rebuilt by plan_blocks (others: none)

    @property
    def selected(self) -> list[Substructure]:
        return sorted((s for s in self.substructures if s.selected), key=lambda s: s.position)

    @property
    def owners(self) -> dict[tuple[int, int], int]:
        """deah-complete: layer pair -> idx of the block that brought it (p_0's pairs included)."""
        if not self.plan:
            return {}
        p0 = self.plan[0]
        owned = {h: p0.idx for h in zip(p0.layers, p0.layers[1:])}
        return owned | {h: b.idx for b in self.plan[1:] for h in b.new_hops}

    @property
    def highlighted(self) -> set[tuple[int, int]]:
        """G^S edges that belong to at least one selected substructure path."""
        return {e for s in self.substructures if s.selected for e in s.edges}

    def counts(self) -> tuple[list[str], list[str]]:
        """The numbers of the run as short texts: (sizes, outcome), for titles and legends."""
        r = self.run
        sizes = [f"m = {r.m}", f"H = {r.H}", f"|B| = {_opt(r.basis_size)}"]
        if r.engine == "deah":
            sizes += [f"R = {len(self.selected)} selected", f"|P^S| = {len(self.substructures)}", f"T = {len(self.chains)} chains"]
        elif r.engine == "deah-complete":
            rules = Counter(b.rule for b in self.plan)
            sizes += [f"R = {len(self.selected)} selected", f"|P^S| = {len(self.substructures)}",
                      f"ear order: p_0, {rules['ear']} ear, {rules['local']} local"]
        steps = ", ".join(f"{k} {v}" for k, v in sorted(r.discard_steps.items()))
        outcome = [f"discarded {_opt(r.discarded)}" + (f" (by step: {steps})" if steps else "")]
        verdict = {True: "certified", False: "NOT certified"}.get(r.certified, "not certified yet")
        outcome += [f"repairs {_opt(r.repairs)}", verdict]
        return sizes, outcome


@dataclass(frozen=True)
class StoredPath:
    id: int
    text: str
    layers: tuple[int, ...]
    indices: tuple[int, ...]  # neuron index inside each visited layer
    kept: bool
    reasons: tuple[tuple[str, str], ...] = ()  # (step, action) of its Discard records

    def hops(self) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """Consecutive ((layer, index), (layer, index)) pairs: the weights the path uses."""
        nodes = list(zip(self.layers, self.indices))
        return list(zip(nodes, nodes[1:]))

    @property
    def status(self) -> str:
        if not self.kept:
            steps = sorted({s for s, a in self.reasons if a in ("discard", "drop")})
            return "discarded" + (f" by the {'/'.join(steps)} step" if steps else "")
        if any(a == "readmit" for _, a in self.reasons):
            return "kept (re-admitted by the repair)"
        return "kept"


@dataclass(frozen=True)
class PathView:
    run: RunInfo
    path: StoredPath
    certificate: tuple[tuple[int, StoredPath], ...] | None  # (coef, kept path); None: not asked

    def equation(self) -> str:
        """``#58 = -1 x #13 + 1 x #17``: the certificate as a sum of kept paths ('' if none)."""
        if not self.certificate:
            return ""
        terms = [f"{'-' if c < 0 else '+'} {abs(c)} x #{p.id}" for c, p in self.certificate]
        first = terms[0].replace("+ ", "").replace("- ", "-")
        return f"#{self.path.id} = " + " ".join([first, *terms[1:]])


def _opt(value) -> str:
    return "-" if value is None else str(value)


def hop_text(hop: tuple[int, int]) -> str:
    return f"({hop[0]}, {hop[1]})"


def block_text(block: BlockPlan) -> str:
    """What deah-complete's Step 3 made of one block: its rule, the layer pairs it owns (brought
    first) and, for a local block, the layer debts it pays."""
    if block.rule == "p0":
        return "p_0: owns every consecutive layer pair"
    owns = ", ".join(hop_text(h) for h in block.new_hops) or "no layer pair"
    text = f"{block.rule}: owns {owns}"
    for d in block.paid:
        into = ", ".join(hop_text(h) for h in sorted(d.into))
        out_of = ", ".join(hop_text(h) for h in sorted(d.out_of))
        text += f"; pays the debt of layer {d.layer} (in over {into}, out over {out_of})"
    return text


def load_run(store: Store, run_id: str) -> RunInfo:
    rows = store.run("show_run_summary", run=run_id)
    if not rows:
        raise ShowError(f"no run {run_id!r} in this store")
    r = rows[0]
    if r["kind"] == "general":
        raise ShowError(f"run {run_id} is of a general network: --path draws layered runs only; drop --path for its layer-level picture")
    network = network_from_row(r)
    steps = {row["step"]: int(row["n"]) for row in store.run("show_discard_steps", run=run_id)}
    return RunInfo(
        id=r["id"],
        engine=r["engine"],
        seed=int(r["seed"]),
        status=r["status"],
        name=r["name"] or "",
        widths=network.widths,
        pairs=network.pairs,
        m=int(r["m"]),
        H=int(r["H"]),
        basis_size=r["basis_size"],
        certified=r["certified"],
        repairs=r["repairs"],
        discarded=r["discarded"],
        discard_steps=steps,
    )


def _decode_edges(alpha, L: int) -> tuple[tuple[int, int], ...]:
    """Edge codes a * (L + 1) + b -> (a, b)."""
    return tuple(sorted(divmod(int(code), L + 1) for code in alpha or []))


def load_overview(store: Store, run_id: str):
    """The run's Overview (G^S, chains or ear order), or for a general run its layer-level
    ``GeneralOverview`` (``show/general_model.py``)."""
    rows = store.run("show_run_summary", run=run_id)
    if rows and rows[0]["kind"] == "general":
        return load_general_overview(store, rows[0])
    run = load_run(store, run_id)
    subs = tuple(
        Substructure(
            idx=int(s["idx"]),
            layers=tuple(s["layers"]),
            edges=_decode_edges(s["alpha"], run.L),
            selected=bool(s["selected"]),
            position=int(s["position"]),
            u_size=int(s["u_size"]),
        )
        for s in store.run("show_substructures", run=run_id)
    )
    chains: dict[int, list[ChainLink]] = {}
    for row in store.run("show_chains", run=run_id):  # ordered by t, pos
        chains.setdefault(int(row["t"]), []).append(ChainLink(int(row["r"]), tuple(row["layers"]), int(row["size"])))
    plan = tuple(stored_plan(store, run_id)) if run.engine == "deah-complete" else ()
    return Overview(run, subs, tuple(Chain(t, tuple(links)) for t, links in sorted(chains.items())), plan)


def _stored_path(run: RunInfo, row: dict, kept: bool | None = None) -> StoredPath:
    offsets = run.offsets()
    layers = tuple(int(l) for l in row["layers"])
    indices = tuple(int(g) - offsets[l] for g, l in zip(row["nodes"], layers))
    reasons = tuple(zip(row.get("steps") or [], row.get("actions") or []))
    return StoredPath(int(row["id"]), row["text"], layers, indices, bool(row["kept"] if kept is None else kept), reasons)


def find_path(store: Store, run: RunInfo, spec: str) -> StoredPath:
    """``spec`` is a stored path id (``58``) or its text (``0:1,2:0,4:2``)."""
    spec = spec.strip()
    if spec.isdigit():
        rows = store.run("show_path_by_id", run=run.id, id=int(spec))
    else:
        try:
            text = format_path(*parse_path(spec))  # canonical spelling, as BasisPath.text stores it
        except ValueError:
            raise ShowError(f"--path {spec!r}: give a path id (e.g. 0) or layer:index pairs (e.g. 0:1,2:0,4:2)") from None
        rows = store.run("show_path_by_text", run=run.id, text=text)
    if not rows:
        raise ShowError(f"no path {spec!r} in run {run.id}")
    return _stored_path(run, rows[0])


def check_small(run: RunInfo) -> None:
    if run.neurons > MAX_NEURONS or run.m > MAX_WEIGHTS:
        raise ShowError(
            f"network {run.name or run.id} has {run.neurons} neurons and {run.m} weights; the neuron-level "
            f"picture (--path) is limited to {MAX_NEURONS} neurons and {MAX_WEIGHTS} weights (drop --path for the G^S picture)"
        )


def load_path_view(store: Store, run_id: str, spec: str, certificate: bool = False) -> PathView:
    run = load_run(store, run_id)
    check_small(run)
    path = find_path(store, run, spec)
    cert = None
    if certificate and not path.kept:
        rows = store.run("show_certificate", run=run.id, id=path.id)
        cert = tuple((int(r["coef"]), _stored_path(run, r, kept=True)) for r in rows)
    elif certificate:
        cert = ()
    return PathView(run, path, cert)
