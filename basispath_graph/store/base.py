"""The store interface both backends implement, and ``open_store`` that picks one from a URI."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import StoreError, StoreLocked, StoreUnavailable

__all__ = ["BATCH_ENV", "env_rows", "Store", "StoreError", "StoreUnavailable", "StoreLocked", "WriteRefused", "open_store", "resolve_store_uri", "DEFAULT_STORE"]

DEFAULT_STORE = "./basispath-store"
BATCH_ENV = "BASISPATH_BATCH_ROWS"  # rows per bulk transaction, both backends
NEO4J_SCHEMES = ("neo4j://", "neo4j+s://", "neo4j+ssc://", "bolt://", "bolt+s://", "bolt+ssc://")


class WriteRefused(StoreError):
    """A query tried to write to a store opened read-only."""


class Store:
    """A graph store that runs named queries from the ``cypher/`` library.

    ``run(name, **params)`` runs a named query (every statement of its file) and returns the rows
    of the last one as dicts. ``bulk(name, columns)`` loads many rows with the named query:
    ``columns`` maps column name -> list of values, all of one length. ``query(text, params)`` runs
    user Cypher and returns (columns, rows); it is read-only unless the store was opened with
    ``write=True``.
    """

    backend: str = ""
    writable: bool = False

    def run(self, query_name: str, /, **params) -> list[dict]:
        raise NotImplementedError

    def bulk(self, name: str, columns: dict[str, list], progress=None) -> None:
        raise NotImplementedError

    def query(self, text: str, params: dict | None = None) -> tuple[list[str], list[list]]:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Ragged:
    """A list column without per-row Python lists: row i is ``values[offsets[i]:offsets[i+1]]``."""

    def __init__(self, values, offsets):
        import numpy as np

        self.values = np.asarray(values, dtype=np.int64)
        self.offsets = np.asarray(offsets, dtype=np.int64)

    @classmethod
    def from_rows(cls, arrays) -> "Ragged":
        """Stack 2-D arrays of possibly different widths (one list per row)."""
        import numpy as np

        arrays = [np.asarray(a, dtype=np.int64) for a in arrays]
        lengths = np.concatenate([np.full(len(a), a.shape[1], dtype=np.int64) for a in arrays]) if arrays else np.zeros(0, np.int64)
        values = np.concatenate([a.ravel() for a in arrays]) if arrays else np.zeros(0, np.int64)
        return cls(values, np.concatenate([[0], np.cumsum(lengths)]))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def tolist(self) -> list[list[int]]:
        v, o = self.values.tolist(), self.offsets.tolist()
        return [v[o[i] : o[i + 1]] for i in range(len(o) - 1)]


def env_rows(name: str, default: int) -> int:
    """A row count from the environment variable NAME (whole number >= 1), else DEFAULT."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise StoreError(f"{name} must be a whole number of rows >= 1, got {raw!r}") from None
    if value < 1:
        raise StoreError(f"{name} must be a whole number of rows >= 1, got {raw!r}")
    return value


def python_columns(columns: dict) -> dict[str, list]:
    """Bulk columns as plain lists (numpy arrays and Ragged: one value or list per row)."""
    return {k: (v.tolist() if hasattr(v, "tolist") else list(v)) for k, v in columns.items()}


def resolve_store_uri(uri: str | None) -> str:
    """--store, else $BASISPATH_STORE, else ./basispath-store."""
    return uri or os.environ.get("BASISPATH_STORE") or DEFAULT_STORE


def is_neo4j_uri(uri: str) -> bool:
    return uri.lower().startswith(NEO4J_SCHEMES)


def open_store(uri: str | None = None, write: bool = False, create: bool | None = None, wait: float = 0) -> Store:
    """Open the store at ``uri`` (a folder for LadybugDB, or a neo4j:// / bolt:// URI).

    write=False opens the database read-only where the backend offers it (LadybugDB read-only
    mode, Neo4j READ access mode). create defaults to ``write``: a missing embedded store is only
    created by commands that write.

    An embedded store has one writer or any number of readers at a time, never both; when it is
    held, ``StoreLocked`` is raised at once, or after retrying for ``wait`` seconds. (A Neo4j
    server isolates transactions itself; ``wait`` does not apply.)
    """
    uri = resolve_store_uri(uri)
    if is_neo4j_uri(uri):
        from .neo4j_store import Neo4jStore

        return Neo4jStore(uri, write=write)
    if "://" in uri:
        raise StoreError(f"unsupported store URI {uri!r}: use a folder path or neo4j://, neo4j+s://, bolt:// URIs")
    from .ladybug_store import LadybugStore

    return LadybugStore(Path(uri), write=write, create=write if create is None else create, wait=wait)
