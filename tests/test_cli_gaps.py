"""CLI gaps of issue 14, item 5: ``--version``, ``delete``, missing ``$parameters`` in
``query`` and a closed stdout; each test fails without its fix."""

from __future__ import annotations

import json
import os
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest

from basispath_graph.store import open_store

from .cli_runner import cli, cli_env, command, show
from .reliability.graph_dump import canonical_dump

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "examples" / "resnet-style.json"


def test_version():
    res = cli("--version", check=0)
    assert res.stdout == f"basispath {version('basispath-graph')}\n", show(res)
    assert res.stderr == ""


def _run(store, seed: int) -> str:
    res = cli("run", SPEC, "--store", store, "--seed", seed, "--json", "--quiet", check=0)
    return json.loads(res.stdout)["run_id"]


def _run_ids(store) -> list[str]:
    return sorted(r["id"] for r in json.loads(cli("runs", "--store", store, "--json", check=0).stdout))


def _dump(store_uri, names):
    with open_store(str(store_uri)) as s:
        return canonical_dump(s, names)


def test_delete_one_run_leaves_the_other_intact(store_uri):
    store = str(store_uri)
    kept, gone = _run(store, 0), _run(store, 1)  # same network: its node is shared
    names = {kept: "<kept>", gone: "<gone>"}
    nodes, rels = _dump(store_uri, names)
    assert any("<gone>" in n for n in nodes) and any("<gone>" in r for r in rels)

    # Without --yes and without a terminal: refused, nothing deleted.
    res = cli("delete", gone, "--store", store, stdin=subprocess.DEVNULL, check=2)
    assert res.stderr.startswith("error: ") and "--yes" in res.stderr and res.stderr.count("\n") == 1, show(res)
    assert _dump(store_uri, names) == (nodes, rels)
    # An unknown run: one line, exit 2.
    res = cli("delete", "nosuchrun", "--store", store, "--yes", check=2)
    assert res.stderr.startswith("error: ") and "nosuchrun" in res.stderr and res.stderr.count("\n") == 1, show(res)

    res = cli("delete", gone, "--store", store, "--yes", check=0)
    assert gone in res.stdout
    after_nodes, after_rels = _dump(store_uri, names)
    # Exactly what mentions the deleted run is gone; the other run, the Network and its
    # Layers are unchanged (the dump is a sorted list, so counts are compared too).
    assert after_nodes == [n for n in nodes if "<gone>" not in n]
    assert after_rels == [r for r in rels if "<gone>" not in r]
    assert any('"Network"' in n for n in after_nodes)
    assert _run_ids(store) == [kept]
    cli("delete", gone, "--store", store, "--yes", check=2)  # gone is gone


@pytest.mark.neo4j
def test_delete_refuses_a_run_being_written_on_neo4j(neo4j_server):
    """A 'running' run whose process is connected to the server (this test process, through
    the store it holds open) is refused with exit code 3; the LadybugDB writer lock does the
    same for embedded stores."""
    neo4j_server.wipe()
    run_id = "feedc0de"
    with open_store(neo4j_server.uri, write=True) as s:
        s.run("merge_network", key="k", name="n", widths=[1, 1], skips=[], m=1, H=0, layers=[])
        s.run("create_run", id=run_id, key="k", engine="deah", seed=0, started="2026-01-01T00:00:00+00:00", m=1, H=0, pid=os.getpid())
        if s.live_pids() is None or os.getpid() not in s.live_pids():
            pytest.skip("this Neo4j server does not list its connections' user agents")
        res = cli("delete", run_id, "--store", neo4j_server.uri, "--yes", check=3)
        assert "still being written" in res.stderr and res.stderr.count("\n") == 1, show(res)
    assert json.loads(cli("runs", "--store", neo4j_server.uri, "--json", check=0).stdout)[0]["id"] == run_id


def test_delete_on_a_locked_ladybug_store_is_exit_3(tmp_path):
    store = tmp_path / "store"
    run_id = _run(store, 0)
    with open_store(str(store), write=True):  # a writer holds the store, as a run in progress does
        res = cli("delete", run_id, "--store", store, "--yes", check=3)
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, show(res)
    assert _run_ids(store) == [run_id]


def test_query_with_a_missing_parameter_is_refused(store_uri):
    store = str(store_uri)
    cli("ingest", SPEC, "--store", store, check=0)
    res = cli("query", "--store", store, "MATCH (r:Run {id: $run}) RETURN r.id AS id", check=2)
    assert res.stderr == "error: query parameter $run was not given (use --param run=VALUE)\n", show(res)
    res = cli("query", "--store", store, "RETURN $a AS a, $b AS b, $a AS c", "-p", "b=1", check=2)
    assert res.stderr == "error: query parameter $a was not given (use --param a=VALUE)\n", show(res)
    # '$x' in a string, a comment or a quoted name is not a parameter.
    res = cli("query", "--store", store, "--json", "RETURN '$x' AS `$y`, $n AS n // $z", "-p", "n=3", check=0)
    assert json.loads(res.stdout) == [{"$y": "$x", "n": 3}], show(res)


def _closed_stdout(*args) -> subprocess.CompletedProcess:
    """Run the CLI with a stdout whose reader is already gone (``... | head -0``)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(command(args), stdout=write_end, stderr=subprocess.PIPE, text=True, env=cli_env(), timeout=120)
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [
        ("solve", SPEC),  # rich Console output
        ("solve", SPEC, "--json"),  # print()
        ("presets",),
        ("--help",),
        ("--version",),
    ],
    ids=["solve", "solve-json", "presets", "help", "version"],
)
def test_closed_stdout_exits_quietly(args):
    res = _closed_stdout(*args)
    # 141 = 128 + SIGPIPE, as the shell reports for other tools; never 1 ("not certified").
    assert res.returncode == 141, res
    assert res.stderr == "", res.stderr


def test_closed_stdout_runs_and_query(tmp_path):
    store = tmp_path / "store"
    _run(store, 0)
    for args in (("runs", "--store", store), ("runs", "--store", store, "--json"), ("query", "--store", store, "--json", "UNWIND range(1, 1000) AS x RETURN x")):
        res = _closed_stdout(*args)
        assert res.returncode == 141, res
        assert "Traceback" not in res.stderr and "error" not in res.stderr, res.stderr


def test_delete_asks_on_a_terminal(tmp_path):
    """stdin a terminal, no --yes: the question is asked (on stderr); 'n' keeps, 'y' deletes."""
    import pty

    store = tmp_path / "store"
    run_id = _run(store, 0)
    for answer, left in (("n", [run_id]), ("y", [])):
        master, slave = pty.openpty()
        try:
            proc = subprocess.Popen(
                command(["delete", run_id, "--store", store]), stdin=slave, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, env=cli_env(),
            )
            os.write(master, f"{answer}\n".encode())
            out, err = proc.communicate(timeout=120)
        finally:
            os.close(slave)
            os.close(master)
        assert proc.returncode == 0, (out, err)
        assert f"delete run {run_id}" in err and "[y/N]" in err, err
        assert _run_ids(store) == left
