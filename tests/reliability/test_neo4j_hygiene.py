"""Neo4j backend hygiene: credentials, TLS, retries and bounded failures.

- Credentials come only from NEO4J_USER / NEO4J_PASSWORD or an interactive prompt (no option
  of any command takes them; a URI with ``user:password@`` is refused), and the password never
  appears in stdout/stderr of any failure, in any log record (the driver's own loggers captured
  at DEBUG), or in anything sent to the graph (every statement and parameter recorded).
- ``neo4j+s://`` / ``bolt+s://`` reach the driver as given, and the driver that results
  encrypts and verifies certificates against the system CAs.
- Transient errors are retried with a bound; unreachable, silent and refusing servers give one
  ``error:`` line and exit code 3 within a bounded time.

The real driver is used wherever it can run without a server: against a closed port, a TCP
server that never answers, and a minimal Bolt 5.0 server (below) that refuses the login. Where a
server's answers are needed (retries, what a run sends to the graph), a fake driver stands in.

At the end, the same against real Neo4j 5.26 servers: a wrong password (and three in a row, the
server's rate limit), a port where a server was, and a server killed (SIGKILL) while ``basispath
run`` writes to it each give one line and exit code 3; after a real run the password is in no
output, no driver log record, no property of any node or relationship of the graph, and in none
of the server's files (logs, transaction logs, store files) of a server the tests started.
"""

from __future__ import annotations

import getpass
import json
import logging
import os
import signal
import socket
import struct
import threading
import time
from pathlib import Path

