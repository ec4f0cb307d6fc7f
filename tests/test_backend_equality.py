"""LadybugDB and Neo4j give the same answers for the same spec, engine and seed.

The same runs (two small networks, engines deah and deah-complete) are stored by the real CLI in
a LadybugDB folder and in the session's Neo4j server (tests/neo4j_support.py); then both stores
are asked the same things and the answers compared as they come out, with no expected values
written here:

- the canonical dump of the whole graph (tests/reliability/graph_dump.py);
- ``why --json`` and the human ``why`` text for EVERY discarded path and a few kept ones;
- ``compare`` of the stored runs (JSON and table), by run id and by spec;
- ``runs`` (JSON and table);
- ``show`` DOT text: the overview, the neuron picture of a path, a certificate;
- every query file of cypher/queries/ that Neo4j runs: read queries are run on both backends
  with the same parameters and their rows compared; write queries (the bulk loads and run
  bookkeeping) are run by the CLI above, and the bookkeeping ones that a run does not reach
  (--resume, stale runs, refused runs) are run here in the same order on both backends, with
  the dumps compared after each.

What differs between two runs by design is normalised: run ids (each run gets a name from its
spec and engine), timestamps, pids and measured timings.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basispath_graph.store import open_store
from basispath_graph.store.library import QueryLibrary, cypher_dir

from .cli_runner import cli_env
from .reliability.graph_dump import VOLATILE_RUN_PROPERTIES, canonical_dump, plain_node
from .strategies import networks

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CASES = [
    ("fig1b", "deah"), ("fig1b", "deah-complete"), ("fig1b", "skeleton"),
    ("resnet-style", "deah"), ("resnet-style", "deah-complete"),
    ("densenet-style", "deah"),  # repairs: paths SDVChain discarded and the repair re-admitted
]
BACKENDS = ("ladybug", "neo4j")

# One interpreter runs a list of CLI commands in order and reports (exit code, stdout, stderr)
# for each: interpreter start-up (~1-2 s) would otherwise dominate.
BATCH = r"""
import contextlib, io, json, sys
from basispath_graph.cli import main as cli_main
results = []
for argv in json.loads(sys.stdin.read()):
    sys.argv = ["basispath", *argv]
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)  # show writes bytes
    err = io.StringIO()
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            cli_main.main()
    except SystemExit as exc:
        code = exc.code or 0
    out.flush()
    results.append([code, out.buffer.getvalue().decode("utf-8"), err.getvalue()])
sys.__stdout__.write("\n@@RESULTS@@" + json.dumps(results))
"""


def start_batch(jobs: list[list[str]]) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", BATCH], env=cli_env({"MPLBACKEND": "Agg"}), cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    proc.stdin.write(json.dumps([[str(a) for a in job] for job in jobs]))
    proc.stdin.close()
    return proc


def finish_batch(proc: subprocess.Popen) -> list[tuple[int, str, str]]:
    out = proc.stdout.read()
    err = proc.stderr.read()
    proc.wait(timeout=600)
    assert proc.returncode == 0 and "@@RESULTS@@" in out, err[-3000:]
    return [tuple(r) for r in json.loads(out.rsplit("@@RESULTS@@", 1)[1])]


def run_batches(jobs_by_backend: dict[str, list[list[str]]]) -> dict[str, list[tuple[int, str, str]]]:
    """Both backends' command lists at once (one process each), results by backend."""
    procs = {backend: start_batch(jobs) for backend, jobs in jobs_by_backend.items()}
    return {backend: finish_batch(proc) for backend, proc in procs.items()}


class Stored:
    """The runs of CASES on one backend: store URI, run ids and their normalisation."""

    def __init__(self, backend: str, uri: str, run_ids: dict[tuple[str, str], str]):
        self.backend, self.uri, self.run_ids = backend, uri, run_ids
        self.names = {rid: f"<run {name} {engine}>" for (name, engine), rid in run_ids.items()}

    def norm(self, text: str) -> str:
        for rid, name in self.names.items():
            text = text.replace(rid, name)
        return text


@pytest.fixture(scope="module")
def stored(neo4j_server, tmp_path_factory) -> dict[str, Stored]:
    neo4j_server.wipe()
    uris = {"ladybug": str(tmp_path_factory.mktemp("equality") / "store"), "neo4j": neo4j_server.uri}
    jobs = {
        backend: [["run", EXAMPLES / f"{name}.json", "--engine", engine, "--store", uri, "--json"] for name, engine in CASES]
        for backend, uri in uris.items()
    }
    results = run_batches(jobs)
    out = {}
    for backend, uri in uris.items():
        run_ids = {}
        for case, (code, stdout, stderr) in zip(CASES, results[backend]):
            assert code == 0, (backend, case, stderr)
            run_ids[case] = json.loads(stdout)["run_id"]
        out[backend] = Stored(backend, uri, run_ids)
    return out


