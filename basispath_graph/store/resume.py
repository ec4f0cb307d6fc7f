"""What a killed run already wrote, so that ``--resume`` writes only the rest.

Every write of a run is a sequence of single-statement transactions in a fixed order (bulk
batches, then the relations Cypher derives), and a solve of the same network with the same
engine and seed produces the same rows in the same order. So what a killed run left behind is,
write by write, a committed prefix. ``Committed.read`` counts each write's stored rows with its
count query (``cypher/queries/committed_<write>.cypher``); the writers then skip that many rows
(``bulk``) or a derived statement that already ran (``derive``). Deleting the partial run
instead cost far more than writing it (LadybugDB deletes rows one by one: minutes for a run
written in seconds), and keeping it loses nothing.
"""

from __future__ import annotations

from .base import Store, StoreError, column_length, columns_from

__all__ = ["Committed", "WRITES", "bulk", "bulk_together", "derive", "writer"]

#: Every write of a run, in the order a run makes them: bulk loads and derived relations.
WRITES = (
    "insert_substructure_paths",
    "compute_subdivides",
    "compute_shares_edge",
    "insert_subdivision_sets",
    "compute_contains",
    "insert_chains",
    "insert_basis_paths",
    "insert_designations",
    "insert_families",
    "insert_choice_orders",
    "insert_described_blocks",
    "insert_discards",
    # the relationships, after every node they join: one stage, written together (Neo4j: at once)
    "link_kept",
    "link_discarded",
    "link_from_substructure",
    "link_reason",
    "link_certified_by",
)


class Committed:
    """Rows each write of one run already committed, handed out as the writes are redone."""

    def __init__(self, run_id: str, counts: dict[str, int]):
        self.run_id = run_id
        self.found = dict(counts)
        self.left = dict(counts)

    @classmethod
    def read(cls, store: Store, run_id: str) -> "Committed":
        return cls(run_id, {w: int(store.run(f"committed_{w}", run=run_id)[0]["n"]) for w in WRITES})

    @property
    def rows(self) -> int:
        """Rows the partial run had committed (kept, not rewritten)."""
        return sum(self.found.values())

    def take(self, write: str, n: int) -> int:
        """How many of the next ``n`` rows of ``write`` are already stored."""
        k = min(self.left.get(write, 0), n)
        self.left[write] = self.left.get(write, 0) - k
        return k

    def check_used(self) -> None:
        """Every stored row was one the redone run writes; else the partial run came from a
        different solve (another version of the engine) and the run is not what it says."""
        extra = {w: k for w, k in self.left.items() if k > 0}
        if extra:
            what = ", ".join(f"{k} of {w}" for w, k in extra.items())
            raise StoreError(
                f"run {self.run_id}: the partial run holds rows this solve does not write ({what}); "
                f"delete it ('basispath delete {self.run_id}') and run the network again"
            )


def _unwritten(name: str, columns: dict, committed: Committed | None) -> dict | None:
    """The rows of ``columns`` (write ``name``) that ``committed`` does not already hold; None
    when it holds them all (or there are none)."""
    n = column_length(columns)
    skip = committed.take(name, n) if committed is not None and n else 0
    if skip >= n:
        return None
    return columns_from(columns, skip) if skip else columns


def bulk(store: Store, name: str, columns: dict, committed: Committed | None = None, progress=None) -> None:
    """``store.bulk`` of the rows of ``columns`` that ``committed`` does not already hold."""
    rest = _unwritten(name, columns, committed)
    if rest is not None:
        store.bulk(name, rest, progress)


def bulk_together(store: Store, writes: list[tuple[str, dict]], committed: Committed | None = None, progress=None) -> None:
    """``store.bulk_together`` of independent writes, each without the rows ``committed`` holds:
    a server may run them at once, and each stays a committed prefix, as ``bulk`` keeps it."""
    left = [(name, rest) for name, columns in writes if (rest := _unwritten(name, columns, committed)) is not None]
    if left:
        store.bulk_together(left, progress)


def derive(store: Store, name: str, committed: Committed | None = None, **params) -> None:
    """Run a statement that derives relationships (one transaction), unless a killed run's copy
    of it committed: then its relationships are all there already."""
    if committed is not None and committed.left.get(name, 0) > 0:
        committed.left[name] = 0  # all of them: its count is of relationships, not of statements
        return
    store.run(name, **params)


def writer(store: Store, run_id: str, committed: Committed | None = None, on_stage=None, on_batch=None):
    """(stage, bulk) for a run's writer: ``stage(name)`` calls ``on_stage`` (progress, kill
    points) and records the stage on the run; ``bulk(name, columns)`` is ``bulk`` above with
    this run's ``committed`` rows and ``on_batch``."""

    def stage(name: str) -> None:
        if on_stage:
            on_stage(name)
        store.run("set_run_stage", id=run_id, stage=name)

    def write(name: str, columns: dict) -> None:
        bulk(store, name, columns, committed, on_batch)

    return stage, write
