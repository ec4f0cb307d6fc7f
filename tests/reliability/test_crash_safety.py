"""Crash safety: ``basispath run`` SIGKILLed at every kill point leaves a store that opens, with
earlier runs unchanged, the killed run ``incomplete``, and ``--resume`` redoing it exactly, on
both backends (LadybugDB and the session's real Neo4j server).

The kill points come from one place, ``basispath_graph.pipeline.KILL_POINTS`` (each DEAH step
of the solve, every persistence stage, and between bulk batches). Bulk batches are made small
for the killed runs (``BASISPATH_BATCH_ROWS``, honoured by both stores) so that a stage of this
small network has several; the resumes use the default batches.

Per kill point: a store holding one complete run A (fig1b); run B (resnet-style) killed there
(exit -9); then ``basispath runs`` says A complete and B incomplete, a dump of A (every node and
relationship of the run, read back with the library's dump queries) is the one taken before B,
``basispath run --resume B`` completes B with m - H = 130 kept paths, and B's dump equals that of
an uninterrupted run of the same network (so nothing partial survived the resume).

LadybugDB: one copy of the base store per kill point. Neo4j: one server (Community has one
database), so every killed run B_k is a different run in the same graph next to A and the
reference run; a killed writer is told from a live one by its connection (``runs`` asks the
server which basispath PIDs are connected). The killed runs are subprocesses (they must die),
all started together by a fixture, then one ``runs`` per store, then every resume together
(interpreter start-up and, on Neo4j, round trips dominate); the tests check what was collected.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from basispath_graph.network import Network
from basispath_graph.store import open_store
from basispath_graph.store import runs as runs_module
from basispath_graph.store.ladybug_store import BATCH_ENV
from basispath_graph.pipeline import KILL_ENV, KILL_POINTS
from basispath_graph.store.runs import new_run_id

from ..cli_runner import DROPPED, MAX_PARALLEL, finish, run_many, start
from .counts import record

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SPEC_A = EXAMPLES / "fig1b.json"  # m = 32, H = 7: 25 kept, 8 discarded
SPEC_B = EXAMPLES / "resnet-style.json"  # m = 150, H = 20: 130 kept, 90 discarded, 10 repairs
B_BASIS = 150 - 20
# resnet-style in batches of 100 rows: "basis paths" writes its 130 kept paths in batches 1-2,
# the 90 discarded ones in 3; "links" writes KEPT, DISCARDED, ... in 10 or so (on Neo4j two
# writes at once, so its batch 5 is a different mix of them each time); every commit costs ~50 ms.
BATCH_ROWS = "100"
COPY_ENV = {"BASISPATH_COPY_THRESHOLD": "1"}  # large LadybugDB runs load through COPY: force it
COPY_POINTS = ("basis paths:batch:1", "links:batch:1")
# Properties of a Run node that legitimately differ between two runs of the same network.
VOLATILE_RUN_PROPS = ("id", "started", "finished", "pid", "timings")
BACKENDS = [pytest.param("ladybug", id="ladybug"), pytest.param("neo4j", id="neo4j", marks=pytest.mark.neo4j)]
NEO4J_PARALLEL = 9  # Neo4j runs mostly wait for the server: more at once than cli_runner's 2 per core


# -- dumps, backend-neutral -------------------------------------------------------------------
def _node(raw: dict) -> tuple[tuple[str, object], dict]:
    """((label, key), properties) of a node as either backend returns it (see graph_dump.py)."""
    d = dict(raw)
    label = d.pop("_LABEL") if "_LABEL" in d else "|".join(sorted(d.pop("labels")))
    props = {k: v for k, v in d.items() if not k.startswith("_") and v is not None}
    if label == "BasisPath" and isinstance(props.get("id"), str):  # LadybugDB's MATCH (n) column mix
        props["id"] = int(props["uid"].rsplit(":", 1)[1])
    key = next(props[k] for k in ("uid", "key", "id") if props.get(k) is not None)
    return (label, key), props


def _rel(raw: dict) -> tuple[str, dict]:
    d = dict(raw)
    kind = d.pop("_LABEL") if "_LABEL" in d else d.pop("type")
    return kind, {k: v for k, v in d.items() if not k.startswith("_") and v is not None}


def whole_graph(store) -> tuple[dict, list]:
    """Every node ((label, key) -> properties) and relationship of a store."""
    with open_store(str(store)) as s:
        nodes = dict(_node(row["n"]) for row in s.run("dump_nodes"))
        rels = [(*_rel(row["r"]), _node(row["a"])[0], _node(row["b"])[0]) for row in s.run("dump_relationships")]
    return nodes, rels


def dump_run(graph: tuple[dict, list], run_id: str) -> dict[str, list[str]]:
    """Every node the run owns (its Run node and all with ``run`` = its id), its network and
    layers, and every relationship that touches a node it owns or joins two of its network's
    nodes, as sorted JSON lines: equal dumps, an unchanged run. Other runs of the same network
    in the same graph (Neo4j) are left out."""
    nodes, rels = graph
    (key,) = {b[1] for kind, _, a, b in rels if kind == "ON" and a == ("Run", run_id)}

    def owned(ident) -> bool:
        label, props = ident[0], nodes[ident]
        return props.get("id") == run_id if label == "Run" else props.get("run") == run_id

    def shared(ident) -> bool:
        label, props = ident[0], nodes[ident]
        return (label == "Network" and props["key"] == key) or (label == "Layer" and props.get("network") == key)

    return {
        "nodes": sorted(json.dumps([list(i), p], sort_keys=True) for i, p in nodes.items() if owned(i) or shared(i)),
        "rels": sorted(
            json.dumps([kind, list(a), list(b), props], sort_keys=True)
            for kind, props, a, b in rels
            if owned(a) or owned(b) or (shared(a) and shared(b))
        ),
    }


def normalised(dump: dict[str, list[str]], run_id: str) -> dict[str, list[str]]:
    """A run's dump without its id and the Run properties that differ between runs."""
    out = {}
    for part, lines in dump.items():
        items = [json.loads(line.replace(run_id, "RUN")) for line in lines]
        for item in items:
            for thing in item:
                if isinstance(thing, dict) and "engine" in thing:  # the Run node's properties
                    for k in VOLATILE_RUN_PROPS:
                        thing.pop(k, None)
        out[part] = sorted(json.dumps(i, sort_keys=True) for i in items)
    return out