import neo4j
import pytest
from neo4j.exceptions import (
    AuthError,
    ClientError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from basispath_graph.cli.main import app
from basispath_graph.store import neo4j_store

from ..cli_runner import cli as cli_in_subprocess, finish, run_in_process, start
from ..neo4j_support import neo4j_local, unavailable
from .counts import record

EXAMPLES = Path("/work/shared/examples")
if not EXAMPLES.is_dir():
    EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

USER, PASSWORD = "neo4j", "pw-Hygiene-4f1c9e"
CREDS = {"NEO4J_USER": USER, "NEO4J_PASSWORD": PASSWORD}
BOUND_S = 15.0  # every failure must come back within this


def neo4j_error(code: str, message: str = "") -> Neo4jError:
    """A server error as the driver builds it from a FAILURE message."""
    return Neo4jError._hydrate_neo4j(code=code, message=message or code)


# -- running the CLI in this process ----------------------------------------------------------
@pytest.fixture
def basispath(tmp_path, monkeypatch, capsys):
    """Run ``basispath ARGS`` in this process with the Neo4j credentials in the environment."""

    def go(*args, env=CREDS):
        for key in ("NEO4J_USER", "NEO4J_PASSWORD", "NEO4J_DATABASE"):
            monkeypatch.delenv(key, raising=False)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        start_time = time.monotonic()
        r = run_in_process(list(args), tmp_path, monkeypatch, capsys)
        r.elapsed = time.monotonic() - start_time
        return r

    return go


def assert_one_line_failure(r, code: int, starts: str = "error: "):
    assert r.returncode == code, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.startswith(starts) and r.stderr.count("\n") == 1, r.stderr
    assert PASSWORD not in r.stdout + r.stderr


# -- capturing the driver's logs --------------------------------------------------------------
class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


@pytest.fixture
def driver_logs():
    """Every record of the ``neo4j`` loggers at DEBUG (our module stops them propagating, so a
    handler goes on the ``neo4j`` logger itself), plus the root logger."""
    handler = Records()
    logger, root = logging.getLogger("neo4j"), logging.getLogger()
    old = logger.level, root.level
    logger.setLevel(logging.DEBUG)
    root.setLevel(logging.DEBUG)
    logger.addHandler(handler)
    root.addHandler(handler)
    yield handler
    logger.removeHandler(handler)
    root.removeHandler(handler)
    logger.setLevel(old[0])
    root.setLevel(old[1])


# -- a fake driver ----------------------------------------------------------------------------
class FakeRecord:
    def __init__(self, values):
        self._values = values

    def values(self):
        return list(self._values)


class FakeResult:
    def __init__(self, keys, rows):
        self._keys, self._rows = keys, rows

    def keys(self):
        return list(self._keys)

    def __iter__(self):
        return iter(FakeRecord(r) for r in self._rows)


class FakeTx:
    def __init__(self, driver):
        self.driver = driver

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def run(self, statement, params=None):
        self.driver.calls.append((statement, dict(params or {})))
        failure = self.driver.next_failure()
        if failure is not None:
            raise failure
        return FakeResult([], [])

    def commit(self):
        if self.driver.commit_failure is not None:
            raise self.driver.commit_failure


class FakeSession:
    def __init__(self, driver, config):
        self.driver, self.config = driver, config

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def begin_transaction(self, *args, **kwargs):
        self.driver.attempts += 1
        return FakeTx(self.driver)


class FakeDriver:
    """Records every driver() call, session and statement; fails as told."""

    instances: list["FakeDriver"] = []

    def __init__(self, uri, **kwargs):
        self.uri, self.kwargs = uri, kwargs
        self.calls: list[tuple[str, dict]] = []
        self.sessions: list[dict] = []
        self.attempts = 0
        self.failures: list[BaseException] = []  # raised by tx.run, in order
        self.always: BaseException | None = None  # raised by every tx.run
        self.commit_failure: BaseException | None = None
        self.connect_failure: BaseException | None = None
        FakeDriver.instances.append(self)
        if FakeDriver.configure is not None:
            FakeDriver.configure(self)

    configure = None

    def next_failure(self):
        if self.failures:
            return self.failures.pop(0)
        return self.always

    def verify_connectivity(self):
        if self.connect_failure is not None:
            raise self.connect_failure

    def session(self, **config):
        self.sessions.append(config)
        return FakeSession(self, config)

    def close(self):
        pass


@pytest.fixture
def fake_driver(monkeypatch):
    """Replace neo4j.GraphDatabase.driver; returns a function to set up the next drivers."""
    FakeDriver.instances = []
    FakeDriver.configure = None
    monkeypatch.setattr(neo4j.GraphDatabase, "driver", staticmethod(lambda uri, **kw: FakeDriver(uri, **kw)))

    def configure(fn=None):
        FakeDriver.configure = staticmethod(fn) if fn else None

    yield configure
    FakeDriver.configure = None


@pytest.fixture
def no_sleep(monkeypatch):
    """A fake clock for the retry loop: sleeping advances it, nothing waits."""
    now = [0.0]
    slept: list[float] = []

    def sleep(s):
        slept.append(s)
        now[0] += s

    monkeypatch.setattr(neo4j_store, "_sleep", sleep)
    monkeypatch.setattr(neo4j_store, "_clock", lambda: now[0])
    return slept


# -- a minimal Bolt server that refuses the login ---------------------------------------------
def _pack_str(s: str) -> bytes:
    b = s.encode()
    if len(b) < 16:
        return bytes([0x80 + len(b)]) + b
    if len(b) < 256:
        return b"\xd0" + bytes([len(b)]) + b
    return b"\xd1" + struct.pack(">H", len(b)) + b


def _message(tag: int, fields: dict | None) -> bytes:
    body = bytes([0xB1 if fields is not None else 0xB0, tag])
    if fields is not None:
        body += bytes([0xA0 + len(fields)]) + b"".join(_pack_str(k) + _pack_str(v) for k, v in fields.items())
    return struct.pack(">H", len(body)) + body + b"\x00\x00"


class BoltRefuser:
    """Speaks just enough Bolt 5.0 for the real driver: the version handshake, then FAILURE
    Neo.ClientError.Security.Unauthorized to HELLO (which carries the credentials in 5.0)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.hellos = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    @staticmethod
    def _read(conn, n):
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def _serve(self, conn):
        with conn:
            if self._read(conn, 20) is None:  # magic + four version proposals
                return
            conn.sendall(b"\x00\x00\x00\x05")  # Bolt 5.0
            while True:
                msg = b""
                while True:  # chunks until a zero-size chunk
                    head = self._read(conn, 2)
                    if head is None:
                        return
                    size = struct.unpack(">H", head)[0]
                    if size == 0:
                        break
                    msg += self._read(conn, size) or b""
                if not msg:
                    continue  # NOOP
                self.received += msg
                tag = msg[1]
                if tag == 0x01:  # HELLO
                    self.hellos += 1
                    conn.sendall(_message(0x7F, {
                        "code": "Neo.ClientError.Security.Unauthorized",
                        "message": "The client is unauthorized due to authentication failure.",
                    }))
                elif tag == 0x0F:  # RESET
                    conn.sendall(_message(0x70, {}))
                elif tag == 0x02:  # GOODBYE
                    return
                else:
                    conn.sendall(_message(0x7E, None))  # IGNORED

    def close(self):
        self.sock.close()


class SilentServer:
    """Accepts TCP connections and never says anything (a hung server, a wrong port)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.conns = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                self.conns.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self):
        for c in self.conns:
            c.close()
        self.sock.close()