def both(stored, function):
    """``function(Stored, open store)`` on each backend, answers by backend."""
    answers = {}
    for backend, s in stored.items():
        with open_store(s.uri) as store:
            answers[backend] = function(s, store)
    return answers


def assert_same(answers: dict, what: str):
    assert answers["ladybug"] == answers["neo4j"], f"{what} differs between LadybugDB and Neo4j"


# -- the whole graph ---------------------------------------------------------------------------

def test_canonical_dumps_are_identical(stored):
    dumps = both(stored, lambda s, store: canonical_dump(store, s.names))
    nodes, rels = dumps["ladybug"]
    assert nodes and rels
    assert dumps["ladybug"][0] == dumps["neo4j"][0], "nodes differ between LadybugDB and Neo4j"
    assert dumps["ladybug"][1] == dumps["neo4j"][1], "relationships differ between LadybugDB and Neo4j"


# -- why, compare, runs, show through the CLI --------------------------------------------------

def _path_ids(s: Stored, store, case) -> dict:
    rid = s.run_ids[case]
    _, rows = store.query("MATCH (b:BasisPath {run: $run}) RETURN b.id AS id, b.kept AS kept ORDER BY id", {"run": rid})
    _, steps = store.query(
        "MATCH (b:BasisPath {run: $run})-[:REASON]->(d:Discard) RETURN d.step AS step, min(b.id) AS id ORDER BY step", {"run": rid}
    )
    return {"discarded": [i for i, kept in rows if not kept], "kept": [i for i, kept in rows if kept], "by_step": dict(steps)}


@pytest.fixture(scope="module")
def paths(stored):
    """Per case: the ids of its discarded and kept paths, and the first path of each DEAH step
    that discarded (or repaired) one (all the same on both backends)."""
    ids = both(stored, lambda s, store: {case: _path_ids(s, store, case) for case in CASES})
    assert_same(ids, "the stored path ids")
    assert all(ids["ladybug"][case]["discarded"] for case in CASES if case[1] != "skeleton")  # skeleton discards none
    return ids["ladybug"]