def counts(dump: dict[str, list[str]], run_id: str) -> tuple[int, int, int]:
    """(kept, discarded, certificate terms) of a run, from its dump."""
    rels = [json.loads(line) for line in dump["rels"]]
    kept = sum(1 for kind, a, _, _ in rels if kind == "KEPT" and a == ["Run", run_id])
    discarded = {tuple(b) for kind, a, b, _ in rels if kind == "DISCARDED" and a == ["Run", run_id]}
    certificates = sum(1 for kind, a, _, _ in rels if kind == "CERTIFIED_BY" and tuple(a) in discarded)
    return kept, len(discarded), certificates


def _run_all(jobs: list, parallel: int) -> list[subprocess.CompletedProcess]:
    """cli_runner.run_many, PARALLEL at a time, each result with the ``pid`` it ran as."""
    results = []
    for first in range(0, len(jobs), parallel):
        procs = [start(args, cwd, env) for args, cwd, env in jobs[first : first + parallel]]
        for proc in procs:
            results.append(finish(proc, timeout=300))
            results[-1].pid = proc.pid
    return results


def _statuses(res: subprocess.CompletedProcess) -> dict[str, str]:
    assert res.returncode == 0, res.stderr
    return {r["id"]: r["status"] for r in json.loads(res.stdout)}


def listed(store, cwd: Path) -> dict[str, str]:
    """What ``basispath runs --store STORE --json`` says (id -> status), run by the CLI's
    ``main()`` in this process: a new interpreter per store would cost more than the listing."""
    from basispath_graph.cli import main as cli_main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        for key in DROPPED:
            mp.delenv(key, raising=False)
        mp.chdir(cwd)
        mp.setattr(sys, "argv", ["basispath", "runs", "--store", str(store), "--json"])
        with pytest.raises(SystemExit) as info:
            cli_main.main()
    return _statuses(subprocess.CompletedProcess([], info.value.code, out.getvalue(), err.getvalue()))


