"""The commands of docs/neo4j.md ("Using Neo4j", once a README section), run as written, on real
Neo4j servers.

The blocks marked ``<!-- tested as written: tests/test_readme_neo4j.py -->`` are run by bash:
the existing-server block against the session's server (only its ``export`` line is replaced by
that server's address and credentials), and the ``make neo4j`` block in a copy of the project's
Makefile, tools/ and examples/ (the jars are shared with the checkout's .neo4j/lib), so it
starts, uses and stops a server of its own. The Docker block is not run: no Docker engine here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .cli_runner import cli, cli_env
from .neo4j_support import ROOT, neo4j_local, unavailable

MARK = "<!-- tested as written: tests/test_readme_neo4j.py -->"
pytestmark = pytest.mark.neo4j


def readme_blocks() -> list[str]:
    text = (ROOT / "docs" / "neo4j.md").read_text()
    blocks = re.findall(re.escape(MARK) + r"\n```\n(.*?)```\n", text, flags=re.S)
    assert len(blocks) == 2, "docs/neo4j.md: expected the existing-server and the make neo4j blocks"
    return blocks


def bash(script: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    path = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(["bash", "-c", "set -euo pipefail\n" + script], cwd=cwd, env={**env, "PATH": path},
                          capture_output=True, text=True, timeout=600)


def test_existing_server_block(empty_neo4j, tmp_path):
    block = readme_blocks()[0]
    lines = block.splitlines()
    assert lines[0].startswith("export NEO4J_URI=")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    env = cli_env({"NEO4J_URI": empty_neo4j.uri, **empty_neo4j.env()})
    r = bash("\n".join(lines[1:]), tmp_path, env)
    assert r.returncode == 0, r.stderr
    assert "run " in r.stdout and "complete: resnet-style deah-complete, 130 basis paths" in r.stdout
    assert empty_neo4j.password not in r.stdout + r.stderr


def test_make_neo4j_block(tmp_path):
    missing = neo4j_local.missing_tools() + [t for t in ("make",) if shutil.which(t) is None]
    if missing:
        unavailable(f"no local Neo4j: {', '.join(missing)} not found")
    neo4j_local.install(quiet=True)
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "Makefile", project)
    for folder in ("tools", "examples"):
        shutil.copytree(ROOT / folder, project / folder, ignore=shutil.ignore_patterns("node_modules"))
    (project / ".neo4j").mkdir()
    for shared in ("lib", "classes"):
        (project / ".neo4j" / shared).symlink_to(neo4j_local.default_home() / shared)
    env = cli_env({"NEO4J_URI": None, "NEO4J_USER": None, "NEO4J_PASSWORD": None, "BASISPATH_NEO4J_HOME": None})
    try:
        r = bash(readme_blocks()[1], project, env)
    finally:
        neo4j_local.stop(project / ".neo4j", quiet=True)
    assert r.returncode == 0, r.stdout + r.stderr
    password = (project / ".neo4j" / "password").read_text().strip()
    assert password not in r.stdout + r.stderr
    run_id = json.loads((project / "run.json").read_text())["run_id"]
    assert f"path 0:0,1:1,2:1,3:1,5:1 (id 130) of run {run_id}: discarded" in r.stdout
    assert f"\ndigraph \"basispath_{run_id}\"" in (project / "run.dot").read_text()
    assert r.stderr.rstrip().endswith(f"data kept in {project / '.neo4j' / 'dbms'}")
    assert not (project / ".neo4j" / "env").exists()  # stopped


def test_why_query_file_runs_as_is_on_neo4j(empty_neo4j, tmp_path):
    """What Neo4j Browser does with the file: send its whole text, comments included, with
    the parameters set by :param."""
    out = cli("run", ROOT / "examples" / "resnet-style.json", "--engine", "deah-complete", "--store", empty_neo4j.uri,
              "--json", check=0)
    run_id = json.loads(out.stdout)["run_id"]
    text = (ROOT / "cypher" / "queries" / "why.cypher").read_text()
    with empty_neo4j.driver() as driver:
        records, _, _ = driver.execute_query(text, {"run": run_id, "text": "0:0,1:1,2:1,3:1,5:1", "id": -1})
    (row,) = [r.data() for r in records]
    assert (row["id"], row["text"], row["kept"]) == (130, "0:0,1:1,2:1,3:1,5:1", False)
    assert [d["step"] for d in row["reasons"]] == ["prefix"]
    # the same certificate as `basispath why` (which re-verifies it by vector addition)
    why = json.loads(cli("why", run_id, "130", "--store", empty_neo4j.uri, "--json", check=0).stdout)
    assert why["verified"] is True

    def text(path):
        return ",".join(f"{layer}:{index}" for layer, index in path)

    assert sorted((c["coef"], c["text"]) for c in row["certificate"]) == sorted(
        (c["coef"], text(c["path"])) for c in why["certificate"]
    )
