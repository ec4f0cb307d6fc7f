"""Frictions a new user met (issue 25, item 5), each pinned by a test that failed before its fix."""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

import pytest

from .cli_runner import Terminal, cli, on_terminal, show

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SPEC = EXAMPLES / "resnet-style.json"


def _whole(word: str, text: str) -> bool:
    """WORD appears in TEXT as a whole (not cut, not wrapped, not part of a longer word)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w…-])", text) is not None


# ---------------------------------------------------------------------------------------
# 1. `basispath runs` at a terminal: the run id is never cut or wrapped


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    store = tmp_path_factory.mktemp("runs") / "store"
    for engine in ("deah-complete", "deah"):
        cli("run", SPEC, "--engine", engine, "--store", store, "--quiet", check=0)
    runs = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    return store, runs


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_runs_shows_every_run_id_whole_at_any_terminal_width(two_runs, columns):
    store, runs = two_runs
    res = on_terminal("runs", "--store", store, columns=columns)
    assert res.returncode == 0, show(res)
    assert "…" not in res.stdout, show(res)
    for run in runs:
        assert _whole(run["id"], res.stdout), f"run id {run['id']} not printed whole\n{res.stdout}"
        if columns >= 120:
            assert _whole(run["network"], res.stdout) and _whole(run["engine"], res.stdout), res.stdout


def test_runs_keeps_the_table_where_it_fits(two_runs):
    store, runs = two_runs
    res = on_terminal("runs", "--store", store, columns=200)
    assert res.returncode == 0 and res.stdout.startswith("┏"), show(res)
    assert all(_whole(run["id"], res.stdout) for run in runs), res.stdout


# ---------------------------------------------------------------------------------------
# 2. Ctrl-C during `basispath run` names the run and the command that finishes it


@pytest.fixture(scope="module")
def big_spec(tmp_path_factory):
    """resnet 6x48: m = 25,344, a run that writes for a few seconds."""
    path = tmp_path_factory.mktemp("big") / "resnet-6x48.json"
    cli("spec", "preset", "resnet", "--depth", 6, "--width", 48, "-o", path, check=0)
    return path


def test_ctrl_c_during_run_names_the_run_and_how_to_finish_it(big_spec, tmp_path):
    store = tmp_path / "my store"  # a path the printed command must quote
    term = Terminal(["run", big_spec, "--store", store], cwd=tmp_path)
    term.wait_for("basis paths")  # the progress display: the run is being written
    term.proc.send_signal(signal.SIGINT)
    res = term.finish()
    assert res.returncode == 130, show(res)
    found = re.search(r"error: interrupted: run (\w+) is incomplete; finish it with: (basispath run --resume \1 --store '.*')\n", res.stdout)
    assert found, show(res)
    assert found.group(2) == f"basispath run --resume {found.group(1)} --store '{store}'"
    (before,) = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert (before["id"], before["status"]) == (found.group(1), "incomplete")
    # the printed command finishes it, and the run keeps the time it was started
    time.sleep(1.1)  # (to the second: a new time would differ)
    resumed = json.loads(cli("run", "--resume", before["id"], "--store", store, "--json", "--quiet", check=0).stdout)
    assert resumed["run_id"] == before["id"] and resumed["certified"]
    (after,) = json.loads(cli("runs", "--store", store, "--json", check=0).stdout)
    assert after["status"] == "complete" and after["started"] == before["started"], (before, after)


# ---------------------------------------------------------------------------------------
# 3. `basispath run` in a log: one plain line per stage on stderr


def test_run_in_a_log_prints_a_line_per_stage(tmp_path):
    store = tmp_path / "store"
    res = cli("run", SPEC, "--store", store, check=0)  # stdout and stderr are pipes, as in a log
    run_id = re.match(r"run (\w+) complete: resnet-style deah-complete", res.stdout).group(1)
    lines = res.stderr.splitlines()
    stage = re.compile(rf"run {run_id}: (writing )?([\w ]+) \.\.\. \d+\.\d s(, \d+ rows)?$")
    assert lines and all(stage.match(line) for line in lines), show(res)
    stages = [stage.match(line).group(2) for line in lines]
    assert stages[:2] == ["step1", "step2"] and "basis paths" in stages and stages[-1] == "links", stages
    assert re.search(rf"^run {run_id}: writing basis paths \.\.\. \d+\.\d s, [1-9]\d* rows$", res.stderr, re.M), res.stderr
    # --json: stdout stays one JSON document, the lines still go to stderr; --quiet: no lines
    as_json = cli("run", SPEC, "--store", store, "--json", check=0)
    assert json.loads(as_json.stdout)["certified"] and as_json.stdout.count("\n") == 1, show(as_json)
    assert re.search(r"^run \w+: writing basis paths ", as_json.stderr, re.M), show(as_json)
    for quiet in ("--quiet", "-q"):
        assert cli("run", SPEC, "--store", store, "--json", quiet, check=0).stderr == ""


def test_progress_lines_repeat_during_a_long_write_and_stop_at_an_error(monkeypatch, capsys):
    from basispath_graph.cli import progress as module

    monkeypatch.setattr(module, "HEARTBEAT_S", 0.0)
    with module.StageProgress(False, lines=True) as p:
        p.start_run("3fa2c1d0", resumed=False)
        p.stage("basis paths")
        p.advance(10)
        p.advance(5)
    said = capsys.readouterr().err.splitlines()
    assert [re.sub(r"\d+\.\d s", "T", line) for line in said] == [
        "run 3fa2c1d0: writing basis paths ... T so far, 10 rows",
        "run 3fa2c1d0: writing basis paths ... T so far, 15 rows",
        "run 3fa2c1d0: writing basis paths ... T, 15 rows",
    ]
    with pytest.raises(RuntimeError), module.StageProgress(False, lines=True) as p:
        p.stage("step1")
        raise RuntimeError("refused")
    assert capsys.readouterr().err == ""


# ---------------------------------------------------------------------------------------
# 4. `make demo` shows the default engine, certified, before the paper's faithful engine


def _demo_recipe() -> list[str]:
    """The commands of the Makefile's demo target, as make runs them ($(BIN) -> .venv/bin)."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = lines.index(next(line for line in lines if line.startswith("demo:")))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line[1:].lstrip("@").replace("$(BIN)", ".venv/bin"))
    return recipe