def _kept_sample(ids: dict) -> list[int]:
    return ids["kept"][:: max(1, len(ids["kept"]) // 3)]


def _why_answers(s: Stored, store, paths) -> dict:
    from basispath_graph.analysis.why import explain

    answers = {}
    for case in CASES:
        rid = s.run_ids[case]
        for pid in paths[case]["discarded"] + _kept_sample(paths[case]):
            answers[(case, pid)] = json.loads(s.norm(json.dumps(explain(store, rid, str(pid)))))
    return answers


def test_why_is_identical_for_every_discarded_path(stored, paths):
    """What ``why --json`` prints (``explain``), for every discarded path of every run and a few
    kept ones, each store opened once; the CLI itself is compared below on one path per step."""
    answers = both(stored, lambda s, store: _why_answers(s, store, paths))
    lady, neo = answers["ladybug"], answers["neo4j"]
    assert lady.keys() == neo.keys()
    for key in lady:
        assert lady[key] == neo[key], f"why {key}: LadybugDB and Neo4j differ"
        assert lady[key]["verified"] is True, key
    assert sum(a["status"] == "discarded" for a in lady.values()) == sum(len(paths[c]["discarded"]) for c in CASES)


def _cli_jobs(s: Stored, paths) -> list[tuple[str, list]]:
    """(label, argv) of every read command compared; labels are the same on both backends."""
    jobs = [("runs --json", ["runs", "--json"]), ("runs", ["runs"])]
    runs = [s.run_ids[case] for case in CASES]
    jobs += [("compare runs --json", ["compare", *runs, "--json"]), ("compare runs", ["compare", *runs])]
    specs = [EXAMPLES / "fig1b.json", EXAMPLES / "resnet-style.json", EXAMPLES / "densenet-style.json"]
    jobs += [("compare specs --json", ["compare", *specs, "-e", "deah", "-e", "deah-complete", "--json"])]
    for case in CASES:
        rid, ids = s.run_ids[case], paths[case]
        kept = _kept_sample(ids)
        for pid in [*ids["by_step"].values(), kept[0]]:  # one path per step, one kept path
            jobs.append((f"why {case} {pid} --json", ["why", rid, pid, "--json"]))
            jobs.append((f"why {case} {pid}", ["why", rid, pid]))
        jobs.append((f"show {case}", ["show", rid, "--format", "dot"]))
        jobs.append((f"show {case} --path {kept[0]}", ["show", rid, "--path", kept[0]]))
        first = (ids["discarded"] or kept)[0]
        jobs.append((f"show {case} --path {first} --certificate", ["show", rid, "--path", first, "--certificate"]))
    return [(label, [*argv, "--store", s.uri]) for label, argv in jobs]


TIME_ROW = re.compile(r"^\s*│?\s*time ")


def _normal(label: str, s: Stored, result: tuple[int, str, str]):
    """A command's (exit code, output) with run ids named and measured times dropped."""
    code, out, err = result
    out, err = s.norm(out), s.norm(err)
    if label.startswith("runs --json"):
        rows = [{k: v for k, v in r.items() if k not in VOLATILE_RUN_PROPERTIES} for r in json.loads(out)]
        out = sorted(rows, key=lambda r: r["id"])  # newest first: the two backends ran at other times
    elif label.startswith("runs"):
        # the table: one line per run (its cells, start time dropped), in id order
        lines = [[c.strip() for c in line.split("│")][1:-2] for line in out.splitlines() if "<run " in line]
        out = sorted(lines)
    elif label.startswith("compare") and label.endswith("--json"):
        out = [{k: v for k, v in c.items() if k != "timings"} for c in json.loads(out)]
    elif label.startswith("compare"):
        # the table, cell by cell (column widths follow the measured times), without time rows
        out = [[c.strip() for c in line.split("│")] for line in out.splitlines() if not TIME_ROW.match(line)]
    elif label.endswith("--json"):
        out = json.loads(out)
    return code, out, err


def test_cli_answers_are_identical(stored, paths):
    """runs, compare, show and why (one path per DEAH step), as the CLI prints them on each
    backend (exit code, stdout, stderr)."""
    jobs = {backend: _cli_jobs(s, paths) for backend, s in stored.items()}
    labels = [label for label, _ in jobs["ladybug"]]
    assert labels == [label for label, _ in jobs["neo4j"]]
    results = run_batches({backend: [argv for _, argv in js] for backend, js in jobs.items()})
    answers = {b: [_normal(label, stored[b], r) for label, r in zip(labels, results[b])] for b in BACKENDS}
    for k, label in enumerate(labels):
        lady, neo = answers["ladybug"][k], answers["neo4j"][k]
        assert lady[0] == 0, (label, lady)
        assert lady == neo, f"{label}: LadybugDB and Neo4j differ"
        if label.startswith("why") and label.endswith("--json"):
            assert lady[1]["verified"] is True


# -- every query file --------------------------------------------------------------------------

def query_names() -> list[str]:
    return sorted(p.stem for p in (cypher_dir() / "queries").glob("*.cypher"))


#: Read queries: run with the same parameters on both backends, rows compared.
from basispath_graph.store.resume import WRITES  # noqa: E402

READ_QUERIES = {
    "compare_run", "count_kept", "dump_nodes", "dump_relationships", "find_complete_run", "get_run",
    "list_networks", "list_runs", "read_shares_edge", "read_subdivides", "show_certificate", "show_chains",
    "show_discard_steps", "show_path_by_id", "show_path_by_text", "show_run_summary", "show_substructures",
    "substructure_layers", "run_paths", "why", "selected_substructures", "kept_paths", "certificate_max",
    "shared_layer_pairs", "substructure_hops", "paths_through_neuron", "substructure_counts",  # questions
    # general networks (tests/test_general_store.py compares a general run's graph and answers)
    "general_layers", "general_connections", "general_kept_paths", "general_layer_counts", "general_path",
    "core_layers",  # the layers a run's substructure paths run through (a general DEAH run's core)
    "run_designations", "run_families",  # a described (skeleton) run's walks and families: none here
    # a described deah-complete run's rule and blocks: none here (tests/test_described_deah_store.py)
    "run_choice_orders", "run_described_blocks", "described_discard_steps",
} | {f"committed_{w}" for w in WRITES}  # --resume's counts of what a run wrote (store/resume.py)
#: Written by every ``basispath run`` (fixture ``stored``): their effect is the dump compared above.
RUN_WRITES = {
    "merge_network", "create_run", "set_run_stage", "insert_substructure_paths", "compute_subdivides",
    "compute_shares_edge", "insert_subdivision_sets", "compute_contains", "insert_chains", "insert_basis_paths",
    "link_kept", "link_discarded", "link_from_substructure", "insert_discards", "link_reason", "link_certified_by",
    "complete_run", "merge_general_network",
}
#: Written by a described run only (its description: tests/test_described_store.py and
#: tests/test_described_deah_store.py compare what it reads back on both backends).
DESCRIBED_WRITES = {"insert_designations", "insert_families", "insert_choice_orders", "insert_described_blocks"}
#: Bookkeeping a successful run does not reach: run below in the same order on both backends.
OTHER_WRITES = {"mark_stale_runs", "restart_run", "mark_run_deleting", "delete_run_artifacts", "delete_run"}


def test_every_query_file_is_classified():
    assert set(query_names()) == READ_QUERIES | RUN_WRITES | DESCRIBED_WRITES | OTHER_WRITES


def _plain(value):
    """A value as either backend returns it, in one form: nodes as (label, properties)."""
    if isinstance(value, dict) and ("_LABEL" in value or "labels" in value):
        label, props = plain_node(value)
        return {"label": label, **{k: _plain(v) for k, v in props.items()}}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k not in VOLATILE_RUN_PROPERTIES}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, Decimal):  # LadybugDB's sum() of integers
        return int(value)
    return value