# == credentials ===============================================================================
def test_no_command_takes_credentials_on_the_command_line():
    import typer.main

    group = typer.main.get_command(app)
    seen = 0

    def walk(cmd, path):
        nonlocal seen
        for p in cmd.params:
            seen += 1
            names = " ".join([p.name or "", *getattr(p, "opts", [])]).lower()
            assert not any(w in names for w in ("pass", "user", "auth", "cred", "secret", "token")), (path, names)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, f"{path} {name}")

    walk(group, "basispath")
    assert seen > 20
    record("neo4j hygiene: CLI options checked for credentials", seen)


def test_credentials_come_from_the_environment(basispath, fake_driver):
    r = basispath("runs", "--store", "bolt://db.example:7687", "--json")
    assert r.returncode == 0, r.stderr
    (driver,) = FakeDriver.instances
    assert driver.uri == "bolt://db.example:7687"
    assert driver.kwargs["auth"] == (USER, PASSWORD)
    assert PASSWORD not in r.stdout + r.stderr


def test_credentials_in_the_uri_are_refused_without_echoing_them(basispath, fake_driver):
    r = basispath("runs", "--store", f"neo4j://{USER}:{PASSWORD}@db.example:7687")
    assert_one_line_failure(r, 2)
    assert r.stderr == "error: put the Neo4j credentials in NEO4J_USER / NEO4J_PASSWORD, not in the store URI\n"
    assert FakeDriver.instances == []  # never reached the driver


def test_a_malformed_uri_is_one_line_without_secrets(basispath):
    for uri in ("bolt://[::1", "neo4j://127.0.0.1:notaport"):
        r = basispath("query", "--store", uri, "RETURN 1")
        assert_one_line_failure(r, 3, f"error: bad Neo4j URI {uri}: ")
        assert r.elapsed < BOUND_S


def test_missing_credentials_without_a_terminal_are_refused(basispath, fake_driver, monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: False, raising=False)
    for env in ({}, {"NEO4J_USER": USER}, {"NEO4J_PASSWORD": PASSWORD}):
        r = basispath("runs", "--store", "bolt://db.example:7687", env=env)
        assert_one_line_failure(r, 3)
        assert r.stderr == "error: Neo4j credentials missing: set NEO4J_USER and NEO4J_PASSWORD\n"
    assert FakeDriver.instances == []


def test_interactive_prompt_reads_the_password_without_echo(basispath, fake_driver, monkeypatch):
    class TTY:
        def isatty(self):
            return True

    prompts = []
    monkeypatch.setattr("sys.stdin", TTY())
    monkeypatch.setattr("builtins.input", lambda prompt="": prompts.append(prompt) or USER)
    monkeypatch.setattr(getpass, "getpass", lambda prompt="": prompts.append(prompt) or PASSWORD)
    r = basispath("runs", "--store", "bolt://db.example:7687", "--json", env={})
    assert r.returncode == 0, r.stderr
    assert prompts == ["Neo4j user: ", "Neo4j password: "]
    assert FakeDriver.instances[0].kwargs["auth"] == (USER, PASSWORD)
    assert PASSWORD not in r.stdout + r.stderr