# -- fixtures ---------------------------------------------------------------------------------
def crash_all(backend: str, cases: list[tuple[str, str]], root: Path, server=None) -> dict:
    """Run A, then run B killed at each case's point, then ``runs``, then every resume.

    Returns {"a": id, "dump_a": A's dump before any kill, "counts_a": ..., "reference": B's
    normalised uninterrupted dump, case: {...what each check needs...}}.
    """
    neo4j = backend == "neo4j"
    if neo4j:
        server.wipe()
        stores = [server.uri] * len(cases)
        base = ref = server.uri
    else:
        base, ref = root / "base", root / "reference"
    a, b = run_many([
        (["run", SPEC_A, "--engine", "deah", "--store", base, "--json", "-q"], root, None),
        (["run", SPEC_B, "--engine", "deah", "--store", ref, "--json", "-q"], root, None),
    ])
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    a_id, ref_id = json.loads(a.stdout)["run_id"], json.loads(b.stdout)["run_id"]
    base_graph = whole_graph(base)
    dump_a = dump_run(base_graph, a_id)
    counts_a = counts(dump_a, a_id)
    # The dump really holds the run: 25 kept, 8 discarded, each with its certificate.
    assert counts_a[:2] == (25, 8) and counts_a[2] > 8
    reference = dump_run(base_graph if neo4j else whole_graph(ref), ref_id)
    assert counts(reference, ref_id)[:2] == (B_BASIS, 90)
    out = {"a": a_id, "dump_a": dump_a, "counts_a": counts_a, "reference": normalised(reference, ref_id)}
    if not neo4j:
        stores = []
        for k in range(len(cases)):
            stores.append(root / f"store{k}")
            shutil.copytree(base, stores[-1])
    before = set(listed(base, root))
    parallel = NEO4J_PARALLEL if neo4j else MAX_PARALLEL
    jobs = [
        (["run", SPEC_B, "--engine", "deah", "--store", store, "-q"], root, {KILL_ENV: point, BATCH_ENV: BATCH_ROWS, **(COPY_ENV if mode == "copy" else {})})
        for (mode, point), store in zip(cases, stores)
    ]
    killed = _run_all(jobs, parallel)
    # Which run each killed process left behind, and what `runs` says now (no writer alive).
    status_after_kill = {store: listed(store, root) for store in sorted(set(map(str, stores)))}
    graph_after_kill = {store: whole_graph(store) for store in status_after_kill}
    b_ids = []
    for (mode, point), store, proc in zip(cases, stores, killed):
        nodes = graph_after_kill[str(store)][0]
        (b_id,) = [
            p["id"] for (label, _), p in nodes.items()
            if label == "Run" and p["id"] not in before and p.get("pid") == proc.pid
        ] or [None]
        b_ids.append(b_id)
    resumes = _run_all(
        [
            (["run", "--resume", b_id, "--store", store, "--json", "-q"], root, COPY_ENV if mode == "copy" else None)
            for (mode, _), store, b_id in zip(cases, stores, b_ids)
            if b_id is not None
        ],
        parallel,
    )
    resumed = iter(resumes)
    graph_final = {store: whole_graph(store) for store in status_after_kill}
    final = {store: {p["id"]: p["status"] for (label, _), p in graph[0].items() if label == "Run"} for store, graph in graph_final.items()}
    for case, store, proc, b_id in zip(cases, stores, killed, b_ids):
        store = str(store)
        out[case] = {
            "killed": proc,
            "b": b_id,
            "status_after_kill": status_after_kill[store],
            "dump_a_after_kill": dump_run(graph_after_kill[store], a_id),
            "resume": next(resumed) if b_id is not None else None,
            "status_final": final[store],
            "dump_b": dump_run(graph_final[store], b_id) if b_id is not None else None,
            "dump_a": dump_run(graph_final[store], a_id),
        }
    return out


