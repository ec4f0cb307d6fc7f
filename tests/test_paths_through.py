"""Which paths go through a neuron, for every run however it is stored (issue 26, item 4).

A run whose paths are ``BasisPath`` nodes answers in Cypher (``paths_through_neuron.cypher``);
a run stored described has no node for most of its paths and answers in Python from its
description (``analysis/paths_through.py``). The judges:

- the same solve stored listed and stored described (thresholds lowered) gives the same rows,
  on every neuron of the network, on both backends;
- the Python answer read from a listed run's loaded paths is the Cypher rows (ids, texts,
  kept), for every engine: ids and texts are spelled as the nodes spell them;
- a layer-DAG run (always described) gives the rows of its paths made one at a time
  (``StoredRun.basis_paths[k]``, ``discarded_paths[k]``: another code path than the blocks).
"""

from __future__ import annotations

import json

import pytest

from basispath_graph import guards, load_general
from basispath_graph.analysis.paths_through import ROW_BYTES, path_sources, paths_through, stored_described
from basispath_graph.cli import common, through_cmd
from basispath_graph.errors import LimitExceeded
from basispath_graph.general.paths import format_general_path
from basispath_graph.graph_store import open_store
from basispath_graph.store import described_rows
from basispath_graph.store.base import StoreError

from .cli_runner import run_in_process
from .test_dag_deah_store import FIRE
from .test_described_deah_store import GENERAL, LAYERED


def _neurons(net):
    if net.is_layered:
        return [(l, i) for l, w in enumerate(net.widths) for i in range(w)]
    return [(l, i) for l, layer in enumerate(net.layers) for i in range(layer.size)]


def _every_answer(gs, run_id, net) -> dict:
    return {(l, i): gs.paths_through(run_id, l, i) for l, i in _neurons(net)}


@pytest.mark.parametrize("case", ["layered deah-complete", "general deah-complete", "general skeleton"])
def test_a_described_run_answers_as_the_same_run_stored_listed(store_uri, monkeypatch, case):
    which, engine = case.split(" ", 1)
    net = LAYERED if which == "layered" else load_general(GENERAL)
    with open_store(str(store_uri), create=True) as gs:
        listed = gs.run(net, engine=engine)
        if engine == "deah-complete":
            monkeypatch.setattr(guards, "DESCRIBED_ABOVE", 0)
        monkeypatch.setattr(described_rows, "LISTED_PATHS", 0)
        described = gs.run(net, engine=engine)
        assert not stored_described(gs._store, listed.id, listed.basis_size)
        assert stored_described(gs._store, described.id, described.basis_size)
        mine, theirs = _every_answer(gs, described.id, net), _every_answer(gs, listed.id, net)
        assert mine == theirs
        assert {r["kept"] for rows in mine.values() for r in rows} == ({True, False} if engine == "deah-complete" else {True})
        # every path of the run goes through some neuron, and through as many as it has layers
        ids = sorted(r["id"] for rows in mine.values() for r in rows)
        assert sorted(set(ids)) == list(range(described.basis_size + len(described.discarded_paths)))
        assert len(ids) == sum(len(p[0] if not net.is_layered else p) for p in [*described.basis_paths, *described.discarded_paths])


LISTED_CASES = [(LAYERED, "deah"), (LAYERED, "deah-complete"), (load_general(GENERAL), "deah"),
                (load_general(GENERAL), "deah-complete"), (load_general(GENERAL), "skeleton"), (load_general(FIRE), "deah")]


@pytest.mark.parametrize("net, engine", LISTED_CASES, ids=[f"{n.name}-{e}" for n, e in LISTED_CASES])
def test_the_python_answer_on_a_listed_run_is_the_cypher_answer(store_uri, net, engine):
    with open_store(str(store_uri), create=True) as gs:
        run = gs.run(net, engine=engine)
        loaded = gs.load(run.id)
        sources = path_sources(loaded.basis_paths, loaded.discarded_paths)
        answered = 0
        for l, i in _neurons(net):
            cypher = gs._store.run("paths_through_neuron", run=run.id, layer=l, neuron=i)
            assert list(paths_through(net, sources, l, i)) == cypher, (l, i)
            answered += len(cypher)
        assert answered > run.basis_size


def _one_at_a_time(net, stored, layer, neuron) -> list[dict]:
    rows = []
    for first, kept, paths in ((0, True, stored.basis_paths), (len(stored.basis_paths), False, stored.discarded_paths)):
        for k in range(len(paths)):
            path = paths[k]
            if (layer, neuron) in path[0]:
                rows.append({"id": first + k, "text": format_general_path(net, path), "kept": kept})
    return rows


def test_a_layer_dag_run_answers_from_its_paths(store_uri):
    net = load_general(FIRE)
    with open_store(str(store_uri), create=True) as gs:
        run = gs.run(net, engine="deah-complete")
        assert stored_described(gs._store, run.id, run.basis_size) and len(run.discarded_paths) > 0
        loaded = gs.load(run.id)
        for l, i in _neurons(net):
            assert gs.paths_through(run.id, l, i) == _one_at_a_time(net, loaded, l, i), (l, i)


def test_layers_by_name_limits_and_questions_with_no_answer(tmp_path, monkeypatch):
    net = load_general(GENERAL)
    monkeypatch.setattr(described_rows, "LISTED_PATHS", 0)
    with open_store(str(tmp_path / "store"), create=True) as gs:
        run = gs.run(net, engine="skeleton")
        by_position = gs.paths_through(run.id, net.index["h2"], 1)
        assert len(by_position) > 2 and gs.paths_through(run.id, "h2", 1) == by_position
        assert gs.paths_through(run.id, "h2", 1, limit=2) == by_position[:2]
        assert gs.paths_through(run.id, "h2", 3) == []  # h2 has 3 neurons
        assert gs.paths_through(run.id, "nope", 0) == [] and gs.paths_through(run.id, 99, 0) == []
        with pytest.raises(StoreError, match="no run 'missing' in this store"):
            gs.paths_through("missing", 0, 0)


