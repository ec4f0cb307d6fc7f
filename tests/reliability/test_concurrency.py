"""Concurrency. On one embedded store: one writer or any number of readers, never both. On one
Neo4j server (at the end): four writers at once, all complete.

A second writer fails at once with ``error: store is locked by PID N (STORE): ...; retry with
--wait SECONDS`` (exit 3) or, with ``--wait SECONDS``, waits for the first and then completes.
Readers (``runs``, ``query``) are not let in while a run is being written (LadybugDB does not
isolate a read-only open from a live writer in another process), so they only ever see complete
(or killed, incomplete) runs: without --wait they are refused with one line and exit 3, with
--wait they see the finished run.

The first writer is a real ``basispath run`` of a network that takes a few seconds; once it
holds the store it is paused with SIGSTOP (it keeps the lock), so that what runs against it does
not depend on how fast this machine is, and resumed with SIGCONT.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import signal
import time
from pathlib import Path

import pytest

from basispath_graph.store import open_store
from basispath_graph.store.ladybug_store import LOCK_FILE

from ..cli_runner import cli, finish, run_many, start
from .counts import record

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
# m = 1536, H = 64: about 4 s through the store on 2 cores (most of it writing 2,500 paths).
BIG = {"name": "concurrency", "widths": [4, 16, 16, 16, 16, 4], "skips": [[0, 2], [2, 4], [1, 3], [3, 5]]}
BIG_BASIS = 1536 - 64


def writer_holds(store: Path) -> bool:
    """Whether some process holds the store for writing (its lock refuses a shared lock)."""
    try:
        fd = os.open(store / LOCK_FILE, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        assert exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK), exc
        return True
    finally:
        os.close(fd)
    return False


def wait_until_writing(store: Path, proc, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not writer_holds(store):
        assert proc.poll() is None, f"the writer ended before it was seen holding the store: {proc.communicate()}"
        assert time.monotonic() < deadline, "the writer never took the store"
        time.sleep(0.02)


def locked(pid: int, store: Path) -> str:
    return f"error: store is locked by PID {pid} ({store}): another basispath is writing; retry with --wait SECONDS\n"


def being_written(pid: int, store: Path) -> str:
    return (
        f"error: store is being written by PID {pid} ({store}); a run in progress cannot be read until it ends: "
        "try again, or use --wait SECONDS\n"
    )


def test_second_writer_fails_at_once_or_waits_and_readers_only_see_complete_runs(tmp_path):
    spec = tmp_path / "big.json"
    spec.write_text(json.dumps(BIG))
    store = tmp_path / "store"
    s = ["--store", store]
    first = start(["run", spec, *s, "--json"], tmp_path)
    stopped = False
    try:
        wait_until_writing(store, first)
        os.kill(first.pid, signal.SIGSTOP)  # paused mid-run, still holding the store
        stopped = True

        # Without --wait: refused at once, exit 3, one line naming the writer.
        run2, ingest, runs, query = run_many([
            (["run", EXAMPLES / "fig1b.json", *s, "--json"], tmp_path, None),
            (["ingest", EXAMPLES / "mlp.json", *s], tmp_path, None),
            (["runs", *s, "--json"], tmp_path, None),
            (["query", *s, "--json", "MATCH (r:Run) RETURN r.id AS id, r.status AS status"], tmp_path, None),
        ])
        for res in (run2, ingest):
            assert (res.returncode, res.stderr, res.stdout) == (3, locked(first.pid, store), ""), res
        for res in (runs, query):
            assert (res.returncode, res.stderr, res.stdout) == (3, being_written(first.pid, store), ""), res

        # --wait shorter than the write: retries, then the same message.
        t0 = time.monotonic()
        timed_out = cli("run", EXAMPLES / "fig1b.json", *s, "--wait", "2", cwd=tmp_path)
        waited = time.monotonic() - t0
        assert (timed_out.returncode, timed_out.stderr) == (3, locked(first.pid, store))
        assert waited >= 2.0

        # --wait 60: they wait (still running while the writer is paused) ...
        waiting = {
            "run": start(["run", EXAMPLES / "fig1b.json", *s, "--json", "--wait", "60"], tmp_path),
            "ingest": start(["ingest", EXAMPLES / "mlp.json", *s, "--wait", "60"], tmp_path),
            "runs": start(["runs", *s, "--json", "--wait", "60"], tmp_path),
            "query": start(["query", *s, "--json", "--wait", "60", "MATCH (r:Run) RETURN r.id AS id, r.status AS status"], tmp_path),
        }
        time.sleep(2.5)
        assert {name: p.poll() for name, p in waiting.items()} == {name: None for name in waiting}
    finally:
        if stopped:
            os.kill(first.pid, signal.SIGCONT)
    # ... and complete once the first writer is done.
    first_res = finish(first)
    assert first_res.returncode == 0, first_res.stderr
    done = {name: finish(p) for name, p in waiting.items()}
    for name, res in done.items():
        assert res.returncode == 0, f"{name}: {res.stderr}"
    one, two = json.loads(first_res.stdout), json.loads(done["run"].stdout)
    assert (one["basis_size"], one["certified"], two["basis_size"], two["certified"]) == (BIG_BASIS, True, 25, True)
    record("concurrent processes on one store", 1 + 4 + 1 + 4)

    # The readers waited for the first run to end: they saw it complete, and nothing running.
    for rows in (json.loads(done["runs"].stdout), json.loads(done["query"].stdout)):
        statuses = {r["id"]: r["status"] for r in rows}
        assert statuses[one["run_id"]] == "complete"
        assert set(statuses.values()) == {"complete"}  # the second run either not there yet, or complete

    # Afterwards: both runs complete with the right counts, nothing lost or doubled.
    runs = {r["id"]: r for r in json.loads(cli("runs", *s, "--json", check=0).stdout)}
    assert {i: r["status"] for i, r in runs.items()} == {one["run_id"]: "complete", two["run_id"]: "complete"}
    assert runs[two["run_id"]]["started"] >= runs[one["run_id"]]["finished"]  # the second really waited
    with open_store(str(store)) as st:
        for run, basis in ((one, BIG_BASIS), (two, 25)):
            kept = st.query("MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b)", {"run": run["run_id"]})[1]
            discarded = st.query("MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath) RETURN count(b)", {"run": run["run_id"]})[1]
            assert (kept, discarded) == ([[basis]], [[run["discarded"]]])
        paths = st.query("MATCH (b:BasisPath) RETURN count(b)")[1]
        assert paths == [[BIG_BASIS + one["discarded"] + 25 + two["discarded"]]]
        names = st.query("MATCH (n:Network) RETURN n.name ORDER BY n.name")[1]
        assert names == [["concurrency"], ["fig1b"], ["mlp"]]


def test_a_reader_holds_writers_off_until_it_closes(tmp_path):
    """A reader in the middle of a query is not pulled from under by a writer's checkpoint."""
    store = tmp_path / "store"
    cli("ingest", EXAMPLES / "fig1b.json", "--store", store, check=0)
    with open_store(str(store)) as reader:  # read-only, like `basispath query`
        refused = cli("ingest", EXAMPLES / "mlp.json", "--store", store)
        assert (refused.returncode, refused.stderr) == (
            3,
            f"error: store is being read by another process ({store}); try again, or use --wait SECONDS\n",
        )
        # Other readers are welcome meanwhile.
        other = cli("query", "--store", store, "--json", "MATCH (n:Network) RETURN n.name AS name", check=0)
        assert json.loads(other.stdout) == [{"name": "fig1b"}]
        waiting = start(["ingest", EXAMPLES / "mlp.json", "--store", store, "--wait", "60"], tmp_path)
        time.sleep(2.0)
        assert waiting.poll() is None
        assert reader.query("MATCH (n:Network) RETURN count(n)")[1] == [[1]]
    res = finish(waiting)
    assert res.returncode == 0, res.stderr
    names = cli("query", "--store", store, "--json", "MATCH (n:Network) RETURN n.name AS name ORDER BY name", check=0)
    assert json.loads(names.stdout) == [{"name": "fig1b"}, {"name": "mlp"}]


