"""Offline Cypher lint of the Neo4j-bound query files (tools/cypher-lint/lint.mjs).

The linter runs Neo4j's own parser and semantic analysis (npm package
@neo4j-cypher/language-support) under Node; `make test` installs it with
`npm ci --prefix tools/cypher-lint`. Without node or that install these tests skip.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).parents[1]
TOOL = REPO / "tools" / "cypher-lint"
LINT = TOOL / "lint.mjs"

NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not on PATH: Cypher lint needs Node.js"),
    pytest.mark.skipif(
        not (TOOL / "node_modules" / "@neo4j-cypher" / "language-support").is_dir(),
        reason="tools/cypher-lint/node_modules missing: run `npm ci --prefix tools/cypher-lint` (make test does)",
    ),
]

# path:line:col: severity: message
DIAG = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|info|hint): (?P<msg>.+)$")
SUMMARY = re.compile(r"^cypher lint: (\d+) files, (\d+) statements, (\d+) errors$")


def run_lint(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NODE, str(LINT), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def parse_output(out: str) -> tuple[list[re.Match[str]], tuple[int, int, int]]:
    lines = out.strip().splitlines()
    assert lines, "linter printed nothing"
    summary = SUMMARY.match(lines[-1])
    assert summary, f"last line is not the summary: {lines[-1]!r}"
    diags = []
    for line in lines[:-1]:
        m = DIAG.match(line)
        assert m, f"diagnostic line has the wrong format: {line!r}"
        diags.append(m)
    files, statements, errors = map(int, summary.groups())
    return diags, (files, statements, errors)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_repo_neo4j_files_pass() -> None:
    """Every Cypher file that runs on Neo4j parses and passes semantic analysis."""
    listed = run_lint("--repo", ".", "--list")
    assert listed.returncode == 0, listed.stderr
    result = run_lint("--repo", ".")
    diags, (files, _, errors) = parse_output(result.stdout)
    assert files == len(listed.stdout.split()), result.stdout
    assert result.returncode == 0 and errors == 0, result.stdout + result.stderr


def test_repo_file_selection(tmp_path: Path) -> None:
    """queries/*.cypher minus neo4j/ overrides, plus neo4j/*.cypher; never ladybug/."""
    for sub in ("queries", "neo4j", "ladybug"):
        (tmp_path / "cypher" / sub).mkdir(parents=True)
    write(tmp_path, "cypher/queries/a.cypher", "RETURN 1 AS one\n")
    write(tmp_path, "cypher/queries/b.cypher", "RETURN 2 AS two\n")
    write(tmp_path, "cypher/neo4j/b.cypher", "RETURN 2 AS two\n")
    write(tmp_path, "cypher/neo4j/schema.cypher", "RETURN 3 AS three\n")
    write(tmp_path, "cypher/ladybug/schema.cypher", "CREATE NODE TABLE Run(id STRING, PRIMARY KEY(id));\n")
    result = run_lint("--repo", tmp_path, "--list")
    assert result.returncode == 0, result.stderr
    listed = [Path(p).relative_to(tmp_path).as_posix() for p in result.stdout.split()]
    assert listed == ["cypher/queries/a.cypher", "cypher/neo4j/b.cypher", "cypher/neo4j/schema.cypher"]


GOOD = {
    "count.cypher": "// param: run STRING\nMATCH (r:Run {id: $run})-[:KEPT]->(b:BasisPath) RETURN count(b) AS n\n",
    "batch.cypher": (
        "// param: rows LIST<MAP>\n"
        "UNWIND $rows AS row CREATE (:BasisPath {run: row.run, id: row.id, nodes: row.nodes})\n"
    ),
    "schema.cypher": (
        "// Neo4j schema\n"
        "CREATE CONSTRAINT run_id IF NOT EXISTS FOR (r:Run) REQUIRE r.id IS UNIQUE;\n"
        "CREATE INDEX substructure_run_idx IF NOT EXISTS FOR (n:SubstructurePath) ON (n.run, n.idx);\n"
        "// trailing comment\n"
    ),
    # Only a deprecation warning: printed, but does not fail the lint.
    "legacy.cypher": "MATCH (n) RETURN id(n) AS legacy\n",
}

# name -> (text, line, col, part of the expected error message)
BAD = {
    "syntax_error.cypher": (
        "// param: run STRING\nMATCH (r:Run {id: $run}\nRETURN r.id AS id\n",
        3, 1, "Invalid input 'RETURN'",
    ),
    "undefined_variable.cypher": (
        "// param: run STRING\nMATCH (r:Run {id: $run})\nRETURN b.id AS id\n",
        3, 8, "Variable `b` not defined",
    ),
    "undeclared_parameter.cypher": (
        "// param: run STRING\nMATCH (r:Run {id: $rnu}) RETURN r\n",
        2, 19, "Parameter $rnu is not defined",
    ),
    "unknown_function.cypher": ("RETURN toUpperr('x') AS x\n", 1, 8, "Function toUpperr is not present"),
    "second_statement.cypher": ("RETURN 1 AS one;\nMATCH (m) RETURN x;\n", 2, 18, "Variable `x` not defined"),
    # LadybugDB/Kuzu DDL is not Neo4j Cypher: that is why cypher/ladybug/ is not linted.
    "ladybug_ddl.cypher": ("CREATE NODE TABLE Run(id STRING, PRIMARY KEY(id));\n", 1, 13, "Invalid input 'TABLE'"),
}


def lint_fixtures(directory: Path, fixtures: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], list[Path]]:
    directory.mkdir()
    paths = [write(directory, name, text) for name, text in fixtures.items()]
    return run_lint(*paths), paths


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory):
    return lint_fixtures(tmp_path_factory.mktemp("cypher") / "good", GOOD)


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory: pytest.TempPathFactory):
    # One node process for all bad fixtures: loading the analyser takes ~1-2 s.
    return lint_fixtures(tmp_path_factory.mktemp("cypher") / "bad", {n: t for n, (t, *_) in BAD.items()})


def test_good_fixtures_pass(good_run) -> None:
    result, _ = good_run
    diags, (nfiles, statements, errors) = parse_output(result.stdout)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (nfiles, statements, errors) == (4, 5, 0)
    assert [d["sev"] for d in diags] and all(d["sev"] == "warning" for d in diags), result.stdout
    assert {Path(d["path"]).name for d in diags} == {"legacy.cypher"}
    assert any("deprecated" in d["msg"] for d in diags)


def test_bad_fixtures_fail(bad_run) -> None:
    result, _ = bad_run
    assert result.returncode == 1, result.stdout + result.stderr
    _, (nfiles, _, errors) = parse_output(result.stdout)
    assert nfiles == len(BAD) and errors >= len(BAD)


@pytest.mark.parametrize("name", list(BAD))
def test_bad_fixture_diagnostic(bad_run, name: str) -> None:
    result, paths = bad_run
    _, line, col, message = BAD[name]
    path = next(p for p in paths if p.name == name)
    diags, _ = parse_output(result.stdout)
    hits = [d for d in diags if d["path"] == str(path) and d["sev"] == "error" and message in d["msg"]]
    assert hits, result.stdout
    assert (int(hits[0]["line"]), int(hits[0]["col"])) == (line, col)


def test_single_bad_file_exit_code(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.cypher", BAD["undefined_variable.cypher"][0])
    result = run_lint(path)
    assert result.returncode == 1, result.stdout + result.stderr
    diags, (nfiles, statements, errors) = parse_output(result.stdout)
    assert (nfiles, statements, errors) == (1, 1, 1)
    assert [(d["path"], d["line"], d["col"], d["sev"]) for d in diags] == [(str(path), "3", "8", "error")]
