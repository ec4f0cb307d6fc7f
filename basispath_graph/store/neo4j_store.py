"""Server backend: Neo4j 5 through the official ``neo4j`` driver (py2neo is end-of-life).

Credentials come only from NEO4J_USER / NEO4J_PASSWORD, or an interactive prompt; they are never
taken from the command line (a URI with ``user:password@`` is refused), printed, logged or stored.
An unreachable server or refused credentials raise ``StoreUnavailable`` (CLI exit code 3) within a
bounded time: TCP connect <= CONNECT_TIMEOUT_S, acquiring a connection (handshake, HELLO/LOGON)
<= ACQUIRE_TIMEOUT_S, even from a server that accepts the connection and never answers.

Every transaction is retried on transient failures (``TransientError`` that the driver marks
retryable, ``ServiceUnavailable``, ``SessionExpired``) with exponential backoff, at most
MAX_ATTEMPTS times and never starting an attempt more than RETRY_TIME_S after the first; then
``StoreUnavailable``. A connection lost during COMMIT (``IncompleteCommit``) is not retried: the
outcome is unknown. User queries run in READ access mode unless the store is opened for writing,
so the server refuses writes (``Neo.ClientError.Statement.AccessMode``, see ``_read_mode_refusal``);
``query_guard.check_read_only`` refuses what READ mode lets through: LOAD CSV (the server's files
and URLs), TERMINATE TRANSACTIONS and dbms.killConnection(s) (other clients' work).
"""

from __future__ import annotations

import getpass
import logging
import os
import sys
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

from .base import BATCH_ENV, Ragged, Store, StoreError, StoreUnavailable, WriteRefused, column_length, env_rows
from .library import QueryLibrary

__all__ = ["Neo4jStore", "neo4j_credentials"]

# The driver logs connection failures itself; we report them in one line instead.
logging.getLogger("neo4j").addHandler(logging.NullHandler())
logging.getLogger("neo4j").propagate = False

# Rows per bulk transaction (BASISPATH_BATCH_ROWS overrides it). Measured on a 2-core machine:
# 5k-10k rows per transaction is about as fast per row as it gets; 50k was slower (the
# transaction state of one big batch costs the server more heap and GC than the round trips saved).
BATCH = 10_000
# Independent writes run at once (``bulk_together``), each in its own session, in order. Measured
# with the server on the same 2 cores (deah-complete dense-8x64, 1.59 M relationships): the
# relationship writes 28.8 s one after the other, 17.7 s two at once; the server then uses both
# cores. BASISPATH_NEO4J_WRITERS overrides it (a server with more cores takes more).
WRITERS = 2
WRITERS_ENV = "BASISPATH_NEO4J_WRITERS"
CONNECT_TIMEOUT_S = 5.0  # TCP connect
ACQUIRE_TIMEOUT_S = 10.0  # a connection from the pool, including handshake and authentication
RETRY_TIME_S = 10.0  # no retry starts later than this after the first attempt
MAX_ATTEMPTS = 5
RETRY_DELAY_S = 0.5  # then doubled: 0.5, 1, 2, 4 s
_sleep, _clock = time.sleep, time.monotonic  # the tests replace them
READ_MODE_CODE = "Neo.ClientError.Statement.AccessMode"  # a write in a READ transaction
# Creating an index or constraint that another process created a moment earlier: with IF NOT
# EXISTS two writers opening a new database at once still get one of these (measured on 5.26).
SCHEMA_RACE_CODES = (
    "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
    "Neo.ClientError.Schema.IndexAlreadyExists",
    "Neo.ClientError.Schema.ConstraintAlreadyExists",
)
#: What each connection tells the server about its process (``dbms.listConnections``): a run
#: whose writer's PID has no connection any more was killed (see ``Neo4jStore.live_pids``).
USER_AGENT = "basispath pid/{pid}"


def neo4j_credentials() -> tuple[str, str]:
    user = os.environ.get("NEO4J_USER")
    password = os.environ.get("NEO4J_PASSWORD")
    if user and password is not None:
        return user, password
    if sys.stdin.isatty():
        user = user or input("Neo4j user: ")
        return user, getpass.getpass("Neo4j password: ")
    raise StoreUnavailable("Neo4j credentials missing: set NEO4J_USER and NEO4J_PASSWORD")


