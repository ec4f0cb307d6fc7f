"""``Store.bulk_together``: independent writes, which the Neo4j backend runs at once.

What ``--resume`` needs (store/resume.py) is that each write's committed rows are a prefix of its
rows. The Neo4j store runs the writes in threads (``BASISPATH_NEO4J_WRITERS``); these tests
drive its scheduler with a simulated ``bulk`` (batches that take time, one that fails) so that
they check the rules without a server: every write's batches in order, ``progress`` from one
thread at a time, a failure stops the other writes after the batch they are committing and is
the error raised, a write not yet started never starts. The real server's side (a killed run
resumed while two writes were at work) is tests/reliability/test_crash_safety.py's ``links``
kill points.
"""

from __future__ import annotations

import threading
import time

import pytest

from basispath_graph.store.base import StoreError
from basispath_graph.store.neo4j_store import WRITERS_ENV, Neo4jStore

BATCH_S = 0.02


class SimulatedBulk:
    """``bulk`` of a store that commits one batch per row after BATCH_S seconds; a write named
    in ``fail_at`` raises a StoreError instead of committing that batch (1-based)."""

    def __init__(self, fail_at: dict[str, int] | None = None):
        self.fail_at = fail_at or {}
        self.committed: dict[str, list[int]] = {}
        self.started: list[str] = []
        self.lock = threading.Lock()
        self.writing = self.most_at_once = 0

    def __call__(self, name, columns, progress=None):
        with self.lock:
            self.started.append(name)
            self.writing += 1
            self.most_at_once = max(self.most_at_once, self.writing)
        try:
            for k, row in enumerate(columns["rows"], start=1):
                time.sleep(BATCH_S)
                if self.fail_at.get(name) == k:
                    raise StoreError(f"{name} failed at batch {k}")
                with self.lock:
                    self.committed.setdefault(name, []).append(row)
                if progress:
                    progress(1)
        finally:
            with self.lock:
                self.writing -= 1


def store_with(bulk: SimulatedBulk) -> Neo4jStore:
    store = Neo4jStore.__new__(Neo4jStore)  # no server: only the scheduler is under test
    store.bulk = bulk
    return store


def writes(**sizes: int) -> list[tuple[str, dict]]:
    return [(name, {"rows": list(range(n))}) for name, n in sizes.items()]


def test_every_write_is_committed_whole_and_in_order_and_progress_is_never_called_at_once(monkeypatch):
    monkeypatch.setenv(WRITERS_ENV, "2")
    bulk = SimulatedBulk()
    inside, most, calls = [0], [0], []

    def progress(rows):
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        time.sleep(BATCH_S / 4)  # long enough for a second writer to come in, were it let in
        calls.append(rows)
        inside[0] -= 1

    store_with(bulk).bulk_together(writes(a=10, b=12, c=3), progress)
    assert bulk.committed == {"a": list(range(10)), "b": list(range(12)), "c": list(range(3))}
    assert sum(calls) == 25 and most[0] == 1
    assert bulk.started[0] == "b"  # the longest first
    assert bulk.most_at_once == 2  # two at a time, never more


def test_a_failed_write_stops_the_others_after_a_committed_batch_and_is_the_error(monkeypatch):
    monkeypatch.setenv(WRITERS_ENV, "2")
    bulk = SimulatedBulk(fail_at={"b": 3})
    with pytest.raises(StoreError, match="^b failed at batch 3$"):
        store_with(bulk).bulk_together(writes(a=40, b=30, c=20))
    assert bulk.committed["b"] == [0, 1]
    a = bulk.committed["a"]
    assert a == list(range(len(a))) and len(a) < 20  # a prefix, stopped soon after b failed
    assert "c" not in bulk.started  # queued behind them: never started


def test_an_interrupt_in_progress_stops_every_write(monkeypatch):
    """A kill point or a pending Ctrl-C raises from ``progress`` (pipeline._kill_point) in a
    writer thread: the run stops there, as it does with one writer."""
    monkeypatch.setenv(WRITERS_ENV, "3")
    bulk = SimulatedBulk()
    seen = []

    def progress(rows):
        seen.append(rows)
        if len(seen) == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        store_with(bulk).bulk_together(writes(a=30, b=30, c=30), progress)
    assert len(seen) == 4  # nothing reported after the interrupt
    for name, rows in bulk.committed.items():
        assert rows == list(range(len(rows))) and len(rows) < 8, name


def test_one_writer_writes_one_after_the_other_in_the_given_order(monkeypatch):
    monkeypatch.setenv(WRITERS_ENV, "1")
    bulk = SimulatedBulk()
    store_with(bulk).bulk_together(writes(a=2, b=5, c=1))
    assert bulk.started == ["a", "b", "c"]
    assert bulk.committed == {"a": [0, 1], "b": list(range(5)), "c": [0]}


def test_a_bad_writer_count_is_one_line(monkeypatch):
    monkeypatch.setenv(WRITERS_ENV, "two")
    with pytest.raises(StoreError, match=f"^{WRITERS_ENV} must be a whole number of writers >= 1, got 'two'$"):
        store_with(SimulatedBulk()).bulk_together(writes(a=1, b=1))