@pytest.mark.parametrize("engine", ["skeleton", "deah"])
def test_the_password_is_never_sent_to_the_graph(basispath, fake_driver, engine):
    r = basispath("run", str(EXAMPLES / "fig1b.json"), "--engine", engine, "--store", "bolt://db.example:7687", "--json")
    assert r.returncode == 0, r.stderr
    (driver,) = FakeDriver.instances
    names = [s for s, _ in driver.calls]
    assert any("CREATE (r:Run" in s or ":Run" in s for s in names)  # the run was written
    assert len(driver.calls) >= 10
    for statement, params in driver.calls:
        text = statement + json.dumps(params, default=str)
        assert PASSWORD not in text and USER + ":" not in text
    assert PASSWORD not in r.stdout + r.stderr
    record("neo4j hygiene: statements checked for the password", len(driver.calls))


# == TLS =======================================================================================
@pytest.mark.parametrize(
    "scheme, encrypted, trust",
    [
        ("neo4j+s", True, neo4j.TrustSystemCAs),
        ("bolt+s", True, neo4j.TrustSystemCAs),
        ("neo4j+ssc", True, neo4j.TrustAll),
        ("bolt", False, None),
        ("neo4j", False, None),
    ],
)
def test_tls_uris_reach_the_driver_and_it_encrypts(basispath, monkeypatch, scheme, encrypted, trust):
    """The real driver is built (no server needed for that); connecting then fails: exit 3."""
    built = []
    real = neo4j.GraphDatabase.driver

    def spy(uri, **kwargs):
        d = real(uri, **kwargs)
        built.append((uri, kwargs, d))
        return d

    monkeypatch.setattr(neo4j.GraphDatabase, "driver", staticmethod(spy))
    uri = f"{scheme}://127.0.0.1:1"
    r = basispath("runs", "--store", uri)
    assert_one_line_failure(r, 3, f"error: cannot reach Neo4j at {uri}")
    (got_uri, kwargs, driver) = built[0]
    assert got_uri == uri
    assert not {"encrypted", "trusted_certificates", "ssl_context"} & set(kwargs)  # the scheme decides
    assert driver.encrypted is encrypted
    config = driver._pool.pool_config
    if trust is not None:
        assert isinstance(config.trusted_certificates, trust)
    record("neo4j hygiene: URI schemes checked", 1)


# == bounded failures ==========================================================================
def test_driver_timeouts_are_bounded(basispath, fake_driver):
    basispath("runs", "--store", "bolt://db.example:7687", "--json")
    kwargs = FakeDriver.instances[0].kwargs
    assert kwargs["connection_timeout"] <= kwargs["connection_acquisition_timeout"] < BOUND_S
    assert kwargs["max_transaction_retry_time"] < BOUND_S
    assert neo4j_store.RETRY_TIME_S < BOUND_S and neo4j_store.MAX_ATTEMPTS >= 3


def test_unreachable_server_fails_in_bounded_time(basispath, driver_logs):
    """Real driver, a closed port: one line, exit 3, at once."""
    for uri in ("bolt://127.0.0.1:1", "neo4j://127.0.0.1:1", "neo4j+s://127.0.0.1:1"):
        r = basispath("runs", "--store", uri)
        assert_one_line_failure(r, 3, f"error: cannot reach Neo4j at {uri}: ServiceUnavailable")
        assert r.elapsed < BOUND_S, (uri, r.elapsed)
    assert PASSWORD not in "\n".join(driver_logs.lines)
    record("neo4j hygiene: unreachable servers", 3)


