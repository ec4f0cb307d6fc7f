"""Crash safety: ``basispath run`` SIGKILLed at every kill point leaves a store that opens, with
earlier runs unchanged, the killed run ``incomplete``, and ``--resume`` redoing it exactly.

The kill points come from one place, ``basispath_graph.store.runs.KILL_POINTS`` (each DEAH step
of the solve, every persistence stage, and between bulk batches). Bulk batches are made small
for the killed runs (``BASISPATH_BATCH_ROWS``) so that a stage of this small network has several;
the resumes use the default batches.

Per kill point: a copy of a store holding one complete run A (fig1b); run B (resnet-style)
killed there (exit -9); then ``basispath runs`` says A complete and B incomplete, a canonical
dump of A (every node and relationship of the run, read back with queries) is the one taken
before B, ``basispath run --resume B`` completes B with m - H = 130 kept paths, and B's dump
equals that of an uninterrupted run of the same network (so nothing partial survived the resume).
The killed runs are subprocesses (they must die), started together by a fixture for every
selected case (interpreter start-up dominates their cost); the checks call the CLI's ``main()``
in this process, which is much faster than a new interpreter each.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from basispath_graph.store import open_store
from basispath_graph.store import runs as runs_module
from basispath_graph.store.ladybug_store import BATCH_ENV
from basispath_graph.store.runs import KILL_ENV, KILL_POINTS, new_run_id

from ..cli_runner import run_in_process, run_many
from .counts import record

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SPEC_A = EXAMPLES / "fig1b.json"  # m = 32, H = 7: 25 kept, 8 discarded
SPEC_B = EXAMPLES / "resnet-style.json"  # m = 150, H = 20: 130 kept, 90 discarded, 10 repairs
B_BASIS = 150 - 20
# resnet-style in batches of 100 rows: "basis paths" writes its 130 kept paths in batches 1-2,
# the 90 discarded ones in 3, then the KEPT links in 4-5, ...; every commit costs ~50 ms.
BATCH_ROWS = "100"
COPY_ENV = {"BASISPATH_COPY_THRESHOLD": "1"}  # large runs load through COPY: force it
COPY_POINTS = ("basis paths:batch:1", "certificates:batch:1")
# Properties of a Run node that legitimately differ between two runs of the same network.
VOLATILE_RUN_PROPS = ("id", "started", "finished", "pid", "timings")


# -- canonical dumps --------------------------------------------------------------------------
NODES = "MATCH (n) RETURN n"
RELS = (
    "MATCH (a)-[e]->(b) RETURN label(a) AS la, coalesce(a.uid, a.key, a.id) AS ka, e, "
    "label(b) AS lb, coalesce(b.uid, b.key, b.id) AS kb"
)


def _key(node: dict):
    """A node's key: uid, key or id, whichever its table has."""
    return next(node[k] for k in ("uid", "key", "id") if node.get(k) is not None)


def _props(item: dict) -> dict:
    return {k: v for k, v in item.items() if not k.startswith("_") and v is not None}


def dump_runs(store, *run_ids: str) -> dict[str, dict[str, list[str]]]:
    """run id -> every node of the run (its Run node and all it owns), its network and layers,
    and every relationship touching them, as sorted JSON lines: equal dumps, an unchanged run."""
    with open_store(str(store)) as s:
        nodes = {(n["_LABEL"], _key(n)): n for (n,) in s.query(NODES)[1]}
        rels = s.query(RELS)[1]
    out = {}
    for run_id in run_ids:
        (key,) = {kb for la, ka, e, lb, kb in rels if e["_LABEL"] == "ON" and ka == run_id}

        def mine(n: dict) -> bool:
            if n["_LABEL"] == "Run":
                return n["id"] == run_id
            if n["_LABEL"] == "Network":
                return n["key"] == key
            if n["_LABEL"] == "Layer":
                return n["network"] == key
            return n.get("run") == run_id

        out[run_id] = {
            "nodes": sorted(json.dumps([ident, _props(n)], sort_keys=True) for ident, n in nodes.items() if mine(n)),
            "rels": sorted(
                json.dumps([e["_LABEL"], [la, ka], [lb, kb], _props(e)], sort_keys=True)
                for la, ka, e, lb, kb in rels
                if mine(nodes[(la, ka)]) or mine(nodes[(lb, kb)])
            ),
        }
    return out


def dump_run(store, run_id: str) -> dict[str, list[str]]:
    return dump_runs(store, run_id)[run_id]


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


KEPT = "MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b)"
DISCARDED = "MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath) RETURN count(b)"
CERTIFICATES = "MATCH (:Run {id: $run})-[:DISCARDED]->(:BasisPath)-[c:CERTIFIED_BY]->(:BasisPath) RETURN count(c)"


def counts(store, run_id: str) -> tuple[int, int, int]:
    """(kept, discarded, certificate terms) of a run, each by a parameterised query."""
    with open_store(str(store)) as s:
        return tuple(s.query(q, {"run": run_id})[1][0][0] for q in (KEPT, DISCARDED, CERTIFICATES))


