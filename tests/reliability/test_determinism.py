"""The same spec and seed give the same answer: basis sets, stored graphs and ``why`` answers.

- ``solve --export`` is byte-identical across two processes (different PYTHONHASHSEED, so any
  dependence on set or dict-of-hash order would show) for every engine, on three public examples
  and one preset drawn at random (family, depth, width and seed; the draw is printed on failure
  and can be replayed with BASISPATH_DETERMINISM_SEED=N).
- Two runs of the same spec into two fresh LadybugDB stores give the same graph: a canonical
  dump of every node with its properties and every relationship (run ids and timestamps
  normalised, see graph_dump.py; queries cypher/queries/dump_nodes.cypher and
  dump_relationships.cypher) is identical.
- ``why --json`` gives the same answer in both stores for every discarded path and a few kept.
- The same on Neo4j (the session's server, tests/neo4j_support.py): two processes run the same
  specs into it one after the other (emptied in between), with the same dump and ``why``
  answers; and Neo4j's graph and answers equal LadybugDB's (tests/test_backend_equality.py
  compares every other command and query across the backends).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from basispath_graph.presets import preset_spec
from basispath_graph.solver import ENGINES as SOLVE_ENGINES
from basispath_graph.store import open_store

from ..cli_runner import cli, cli_env, run_in_process
from .counts import record
from .graph_dump import canonical_dump

EXAMPLES = Path("/work/shared/examples")
if not EXAMPLES.is_dir():
    EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PUBLIC = ["fig1b", "resnet-style", "densenet-style"]
ENGINES = list(SOLVE_ENGINES)  # skeleton, deah, deah-complete

DRAW = int(os.environ.get("BASISPATH_DETERMINISM_SEED") or random.SystemRandom().randrange(10**6))


def random_preset() -> tuple[dict, int]:
    """A small preset network and a solve seed, drawn from DRAW."""
    rng = random.Random(DRAW)
    family = rng.choice(["mlp", "resnet", "densenet", "unet", "stride"])
    depth = rng.randint(3, 5)
    width = rng.randint(2, 4)
    spec = preset_spec(family, depth, width, stride=2 if family == "stride" else None)
    return spec, rng.randrange(1000)


WHO = f"(random preset draw {DRAW}: replay with BASISPATH_DETERMINISM_SEED={DRAW})"

# One interpreter runs a batch of CLI commands (interpreter start-up is ~2 s here; a batch per
# process keeps the two processes independent and the test fast).
BATCH = r"""
import contextlib, io, json, sys
from basispath_graph.cli import main as cli_main
jobs = json.loads(sys.argv[1])
codes = []
for argv in jobs:
    sys.argv = ["basispath", *argv]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            cli_main.main()
    except SystemExit as exc:
        codes.append(exc.code or 0)