def _described_skeleton_run(tmp_path, monkeypatch):
    """(network, store, run, its rows through h1:0) of GENERAL's skeleton run stored described."""
    net = load_general(GENERAL)
    store = str(tmp_path / "store")
    monkeypatch.setattr(described_rows, "LISTED_PATHS", 0)
    with open_store(store, create=True) as gs:
        run = gs.run(net, engine="skeleton")
        return net, store, run, gs.paths_through(run.id, "h1", 0)


def test_the_cli_answers_a_described_run_in_python(tmp_path, monkeypatch, capsys):
    net, store, run, want = _described_skeleton_run(tmp_path, monkeypatch)
    done = run_in_process(["through", run.id, "h1", "0", "--store", store, "--json"], tmp_path, monkeypatch, capsys)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == want
    position = str(net.index["h1"])
    done = run_in_process(["query", "--file", "paths_through_neuron", "--param", f"run={run.id}", "--param", f"layer={position}",
                           "--param", "neuron=0", "--store", store, "--json"], tmp_path, monkeypatch, capsys)
    assert done.returncode == 0 and json.loads(done.stdout) == want
    assert f"run {run.id} is stored described: answered in Python from its description" in done.stderr


def test_the_cli_refuses_a_layer_or_neuron_the_network_lacks_in_one_line(tmp_path, monkeypatch, capsys):
    store = str(tmp_path / "store")
    with open_store(store, create=True) as gs:
        run = gs.run(load_general(GENERAL), engine="skeleton")
    for args, message in (
        (["nope", "0"], f"error: run {run.id}'s network has no layer 'nope' (give an index 0 .. 5 or a name: bias, x, h1, h2, h3, y)"),
        (["h2", "3"], "error: layer h2 has 3 neuron(s): no neuron 3"),
        (["9", "0"], f"error: run {run.id}'s network has no layer '9' (give an index 0 .. 5 or a name: bias, x, h1, h2, h3, y)"),
    ):
        done = run_in_process(["through", run.id, *args, "--store", store], tmp_path, monkeypatch, capsys)
        assert (done.returncode, done.stderr.strip()) == (2, message)
    done = run_in_process(["through", "missing", "h2", "0", "--store", store], tmp_path, monkeypatch, capsys)
    assert (done.returncode, done.stderr.strip()) == (2, "error: no run 'missing' in this store (see 'basispath runs')")


def test_an_answer_too_big_to_hold_is_refused_in_one_line_and_streamed_by_the_cli(tmp_path, monkeypatch, capsys):
    """``GraphStore.paths_through`` holds its rows in a list and refuses in one line, before
    the kernel would, an answer over half the memory limit; ``iter_paths_through`` and
    ``basispath through`` read any answer as a stream (VGG-19's skeleton run: over 100 M paths
    through one neuron of its first layer). Past a table's worth of rows the CLI prints plain
    lines as it reads, path last, as wide as the first rows were; ``--json`` is the same list."""
    net, store, run, want = _described_skeleton_run(tmp_path, monkeypatch)
    assert len(want) > 4
    with open_store(store) as gs:
        two = sum(ROW_BYTES + len(r["text"]) for r in want[:2])
        monkeypatch.setenv("BASISPATH_MAX_MEMORY_GB", str(2 * (two + 1) / 1e9))  # room for two rows, not three
        with pytest.raises(LimitExceeded) as refused:
            gs.paths_through(run.id, "h1", 0)
        assert str(refused.value) == (f"more than 2 paths go through h1:0 of run {run.id}: as a list they would take over 0.00 GB"
                                      " (the memory limit); give a limit, read them one at a time (GraphStore.iter_paths_through),"
                                      " or stream them with 'basispath through'")
        assert gs.paths_through(run.id, "h1", 0, limit=2) == want[:2]
        assert list(gs.iter_paths_through(run.id, "h1", 0)) == want
    position = str(net.index["h1"])
    done = run_in_process(["query", "--file", "paths_through_neuron", "--param", f"run={run.id}", "--param", f"layer={position}",
                           "--param", "neuron=0", "--store", store], tmp_path, monkeypatch, capsys)
    assert done.returncode == 2 and done.stderr.strip().splitlines()[-1] == "error: " + str(refused.value).replace("h1:0", f"{position}:0")
    streamed = []
    monkeypatch.setattr(through_cmd, "TABLE_ROWS", 2)
    monkeypatch.setattr(through_cmd, "stream_rows", lambda *args: streamed.append(len(args[1])) or common.stream_rows(*args))
    done = run_in_process(["through", run.id, "h1", "0", "--store", store], tmp_path, monkeypatch, capsys)
    assert done.returncode == 0, done.stderr
    assert streamed == [3]  # the first three rows read, then the rest printed as they came
    cells = [[str(r["id"]), "yes" if r["kept"] else "no", r["text"]] for r in want]
    widths = [max(len(h), *(len(c[i]) for c in cells[:3])) for i, h in enumerate(["id", "kept", "path"])]
    assert done.stdout.splitlines() == ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                                        for row in [["id", "kept", "path"], *cells]]
    assert done.stderr.strip() == f"{len(want)} path(s) through h1:0"
    done = run_in_process(["through", run.id, "h1", "0", "--store", store, "--json"], tmp_path, monkeypatch, capsys)
    assert done.returncode == 0 and done.stdout == json.dumps(want) + "\n"
