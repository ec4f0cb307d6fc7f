"""Server backend: Neo4j 5 through the official ``neo4j`` driver (py2neo is end-of-life).

Credentials come only from NEO4J_USER / NEO4J_PASSWORD, or an interactive prompt; they are never
taken from the command line, printed, logged or stored. An unreachable server or refused
credentials raise ``StoreUnavailable`` (CLI exit code 3) within a bounded time.
"""

from __future__ import annotations

import getpass
import logging
import os
import sys

from .base import Store, StoreError, StoreUnavailable, WriteRefused, python_columns
from .library import QueryLibrary

__all__ = ["Neo4jStore", "neo4j_credentials"]

# The driver logs connection failures itself; we report them in one line instead.
logging.getLogger("neo4j").addHandler(logging.NullHandler())
logging.getLogger("neo4j").propagate = False

BATCH = 5000
CONNECT_TIMEOUT_S = 10.0
RETRY_TIME_S = 15.0


def neo4j_credentials() -> tuple[str, str]:
    user = os.environ.get("NEO4J_USER")
    password = os.environ.get("NEO4J_PASSWORD")
    if user and password is not None:
        return user, password
    if sys.stdin.isatty():
        user = user or input("Neo4j user: ")
        return user, getpass.getpass("Neo4j password: ")
    raise StoreUnavailable("Neo4j credentials missing: set NEO4J_USER and NEO4J_PASSWORD")


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


class Neo4jStore(Store):
    backend = "neo4j"

    def __init__(self, uri: str, write: bool = False):
        import neo4j
        from neo4j.exceptions import AuthError, ConfigurationError, ServiceUnavailable

        self.uri, self.writable = uri, write
        self.lib = QueryLibrary("neo4j")
        self.database = os.environ.get("NEO4J_DATABASE") or None
        user, password = neo4j_credentials()
        try:
            self._driver = neo4j.GraphDatabase.driver(
                uri,
                auth=(user, password),
                connection_timeout=CONNECT_TIMEOUT_S,
                max_transaction_retry_time=RETRY_TIME_S,
            )
            self._driver.verify_connectivity()
        except AuthError:
            raise StoreUnavailable(f"Neo4j at {uri} refused the credentials from NEO4J_USER / NEO4J_PASSWORD") from None
        except (ServiceUnavailable, OSError) as exc:
            raise StoreUnavailable(f"cannot reach Neo4j at {uri}: {type(exc).__name__}") from None
        except (ConfigurationError, ValueError) as exc:
            raise StoreUnavailable(f"bad Neo4j URI {uri}: {exc}") from None
        self._access = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        if write:
            for statement in self.lib.statements("schema"):
                self._session().run(statement).consume()

    def _session(self):
        return self._driver.session(database=self.database, default_access_mode=self._access)

    def _transact(self, statements: list[str], params: dict) -> tuple[list[str], list[list]]:
        from neo4j.exceptions import Neo4jError

        def work(tx):
            keys, rows = [], []
            for statement in statements:
                result = tx.run(statement, params)
                keys, rows = list(result.keys()), [[_plain(v) for v in rec.values()] for rec in result]
            return keys, rows

        try:
            with self._session() as session:
                runner = session.execute_write if self.writable else session.execute_read
                return runner(work)
        except Neo4jError as exc:
            if not self.writable and "AccessMode" in str(exc.code or ""):
                raise WriteRefused(str(exc.message)) from None
            raise StoreError(f"Neo4j: {exc.code}: {' '.join(str(exc.message).split())}") from None

    def run(self, query_name: str, /, **params) -> list[dict]:
        keys, rows = self._transact(self.lib.statements(query_name), params)
        return [dict(zip(keys, r)) for r in rows]

    def bulk(self, name: str, columns: dict[str, list], progress=None) -> None:
        columns = python_columns(columns)
        keys = list(columns)
        n = len(columns[keys[0]]) if keys else 0
        statements = self.lib.statements(name)
        for start in range(0, n, BATCH):
            rows = [dict(zip(keys, vals)) for vals in zip(*(columns[k][start : start + BATCH] for k in keys))]
            self._transact(statements, {"rows": rows})
            if progress:
                progress(len(rows))

    def query(self, text: str, params: dict | None = None) -> tuple[list[str], list[list]]:
        return self._transact([text], params or {})

    def close(self) -> None:
        driver = getattr(self, "_driver", None)
        self._driver = None
        if driver is not None:
            driver.close()