def _params(s: Stored, store, case) -> dict:
    """Parameters for the read queries, from the run of CASE (a discarded path, its text)."""
    rid = s.run_ids[case]
    _, rows = store.query(  # a discarded path (the last kept one for skeleton)
        "MATCH (b:BasisPath {run: $run}) RETURN b.id, b.text ORDER BY b.kept, b.id DESC LIMIT 1", {"run": rid}
    )
    (pid, text), = rows
    (run,) = store.run("get_run", id=rid)
    _, engine = case
    return {"run": rid, "id": pid, "text": text, "key": run["key"], "engine": engine, "seed": 0, "idxs": [0, 1, 2, 3],
            "p": 0, "q": 1, "layer": 1, "neuron": 0}


def _read_answers(s: Stored, store) -> dict:
    lib = QueryLibrary(store.backend)
    answers = {}
    for case in CASES:
        params = _params(s, store, case)
        # the two dump queries read the whole graph: compared once, by test_canonical_dumps_are_identical
        for name in sorted(READ_QUERIES - {"dump_nodes", "dump_relationships"}):
            wanted = {p for p in re.findall(r"\$(\w+)", " ".join(lib.statements(name)))}
            given = {k: v for k, v in params.items() if k in wanted}
            if name == "get_run":  # its $id is the run's id, not a path's
                given["id"] = params["run"]
            rows = store.run(name, **given)
            rows = [_plain(r) for r in rows]
            text = s.norm(json.dumps(rows, sort_keys=True, default=str))
            rows = json.loads(text)
            if name == "why":  # collect() has no order; explain() sorts the reasons and terms itself
                for row in rows:
                    row["reasons"] = sorted(row["reasons"], key=lambda d: d["uid"])
                    row["certificate"] = sorted(row["certificate"], key=lambda c: json.dumps(c, sort_keys=True))
            # no order, or by start time (the backends ran at other times): compare as sets
            if "ORDER BY" not in " ".join(lib.statements(name)).upper() or name == "list_runs":
                rows = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))
            answers[(case, name)] = rows
    return answers


def test_every_read_query_answers_the_same(stored):
    answers = both(stored, _read_answers)
    lady, neo = answers["ladybug"], answers["neo4j"]
    assert lady.keys() == neo.keys()
    for key in lady:
        assert lady[key] == neo[key], f"{key}: LadybugDB and Neo4j differ"
    # not vacuous: the per-run queries found the run
    for case in CASES:
        for name in ("compare_run", "get_run", "show_run_summary", "why", "show_path_by_id", "show_path_by_text",
                     "count_kept", "find_complete_run", "paths_through_neuron"):
            assert lady[(case, name)], (case, name)
        if case[1] != "skeleton":
            for name in ("show_certificate", "show_substructures", "read_subdivides", "show_discard_steps",
                         "substructure_hops", "substructure_counts"):
                assert lady[(case, name)], (case, name)
        if case[1] == "deah":  # deah-complete builds no chains
            assert lady[(case, "show_chains")], case


