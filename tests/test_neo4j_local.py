"""tools/neo4j_local.py: the local Neo4j that `make neo4j` starts, without Docker.

One server is started in a temporary folder (the jars are shared with `make neo4j`): reuse by a
second start, the env file, the password kept out of the log and the command line, data kept
across stop and start, and one-line errors when Java or Maven are missing.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .neo4j_support import ROOT, neo4j_local, stopped_at_exit, unavailable

TOOL = ROOT / "tools" / "neo4j_local.py"


def tool(*args, env=None):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def local_home(tmp_path):
    missing = neo4j_local.missing_tools()
    if missing:
        unavailable(f"no local Neo4j: {', '.join(missing)} not found")
    neo4j_local.install(quiet=True)
    with stopped_at_exit(tmp_path / "neo4j-home") as home:
        yield home


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


# ---------------------------------------------------------------------------------------
# Issue 25, item 5.8: stopping the test run stops the Neo4j servers it started

INNER_TEST = '''
import os
import time


def test_holds_the_server(neo4j_server):
    with open(os.environ["HELD"], "w") as f:
        f.write(str(neo4j_server.home))
    time.sleep(120)
'''

#: A stand-in for `java ... Launcher HOME PORT PAGECACHE`: says READY (after $READY_AFTER
#: seconds) in the log, as the launcher does, then waits to be stopped. Its command line holds
#: "Launcher", so neo4j_local takes it for a server of its own.
FAKE_JAVA = '''#!{python}
import os, sys, time
time.sleep(float(os.environ.get("READY_AFTER", "0")))
print("READY", flush=True)
while True:
    time.sleep(1)
'''


def _fake_neo4j(root: Path) -> dict[str, str]:
    """The environment of a test run whose local Neo4j is the stand-in (no JVM): an install
    that neo4j_local takes as current, and `java` on PATH the fake one."""
    jars = root / "jars"
    (jars / "lib").mkdir(parents=True)
    (jars / "classes").mkdir()
    (jars / "classes" / "Launcher.class").write_bytes(b"")
    (jars / "lib" / ".installed").write_text(neo4j_local._source_digest() + "\n")
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "java").write_text(FAKE_JAVA.format(python=sys.executable))
    (bin_dir / "java").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("NEO4J_URI", "BASISPATH_REQUIRE_NEO4J")}
    env.update(BASISPATH_NEO4J_HOME=str(jars), PATH=f"{bin_dir}{os.pathsep}{env['PATH']}", PYTHONPATH=str(ROOT))
    return env


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


@pytest.mark.parametrize(
    "when, sig",
    [("running", signal.SIGTERM), ("running", signal.SIGINT), ("starting", signal.SIGTERM)],
    ids=["SIGTERM", "Ctrl-C", "SIGTERM-while-starting"],
)
def test_a_stopped_test_run_stops_the_neo4j_server_it_started(tmp_path, when, sig):
    """An inner pytest run of the project's fixtures holds the session's server (the stand-in);
    the signal ends that run, and the server must be gone with it."""
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "test_inner.py").write_text(INNER_TEST)
    (tmp_path / "inner" / "pytest.ini").write_text("[pytest]\n")
    env = _fake_neo4j(tmp_path)
    env.update(HELD=str(tmp_path / "held"), READY_AFTER="0" if when == "running" else "300")
    home = tmp_path / "basetemp" / "neo4j-server0"
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
         "--basetemp", str(tmp_path / "basetemp"), "test_inner.py"],
        cwd=tmp_path / "inner", env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # Ctrl-C works even in a background job
    )
    pid = None
    try:
        _wait_for(tmp_path / "held" if when == "running" else home / "neo4j.pid", proc)
        pid = int((home / "neo4j.pid").read_text())
        assert neo4j_local._alive(pid)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=60)
        assert not neo4j_local._alive(pid), f"the server (PID {pid}) outlived the test run\n{out}"
        assert "KeyboardInterrupt" in out, out  # pytest ended as on Ctrl-C, fixtures torn down
    finally:
        if proc.poll() is None:
            proc.kill()
        if pid is not None and neo4j_local._alive(pid):
            os.kill(pid, signal.SIGKILL)
