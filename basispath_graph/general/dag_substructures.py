"""Faithful DEAH's Step 1 on a layer DAG as Step 3 reads it (``dag_sdvchain``): the selected
substructures (p_0 and one route per ear) with the two relations Step 3 asks of them, and what
its time grows with (``call_layers``, ``guards.LAYER_DAG_DEAH``), known from Steps 1-2 alone."""

from __future__ import annotations

from dataclasses import dataclass

from ..deah.step3_sdvchain import InMemoryRelations, build_chains, build_q_sets, sdvchain_calls
from .dag_deah import DagRun

__all__ = ["RouteSubstructure", "DagSubstructures", "substructures_of", "call_layers"]


@dataclass(frozen=True)
class RouteSubstructure:
    """A selected substructure path of a layer DAG: its layers and connections, source to sink."""

    layers: tuple[int, ...]
    connections: tuple[int, ...]

    @property
    def edges(self) -> tuple[int, ...]:
        """Its G^S edges: the connections it runs over (what ``Relations.shared_pairs`` compares)."""
        return self.connections

    def subdivides(self, other: "RouteSubstructure") -> bool:
        """p_self is a path subdivision of ``other`` (``dag_sdvchain``'s module doc): it visits every layer of
        ``other`` and more. (A spec joins two layers by one trainable connection at most, so a hop
        of ``other`` between two layers consecutive on self is self's hop too.)"""
        mine, theirs = set(self.layers), set(other.layers)
        return mine != theirs and theirs <= mine

    @property
    def u_size(self) -> int:
        """|U_r| is not counted on a layer DAG (P^S is not listed): -1, as stored."""
        return -1


@dataclass
class DagSubstructures:
    """Step 1 on a layer DAG in the shape ``run_step3`` reads: the selected paths, p_0 first."""

    paths: list[RouteSubstructure]
    total: int  # |P^S|: source-sink paths of G^S, counted

    @property
    def selected(self) -> list[int]:
        return list(range(len(self.paths)))

    @property
    def p0(self) -> int:
        return 0


def substructures_of(plan: DagRun) -> DagSubstructures:
    """Step 1's selected substructures of ``plan`` as Step 3 reads them, p_0 first."""
    return DagSubstructures([RouteSubstructure(e.layers, r) for e, r in zip(plan.ears, plan.routes)],
                            plan.decomposition.substructure_count)


def call_layers(plan: DagRun) -> int:
    """What Step 3's time grows with (``guards.LAYER_DAG_DEAH``): over its SDVChain calls that share
    an edge (the others return at once), the rows times the layers of both B_r: each call keys
    every hop of B_from's rows and of B'_to's live ones (``sdvchain_pair``), a share not known
    before the run, so every row is counted. Known from Steps 1-2: the chains and Q_t are made
    from the routes alone."""
    substructures = substructures_of(plan)
    rel = InMemoryRelations(substructures)
    chains = build_chains(substructures, rel)
    size = [e.rows * len(e.layers) for e in plan.ears]
    calls = sdvchain_calls(chains, build_q_sets(chains, rel), substructures.p0)
    return sum(size[src] + size[dst] for _, _, src, dst in calls if rel.shared_pairs(src, dst))
