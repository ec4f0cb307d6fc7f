"""Step 3's relations answered by Cypher over the stored substructure paths of a run."""

from __future__ import annotations

from ..deah.step1_substructures import Step1Result
from ..deah.step3_sdvchain import Relations
from . import resume
from .base import Store
from .resume import Committed

__all__ = ["StoreRelations", "persist_substructures", "substructure_rows", "edge_code", "decode_edge"]


def edge_code(L: int, a: int, b: int) -> int:
    """A G^S edge (a, b) as its position in the flattened (L+1) x (L+1) adjacency matrix."""
    return a * (L + 1) + b


def decode_edge(L: int, code: int) -> tuple[int, int]:
    return divmod(int(code), L + 1)


def substructure_rows(run_id: str, step1: Step1Result, form=None) -> dict[str, list]:
    """All of P^S as columns for ``insert_substructure_paths`` (table order of the schema), its
    layers spelled by ``form`` (``store/path_forms.py``; default: the layered network's own).

    alpha is stored sparsely: the positions of the ones of M_r flattened (= edge codes), since
    (L+1)^2 entries per path would dominate the store for deep networks.
    """
    from .path_forms import LayeredForm

    form = form or LayeredForm(step1.network)
    position = {idx: k for k, idx in enumerate(step1.selected)}
    paths = list(step1.paths.values())
    return {
        "uid": [f"{run_id}:s{p.idx}" for p in paths],
        "run": [run_id] * len(paths),
        "idx": [p.idx for p in paths],
        "layers": [form.layers(p.layers) for p in paths],
        "alpha": [[form.edge_code(a, b) for a, b in p.edges] for p in paths],
        "beta": [form.beta(p.layers) for p in paths],
        "u_size": [p.u_size for p in paths],
        "selected": [p.idx in position for p in paths],
        "position": [position.get(p.idx, -1) for p in paths],
    }


def persist_substructures(store: Store, run_id: str, step1: Step1Result, committed: Committed | None = None, form=None,
                          on_batch=None) -> None:
    """Store all of P^S and let Cypher derive SUBDIVIDES and SHARES_EDGE between them
    (``committed``: what a killed run of the same id already wrote, under --resume; ``form``:
    how its layers are spelled, a general run's core in layer positions)."""
    resume.bulk(store, "insert_substructure_paths", substructure_rows(run_id, step1, form), committed, on_batch)
    resume.derive(store, "compute_subdivides", committed, run=run_id)
    resume.derive(store, "compute_shares_edge", committed, run=run_id)


class StoreRelations(Relations):
    """SUBDIVIDES and SHARES_EDGE as Cypher derived them (``persist_substructures``), read
    back for SDVChain."""

    def __init__(self, subdivides: set[tuple[int, int]], shared: dict[tuple[int, int], tuple]):
        self._subdivides = subdivides
        self._shared = shared

    @classmethod
    def read(cls, store: Store, run_id: str, L: int) -> "StoreRelations":
        """The relations of run RUN_ID (network depth L), after ``persist_substructures``."""
        subdivides = {(r["a"], r["b"]) for r in store.run("read_subdivides", run=run_id)}
        shared = {}
        for r in store.run("read_shares_edge", run=run_id):
            pairs = tuple(sorted(decode_edge(L, c) for c in r["pairs"]))
            shared[(r["a"], r["b"])] = shared[(r["b"], r["a"])] = pairs
        return cls(subdivides, shared)

    def subdivides(self, a: int, b: int) -> bool:
        return (a, b) in self._subdivides

    def shared_pairs(self, a: int, b: int) -> tuple[tuple[int, int], ...]:
        return self._shared.get((a, b), ())