def _read_mode_refusal(exc) -> bool:
    """Did the server refuse a write because the transaction is in READ access mode?

    Measured against Neo4j Community 5.26 (tests/reliability/test_query_safety.py): every write
    in a READ transaction - CREATE, MERGE, SET, REMOVE, DELETE, FOREACH, CALL { ... } (also IN
    TRANSACTIONS), PROFILE of a write, index and constraint commands, the WRITE and SCHEMA
    procedures (db.createLabel, db.index.vector.createNodeIndex, ...) and administration
    commands on the system database (CREATE USER, CREATE DATABASE) - fails with the code
    ``Neo.ClientError.Statement.AccessMode`` and the message "Writing in read access mode not
    allowed. Attempted write to neo4j" (or "... to system"). The code alone decides: earlier
    versions of this function also took ``Neo.ClientError.Security.Forbidden`` "... overridden
    by READ" for writing procedures, which the server never sends for them (Forbidden means a
    missing privilege, not a read-only transaction).
    """
    return str(getattr(exc, "code", None) or "") == READ_MODE_CODE


def _describe(exc) -> str:
    """A driver error in one line: its Neo4j code, else its type (never the auth details)."""
    code = getattr(exc, "code", None)
    return f"{type(exc).__name__} {code}" if code else type(exc).__name__


def _plain(value):
    """Driver values (nodes, relationships, paths) as JSON-friendly data."""
    from neo4j.graph import Node, Path, Relationship

    if isinstance(value, Node):
        return {"labels": sorted(value.labels), **dict(value)}
    if isinstance(value, Relationship):
        return {"type": value.type, **dict(value)}
    if isinstance(value, Path):
        return [_plain(n) for n in value.nodes]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class _Stopped(Exception):
    """A write of ``bulk_together`` stopped after a committed batch because another one failed."""


def _column_slice(column, start: int, stop: int) -> list:
    """Rows start..stop of a bulk column as a plain list (a list of lists for ``Ragged``; None
    in a ``Nullable``'s null rows, its own ``tolist``: the property is not set)."""
    if isinstance(column, Ragged):
        offsets = column.offsets[start : stop + 1]
        values = column.values[offsets[0] : offsets[-1]].tolist()
        bounds = (offsets - offsets[0]).tolist()
        return [values[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)]
    part = column[start:stop]
    return part.tolist() if hasattr(part, "tolist") else list(part)


