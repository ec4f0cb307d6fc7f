"""A described deah-complete run in the store (issue 26, item 4; ``store/described_deah.py``): the
choice rule, one row per block of the ear order and the explicit paths, not a node per kept and
discarded path. The same network stored listed (the default below ``DESCRIBED_ABOVE``) and
described (the threshold lowered) must answer alike: ``why`` on every path of the network
(the oracle's list: kept, discarded and never-candidate paths, by path and by stored id),
``load``, ``compare``; both backends (``store_uri``)."""

from __future__ import annotations

import json

import pytest

from basispath_graph import Network, guards, load_general
from basispath_graph.graph_store import GraphStore, open_store
from basispath_graph.store.base import StoreError
from basispath_graph.store.described_deah import load_described_deah

from .oracle import enumerate_paths
from .test_general_networks import oracle_paths

# Kernel taps on two core pairs, a dense skip, an identity shortcut and biases: every part of a
# general DEAH basis (core, tap lift, extra layers, identity forest), with hop-rule discards.
GENERAL = {
    "name": "taps-skip-identity",
    "layers": [{"name": "bias", "size": 1}, {"name": "x", "size": 2}, {"name": "h1", "size": 3}, {"name": "h2", "size": 3},
               {"name": "h3", "size": 3}, {"name": "y", "size": 2}],
    "connections": [
        {"from": "x", "to": "h1", "taps": 2}, {"from": "h1", "to": "h2"}, {"from": "h2", "to": "h3", "taps": 2},
        {"from": "h3", "to": "y"}, {"from": "x", "to": "h2"}, {"from": "h1", "to": "h3", "kind": "identity"},
        {"from": "h2", "to": "y"}, {"from": "bias", "to": "h2"}, {"from": "bias", "to": "y"}],
}
LAYERED = Network([2, 2, 3, 2, 2], skips=[(0, 2), (1, 3)], name="fig1b")


def _count(gs: GraphStore, label: str, run: str) -> int:
    return gs.query(f"MATCH (n:{label} {{run: $run}}) RETURN count(n) AS n", run=run)[0]["n"]


def _both_runs(gs: GraphStore, net, monkeypatch):
    """(listed run, described run) of ``net`` in one store."""
    listed = gs.run(net, engine="deah-complete")
    assert not (listed.result.core or listed.result).deah.described
    monkeypatch.setattr(guards, "DESCRIBED_ABOVE", 0)
    described = gs.run(net, engine="deah-complete")
    assert (described.result.core or described.result).deah.described
    return listed, described


def _without_run(answer: dict) -> dict:
    return {k: v for k, v in answer.items() if k != "run"}


def _paths(net, spec):
    if net.is_layered:
        return [",".join(f"{l}:{i}" for l, i in p) for p in enumerate_paths(net.widths, net.pairs)]
    return [json.dumps({"nodes": [[l, i] for l, i in nodes], "taps": list(taps)}) for nodes, taps in oracle_paths(spec)]


@pytest.mark.parametrize("which", ["layered", "general"])
def test_a_described_run_is_stored_small_and_answers_as_the_listed_run(store_uri, monkeypatch, which):
    net = LAYERED if which == "layered" else load_general(GENERAL)
    with open_store(str(store_uri), create=True) as gs:
        listed, described = _both_runs(gs, net, monkeypatch)
        _assert_answers_alike(gs, net, listed, described)


def test_a_listed_solve_with_many_paths_is_stored_described(store_uri, monkeypatch):
    """Issue 30: a layered run held listed in memory (below DESCRIBED_ABOVE) whose blocks are all
    p_0 and ears is stored described once it has more than LISTED_PATHS paths, and answers as the
    same run stored listed."""
    from basispath_graph.store import described_rows

    with open_store(str(store_uri), create=True) as gs:
        listed = gs.run(LAYERED, engine="deah-complete")
        monkeypatch.setattr(described_rows, "LISTED_PATHS", len(listed.result.discarded) + listed.result.basis_size - 1)
        described = gs.run(LAYERED, engine="deah-complete")
        assert not described.result.deah.described  # the solve listed it; the store describes it
        _assert_answers_alike(gs, LAYERED, listed, described)


def _assert_answers_alike(gs: GraphStore, net, listed, described) -> None:
    result = described.result
    layered = result.core or result
    # O(layers + blocks) rows: no discard record, no certificate, no discarded path node
    assert _count(gs, "Discard", described.id) == 0 and _count(gs, "Discard", listed.id) == len(result.discarded) > 0
    assert _count(gs, "DescribedBlock", described.id) == len(layered.deah.step3.order)
    assert _count(gs, "ChoiceOrder", described.id) == layered.network.L + 1
    assert _count(gs, "BasisPath", described.id) == 0  # explicit paths too: made again on load (issue 30)
    # why on every path of the network, and on every stored id: the listed run's answer
    paths = _paths(net, GENERAL)
    assert len(paths) > result.basis_size + len(result.discarded)  # some never a candidate
    statuses = set()
    for path in paths:
        mine, theirs = gs.why(described.id, path), gs.why(listed.id, path)
        assert _without_run(mine) == _without_run(theirs), path
        assert mine["verified"]
        statuses.add(mine["status"])
    assert statuses == {"kept", "discarded", "not a candidate"}
    for pid in range(result.basis_size + len(result.discarded)):
        assert _without_run(gs.why(described.id, str(pid))) == _without_run(gs.why(listed.id, str(pid)))
    # load: the same paths in the same order
    a, b = gs.load(described.id), gs.load(listed.id)
    assert list(a.basis_paths) == list(b.basis_paths) and list(a.discarded_paths) == list(b.discarded_paths)
    assert a.result is not None and a.result.basis_size == net.m - net.H
    # compare: the same rows, but certificate sizes (made on demand: not counted)
    listed_col, described_col = gs.compare(listed.id, described.id).columns
    diff = {k for k in listed_col.values if listed_col.values[k] != described_col.values.get(k)}
    assert diff <= {"certificate_max"} and described_col.values["certificate_max"] is None