# -- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A store with run A complete (and its dump); a reference store with B run uninterrupted."""
    root = tmp_path_factory.mktemp("crash")
    store, ref = root / "base", root / "reference"
    a, b = run_many([
        (["run", SPEC_A, "--store", store, "--json", "-q"], root, None),
        (["run", SPEC_B, "--store", ref, "--json", "-q"], root, None),
    ])
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    a_id, ref_id = json.loads(a.stdout)["run_id"], json.loads(b.stdout)["run_id"]
    dump_a = dump_run(store, a_id)
    counts_a = counts(store, a_id)
    # The dump really holds the run: 25 kept, 8 discarded, each with its certificate.
    assert counts_a[:2] == (25, 8) and counts_a[2] > 8
    assert [sum(f'"{t}"' in r for r in dump_a["rels"]) for t in ("KEPT", "DISCARDED", "CERTIFIED_BY")] == list(counts_a)
    assert counts(ref, ref_id)[:2] == (B_BASIS, 90)
    return {"store": store, "a": a_id, "dump_a": dump_a, "counts_a": counts_a, "reference": normalised(dump_run(ref, ref_id), ref_id)}


@pytest.fixture(scope="module")
def killed(base, request, tmp_path_factory):
    """(mode, kill point) -> (store, killed run): a copy of the base store in which run B was
    killed there. Only the cases selected in this session are run, all at once."""
    cases = set()
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.module is request.module and "point" in params:
            cases.add(("copy" if "copy" in item.name else "unwind", params["point"]))
    root = tmp_path_factory.mktemp("killed")
    jobs, stores = [], []
    for k, (mode, point) in enumerate(sorted(cases)):
        store = root / f"store{k}"
        shutil.copytree(base["store"], store)
        env = {KILL_ENV: point, BATCH_ENV: BATCH_ROWS, **(COPY_ENV if mode == "copy" else {})}
        jobs.append((["run", SPEC_B, "--store", store, "-q"], root, env))
        stores.append(store)
    return {case: (store, res) for case, store, res in zip(sorted(cases), stores, run_many(jobs))}


# -- the tests --------------------------------------------------------------------------------
def test_kill_points_are_distinct_and_in_a_single_list():
    assert len(KILL_POINTS) == len(set(KILL_POINTS)) >= 18
    assert {"substructures", "solved", "basis paths", "discards", "certificates", "complete"} <= set(KILL_POINTS)
    assert {p for p in KILL_POINTS if p.startswith("solve:")} >= {"solve:step1", "solve:step2", "solve:step3", "solve:certify", "solve:repair"}
    assert any(":batch:" in p for p in KILL_POINTS)


@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_run_killed_at_every_point_is_resumable_and_leaves_earlier_runs_unchanged(base, killed, point, tmp_path, monkeypatch, capsys):
    store, run = killed[("unwind", point)]
    assert run.returncode == -9, f"the run was not killed at {point!r}: exit {run.returncode}\n{run.stderr}"
    record("kill points", 1)

    def cli(*args):
        res = run_in_process(list(args), tmp_path, monkeypatch, capsys)
        assert res.returncode == 0, f"{args}: exit {res.returncode}\n{res.stderr}"
        return json.loads(res.stdout)

    # The store opens; A is complete and unchanged; B is listed as incomplete.
    status = {r["id"]: r["status"] for r in cli("runs", "--store", store, "--json")}
    assert status.pop(base["a"]) == "complete"
    ((b_id, b_status),) = status.items()
    assert b_status == "incomplete"
    assert dump_run(store, base["a"]) == base["dump_a"]

    # --resume finishes B under the same id, with m - H kept paths and every artifact exactly once.
    resumed = cli("run", "--resume", b_id, "--store", store, "--json")
    assert (resumed["run_id"], resumed["basis_size"], resumed["certified"]) == (b_id, B_BASIS, True)
    runs = cli("runs", "--store", store, "--json")
    assert {r["id"]: r["status"] for r in runs} == {base["a"]: "complete", b_id: "complete"}
    kept, discarded, _ = counts(store, b_id)
    assert (kept, discarded) == (B_BASIS, resumed["discarded"]) == (130, 90)
    dumps = dump_runs(store, b_id, base["a"])
    assert normalised(dumps[b_id], b_id) == base["reference"]

    # ... and A is still what it was: same KEPT / DISCARDED paths, same certificates.
    assert dumps[base["a"]] == base["dump_a"]
    assert counts(store, base["a"]) == base["counts_a"]


@pytest.mark.parametrize("point", COPY_POINTS)
def test_a_run_killed_between_copy_batches_is_resumable(base, killed, point, tmp_path, monkeypatch, capsys):
    """Large runs load through COPY, one transaction per batch; a kill between two is undone."""
    store, run = killed[("copy", point)]
    assert run.returncode == -9, f"the run was not killed at {point!r}: exit {run.returncode}\n{run.stderr}"
    record("kill points (COPY loads)", 1)
    for key, value in COPY_ENV.items():
        monkeypatch.setenv(key, value)
    res = run_in_process(["runs", "--store", store, "--json"], tmp_path, monkeypatch, capsys)
    status = {r["id"]: r["status"] for r in json.loads(res.stdout)}
    assert status.pop(base["a"]) == "complete"
    ((b_id, b_status),) = status.items()
    assert b_status == "incomplete"
    res = run_in_process(["run", "--resume", b_id, "--store", store, "--json"], tmp_path, monkeypatch, capsys)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["basis_size"] == B_BASIS
    dumps = dump_runs(store, b_id, base["a"])
    assert normalised(dumps[b_id], b_id) == base["reference"]
    assert dumps[base["a"]] == base["dump_a"]


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