def _selected(request, fixture: str, backend: str | None = None) -> list[tuple[str, str]]:
    """The kill points of the tests selected in this session that use FIXTURE (on BACKEND)."""
    cases = set()
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if getattr(item, "module", None) is not request.module or callspec is None or "point" not in callspec.params:
            continue
        if fixture not in item.fixturenames or (backend is not None and callspec.params.get(fixture) != backend):
            continue
        cases.add(("copy" if fixture == "crashed_copy" else "unwind", callspec.params["point"]))
    return sorted(cases)


@pytest.fixture(scope="module", params=BACKENDS)
def crashed(request, tmp_path_factory):
    """Every selected kill point on one backend (see crash_all)."""
    backend = request.param
    server = request.getfixturevalue("neo4j_server") if backend == "neo4j" else None
    cases = _selected(request, "crashed", backend)
    return backend, crash_all(backend, cases, tmp_path_factory.mktemp(f"crash-{backend}"), server)


@pytest.fixture(scope="module")
def crashed_copy(request, tmp_path_factory):
    """LadybugDB's COPY bulk loads (one transaction per batch): the same, killed between batches."""
    cases = _selected(request, "crashed_copy")
    return crash_all("ladybug", cases, tmp_path_factory.mktemp("crash-copy"))


def check_case(results: dict, case: tuple[str, str]) -> None:
    mode, point = case
    got = results[case]
    run = got["killed"]
    assert run.returncode == -9, f"the run was not killed at {point!r}: exit {run.returncode}\n{run.stderr}"
    b_id, a_id = got["b"], results["a"]
    assert b_id is not None, f"no Run node of the killed process (killed at {point!r})"

    # The store opens; A is complete and unchanged; B is listed as incomplete.
    status = got["status_after_kill"]
    assert (status[a_id], status[b_id]) == ("complete", "incomplete"), status
    assert got["dump_a_after_kill"] == results["dump_a"]

    # --resume finishes B under the same id, with m - H kept paths and every artifact exactly once.
    res = got["resume"]
    assert res.returncode == 0, f"--resume {b_id}: exit {res.returncode}\n{res.stderr}"
    resumed = json.loads(res.stdout)
    assert (resumed["run_id"], resumed["basis_size"], resumed["certified"]) == (b_id, B_BASIS, True)
    assert (got["status_final"][a_id], got["status_final"][b_id]) == ("complete", "complete")
    kept, discarded, _ = counts(got["dump_b"], b_id)
    assert (kept, discarded) == (B_BASIS, resumed["discarded"]) == (130, 90)
    assert normalised(got["dump_b"], b_id) == results["reference"]

    # ... and A is still what it was: same KEPT / DISCARDED paths, same certificates.
    assert got["dump_a"] == results["dump_a"]
    assert counts(got["dump_a"], a_id) == results["counts_a"]


# -- the tests --------------------------------------------------------------------------------
def test_kill_points_are_distinct_and_in_a_single_list():
    assert len(KILL_POINTS) == len(set(KILL_POINTS)) >= 18
    assert {"substructures", "solved", "basis paths", "discards", "links", "complete"} <= set(KILL_POINTS)
    assert {p for p in KILL_POINTS if p.startswith("solve:")} >= {"solve:step1", "solve:step2", "solve:step3", "solve:certify", "solve:repair"}
    assert any(":batch:" in p for p in KILL_POINTS)


@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_run_killed_at_every_point_is_resumable_and_leaves_earlier_runs_unchanged(crashed, point):
    backend, results = crashed
    check_case(results, ("unwind", point))
    record(f"kill points ({backend})", 1)


@pytest.mark.parametrize("point", COPY_POINTS)
def test_a_run_killed_between_copy_batches_is_resumable(crashed_copy, point):
    """Large LadybugDB runs load through COPY, one transaction per batch; a kill between two is undone."""
    check_case(crashed_copy, ("copy", point))
    record("kill points (LadybugDB COPY loads)", 1)


