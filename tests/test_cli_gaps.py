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


# ---------------------------------------------------------------------------------------
# Issue 14, item 4: the default engine is deah-complete everywhere a default exists.

FIG1B = REPO / "examples" / "fig1b.json"


def test_default_engine_is_deah_complete(tmp_path):
    import inspect

    from basispath_graph.solver import solve
    from basispath_graph.spec import load_spec
    from basispath_graph.pipeline import execute_run

    from .cli_runner import run_many

    solved, stored, compared, faithful = run_many(
        [
            (["solve", FIG1B, "--json"], tmp_path, None),
            (["run", FIG1B, "--store", tmp_path / "store", "--json", "-q"], tmp_path, None),
            (["compare", FIG1B, "--store", tmp_path / "nostore", "--json"], tmp_path, None),
            (["solve", FIG1B, "--engine", "deah", "--json"], tmp_path, None),
        ]
    )
    for res in (solved, stored, compared, faithful):
        assert res.returncode == 0, show(res)
    assert json.loads(solved.stdout)["engine"] == "deah-complete"
    assert json.loads(stored.stdout)["engine"] == "deah-complete"
    assert [c["engine"] for c in json.loads(compared.stdout)] == ["deah-complete"], compared.stdout
    assert json.loads(faithful.stdout)["engine"] == "deah"  # the paper's algorithm, when asked for
    result = solve(load_spec(FIG1B))
    assert result.engine == "deah-complete" and result.certified and result.repairs == []
    assert inspect.signature(execute_run).parameters["engine"].default == "deah-complete"


# ---------------------------------------------------------------------------------------
# Issue 14, item 5: help text, --param run ids, --resume refusals, show -o.


def _command_paths() -> list[list[str]]:
    """Every command and subcommand as the words after 'basispath' ([] is the top level)."""
    import typer.main

    from basispath_graph.cli.main import app

    paths, todo = [], [([], typer.main.get_command(app))]
    while todo:
        words, cmd = todo.pop(0)
        paths.append(words)
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            todo.append((words + [name], sub))
    return paths


def _helps(columns: int) -> dict[str, str]:
    from .cli_runner import run_many

    paths = _command_paths()
    results = run_many([([*words, "--help"], None, {"COLUMNS": str(columns)}) for words in paths])
    for res in results:
        assert res.returncode == 0 and res.stderr == "", show(res)
    return {" ".join(words): res.stdout for words, res in zip(paths, results)}


@pytest.fixture(scope="module")
def helps() -> dict[int, dict[str, str]]:
    return {columns: _helps(columns) for columns in (60, 200)}


def _examples(text: str) -> list[str]:
    """The lines under 'Example:' in a help text, up to the option panels."""
    lines = text.splitlines()
    out, inside = [], False
    for line in lines:
        stripped = line.strip()
        if stripped in ("Example:", "Examples:"):
            inside = True
        elif stripped.startswith("╭"):
            inside = False
        elif inside and stripped:
            out.append(stripped)
    return out


def _parse(argv: list[str]):
    """ARGV (without 'basispath') through the app's own parser, down to the subcommand."""
    import typer.main

    from basispath_graph.cli.main import app

    cmd = typer.main.get_command(app)
    ctx = cmd.make_context("basispath", list(argv))
    while getattr(ctx, "_protected_args", None):
        name, cmd, rest = cmd.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
        ctx = cmd.make_context(name, rest, parent=ctx)
    return cmd, ctx


def test_help_examples_paste_into_bash(helps):
    """Every example is one command per line, starts with 'basispath', keeps Cypher with
    $parameters in single quotes (bash expands $run inside double quotes), and parses."""
    import shlex

    seen = 0
    for name, text in helps[200].items():
        examples = _examples(text)
        if name not in ("", "spec"):
            assert examples, f"basispath {name} --help has no example"
        for line in examples:
            assert line.startswith("basispath "), f"{name}: example is not one command on one line: {line!r}"
            words = shlex.split(line, comments=True)
            if "|" in words:  # a pipeline: the part before the pipe is ours
                words = words[: words.index("|")]
            for word in words:
                if "$" in word:
                    assert f"'{word}'" in line, f"{name}: {word!r} is not in single quotes: {line!r}"
            cmd, ctx = _parse(words[1:])
            assert name.split()[-1:] == [cmd.name] or not name, (name, line)
            seen += 1
    assert seen >= 15


def _prose_paragraphs(help_text: str) -> list[str]:
    import inspect

    out = []
    for para in inspect.cleandoc(help_text).split("\n\n"):
        lines = para.strip("\n").splitlines()
        if lines and not any(line[:1].isspace() for line in lines):
            out.append(" ".join(line.strip() for line in lines))
    return out


def test_help_paragraphs_wrap_to_the_terminal(helps):
    """A prose paragraph of a docstring is broken only where the terminal is full, never
    where the source line ended ('(only possible with' / '--no-repair)' at 200 columns)."""
    import typer.main

    from basispath_graph.cli.main import app

    commands = {}
    todo = [([], typer.main.get_command(app))]
    while todo:
        words, cmd = todo.pop(0)
        commands[" ".join(words)] = cmd
        todo.extend((words + [n], c) for n, c in getattr(cmd, "commands", {}).items())
    checked = 0
    for columns, texts in helps.items():
        for name, text in texts.items():
            out = [line.strip() for line in text.splitlines()]
            out = [line for line in out if line and not line.startswith(("╭", "│", "╰"))]
            for para in _prose_paragraphs(commands[name].help or ""):
                start = next((i for i, line in enumerate(out) if para.startswith(line) and len(line) >= min(len(para), 20)), None)
                assert start is not None, f"{name} at {columns} columns: paragraph not found: {para!r}\n{text}"
                got, i = [], start
                while len(" ".join(got)) < len(para):
                    got.append(out[i])
                    i += 1
                assert " ".join(got) == para, (name, columns, got, para)
                for line, following in zip(got, got[1:]):
                    # broken only because the next word did not fit (1 space of margin each side)
                    assert len(line) + 1 + len(following.split()[0]) > columns - 4, (
                        f"{name} at {columns} columns breaks a line the terminal had room for: {line!r} / {following!r}"
                    )
                checked += 1
    assert checked >= 30
    solve_200 = [line.strip() for line in helps[200]["solve"].splitlines()]
    assert any("(only possible with --no-repair), 2 for refused input." in line for line in solve_200)


