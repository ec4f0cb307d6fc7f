"""tools/neo4j_local.py: the local Neo4j that `make neo4j` starts, without Docker.

One server is started in a temporary folder (the jars are shared with `make neo4j`): reuse by a
second start, the env file, the password kept out of the log and the command line, data kept
across stop and start, and one-line errors when Java or Maven are missing.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from .neo4j_support import ROOT, neo4j_local, unavailable

TOOL = ROOT / "tools" / "neo4j_local.py"


def tool(*args, env=None):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def local_home(tmp_path):
    missing = neo4j_local.missing_tools()
    if missing:
        unavailable(f"no local Neo4j: {', '.join(missing)} not found")
    neo4j_local.install(quiet=True)
    home = tmp_path / "neo4j-home"
    yield home
    neo4j_local.stop(home, quiet=True)


def _env_file(home: Path) -> dict[str, str]:
    text = (home / "env").read_text()
    assert text.startswith("export ") and text.endswith("\n") and text.count("\n") == 1
    return dict(item.split("=", 1) for item in text[len("export "):].split())


@pytest.mark.neo4j
def test_start_reuse_stop_and_the_data_stays(local_home):
    import neo4j

    first = neo4j_local.start(local_home, port=None, jars=neo4j_local.default_home(), quiet=True)
    env = _env_file(local_home)
    assert env == {"NEO4J_URI": first.uri, "NEO4J_USER": "neo4j", "NEO4J_PASSWORD": first.password}
    for secret in ("env", "password"):
        assert stat.S_IMODE((local_home / secret).stat().st_mode) == 0o600
    assert first.uri.startswith("bolt://127.0.0.1:")
    # a second start while it runs reuses it (make neo4j twice)
    again = tool("start", "--home", local_home)
    assert again.returncode == 0, again.stderr
    assert again.stdout == f"Neo4j at {first.uri} (PID {first.pid})\n"
    assert tool("status", "--home", local_home).stdout == f"running at {first.uri} (PID {first.pid})\n"
    # authentication is on: the generated password works, another does not
    with neo4j.GraphDatabase.driver(first.uri, auth=("neo4j", "not-the-password")) as bad:
        with pytest.raises(neo4j.exceptions.AuthError):
            bad.verify_connectivity()
    with neo4j.GraphDatabase.driver(first.uri, auth=(first.user, first.password)) as driver:
        driver.execute_query("CREATE (:Kept {n: 42})")
    # the password is in no log and on no command line
    assert first.password not in (local_home / "neo4j.log").read_text()
    assert first.password.encode() not in Path(f"/proc/{first.pid}/cmdline").read_bytes()

    stopped = tool("stop", "--home", local_home)
    assert stopped.returncode == 0 and stopped.stderr == f"stopped local Neo4j (PID {first.pid}); data kept in {local_home / 'dbms'}\n"
    assert not (local_home / "env").exists()
    assert tool("status", "--home", local_home).returncode == 1
    assert tool("stop", "--home", local_home).stderr == f"no local Neo4j running in {local_home}\n"

    second = neo4j_local.start(local_home, port=None, jars=neo4j_local.default_home(), quiet=True)
    assert second.pid != first.pid and second.password == first.password
    with neo4j.GraphDatabase.driver(second.uri, auth=(second.user, second.password)) as driver:
        records, _, _ = driver.execute_query("MATCH (k:Kept) RETURN k.n AS n")
    assert [r["n"] for r in records] == [42]


def test_missing_java_or_maven_is_one_line_and_exit_2(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}  # nothing on PATH but an empty folder
    r = subprocess.run([sys.executable, str(TOOL), "install", "--home", tmp_path / "h"], capture_output=True, text=True, env=env)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == "error: a local Neo4j needs java, javac, mvn (OpenJDK 17 and Maven) on PATH\n"
    # make test's install step only warns, unless the suite must test Neo4j
    soft = subprocess.run([sys.executable, str(TOOL), "install", "--if-possible", "--home", tmp_path / "h"],
                          capture_output=True, text=True, env={**env, "BASISPATH_REQUIRE_NEO4J": "0"})
    assert (soft.returncode, soft.stderr) == (0, "warning: java, javac, mvn not found: no local Neo4j; the Neo4j tests will skip\n")
    hard = subprocess.run([sys.executable, str(TOOL), "install", "--if-possible", "--home", tmp_path / "h"],
                          capture_output=True, text=True, env={**env, "BASISPATH_REQUIRE_NEO4J": "1"})
    assert hard.returncode == 2 and hard.stderr.startswith("error: a local Neo4j needs java")
