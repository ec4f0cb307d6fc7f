"""The store interface both backends implement (``Store``) and what they share; the factory that
picks a backend from a URI is ``store.open_store`` (store/__init__.py)."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod

from ..errors import StoreError, StoreLocked, StoreUnavailable

__all__ = ["BATCH_ENV", "env_rows", "Store", "Ragged", "ArrowStrings", "column_length", "columns_from", "concat_columns", "StoreError", "StoreUnavailable", "StoreLocked", "WriteRefused", "resolve_store_uri", "is_neo4j_uri", "DEFAULT_STORE"]

DEFAULT_STORE = "./basispath-store"
BATCH_ENV = "BASISPATH_BATCH_ROWS"  # rows per bulk transaction, both backends
NEO4J_SCHEMES = ("neo4j://", "neo4j+s://", "neo4j+ssc://", "bolt://", "bolt+s://", "bolt+ssc://")


class WriteRefused(StoreError):
    """A query tried to write to a store opened read-only."""


class Store(ABC):
    """A graph store that runs named queries from the ``cypher/`` library (LadybugDB or Neo4j).

    ``run(name, **params)`` runs a named query (every statement of its file) and returns the rows
    of the last one as dicts. ``bulk(name, columns)`` loads many rows with the named query:
    ``columns`` maps column name -> list of values, all of one length; ``bulk_together(writes)``
    loads several independent ones. ``query(text, params)`` runs
    user Cypher and returns (columns, rows); it is read-only unless the store was opened with
    ``write=True``. ``close()`` releases it (the embedded store's lock, the driver).
    """

    backend: str = ""
    writable: bool = False

    @abstractmethod
    def run(self, query_name: str, /, **params) -> list[dict]: ...

    @abstractmethod
    def bulk(self, name: str, columns: dict[str, list], progress=None) -> None: ...

    def bulk_together(self, writes: list[tuple[str, dict]], progress=None) -> None:
        """``bulk`` of several independent writes (none reads rows another of them writes). Here
        one after the other; a server backend may run them at once, each still in order, so that
        each write's stored rows stay a prefix of its rows (``store/resume.py``)."""
        for name, columns in writes:
            self.bulk(name, columns, progress)

    @abstractmethod
    def query(self, text: str, params: dict | None = None) -> tuple[list[str], list[list]]: ...

    @abstractmethod
    def close(self) -> None: ...

    def live_pids(self) -> set[int] | None:
        """PIDs of the basispath processes connected to a server; None where there is no
        server to ask (an embedded store's writer lock keeps writers out instead)."""
        return None

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

    @classmethod
    def from_mask(cls, values, mask) -> "Ragged":
        """Row i lists ``values[i][mask[i]]`` (2-D arrays of one shape), in column order."""
        import numpy as np

        mask = np.asarray(mask, dtype=bool)
        return cls(np.asarray(values)[mask], np.concatenate([[0], np.cumsum(mask.sum(axis=1))]))

    @classmethod
    def empty(cls, n: int) -> "Ragged":
        """n empty lists."""
        import numpy as np

        return cls(np.zeros(0, dtype=np.int64), np.zeros(n + 1, dtype=np.int64))

    @classmethod
    def concat(cls, columns: list["Ragged"]) -> "Ragged":
        import numpy as np

        values = [c.values[c.offsets[0] : c.offsets[-1]] for c in columns]
        offsets, base = [np.zeros(1, dtype=np.int64)], 0
        for c in columns:
            offsets.append(c.offsets[1:] - c.offsets[0] + base)
            base += int(c.offsets[-1] - c.offsets[0])
        return cls(np.concatenate(values) if values else np.zeros(0, np.int64), np.concatenate(offsets))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, which: slice) -> "Ragged":
        start, stop, step = which.indices(len(self))
        if step != 1:
            raise ValueError("Ragged takes contiguous slices only")
        offsets = self.offsets[start : stop + 1]
        return Ragged(self.values[offsets[0] : offsets[-1]], offsets - offsets[0])

    def tolist(self) -> list[list[int]]:
        v, o = self.values.tolist(), self.offsets.tolist()
        return [v[o[i] : o[i + 1]] for i in range(len(o) - 1)]


