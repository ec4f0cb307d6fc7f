"""What ``basispath show`` draws for a general run, at layer level, read from the store: one
node per layer (name, size, kept paths through it), one edge per connection (kind, taps)."""

from __future__ import annotations

from dataclasses import dataclass

from ..store import Store
from ..store.general_networks import load_general_network

__all__ = ["GeneralLayerInfo", "GeneralEdge", "GeneralOverview", "load_general_overview"]


@dataclass(frozen=True)
class GeneralLayerInfo:
    position: int
    name: str
    size: int
    kept: int  # kept paths that visit the layer


@dataclass(frozen=True)
class GeneralEdge:
    source: int  # layer positions
    target: int
    kind: str  # dense, diagonal, identity
    taps: int  # 0 for identity

    @property
    def label(self) -> str:
        """``dense x9``, ``diagonal``, ``identity``: the kind and, past one, the taps."""
        return self.kind + (f" x{self.taps}" if self.taps > 1 else "")


@dataclass(frozen=True)
class GeneralOverview:
    id: str
    engine: str
    status: str
    name: str
    m: int
    H: int
    basis_size: int | None
    certified: bool | None
    layers: tuple[GeneralLayerInfo, ...]
    edges: tuple[GeneralEdge, ...]

    @property
    def title(self) -> str:
        return f"{self.name or '(unnamed)'} - run {self.id} ({self.engine}, general network, {self.status})"

    def counts(self) -> list[str]:
        """The run's numbers as short texts."""
        verdict = {True: "certified", False: "NOT certified"}.get(self.certified, "not certified yet")
        kinds = {k: sum(e.kind == k for e in self.edges) for k in ("dense", "diagonal", "identity")}
        return [f"m = {self.m}", f"H = {self.H}", f"|B| = {'-' if self.basis_size is None else self.basis_size}", verdict,
                f"{len(self.layers)} layers", ", ".join(f"{n} {k}" for k, n in kinds.items() if n)]


def load_general_overview(store: Store, row: dict) -> GeneralOverview:
    """The overview of the general run of ``row`` (a ``show_run_summary`` row)."""
    net = load_general_network(store, row["key"], row["name"] or "")
    kept = {int(r["layer"]): int(r["paths"]) for r in store.run("general_layer_counts", run=row["id"])}
    return GeneralOverview(
        id=row["id"], engine=row["engine"], status=row["status"], name=row["name"] or "", m=int(row["m"]), H=int(row["H"]),
        basis_size=row["basis_size"], certified=row["certified"],
        layers=tuple(GeneralLayerInfo(k, l.name, l.size, kept.get(k, 0)) for k, l in enumerate(net.layers)),
        edges=tuple(GeneralEdge(c.source, c.target, c.kind, c.taps) for c in net.connections),
    )
