"""Fixtures shared by every test module: the store under test, on both backends.

``store_uri`` is parametrised over ``ladybug`` (a fresh folder per test) and ``neo4j`` (the
session's server, emptied before each test; see tests/neo4j_support.py). A test that takes it
runs twice; its Neo4j case carries the ``neo4j`` marker (``pytest -m neo4j`` runs only those).
While the Neo4j server is up, ``NEO4J_USER`` / ``NEO4J_PASSWORD`` are in this process's
environment, so CLI subprocesses (tests/cli_runner.py) reach it like a user's shell would.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from .neo4j_support import Neo4jServer, neo4j_server as _neo4j_server, required, stop_servers_on_signals

BACKENDS = ("ladybug", "neo4j")
#: ``params`` for a module-scoped fixture over both backends; the Neo4j case carries the neo4j
#: marker like ``store_uri``'s.
BACKEND_PARAMS = [pytest.param(b, marks=pytest.mark.neo4j) if b == "neo4j" else b for b in BACKENDS]

# --doctest-modules (pyproject.toml) imports every module under tests/ too; this one needs
# PyTorch at import time and is only used by tests that skip without it.
collect_ignore = ["torch_models.py"]


@dataclass(frozen=True)
class StoreUnderTest:
    """A store URI and its backend; ``str()`` gives the URI (what ``--store`` takes)."""

    uri: str
    backend: str
    server: Neo4jServer | None = None

    def __str__(self) -> str:
        return self.uri

    def __fspath__(self) -> str:  # so code written for folders can take it where it is one
        return self.uri


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory):
    with _neo4j_server(tmp_path_factory.mktemp("neo4j-server")) as server:
        patch = pytest.MonkeyPatch()
        patch.setenv("NEO4J_USER", server.user)
        patch.setenv("NEO4J_PASSWORD", server.password)
        try:
            yield server
        finally:
            patch.undo()


@pytest.fixture
def empty_neo4j(neo4j_server) -> Neo4jServer:
    """The session's Neo4j server with no nodes in it."""
    neo4j_server.wipe()
    return neo4j_server


def module_store(request, tmp_path_factory, name: str = "store") -> str:
    """The store URI of a module-scoped fixture parametrised with BACKEND_PARAMS: a new folder,
    or the session's Neo4j emptied first (pytest runs the module's tests grouped by backend)."""
    if request.param == "ladybug":
        return str(tmp_path_factory.mktemp(name) / "store")
    server = request.getfixturevalue("neo4j_server")
    server.wipe()
    return server.uri


@pytest.fixture(params=BACKENDS)
def store_uri(request, tmp_path) -> StoreUnderTest:
    """An empty store on each backend in turn."""
    if request.param == "ladybug":
        return StoreUnderTest(str(tmp_path / "store"), "ladybug")
    server = request.getfixturevalue("empty_neo4j")
    return StoreUnderTest(server.uri, "neo4j", server)


def pytest_collection_modifyitems(config, items):
    for item in items:
        callspec = getattr(item, "callspec", None)
        uses_neo4j = "neo4j_server" in getattr(item, "fixturenames", ())
        if callspec is not None and "store_uri" in callspec.params:
            uses_neo4j = callspec.params["store_uri"] == "neo4j"
        if uses_neo4j:
            item.add_marker(pytest.mark.neo4j)


def pytest_configure(config):
    config.addinivalue_line("markers", "neo4j: runs against a real Neo4j 5 server")
    stop_servers_on_signals()  # SIGTERM / SIGHUP: the Neo4j servers the tests started are stopped too


def pytest_unconfigure(config):
    stop_servers_on_signals(on=False)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """How many tests ran against Neo4j: CI must show none skipped."""
    counts = {"passed": 0, "failed": 0, "skipped": 0, "error": 0}
    for outcome in counts:
        for report in terminalreporter.stats.get(outcome, []):
            if "neo4j" in getattr(report, "keywords", {}) and (report.when == "call" or outcome != "passed"):
                counts[outcome] += 1
    if sum(counts.values()):
        terminalreporter.write_line(
            "tests against Neo4j (marker neo4j): "
            + ", ".join(f"{outcome} {n}" for outcome, n in counts.items())
            + (f" ({'required' if required() else 'not required'} by BASISPATH_REQUIRE_NEO4J)")
        )