def test_a_killed_writer_leaves_no_lock_behind(tmp_path):
    """The lock dies with its process: after a SIGKILL the next writer gets in at once."""
    store = tmp_path / "store"
    killed = cli("run", EXAMPLES / "fig1b.json", "--store", store, "-q", env={"BASISPATH_KILL_AT": "basis paths"})
    assert killed.returncode == -9
    assert (store / LOCK_FILE).read_text().strip().isdigit()  # the dead writer's PID is still written there
    assert not writer_holds(store)
    runs = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert [r["status"] for r in runs] == ["incomplete"]
    cli("ingest", EXAMPLES / "mlp.json", "--store", store, check=0)


@pytest.mark.parametrize("bad", ["-1", "soon"])
def test_wait_must_be_a_number_of_seconds(tmp_path, bad):
    res = cli("runs", "--store", tmp_path, "--wait", bad)
    assert res.returncode == 2 and res.stderr.startswith("error: ") and "--wait" in res.stderr


# -- Neo4j: the server isolates transactions; writers run side by side --------------------------
def _drop_schema(server) -> None:
    """Back to a database that has never been written by us: no constraints, no indexes (the
    first writers then race to create them)."""
    with server.driver() as driver:
        for (name,) in driver.execute_query("SHOW CONSTRAINTS YIELD name RETURN name").records:
            driver.execute_query(f"DROP CONSTRAINT `{name}`")
        for (name,) in driver.execute_query("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP' RETURN name").records:
            driver.execute_query(f"DROP INDEX `{name}`")


