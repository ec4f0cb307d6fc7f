"""Where the tests get a real Neo4j 5 server, once per test session.

In this order:
1. ``NEO4J_URI`` (with ``NEO4J_USER`` / ``NEO4J_PASSWORD``) when set: an existing server. The
   tests delete every node between tests, so they only use a database that is empty when the
   session starts; a database holding data is refused, never wiped.
2. A throwaway local server (``tools/neo4j_local.py``: Neo4j Community 5.26 jars from Maven
   Central and our launcher) in a temporary folder, on a free port, with a generated password.
   It needs java, javac and mvn; the jars are shared with ``make neo4j`` (``.neo4j/lib``).
3. A testcontainers container, where a Docker engine answers.

If none works the Neo4j tests skip with the reason, unless ``BASISPATH_REQUIRE_NEO4J=1``
(``.ci/run`` sets it): then they fail, so CI never passes without having talked to Neo4j.

Every local server the tests start is stopped when the test run ends, however it ends: by the
fixture that started it (a normal end, Ctrl-C, and SIGTERM or SIGHUP, which
:func:`stop_servers_on_signals` turns into KeyboardInterrupt so that pytest tears its fixtures
down), else at interpreter exit (:func:`stopped_at_exit`). A server started before the run
(``make neo4j``, ``NEO4J_URI``) is never stopped.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIRE_ENV = "BASISPATH_REQUIRE_NEO4J"


if str(ROOT / "tools") not in sys.path:  # tools/neo4j_local.py: a script, not part of the package
    sys.path.append(str(ROOT / "tools"))
import neo4j_local  # noqa: E402


@dataclass(frozen=True)
class Neo4jServer:
    uri: str
    user: str
    password: str
    how: str  # "NEO4J_URI", "local" or "testcontainers"
    home: Path | None = None  # the local server's folder (its log, its pid), when we started it

    def env(self) -> dict[str, str]:
        """The variables a CLI subprocess needs to reach this server."""
        return {"NEO4J_USER": self.user, "NEO4J_PASSWORD": self.password}

    def driver(self):
        import neo4j

        return neo4j.GraphDatabase.driver(self.uri, auth=(self.user, self.password))

    def node_count(self) -> int:
        with self.driver() as driver:
            records, _, _ = driver.execute_query("MATCH (n) RETURN count(n) AS n")
        return records[0]["n"]

    def wipe(self) -> None:
        """Delete every node and relationship (Community has one user database: no CREATE DATABASE).
        Relationships go first, 10,000 a transaction: a DETACH DELETE of a Run node deletes all its
        KEPT relationships in one transaction, which for ResNet-20 (271,242) exceeds the server's
        memory pool (tests/test_neo4j_general_store.py)."""
        with self.driver() as driver, driver.session() as session:
            session.run("MATCH ()-[r]->() CALL { WITH r DELETE r } IN TRANSACTIONS OF 10000 ROWS").consume()
            session.run("MATCH (n) CALL { WITH n DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()


#: Homes of the local servers this process started and has not stopped yet.
_STARTED: set[Path] = set()


def _stop_started() -> None:
    for home in sorted(_STARTED):
        neo4j_local.stop(home, quiet=True)
        _STARTED.discard(home)


atexit.register(_stop_started)


@contextmanager
def stopped_at_exit(home: Path):
    """Stop the local server in HOME when the block ends, or else when the interpreter exits
    (the block cut short by a signal in a fixture's teardown)."""
    _STARTED.add(home)
    try:
        yield home
    finally:
        neo4j_local.stop(home, quiet=True)
        _STARTED.discard(home)


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"stopped by {signal.Signals(signum).name}")


#: The signals :func:`stop_servers_on_signals` took over (to give back at the end of the run).
_TAKEN: list[signal.Signals] = []


def stop_servers_on_signals(on: bool = True) -> None:
    """SIGTERM and SIGHUP end the test run as Ctrl-C does (KeyboardInterrupt: pytest tears the
    fixtures down, the servers they started with them) instead of killing the process at once.
    Only where nothing else handles or ignores them, and only from the main thread; ``on=False``
    gives them back."""
    if threading.current_thread() is not threading.main_thread():
        return
    if not on:
        while _TAKEN:
            signal.signal(_TAKEN.pop(), signal.SIG_DFL)
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) == signal.SIG_DFL:
            signal.signal(sig, _interrupt)
            _TAKEN.append(sig)


def required() -> bool:
    return os.environ.get(REQUIRE_ENV) == "1"


def unavailable(reason: str):
    """Skip, or fail when the suite must test Neo4j."""
    if required():
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@contextmanager
def neo4j_server(tmp_root: Path):
    """The session's server (see the module docstring); stops what it started."""
    uri = os.environ.get("NEO4J_URI")
    if uri:
        server = Neo4jServer(uri, os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", ""), "NEO4J_URI")
        try:
            nodes = server.node_count()
        except Exception as exc:  # any driver failure: report it, never a traceback per test
            unavailable(f"cannot use Neo4j at NEO4J_URI={uri}: {type(exc).__name__}")
        if nodes:
            unavailable(f"Neo4j at NEO4J_URI={uri} holds {nodes} nodes; the tests wipe their database, so they need an empty one (unset NEO4J_URI to use a throwaway local server)")
        yield server
        return
    reason = None
    with stopped_at_exit(tmp_root):
        try:
            local = neo4j_local.start(home=tmp_root, port=None, jars=neo4j_local.default_home(), quiet=True)
        except neo4j_local.Neo4jLocalError as exc:
            reason = f"no local Neo4j: {exc}"
        else:
            yield Neo4jServer(local.uri, local.user, local.password, "local", home=tmp_root)
            return
    from .docker_support import DOCKER_REASON

    if DOCKER_REASON is not None:
        unavailable(f"{reason}; {DOCKER_REASON}")
    from testcontainers.neo4j import Neo4jContainer

    with Neo4jContainer("neo4j:5-community", password="basispath-test") as container:
        yield Neo4jServer(container.get_connection_url(), "neo4j", "basispath-test", "testcontainers")