def test_silent_server_fails_in_bounded_time(monkeypatch, driver_logs):
    """Real driver against a server that accepts the connection and never answers: without
    connection_acquisition_timeout the driver waits 60 s. Both schemes at once, in threads."""
    from basispath_graph.store import StoreUnavailable, open_store

    for key, value in CREDS.items():
        monkeypatch.setenv(key, value)
    silent = SilentServer()
    outcomes = {}

    def attempt(uri):
        t0 = time.monotonic()
        try:
            open_store(uri).close()
            outcomes[uri] = ("opened", time.monotonic() - t0)
        except StoreUnavailable as exc:
            outcomes[uri] = (str(exc), time.monotonic() - t0)

    uris = [f"bolt://127.0.0.1:{silent.port}", f"neo4j://127.0.0.1:{silent.port}"]
    try:
        threads = [threading.Thread(target=attempt, args=(u,)) for u in uris]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    finally:
        silent.close()
    for uri in uris:
        message, elapsed = outcomes[uri]
        assert message == f"cannot reach Neo4j at {uri}: ServiceUnavailable", message
        assert neo4j_store.ACQUIRE_TIMEOUT_S - 1 <= elapsed < BOUND_S, (uri, elapsed)
        assert PASSWORD not in message
    assert PASSWORD not in "\n".join(driver_logs.lines)
    record("neo4j hygiene: unreachable servers", len(uris))


def test_wrong_password_against_a_real_bolt_handshake(basispath, driver_logs):
    server = BoltRefuser()
    try:
        uri = f"bolt://127.0.0.1:{server.port}"
        r = basispath("runs", "--store", uri)
    finally:
        server.close()
    assert_one_line_failure(r, 3)
    assert r.stderr == f"error: Neo4j at {uri} refused the credentials from NEO4J_USER / NEO4J_PASSWORD\n"
    assert r.elapsed < BOUND_S
    assert server.hellos >= 1 and PASSWORD.encode() in server.received  # the driver did send it
    logged = "\n".join(driver_logs.lines)
    assert "HELLO" in logged and "*******" in logged  # the DEBUG log was captured...
    assert PASSWORD not in logged  # ...and never holds the password
    record("neo4j hygiene: driver log records checked", len(driver_logs.lines))


def test_auth_error_from_the_driver_exits_3(basispath, fake_driver, driver_logs):
    fake_driver(lambda d: setattr(d, "connect_failure", neo4j_error("Neo.ClientError.Security.Unauthorized", "bad credentials")))
    r = basispath("runs", "--store", "neo4j+s://db.example:7687")
    assert_one_line_failure(r, 3)
    assert r.stderr == "error: Neo4j at neo4j+s://db.example:7687 refused the credentials from NEO4J_USER / NEO4J_PASSWORD\n"
    assert isinstance(neo4j_error("Neo.ClientError.Security.Unauthorized"), AuthError)
    assert PASSWORD not in "\n".join(driver_logs.lines)


# == retries ===================================================================================
TRANSIENTS = {
    "TransientError": lambda: neo4j_error("Neo.TransientError.Transaction.DeadlockDetected", "deadlock"),
    "ServiceUnavailable": lambda: ServiceUnavailable("connection lost"),
    "SessionExpired": lambda: SessionExpired("leader switch"),
}


# `basispath query` (not `runs`, which lets a StoreError out as an internal error: reported).
READ = ("query", "--store", "bolt://db.example:7687", "MATCH (r:Run) RETURN r.id AS id")