def test_why_on_an_id_past_the_run_is_refused(store_uri, monkeypatch):
    from basispath_graph.analysis.why import WhyError

    with open_store(str(store_uri), create=True) as gs:
        monkeypatch.setattr(guards, "DESCRIBED_ABOVE", 0)
        run = gs.run(LAYERED, engine="deah-complete")
        past = run.result.basis_size + len(run.result.discarded)
        with pytest.raises(WhyError, match=f"path id {past} is not a path of run {run.id}"):
            gs.why(run.id, str(past))


def test_a_description_that_does_not_rebuild_its_run_is_refused(tmp_path, monkeypatch):
    """A block row changed behind the run's back: the rebuilt plan disagrees, and the store says
    so instead of answering from a different run."""
    monkeypatch.setattr(guards, "DESCRIBED_ABOVE", 0)
    with open_store(str(tmp_path / "store"), create=True) as gs:
        run = gs.run(LAYERED, engine="deah-complete")
        gs.query("MATCH (b:DescribedBlock {run: $run}) WHERE b.position = 1 SET b.kept_count = b.kept_count + 1", run=run.id)
        (row,) = gs._store.run("get_run", id=run.id)
        with pytest.raises(StoreError, match=rf"run {run.id}: its stored description does not rebuild it \(block 1 rebuilds as"):
            load_described_deah(gs._store, run.id, LAYERED, row)


class _Killed(Exception):
    pass


@pytest.mark.parametrize("point", ["subdivision sets:batch:1", "description", "description:batch:2"])
def test_a_described_run_cut_short_resumes_to_the_same_run(tmp_path, monkeypatch, point):
    """A described run stopped while it is written (at a stage, or after a committed batch) is
    resumed under its id, keeping what it committed; it then answers as a run never cut short."""
    from basispath_graph import pipeline
    from basispath_graph.store.base import BATCH_ENV
    from basispath_graph.store.runs import list_runs

    monkeypatch.setattr(guards, "DESCRIBED_ABOVE", 0)
    monkeypatch.setenv(BATCH_ENV, "2")  # several batches per write
    net = load_general(GENERAL)
    kill_point = pipeline._kill_point

    def killed(stage: str) -> None:
        if stage == point:
            raise _Killed(stage)
        kill_point(stage)

    with open_store(str(tmp_path / "store"), create=True) as gs:
        whole = gs.run(net, engine="deah-complete")
        monkeypatch.setattr(pipeline, "_kill_point", killed)
        with pytest.raises(_Killed):
            gs.run(net, engine="deah-complete")
        monkeypatch.setattr(pipeline, "_kill_point", kill_point)
        (cut,) = [r["id"] for r in list_runs(gs._store) if r["status"] != "complete"]
        outcome = pipeline.execute_general_run(gs._store, net, "deah-complete", resume=cut)
        assert outcome.resumed_rows > 0
        statuses = {r["id"]: r["status"] for r in list_runs(gs._store)}
        assert statuses == {whole.id: "complete", cut: "complete"}
        for label in ("BasisPath", "ChoiceOrder", "DescribedBlock", "SubstructurePath"):
            assert _count(gs, label, cut) == _count(gs, label, whole.id)
        size = whole.result.basis_size + len(whole.result.discarded)
        for pid in range(0, size, 7):
            assert _without_run(gs.why(cut, str(pid))) == _without_run(gs.why(whole.id, str(pid)))


def test_show_counts_a_described_run_as_the_listed_one(tmp_path, monkeypatch):
    """``show``'s per-layer kept paths of a described run come from its parts, not its nodes."""
    from basispath_graph.show.general_model import load_general_overview

    net = load_general(GENERAL)
    with open_store(str(tmp_path / "store"), create=True) as gs:
        listed, described = _both_runs(gs, net, monkeypatch)
        rows = {r["id"]: r for r in gs._store.run("show_run_summary", run=listed.id) + gs._store.run("show_run_summary", run=described.id)}
        a, b = (load_general_overview(gs._store, rows[r.id]) for r in (listed, described))
        assert a.layers == b.layers and a.discarded == b.discarded and b.basis_size == net.m - net.H
        assert sum(layer.kept for layer in b.layers if layer.name == "y") == net.m - net.H  # every path ends there