def test_make_demo_solves_with_the_default_engine_first_and_certifies():
    import shlex

    recipe = _demo_recipe()
    solves = [i for i, line in enumerate(recipe) if line.startswith(".venv/bin/basispath ")]
    assert len(solves) == 2, recipe
    first, second = (shlex.split(recipe[i])[1:] for i in solves)
    assert "--engine" not in first and first[0] == "solve", first  # the default engine: deah-complete
    assert second[second.index("--engine") + 1] == "deah", second
    between = recipe[solves[0] + 1 : solves[1]]
    assert any(line.startswith("echo ") and "--engine deah" in line for line in between), between
    default, faithful = (cli(*args, cwd=ROOT, check=0) for args in (first, second))
    assert "deah-complete union: 130 paths, certified" in default.stdout, show(default)
    assert "repairs needed: 0 " in default.stdout and "NOT certified" not in default.stdout, show(default)
    assert "NOT certified" in faithful.stdout and "basis: 130 paths, certified" in faithful.stdout, show(faithful)


# ---------------------------------------------------------------------------------------
# 5. compare(...).to_markdown() is a well-formed Markdown table with clean headers


def _markdown_cells(line: str) -> list[str]:
    """The cells of a Markdown table row: split at the '|' that are not escaped."""
    assert line.startswith("|") and line.endswith("|"), line
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]


def test_compare_markdown_rows_keep_the_header_s_number_of_cells():
    from basispath_graph import compare, preset, solve
    from basispath_graph.analysis.compare import Column, Comparison

    a, b = solve(preset("mlp", 4, 8)), solve(preset("resnet", 4, 8), engine="deah")
    for table in (compare(a, b), Comparison([Column("a|b (deah)", "run 3fa2c1d0", {"basis_size": 3})])):
        lines = table.to_markdown().splitlines()
        rows = lines[: lines.index("")] if "" in lines else lines
        head = _markdown_cells(rows[0])
        assert all(len(_markdown_cells(row)) == len(head) for row in rows), rows
    md = compare(a, b).to_markdown().splitlines()
    assert _markdown_cells(md[0]) == ["", "mlp-4x8 (deah-complete)", "resnet-4x8 (deah)"]
    labels = [_markdown_cells(row)[0] for row in md[2 : md.index("")]]
    assert r"\|B\|" in labels and r"\|P^S\| substructure paths" in labels, labels


# ---------------------------------------------------------------------------------------
# 6. open_store on a mistyped path refuses instead of creating an empty store


def test_open_store_refuses_a_path_without_a_store_unless_create(tmp_path):
    from basispath_graph import BadInput, Network, StoreUnavailable, open_store

    typo = tmp_path / "basispath-stroe"
    for read_only in (False, True):
        with pytest.raises(StoreUnavailable) as refused:
            open_store(str(typo), read_only=read_only)
        assert str(refused.value) == f"no store at {typo} (pass create=True to create one there)"
    assert not typo.exists()
    with open_store(str(typo), create=True) as store:
        store.run(Network([2, 2, 2], name="tiny"))
    with open_store(str(typo)) as store, pytest.raises(BadInput, match="^open_store: create=True .* read_only=True$"):
        assert [r["network"] for r in store.runs()] == ["tiny"]
        open_store(str(typo), read_only=True, create=True)
    with open_store(str(typo), create=True) as store:  # an existing store is opened as it is
        assert len(store.runs()) == 1


def test_the_cli_still_creates_the_default_store_when_it_writes(tmp_path):
    assert cli("runs", "--store", tmp_path / "typo", check=2).stderr == (
        f"error: no store at {tmp_path / 'typo'} (create one with 'basispath ingest' or 'basispath run')\n"
    )
    assert not (tmp_path / "typo").exists()
    cli("ingest", SPEC, cwd=tmp_path, check=0)
    cli("run", SPEC, "--store", tmp_path / "new", "--quiet", check=0)
    assert (tmp_path / "basispath-store").is_dir() and (tmp_path / "new").is_dir()


# ---------------------------------------------------------------------------------------
# 7. A second writer is told about --wait (wait= from Python)


def test_a_second_writer_is_told_to_retry_with_wait(tmp_path):
    import os

    from basispath_graph import StoreLocked, open_store

    store = tmp_path / "store"
    with open_store(str(store), create=True):  # this process writes, as a run in progress does
        for command in (["ingest", SPEC], ["run", SPEC, "--quiet"]):
            res = cli(*command, "--store", store, check=3)
            assert res.stderr == (
                f"error: store is locked by PID {os.getpid()} ({store}): another basispath is writing; retry with --wait SECONDS\n"
            ), show(res)
        with pytest.raises(StoreLocked) as refused:
            open_store(str(store))
    assert str(refused.value) == f"store is locked by PID {os.getpid()} ({store}): another basispath is writing; retry with wait=SECONDS"