@pytest.mark.parametrize("kind", list(TRANSIENTS))
def test_transient_errors_are_retried_then_succeed(basispath, fake_driver, no_sleep, kind):
    fake_driver(lambda d: d.failures.extend([TRANSIENTS[kind](), TRANSIENTS[kind]()]))
    r = basispath(*READ, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == []
    driver = FakeDriver.instances[0]
    assert driver.attempts == 3
    assert no_sleep == [neo4j_store.RETRY_DELAY_S, 2 * neo4j_store.RETRY_DELAY_S]
    assert all(s["default_access_mode"] == neo4j.READ_ACCESS for s in driver.sessions)
    record("neo4j hygiene: transient errors retried", 2)


@pytest.mark.parametrize("kind", list(TRANSIENTS))
def test_transient_errors_that_persist_fail_after_the_bound(basispath, fake_driver, no_sleep, kind):
    fake_driver(lambda d: setattr(d, "always", TRANSIENTS[kind]()))
    r = basispath(*READ)
    assert_one_line_failure(r, 3, f"error: Neo4j at bolt://db.example:7687 still failing after {neo4j_store.MAX_ATTEMPTS} attempts")
    assert kind in r.stderr
    assert FakeDriver.instances[0].attempts == neo4j_store.MAX_ATTEMPTS
    assert sum(no_sleep) <= neo4j_store.RETRY_TIME_S


def test_retries_stop_at_the_time_bound(basispath, fake_driver, monkeypatch):
    """Each attempt takes 4 s (fake clock): no attempt starts after RETRY_TIME_S."""
    now = [0.0]
    starts = []

    def slow(d):
        def failing(statement, params=None, _d=d):
            starts.append(now[0])
            now[0] += 4.0
            raise TRANSIENTS["TransientError"]()

        d.session = lambda **config: type("S", (), {
            "__enter__": lambda s: s, "__exit__": lambda s, *e: False,
            "begin_transaction": lambda s: type("T", (), {
                "__enter__": lambda t: t, "__exit__": lambda t, *e: False, "run": lambda t, *a, **k: failing(*a, **k),
            })(),
        })()

    fake_driver(slow)
    monkeypatch.setattr(neo4j_store, "_clock", lambda: now[0])
    monkeypatch.setattr(neo4j_store, "_sleep", lambda s: now.__setitem__(0, now[0] + s))
    r = basispath(*READ)
    assert_one_line_failure(r, 3, "error: Neo4j at bolt://db.example:7687 still failing after")
    assert len(starts) < neo4j_store.MAX_ATTEMPTS
    assert max(starts) <= neo4j_store.RETRY_TIME_S


def test_persistent_transient_errors_fail_in_bounded_real_time(basispath, fake_driver):
    """Real sleeps: the whole backoff (0.5 + 1 + 2 + 4 s) then exit 3."""
    fake_driver(lambda d: setattr(d, "always", TRANSIENTS["TransientError"]()))
    r = basispath(*READ)
    assert_one_line_failure(r, 3, "error: Neo4j at bolt://db.example:7687 still failing after")
    assert neo4j_store.RETRY_DELAY_S * (2 ** (neo4j_store.MAX_ATTEMPTS - 1) - 1) - 0.5 <= r.elapsed < BOUND_S


def test_errors_that_are_not_transient_are_not_retried(basispath, fake_driver, no_sleep):
    fake_driver(lambda d: setattr(d, "always", neo4j_error("Neo.ClientError.Statement.SyntaxError", "Invalid input 'X'")))
    r = basispath("query", "--store", "bolt://db.example:7687", "MATCH (n) RETURN n")
    assert_one_line_failure(r, 2, "error: Neo4j: Neo.ClientError.Statement.SyntaxError")
    assert FakeDriver.instances[0].attempts == 1 and no_sleep == []
    assert isinstance(neo4j_error("Neo.ClientError.Statement.SyntaxError"), ClientError)


def test_connection_lost_during_commit_is_not_retried(basispath, fake_driver, no_sleep):
    fake_driver(lambda d: setattr(d, "commit_failure", IncompleteCommit("lost during commit")))
    r = basispath("query", "--store", "bolt://db.example:7687", "--write", "CREATE (:X)")
    assert_one_line_failure(r, 3, "error: lost Neo4j at bolt://db.example:7687 while committing")
    assert FakeDriver.instances[0].attempts == 1 and no_sleep == []


def test_read_access_mode_refusals_map_to_the_write_message(basispath, fake_driver):
    """What Neo4j 5.26 answers to every write in a READ transaction (recorded from the real server
    in test_query_safety.py) is the same one line as for the embedded store; a missing privilege
    (Security.Forbidden, which READ mode never causes) keeps its own message."""
    for message in ("Writing in read access mode not allowed. Attempted write to neo4j",
                    "Writing in read access mode not allowed. Attempted write to system"):
        fake_driver(lambda d, e=neo4j_error(neo4j_store.READ_MODE_CODE, message): setattr(d, "always", e))
        r = basispath("query", "--store", "bolt://db.example:7687", "CALL db.createLabel('X')")
        assert_one_line_failure(r, 2)
        assert r.stderr == "error: the query writes to the store; add --write to allow it\n"
    forbidden = neo4j_error("Neo.ClientError.Security.Forbidden", "Write operations are not allowed for user 'reader' with roles [PUBLIC, reader].")
    fake_driver(lambda d: setattr(d, "always", forbidden))
    r = basispath("query", "--store", "bolt://db.example:7687", "CALL db.createLabel('X')")
    assert_one_line_failure(r, 2, "error: Neo4j: Neo.ClientError.Security.Forbidden: Write operations are not allowed")
    fake_driver()
    r = basispath("query", "--store", "bolt://db.example:7687", "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row")
    assert r.stderr == "error: the query reads files or URLs (LOAD CSV); add --write to allow it\n"
    assert FakeDriver.instances[-1].calls == []  # refused before anything reached the server


# == real servers ==============================================================================
def _secret_files(home: Path, secrets: list[str], exclude=("password", "env")) -> list[str]:
    """Files under a local server's HOME (logs, data, transaction logs) that hold any of SECRETS;
    HOME/password and HOME/env are where tools/neo4j_local.py keeps it on purpose."""
    needles = [x.encode() for x in secrets]
    found = []
    for path in sorted(home.rglob("*")):
        if path.is_file() and path.relative_to(home).as_posix() not in exclude:
            data = path.read_bytes()
            found += [f"{path.relative_to(home)}" for n in needles if n in data]
    return found


def test_real_server_wrong_password_is_one_line_exit_3(basispath, neo4j_server, driver_logs):
    wrong = {"NEO4J_USER": neo4j_server.user, "NEO4J_PASSWORD": "wrong-" + PASSWORD}
    refused = f"error: Neo4j at {neo4j_server.uri} refused the credentials from NEO4J_USER / NEO4J_PASSWORD"
    r = basispath("runs", "--store", neo4j_server.uri, env=wrong)
    assert_one_line_failure(r, 3)
    assert r.stderr == refused + "\n" and r.elapsed < BOUND_S
    # Two more wrong ones, then the server's rate limit (3 in a row) answers: still one line.
    for _ in range(2):
        basispath("runs", "--store", neo4j_server.uri, env=wrong)
    r = basispath("query", "--store", neo4j_server.uri, "RETURN 1", env=wrong)
    assert_one_line_failure(r, 3)
    assert r.stderr == refused + ": too many failed attempts, the server refuses this user for a few seconds\n"
    logged = "\n".join(driver_logs.lines)
    assert "wrong-" + PASSWORD not in logged and neo4j_server.password not in logged
    # The right password gets in again once the lock is over (5 s by default).
    deadline = time.monotonic() + 15
    while (ok := basispath("runs", "--store", neo4j_server.uri, "--json", env=neo4j_server.env())).returncode != 0:
        assert time.monotonic() < deadline, ok.stderr
        time.sleep(1)
    record("neo4j hygiene: real server refusals", 4)


def test_real_run_leaves_the_password_nowhere(basispath, empty_neo4j, driver_logs):
    server = empty_neo4j
    r = basispath("run", str(EXAMPLES / "fig1b.json"), "--store", server.uri, "--json", env=server.env())
    assert r.returncode == 0, r.stderr
    q = basispath("query", "--store", server.uri, "--json", "MATCH (n:Network) RETURN n.name AS name", env=server.env())
    assert json.loads(q.stdout) == [{"name": "fig1b"}]
    with server.driver() as driver:
        nodes = driver.execute_query("MATCH (n) RETURN labels(n) AS l, properties(n) AS p").records
        rels = driver.execute_query("MATCH ()-[e]->() RETURN type(e) AS t, properties(e) AS p").records
    assert len(nodes) > 40 and len(rels) > 80
    graph = json.dumps([[r["l"], r["p"]] for r in nodes] + [[r["t"], r["p"]] for r in rels], default=str)
    assert server.password not in graph and f"{server.user}:" not in graph
    for out in (r, q):
        assert server.password not in out.stdout + out.stderr
    logged = "\n".join(driver_logs.lines)
    assert "HELLO" in logged or "LOGON" in logged  # the DEBUG log was captured...
    assert server.password not in logged  # ...and never holds the password
    if server.home is not None:  # a server the tests started: its logs, data and transaction logs
        assert _secret_files(server.home, [server.password]) == []
    record("neo4j hygiene: graph properties checked for the password", len(nodes) + len(rels))


BIG_RUN = {"name": "hygiene-big", "widths": [4, 16, 16, 16, 16, 4], "skips": [[0, 2], [2, 4], [1, 3], [3, 5]]}
LOST = ("still failing after", "cannot reach Neo4j at", "lost Neo4j at", "cannot get a connection to Neo4j at")


@pytest.mark.neo4j
def test_a_server_killed_mid_run_gives_one_line_and_exit_3(tmp_path):
    """A throwaway server of our own, SIGKILLed while ``basispath run`` writes a bigger network:
    one line, exit 3, within the retry bound; then its port is closed: one line, exit 3. The
    password is in none of the server's files (logs included)."""
    home = tmp_path / "neo4j"
    try:
        server = neo4j_local.start(home=home, port=None, jars=neo4j_local.default_home(), quiet=True)
    except neo4j_local.Neo4jLocalError as exc:
        unavailable(f"no throwaway local Neo4j: {exc}")
    env = {"NEO4J_USER": server.user, "NEO4J_PASSWORD": server.password}
    spec = tmp_path / "big.json"
    spec.write_text(json.dumps(BIG_RUN))
    try:
        run = start(["run", spec, "--store", server.uri, "-q"], tmp_path, env)
        driver = neo4j.GraphDatabase.driver(server.uri, auth=(server.user, server.password))
        try:
            deadline = time.monotonic() + 120
            while True:  # until the run writes its paths
                stages = driver.execute_query("MATCH (r:Run) RETURN r.stage AS stage").records
                if stages and stages[0]["stage"] in ("basis paths", "discards", "links"):
                    break
                assert run.poll() is None, f"the run ended before its server was killed: {run.communicate()}"
                assert time.monotonic() < deadline, f"the run never reached its writes: {stages}"
                time.sleep(0.1)
        finally:
            driver.close()
        os.kill(server.pid, signal.SIGKILL)
        killed_at = time.monotonic()
        res = finish(run, timeout=60)
        took = time.monotonic() - killed_at
    finally:
        neo4j_local.stop(home, quiet=True)  # the pid file's owner is gone: a no-op but for the files
        if neo4j_local._alive(server.pid):
            os.kill(server.pid, signal.SIGKILL)
    assert res.returncode == 3, (res.returncode, res.stderr)
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert any(f in res.stderr for f in LOST) and server.uri in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""
    assert took < BOUND_S, took
    assert server.password not in res.stdout + res.stderr
    # The port where the server was: closed now.
    closed = cli_in_subprocess("runs", "--store", server.uri, env=env)
    assert (closed.returncode, closed.stderr) == (3, f"error: cannot reach Neo4j at {server.uri}: ServiceUnavailable\n")
    assert server.password not in closed.stdout + closed.stderr
    assert list(home.glob("dbms/logs/*.log")) and _secret_files(home, [server.password]) == []
    record("neo4j hygiene: real server refusals", 2)