print(json.dumps(codes))
"""


def run_batches(batches: list[tuple[list[list[str]], str]]) -> list[list[int]]:
    """Run each (jobs, PYTHONHASHSEED) batch in its own process, all at once."""
    procs = []
    for jobs, hashseed in batches:
        env = cli_env({"PYTHONHASHSEED": hashseed})
        procs.append(subprocess.Popen([sys.executable, "-c", BATCH, json.dumps(jobs)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


@pytest.fixture(scope="module")
def specs(tmp_path_factory):
    root = tmp_path_factory.mktemp("specs")
    cases = [(EXAMPLES / f"{name}.json", 0) for name in PUBLIC]
    spec, seed = random_preset()
    path = root / f"{spec['name']}.json"
    path.write_text(json.dumps(spec))
    return cases + [(path, seed)]


@pytest.fixture(scope="module")
def two_processes(specs, tmp_path_factory):
    """Both processes solve every (spec, engine) with --export and run two specs into their own
    fresh stores; returns the two output folders."""
    dirs = [tmp_path_factory.mktemp(f"process{i}") for i in (1, 2)]
    stored = [EXAMPLES / "densenet-style.json", EXAMPLES / "resnet-style.json", specs[-1][0]]
    batches = []
    for d, hashseed in zip(dirs, ("1", "2")):
        jobs = [
            ["solve", str(path), "--engine", engine, "--seed", str(seed), "--export", str(d / f"{path.stem}.{engine}.json")]
            for path, seed in specs
            for engine in ENGINES
        ]
        jobs += [["run", str(path), "--engine", "deah", "--seed", str(seed), "--store", str(d / f"store-{path.stem}"), "-q"]
                 for path, seed in ((p, dict((str(a), b) for a, b in specs).get(str(p), 0)) for p in stored)]
        batches.append((jobs, hashseed))
    codes = run_batches(batches)
    assert codes[0] == codes[1] == [0] * len(batches[0][0]), (codes, WHO)
    return dirs, stored


def test_solve_exports_are_byte_identical_across_processes(two_processes, specs):
    (a, b), _ = two_processes
    compared = 0
    for path, seed in specs:
        for engine in ENGINES:
            name = f"{path.stem}.{engine}.json"
            x, y = (a / name).read_bytes(), (b / name).read_bytes()
            assert x == y, f"{name} differs between two processes {WHO}"
            export = json.loads(x)
            assert export["certified"] and export["seed"] == seed and len(export["basis"]) == export["m"] - export["H"]
            compared += 1
    assert compared == len(ENGINES) * len(specs) == 12
    record("determinism: solve exports compared across processes", compared)


def _run_id(store: Path) -> str:
    with open_store(str(store)) as s:
        (row,) = s.run("list_runs")
    assert row["status"] == "complete"
    return row["id"]


def test_stored_graphs_are_identical_across_processes(two_processes):
    (a, b), stored = two_processes
    for path in stored:
        dumps = []
        for d in (a, b):
            with open_store(str(d / f"store-{path.stem}")) as s:
                dumps.append(canonical_dump(s))
        (nodes_a, rels_a), (nodes_b, rels_b) = dumps
        assert nodes_a and rels_a  # a small MLP preset has only a few dozen elements
        assert nodes_a == nodes_b, f"{path.stem}: nodes differ {WHO}"
        assert rels_a == rels_b, f"{path.stem}: relationships differ {WHO}"
        record("determinism: graph elements compared", len(nodes_a) + len(rels_a))
    record("determinism: stored graphs compared", len(stored))


def _picked_paths(s, rid: str) -> list[str]:
    """Every discarded path of the run and five kept ones, by text."""
    paths = s.query("MATCH (p:BasisPath {run: $run}) RETURN p.text AS text, p.kept AS kept ORDER BY text", {"run": rid})[1]
    discarded = [t for t, kept in paths if not kept]
    kept = [t for t, k in paths if k]
    assert len(discarded) == 24  # densenet-style: 24 discarded, 4 of them by the repair
    return discarded + kept[:: max(1, len(kept) // 5)][:5]


def _why_answers(s, rid: str, picked: list[str]) -> dict:
    """text -> the ``why --json`` answer (``explain``) with the run id normalised."""
    from basispath_graph.analysis.why import explain

    return {t: json.loads(json.dumps(explain(s, rid, t)).replace(rid, "<run>")) for t in picked}


def _one_per_step(answers: dict, picked: list[str]) -> dict[str, str]:
    steps: dict[str, str] = {}
    for text in picked:
        assert answers[text]["verified"], text
        steps.setdefault(answers[text]["reason"].get("step") or answers[text]["status"], text)
    assert {"chain", "repair", "kept"} <= set(steps), steps
    return steps


def test_why_answers_are_identical(two_processes, tmp_path, monkeypatch, capsys):
    """Every discarded path and five kept ones, answered by both stores. The answers come from
    ``explain`` (what ``why`` prints) with each store opened once; a few go through
    ``why --json`` itself in this process, which must print exactly that answer."""
    (a, b), _ = two_processes
    stores = [d / "store-densenet-style" for d in (a, b)]
    run_ids = [_run_id(s) for s in stores]
    with open_store(str(stores[0])) as s:
        picked = _picked_paths(s, run_ids[0])

    answers = []  # per store: text -> answer with the run id normalised
    for store, rid in zip(stores, run_ids):
        with open_store(str(store)) as s:
            answers.append(_why_answers(s, rid, picked))
    for text in picked:
        assert answers[0][text] == answers[1][text], f"why {text} differs"
    steps = _one_per_step(answers[0], picked)

    for text in steps.values():  # one path per kind, through the command itself
        for store, rid, got in zip(stores, run_ids, answers):
            r = run_in_process(["why", rid, text, "--store", store, "--json"], tmp_path, monkeypatch, capsys)
            assert r.returncode == 0, (text, r.stderr)
            assert json.loads(r.stdout.replace(rid, "<run>")) == got[text]
    record("determinism: why answers compared", len(picked))


# -- on Neo4j, and across backends (the session's Neo4j server) ------------------------------

def _names(s) -> dict[str, str]:
    """Run id -> a name from its network (one run per network in these stores)."""
    return {r["id"]: f"<run {r['network']}>" for r in s.run("list_runs")}


@pytest.fixture(scope="module")
def neo4j_processes(two_processes, specs, neo4j_server):
    """Two processes (PYTHONHASHSEED 1 and 2) run the stored specs of ``two_processes`` into the
    session's Neo4j, one after the other, the database emptied before each; after each: the
    canonical dump, the why answers on densenet-style, and ``why --json`` through the command
    for one path per step."""
    _, stored = two_processes
    seeds = dict((str(a), b) for a, b in specs)
    out = []
    for hashseed in ("1", "2"):
        neo4j_server.wipe()
        jobs = [["run", str(p), "--engine", "deah", "--seed", str(seeds.get(str(p), 0)), "--store", neo4j_server.uri, "-q"] for p in stored]
        (codes,) = run_batches([(jobs, hashseed)])
        assert codes == [0] * len(jobs), (codes, WHO)
        with open_store(neo4j_server.uri) as s:
            names = _names(s)
            (rid,) = [r for r, name in names.items() if name == "<run densenet-style>"]
            picked = _picked_paths(s, rid)
            answers = _why_answers(s, rid, picked)
            dump = canonical_dump(s, names)
        commands = {}
        for text in _one_per_step(answers, picked).values():
            r = cli("why", rid, text, "--store", neo4j_server.uri, "--json", check=0)
            commands[text] = json.loads(r.stdout.replace(rid, "<run>"))
        out.append({"dump": dump, "picked": picked, "why": answers, "why_cli": commands})
    return out


@pytest.mark.neo4j
def test_neo4j_stored_graphs_and_why_answers_are_identical_across_processes(neo4j_processes):
    first, second = neo4j_processes
    assert first["dump"][0] and first["dump"][1]
    assert first["dump"][0] == second["dump"][0], f"nodes differ {WHO}"
    assert first["dump"][1] == second["dump"][1], f"relationships differ {WHO}"
    assert first["picked"] == second["picked"] and first["why"] == second["why"], f"why answers differ {WHO}"
    for text, got in first["why_cli"].items():  # the command prints exactly the answer
        assert got == first["why"][text] == second["why_cli"][text], text
    record("determinism: graph elements compared", len(first["dump"][0]) + len(first["dump"][1]))
    record("determinism: why answers compared", len(first["picked"]))


@pytest.mark.neo4j
def test_ladybug_and_neo4j_store_the_same_graph_and_answer_why_the_same(two_processes, neo4j_processes):
    """Process 1's LadybugDB stores (one per spec) hold together what Neo4j holds."""
    (a, _), stored = two_processes
    nodes, rels = set(), []
    for path in stored:
        with open_store(str(a / f"store-{path.stem}")) as s:
            n, r = canonical_dump(s, _names(s))
            nodes.update(n)  # a network's nodes are shared in one store: count them once
            rels += r
        if path.stem == "densenet-style":
            with open_store(str(a / f"store-{path.stem}")) as s:
                (rid,) = _names(s)
                why = _why_answers(s, rid, neo4j_processes[0]["picked"])
    neo = neo4j_processes[0]
    assert sorted(nodes) == sorted(set(neo["dump"][0])) and len(neo["dump"][0]) == len(set(neo["dump"][0]))
    assert sorted(rels) == neo["dump"][1], "relationships differ between Neo4j and LadybugDB"
    assert why == neo["why"], "why answers differ between Neo4j and LadybugDB"
    record("determinism: backends compared", len(stored))