def test_run_ids_never_read_as_numbers(monkeypatch):
    """The once-seen 'wrong KEPT count after --resume': 3% of random hex ids read as numbers
    ("791049e3" = 7.91e8), so ``query --param run=ID`` passed a float and counted 0 paths."""
    drawn = iter(["12345678", "791049e3", "0ad62813"])
    monkeypatch.setattr(runs_module.secrets, "token_hex", lambda n: next(drawn))
    assert new_run_id() == "0ad62813"
    monkeypatch.undo()
    for _ in range(3000):
        rid = new_run_id()
        assert len(rid) == 8 and int(rid, 16) >= 0
        with pytest.raises(ValueError):
            json.loads(rid)


# -- a general network solved by a DEAH engine --------------------------------------------------
#: (engine, kill point): faithful deah (records one by one: resnet-style's core has repairs) at
#: every persistence stage, deah-complete (columnar discard table) between its bulk batches.
GENERAL_CASES = [("deah", p) for p in ("solved", "substructures", "subdivision sets:batch:1", "basis paths:batch:3",
                                       "discards:batch:1", "links:batch:2", "complete")] + [
    ("deah-complete", p) for p in ("substructures", "basis paths:batch:5", "discards:batch:1", "links:batch:1")]


@pytest.fixture(scope="module")
def general_crashed(tmp_path_factory):
    """resnet-style as a general spec with a bias, taps and an identity shortcut
    (tests/test_general_deah_store.py): per engine an uninterrupted run (the reference), then per
    case a run killed at the point in a store of its own and its --resume (LadybugDB)."""
    from ..test_general_deah_store import with_extra_layers

    root = tmp_path_factory.mktemp("crash-general")
    spec = root / "general.json"
    spec.write_text(json.dumps(with_extra_layers(Network.build([3, 5, 5, 5, 5, 2], [[0, 2], [2, 4], [3, 5]], "resnet-style"))))
    engines = sorted({e for e, _ in GENERAL_CASES})
    refs = run_many([(["run", spec, "--engine", e, "--store", root / f"ref-{e}", "--json", "-q"], root, None) for e in engines])
    out = {}
    for e, res in zip(engines, refs):
        assert res.returncode == 0, res.stderr
        run_id = json.loads(res.stdout)["run_id"]
        out[e] = normalised(dump_run(whole_graph(root / f"ref-{e}"), run_id), run_id)
    stores = [root / f"case{k}" for k in range(len(GENERAL_CASES))]
    killed = _run_all([(["run", spec, "--engine", e, "--store", s, "-q"], root, {KILL_ENV: p, BATCH_ENV: "40"})
                       for (e, p), s in zip(GENERAL_CASES, stores)], MAX_PARALLEL)
    listed_after = [listed(s, root) for s in stores]
    resumes = _run_all([(["run", "--resume", next(iter(ids), "none"), "--store", s, "--json", "-q"], root, None)
                        for ids, s in zip(listed_after, stores)], MAX_PARALLEL)
    for case, proc, ids, res, store in zip(GENERAL_CASES, killed, listed_after, resumes, stores):
        out[case] = {"killed": proc, "listed": ids, "resume": res, "graph": whole_graph(store)}
    return out


@pytest.mark.parametrize("engine,point", GENERAL_CASES)
def test_a_general_deah_run_killed_is_resumable(general_crashed, engine, point):
    """Killed at POINT, the general DEAH run is incomplete; --resume completes it under the same
    id, keeping what it committed, and its graph (core artifacts included) is an uninterrupted run's."""
    got = general_crashed[(engine, point)]
    assert got["killed"].returncode == -9, f"not killed at {point!r}: exit {got['killed'].returncode}\n{got['killed'].stderr}"
    ((run_id, status),) = got["listed"].items()
    assert status == "incomplete"
    res = got["resume"]
    assert res.returncode == 0, res.stderr
    resumed = json.loads(res.stdout)
    assert (resumed["run_id"], resumed["certified"], resumed["kind"]) == (run_id, True, "general")
    if ":batch:" in point or point in ("discards", "links", "complete"):
        assert resumed["resumed_rows"] > 0  # kept, not rewritten
    dump = dump_run(got["graph"], run_id)
    kept, discarded, terms = counts(dump, run_id)
    assert discarded > 0 and terms > discarded and kept == resumed["basis_size"]
    assert normalised(dump, run_id) == general_crashed[engine]
    record("kill points (general DEAH runs)", 1)