def test_help_has_no_bool_labels_and_names_arguments(helps):
    for columns, texts in helps.items():
        for name, text in texts.items():
            assert "<bool>" not in text, f"basispath {name} --help at {columns} columns:\n{text}"
            assert "{" not in text.split("Usage:")[1].splitlines()[0], text
    usage = {name: next(l for l in text.splitlines() if "Usage:" in l).split("Usage:")[1].strip() for name, text in helps[200].items()}
    # (the program name is 'python -m basispath_graph.cli.main' here, 'basispath' when installed)
    assert usage["solve"].endswith(" solve [OPTIONS] SPEC")
    assert usage["run"].endswith(" run [OPTIONS] [SPEC]")
    assert usage["verify"].endswith(" verify [OPTIONS] SPEC BASIS")
    assert usage["compare"].endswith(" compare [OPTIONS] ITEMS...")
    assert usage["spec from-torch"].endswith(" spec from-torch [OPTIONS] MODULE:FACTORY")
    assert "--engine" in helps[200]["solve"] and "deah-complete (default" in helps[200]["solve"]
    assert "faithfully" in helps[200]["run"]


def test_param_numbers_that_are_run_ids_stay_text(store_uri):
    """Run ids are text; one that reads as a number (stores of older versions or other tools)
    is still found by --param run=ID, and a number that is no run id stays a number."""
    store = str(store_uri)
    cli("ingest", FIG1B, "--store", store, check=0)
    res = cli("query", "--store", store, "--json", "-p", "x=12345678", "-p", "y=791049e3", "RETURN $x AS x, $y AS y", check=0)
    assert json.loads(res.stdout) == [{"x": 12345678, "y": 791049000.0}], show(res)
    from basispath_graph.spec import load_spec
    from basispath_graph.store.runs import ingest_network

    with open_store(store, write=True) as s:
        key = ingest_network(s, load_spec(FIG1B))
        for run_id in ("12345678", "791049e3"):
            s.run("create_run", id=run_id, key=key, engine="deah", seed=0, started="2026-01-01T00:00:00+00:00", m=32, H=7, pid=0)
    for run_id in ("12345678", "791049e3"):
        res = cli("query", "--store", store, "--json", "--param", f"run={run_id}", "MATCH (r:Run {id: $run}) RETURN r.id AS id", check=0)
        assert json.loads(res.stdout) == [{"id": run_id}], show(res)
    res = cli("query", "--store", store, "--json", "-p", "x=12345678", "-p", "n=3", "-p", 'q="3"', "RETURN $x AS x, $n AS n, $q AS q", check=0)
    assert json.loads(res.stdout) == [{"x": "12345678", "n": 3, "q": "3"}], show(res)


def test_resume_refusal_names_the_run(tmp_path):
    store = tmp_path / "store"
    killed = cli("run", FIG1B, "--store", store, "-q", env={"BASISPATH_KILL_AT": "basis paths"})
    assert killed.returncode != 0, show(killed)
    (run,) = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert run["status"] == "incomplete"
    res = cli("run", "--resume", run["id"], "--store", store, "--max-memory-gb", "1e-6", "-q", check=2)  # -q: no progress lines
    assert res.stderr.startswith(f"error: run {run['id']}: ") and res.stderr.count("\n") == 1, show(res)
    assert "None" not in res.stderr, show(res)


@pytest.mark.parametrize("name", ["x.jpg", "x.PDF", "x.txt"])
def test_show_refuses_unknown_extensions(tmp_path, name):
    res = cli("show", "3fa2c1d0", "--store", tmp_path / "store", "-o", tmp_path / name, check=2)
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, show(res)
    assert all(ext in res.stderr for ext in (".dot", ".gv", ".png", ".svg")) and name.split(".")[1] in res.stderr, show(res)
    assert not (tmp_path / name).exists()


def test_rows_print_as_a_table_when_few_and_narrow_else_as_plain_lines(capsys, monkeypatch):
    """``print_rows``: a bordered table when it fits the console and has at most ``TABLE_ROWS``
    rows; else plain lines, every cell whole (``basispath through`` can answer 382,219 rows: a
    rich table of them took 104 s)."""
    from basispath_graph.cli import common

    monkeypatch.setattr(common, "TABLE_ROWS", 3)
    common.print_rows(["id", "path"], [["1", "0:1,1:0"], ["22", "0:0,1:1"]])
    out = capsys.readouterr().out.splitlines()
    assert out[1].split() == ["┃", "id", "┃", "path", "┃"] and out[3].split() == ["│", "1", "│", "0:1,1:0", "│"]
    common.print_rows(["id", "path"], [[str(k), "0:1"] for k in range(4)])
    assert capsys.readouterr().out.splitlines() == ["id  path", "0   0:1", "1   0:1", "2   0:1", "3   0:1"]
    wide = "x" * 300  # wider than the console (240 columns when piped): plain, never cut
    common.print_rows(["id", "path"], [["7", wide]])
    assert capsys.readouterr().out.splitlines() == ["id  path", f"7   {wide}"]