def _run_of(server, pid: int) -> str | None:
    with server.driver() as driver:
        records = driver.execute_query("MATCH (r:Run {pid: $pid, status: 'running'}) RETURN r.id AS id", pid=pid).records
    return records[0]["id"] if records else None


def test_four_writers_on_one_neo4j_at_once_all_complete(empty_neo4j, tmp_path):
    """Four ``basispath run`` processes start together on a Neo4j database without our schema:
    all four create it at once (before the fix two of them failed with
    Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists), write their runs side by side and
    complete with the right counts. Meanwhile ``runs`` shows a live writer (paused with SIGSTOP
    in the middle of its run) as running, not incomplete (it is still connected), and
    ``--resume`` of it is refused."""
    server = empty_neo4j
    _drop_schema(server)
    spec = tmp_path / "big.json"
    spec.write_text(json.dumps(BIG))
    s = ["--store", server.uri]
    specs = [spec, EXAMPLES / "fig1b.json", EXAMPLES / "resnet-style.json", EXAMPLES / "densenet-style.json"]
    procs = [start(["run", path, *s, "--json", "-q"], tmp_path) for path in specs]
    big = procs[0]
    stopped = False
    try:
        deadline = time.monotonic() + 120
        while (big_id := _run_of(server, big.pid)) is None:
            assert big.poll() is None, f"the big run ended before it was seen running: {big.communicate()}"
            assert time.monotonic() < deadline, "the big run never showed up"
            time.sleep(0.1)
        os.kill(big.pid, signal.SIGSTOP)  # paused mid-run: alive and connected
        stopped = True
        listing = cli("runs", *s, "--json", check=0)
        assert {r["id"]: r["status"] for r in json.loads(listing.stdout)}[big_id] == "running"
        # ... and cannot be resumed from under its writer (that would delete its artifacts).
        refused = cli("run", "--resume", big_id, *s, "--json")
        assert (refused.returncode, refused.stdout) == (2, ""), refused
        assert refused.stderr == f"error: run {big_id} is still being written by PID {big.pid} (connected to the server); resume it once that process has ended\n"
    finally:
        if stopped:
            os.kill(big.pid, signal.SIGCONT)
    results = [finish(p, timeout=300) for p in procs]
    for path, res in zip(specs, results):
        assert res.returncode == 0, f"{path.name}: exit {res.returncode}\n{res.stderr}"
    outs = [json.loads(res.stdout) for res in results]
    assert outs[0]["run_id"] == big_id
    assert [o["basis_size"] for o in outs] == [o["m"] - o["H"] for o in outs]
    assert all(o["certified"] for o in outs)
    record("concurrent writers on one Neo4j", len(procs))

    runs = {r["id"]: r["status"] for r in json.loads(cli("runs", *s, "--json", check=0).stdout)}
    assert runs == {o["run_id"]: "complete" for o in outs}
    with open_store(server.uri) as st:
        for o in outs:
            kept = st.query("MATCH (:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b)", {"run": o["run_id"]})[1]
            discarded = st.query("MATCH (:Run {id: $run})-[:DISCARDED]->(b:BasisPath) RETURN count(b)", {"run": o["run_id"]})[1]
            assert (kept, discarded) == ([[o["basis_size"]]], [[o["discarded"]]]), o["network"]
        paths = st.query("MATCH (b:BasisPath) RETURN count(b)")[1]
        assert paths == [[sum(o["basis_size"] + o["discarded"] for o in outs)]]
        names = st.query("MATCH (n:Network) RETURN n.name ORDER BY n.name")[1]
        assert names == [["concurrency"], ["densenet-style"], ["fig1b"], ["resnet-style"]]
        constraints = st.query("SHOW CONSTRAINTS YIELD name RETURN count(*)")[1]
        schema = (Path(__file__).resolve().parents[2] / "cypher" / "neo4j" / "schema.cypher").read_text()
        assert constraints == [[schema.count("CREATE CONSTRAINT")]] == [[13]]  # the schema is there once (13 node keys)