def test_bookkeeping_writes_have_the_same_effect(neo4j_server, tmp_path):
    """A run stored by the CLI, then what --resume, a later writer and a refused run do to it, on
    both backends in the same order: the canonical dumps agree after every step."""
    neo4j_server.wipe()
    uris = {"ladybug": str(tmp_path / "store"), "neo4j": neo4j_server.uri}
    results = run_batches({b: [["run", EXAMPLES / "fig1b.json", "--store", uri, "--json"]] for b, uri in uris.items()})
    rids = {b: json.loads(results[b][0][1])["run_id"] for b in BACKENDS}
    steps = [
        ("set_run_stage", lambda rid: {"id": rid, "stage": "discards"}),
        ("restart_run", lambda rid: {"id": rid, "pid": 1}),
        ("mark_stale_runs", lambda rid: {}),
        ("mark_run_deleting", lambda rid: {"id": rid}),
        ("delete_run_artifacts", lambda rid: {"run": rid}),
        ("delete_run", lambda rid: {"id": rid}),
    ]
    assert {name for name, _ in steps} >= OTHER_WRITES
    previous = None
    for name, params in steps:
        dumps, returned = {}, {}
        for b, uri in uris.items():
            with open_store(uri, write=True) as store:
                rows = store.run(name, **params(rids[b]))
                returned[b] = json.loads(json.dumps(rows).replace(rids[b], "<run>"))
                dumps[b] = canonical_dump(store, {rids[b]: "<run>"})
        assert returned["ladybug"] == returned["neo4j"], f"{name}: rows differ"
        assert dumps["ladybug"] == dumps["neo4j"], f"after {name}: the graphs differ"
        assert dumps["ladybug"] != previous, f"{name} changed nothing"
        previous = dumps["ladybug"]


# -- random networks -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def random_stores(neo4j_server, tmp_path_factory):
    """A LadybugDB store and the Neo4j server, both emptied for every example (the Neo4j one by
    deleting its nodes, LadybugDB's by starting a new folder)."""
    folders = iter(range(10**6))
    root = tmp_path_factory.mktemp("random")

    def fresh():
        neo4j_server.wipe()
        return {"ladybug": str(root / f"store{next(folders)}"), "neo4j": neo4j_server.uri}

    return fresh


@given(net=networks(max_layers=5, max_width=3, max_weights=150), engine=st.sampled_from(["deah", "deah-complete", "skeleton"]), seed=st.integers(0, 3))
@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_random_networks_give_the_same_graph_and_why_answers(random_stores, net, engine, seed):
    """Each example stores one run per backend (in this process: a run on Neo4j costs about a
    second, so 12 examples; 180 random ones found no difference) and compares the dumps,
    ``why`` for every discarded path, the ``compare`` column and the ``show`` DOT overview."""
    from basispath_graph.analysis.compare import column_from_run
    from basispath_graph.analysis.why import explain
    from basispath_graph.show import load_overview, render
    from basispath_graph.pipeline import execute_run

    got = {}
    for backend, uri in random_stores().items():
        with open_store(uri, write=True) as store:
            rid = execute_run(store, net, engine, seed).run_id
            names = {rid: "<run>"}
            # b labelled: LadybugDB 0.22 answers b.id of an unlabelled b wrongly (text, repeated values)
            ids = [r[0] for r in store.query("MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath) RETURN b.id ORDER BY b.id", {"run": rid})[1]]
            whys = [json.loads(json.dumps(explain(store, rid, str(pid))).replace(rid, "<run>")) for pid in ids]
            column = {k: v for k, v in column_from_run(store, rid).as_dict().items() if k not in ("timings", "label", "source")}
            dot = render(load_overview(store, rid), "dot").decode().replace(rid, "<run>")
            got[backend] = (canonical_dump(store, names), whys, column, dot)
    assert got["ladybug"][0] == got["neo4j"][0], f"graphs differ for {net.widths} {net.skips} {engine} seed {seed}"
    assert got["ladybug"][1] == got["neo4j"][1], f"why differs for {net.widths} {net.skips} {engine} seed {seed}"
    assert got["ladybug"][2] == got["neo4j"][2], f"compare differs for {net.widths} {net.skips} {engine} seed {seed}"
    assert got["ladybug"][3] == got["neo4j"][3], f"show differs for {net.widths} {net.skips} {engine} seed {seed}"
    assert all(w["verified"] for w in got["ladybug"][1])