class ArrowStrings:
    """A string column built by Arrow's compute kernels (uids, path texts): millions of strings
    without a Python object each. Backends read it like a list column: ``len``, slices,
    ``tolist()``; LadybugDB's COPY takes ``array`` as it is."""

    def __init__(self, array):
        self.array = array

    @classmethod
    def keys(cls, prefix: str, ids) -> "ArrowStrings":
        """``f"{prefix}{i}"`` for every integer i of ``ids`` (the uid form ``run:17``)."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        numbers = pc.cast(pa.array(np.asarray(ids, dtype=np.int64)), pa.string())
        return cls(pc.binary_join_element_wise(prefix, numbers, ""))

    @classmethod
    def paths(cls, layers, nodes) -> "ArrowStrings":
        """``verify.format_path`` of every row of ``nodes`` (neuron of layers[k] in column k):
        ``"0:1,2:0,4:2"``."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        nodes = np.asarray(nodes, dtype=np.int64)
        parts: list = []
        for k, layer in enumerate(layers):
            parts.append(f"{',' if k else ''}{int(layer)}:")
            parts.append(pc.cast(pa.array(nodes[:, k]), pa.string()))
        if len(nodes) == 0 or not parts:
            return cls(pa.array([""] * len(nodes), type=pa.string()))
        return cls(pc.binary_join_element_wise(*parts, ""))

    @classmethod
    def repeat(cls, text: str, n: int) -> "ArrowStrings":
        import pyarrow as pa

        return cls(pa.array([text] * n, type=pa.string()))

    @classmethod
    def concat(cls, columns: list["ArrowStrings"]) -> "ArrowStrings":
        import pyarrow as pa

        arrays = [c.array for c in columns if len(c.array)]
        return cls(pa.concat_arrays(arrays) if arrays else pa.array([], type=pa.string()))

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, which: slice) -> "ArrowStrings":
        return ArrowStrings(self.array[which])

    def take(self, rows) -> "ArrowStrings":
        """The strings at ``rows`` (integers, repeats allowed): a relationship's ends as the uids
        its nodes were written with, copied, not formatted again (3x faster than ``keys``)."""
        import numpy as np
        import pyarrow as pa

        return ArrowStrings(self.array.take(pa.array(np.asarray(rows, dtype=np.int64))))

    def tolist(self) -> list[str]:
        return self.array.to_pylist()


class Nullable:
    """A bulk column whose rows where ``valid`` is false are null: a property a row does not
    have (a ``Discard``'s properties of the other rules), NULL on LadybugDB and absent on Neo4j,
    where a property set to null costs nothing (measured: a Discard node 50 us with all 18
    properties, 33 us with the 11 its rule uses). ``column`` (numpy, ``Ragged`` or
    ``ArrowStrings``) holds any value in those rows."""

    def __init__(self, column, valid):
        import numpy as np

        self.column = column
        self.valid = np.asarray(valid, dtype=bool)

    @classmethod
    def none(cls, column) -> "Nullable":
        """Every row of ``column`` null (it gives the length and the backend's type)."""
        import numpy as np

        return cls(column, np.zeros(len(column), dtype=bool))

    @classmethod
    def concat(cls, columns: list["Nullable"]) -> "Nullable":
        import numpy as np

        inner = [c.column for c in columns]
        joined = type(inner[0]).concat(inner) if hasattr(type(inner[0]), "concat") else np.concatenate(inner)
        return cls(joined, np.concatenate([c.valid for c in columns]))

    def __len__(self) -> int:
        return len(self.valid)

    def __getitem__(self, which: slice) -> "Nullable":
        return Nullable(self.column[which], self.valid[which])

    def tolist(self) -> list:
        values = self.column.tolist()
        return [v if ok else None for v, ok in zip(values, self.valid.tolist())]


def column_length(columns: dict) -> int:
    """Rows of bulk columns (all of one length); 0 for no columns."""
    return len(next(iter(columns.values()))) if columns else 0


def columns_from(columns: dict, start: int) -> dict:
    """Bulk columns without their first ``start`` rows (lists, numpy arrays, ``Ragged``,
    ``ArrowStrings``, ``Nullable``)."""
    return {k: v[start:] for k, v in columns.items()}


def concat_columns(parts: list[dict]) -> dict:
    """Bulk columns of one table, one part after the other (lists, numpy arrays, ``Ragged``,
    ``ArrowStrings``, ``Nullable``; parts of no rows may be ``{}``)."""
    import numpy as np

    parts = [p for p in parts if column_length(p)]
    if len(parts) < 2:
        return parts[0] if parts else {}
    out = {}
    for key, first in parts[0].items():
        cols = [p[key] for p in parts]
        if isinstance(first, (Ragged, ArrowStrings, Nullable)):
            out[key] = type(first).concat(cols)
        elif isinstance(first, np.ndarray):
            out[key] = np.concatenate(cols)
        else:
            out[key] = [v for c in cols for v in c]
    return out


def env_rows(name: str, default: int, what: str = "rows") -> int:
    """A count of WHAT (rows, writers) from the environment variable NAME (whole number >= 1),
    else DEFAULT."""
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise StoreError(f"{name} must be a whole number of {what} >= 1, got {raw!r}") from None
    if value < 1:
        raise StoreError(f"{name} must be a whole number of {what} >= 1, got {raw!r}")
    return value


def python_columns(columns: dict) -> dict[str, list]:
    """Bulk columns as plain lists (numpy arrays and Ragged: one value or list per row)."""
    return {k: (v.tolist() if hasattr(v, "tolist") else list(v)) for k, v in columns.items()}


def resolve_store_uri(uri: str | None) -> str:
    """--store, else $BASISPATH_STORE, else ./basispath-store."""
    return uri or os.environ.get("BASISPATH_STORE") or DEFAULT_STORE


def is_neo4j_uri(uri: str) -> bool:
    return uri.lower().startswith(NEO4J_SCHEMES)