class Neo4jStore(Store):
    backend = "neo4j"

    def __init__(self, uri: str, write: bool = False):
        import neo4j
        from neo4j.exceptions import AuthError, ConfigurationError, DriverError, Neo4jError, ServiceUnavailable

        self.uri, self.writable = uri, write
        if "@" in uri.split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0]:
            # never echo the URI: it holds a secret
            raise StoreError("put the Neo4j credentials in NEO4J_USER / NEO4J_PASSWORD, not in the store URI")
        self.lib = QueryLibrary("neo4j")
        self.database = os.environ.get("NEO4J_DATABASE") or None
        user, password = neo4j_credentials()
        try:
            self._driver = neo4j.GraphDatabase.driver(
                uri,
                auth=(user, password),
                connection_timeout=CONNECT_TIMEOUT_S,
                connection_acquisition_timeout=ACQUIRE_TIMEOUT_S,
                max_transaction_retry_time=RETRY_TIME_S,
                user_agent=USER_AGENT.format(pid=os.getpid()),
            )
            self._driver.verify_connectivity()
        except AuthError:
            self.close()
            raise StoreUnavailable(f"Neo4j at {uri} refused the credentials from NEO4J_USER / NEO4J_PASSWORD") from None
        except (ServiceUnavailable, OSError) as exc:
            self.close()
            raise StoreUnavailable(f"cannot reach Neo4j at {uri}: {type(exc).__name__}") from None
        except (ConfigurationError, ValueError) as exc:
            self.close()
            raise StoreUnavailable(f"bad Neo4j URI {uri}: {' '.join(str(exc).split())}") from None
        except Neo4jError as exc:
            self.close()
            if exc.code == "Neo.ClientError.Security.AuthenticationRateLimit":  # 3 wrong passwords in a row (5.26)
                raise StoreUnavailable(
                    f"Neo4j at {uri} refused the credentials from NEO4J_USER / NEO4J_PASSWORD: too many failed "
                    "attempts, the server refuses this user for a few seconds"
                ) from None
            raise StoreUnavailable(f"Neo4j at {uri} refused the connection: {exc.code}") from None
        except DriverError as exc:
            self.close()
            raise StoreUnavailable(f"cannot use Neo4j at {uri}: {type(exc).__name__}") from None
        self._access = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        if write:
            for statement in self.lib.statements("schema"):
                self._transact([statement], {}, tolerate=SCHEMA_RACE_CODES)

    def _session(self):
        return self._driver.session(database=self.database, default_access_mode=self._access)

    def _attempt(self, statements: list[str], params: dict) -> tuple[list[str], list[list]]:
        """One transaction (READ or WRITE access mode, as the store was opened)."""
        with self._session() as session:
            with session.begin_transaction() as tx:
                keys, rows = [], []
                for statement in statements:
                    result = tx.run(statement, params)
                    keys, rows = list(result.keys()), [[_plain(v) for v in rec.values()] for rec in result]
                tx.commit()
        return keys, rows

    def _transact(self, statements: list[str], params: dict, tolerate: tuple[str, ...] = ()) -> tuple[list[str], list[list]]:
        """Run STATEMENTS in one transaction, retried on transient failures; a server error whose
        code is in TOLERATE counts as done (no rows)."""
        from neo4j.exceptions import (
            AuthError, ConnectionPoolError, DriverError, IncompleteCommit, Neo4jError, ServiceUnavailable, SessionExpired,
            TransientError,
        )

        first, delay, attempt = _clock(), RETRY_DELAY_S, 0
        while True:
            attempt += 1
            try:
                return self._attempt(statements, params)
            except IncompleteCommit:
                raise StoreUnavailable(f"lost Neo4j at {self.uri} while committing; the transaction may or may not have been applied") from None
            except (TransientError, ServiceUnavailable, SessionExpired) as exc:
                if not exc.is_retryable():
                    raise StoreError(f"Neo4j: {_describe(exc)}") from None
                waited = _clock() - first
                if attempt >= MAX_ATTEMPTS or waited + delay > RETRY_TIME_S:
                    raise StoreUnavailable(
                        f"Neo4j at {self.uri} still failing after {attempt} attempts in {waited:.1f} s: {_describe(exc)}"
                    ) from None
                _sleep(delay)
                delay *= 2
            except AuthError:
                raise StoreUnavailable(f"Neo4j at {self.uri} refused the credentials from NEO4J_USER / NEO4J_PASSWORD") from None
            except ConnectionPoolError as exc:
                raise StoreUnavailable(f"cannot get a connection to Neo4j at {self.uri}: {_describe(exc)}") from None
            except Neo4jError as exc:
                if exc.code in tolerate:
                    return [], []
                if not self.writable and _read_mode_refusal(exc):
                    raise WriteRefused(" ".join(str(exc.message).split())) from None
                raise StoreError(f"Neo4j: {exc.code}: {' '.join(str(exc.message).split())}") from None
            except DriverError as exc:
                raise StoreError(f"Neo4j: {_describe(exc)}") from None

    def run(self, query_name: str, /, **params) -> list[dict]:
        keys, rows = self._transact(self.lib.statements(query_name), params)
        return [dict(zip(keys, r)) for r in rows]

    def bulk(self, name: str, columns: dict[str, list], progress=None) -> None:
        """Load ``columns`` with query ``name``, BATCH rows (``BASISPATH_BATCH_ROWS``) per transaction.

        A statement that uses ``$rows`` gets each batch as a list of maps (the shared queries);
        any other statement gets every column as its own parameter, a plain list per column (the
        ``cypher/neo4j/`` overrides: ``UNWIND range(0, size($uid) - 1) AS i ... $uid[i]``), which
        the driver packs about twice as fast and needs no map per row. Columns are converted to
        Python lists one batch at a time (numpy arrays and ``Ragged`` lists never whole). Each
        batch is its own retried transaction and ``progress(rows)`` is called once it is committed.
        """
        keys = list(columns)
        n = len(columns[keys[0]]) if keys else 0
        if n == 0:
            return
        statements = self.lib.statements(name)
        as_rows = any("$rows" in statement for statement in statements)
        batch = env_rows(BATCH_ENV, BATCH)
        for start in range(0, n, batch):
            stop = min(n, start + batch)
            chunk = {k: _column_slice(columns[k], start, stop) for k in keys}
            if as_rows:
                params = {"rows": [dict(zip(keys, vals)) for vals in zip(*(chunk[k] for k in keys))]}
            else:
                params = chunk
            self._transact(statements, params)
            if progress:
                progress(stop - start)

    def bulk_together(self, writes: list[tuple[str, dict]], progress=None) -> None:
        """``bulk`` of independent writes, WRITERS (``BASISPATH_NEO4J_WRITERS``) at a time, each
        in its own thread and sessions, its batches in order: each write's committed rows stay a
        prefix of its rows, which is all ``--resume`` needs (``store/resume.py``); the writes'
        batches interleave in any order. ``progress`` is called from one thread at a time. When
        one write fails (or ``progress`` raises: a kill point, Ctrl-C), the others stop after the
        batch they are committing and the first error is raised. Deadlocks between two writes
        that lock the same nodes are detected by the server and retried (``_transact``)."""
        workers = min(len(writes), env_rows(WRITERS_ENV, WRITERS, "writers"))
        if workers <= 1:
            return super().bulk_together(writes, progress)
        lock, stop = threading.Lock(), threading.Event()

        def committed(rows: int) -> None:
            with lock:
                if stop.is_set():
                    raise _Stopped
                if progress:
                    progress(rows)

        def write(name: str, columns: dict) -> None:
            if stop.is_set():
                return
            try:
                self.bulk(name, columns, committed)
            except BaseException:
                stop.set()  # before this thread can take the next write
                raise

        pool = ThreadPoolExecutor(workers, thread_name_prefix="basispath-write")
        # the longest first (most rows: certificate terms), so that no long write starts last
        order = sorted(writes, key=lambda w: -column_length(w[1]))
        futures = [pool.submit(write, name, columns) for name, columns in order]
        try:
            wait(futures, return_when=FIRST_EXCEPTION)  # a failed write has set ``stop`` itself
        except BaseException:  # Ctrl-C pressed twice while waiting: the writers stop too
            stop.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # the running ones stop after a batch
        errors = [f.exception() for f in futures if not f.cancelled() and f.exception() is not None]
        first = next((e for e in errors if not isinstance(e, _Stopped)), None)
        if first is not None:
            raise first

    def query(self, text: str, params: dict | None = None) -> tuple[list[str], list[list]]:
        """User Cypher; several statements separated by ``;`` run in order in one transaction
        and give the rows of the last, as on LadybugDB (the server takes one statement per
        query: "Expected exactly one statement per query but got: 2"). So a write hidden in a
        second statement meets the READ access mode like any other."""
        from .query_guard import check_read_only, statement_texts

        if not self.writable:  # READ access mode does not stop LOAD CSV (server files, URLs)
            check_read_only(text)
        return self._transact(statement_texts(text) or [text], params or {})

    def live_pids(self) -> set[int] | None:
        """PIDs of the basispath processes connected to this server now (their user agent), or
        None when the server does not say. A writer keeps its pooled connection open while it
        lives, and the server drops it when the process dies (SIGKILL included), so a run
        'running' whose PID is not here was killed. PIDs are per machine: a dead run that shares
        its PID with a live client elsewhere still shows as running (never the reverse)."""
        try:
            _, rows = self._transact(self.lib.statements("live_connections"), {})
        except StoreError:
            return None
        pids = set()
        for (agent,) in rows:
            head, _, pid = str(agent or "").partition(" pid/")
            if head == "basispath" and pid.isdigit():
                pids.add(int(pid))
        return pids

    def close(self) -> None:
        driver = getattr(self, "_driver", None)
        self._driver = None
        if driver is not None:
            driver.close()