def _reads_the_store(callback) -> bool:
    import inspect

    source = inspect.getsource(callback)
    return "open_for_cli(" in source or "open_store(" in source


def test_every_command_that_opens_the_store_takes_wait():
    from basispath_graph.cli.main import app

    opening = {info.name: info.callback for info in app.registered_commands if _reads_the_store(info.callback.__wrapped__)}
    assert {"run", "query", "ingest", "runs", "delete", "why", "compare", "show", "through"} <= set(opening)
    import inspect

    missing = [name for name, cb in opening.items() if "wait" not in inspect.signature(cb).parameters]
    assert missing == []


def test_every_reading_command_waits_for_a_writer_and_then_answers(tmp_path):
    """why, compare, show, runs and query: held off by a writer, they wait with --wait and
    answer once it is gone (and without --wait they are refused at once, exit 3)."""
    store = tmp_path / "store"
    run = json.loads(cli("run", EXAMPLES / "fig1b.json", "--store", store, "--json", check=0).stdout)["run_id"]
    readers = {
        "why": ["why", run, "0"],
        "compare": ["compare", run],
        "show": ["show", run, "-o", tmp_path / "run.dot"],
        "runs": ["runs"],
        "query": ["query", "MATCH (r:Run) RETURN r.id AS id"],
        "through": ["through", run, "2", "1"],
    }
    for name, argv in readers.items():
        writer = open_store(str(store), write=True)
        try:
            refused = cli(*argv, "--store", store)
            assert refused.returncode == 3 and "try again, or use --wait SECONDS" in refused.stderr, (name, refused.stderr)
            waiting = start([*argv, "--store", store, "--wait", "60"], tmp_path)
            time.sleep(1.5)
            assert waiting.poll() is None, name  # still waiting for the writer
        finally:
            writer.close()
        res = finish(waiting)
        assert res.returncode == 0, (name, res.stderr)
