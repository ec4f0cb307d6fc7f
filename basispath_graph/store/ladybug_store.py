"""Embedded backend: LadybugDB (PyPI ``ladybug``), in-process, one folder on disk.

The folder holds the database file ``graph.lbug``. Only one process may open it for writing:
LadybugDB locks the file, and a second writer gets ``StoreLocked`` naming the holder's PID.
Read-only opens use LadybugDB's own read-only mode, so user queries cannot write.
"""

from __future__ import annotations

import re
from pathlib import Path

from .base import Ragged, Store, StoreError, StoreLocked, WriteRefused, python_columns
from .library import QueryLibrary

__all__ = ["LadybugStore", "DB_FILE"]

DB_FILE = "graph.lbug"
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
UNWIND_BATCH = 5000
# COPY costs ~0.2 s however few rows it loads (measured); small loads go through UNWIND.
COPY_THRESHOLD = 20000


def _used_params(statement: str, params: dict) -> dict:
    """LadybugDB refuses parameters a statement does not use; pass only the used ones."""
    names = set(_PARAM.findall(statement))
    return {k: v for k, v in params.items() if k in names}


def _arrow_table(columns: dict):
    """Columns as an Arrow table for COPY: numpy columns go in without Python objects."""
    import numpy as np
    import pyarrow as pa

    out = {}
    for key, col in columns.items():
        if isinstance(col, Ragged):
            out[key] = pa.ListArray.from_arrays(pa.array(col.offsets.astype(np.int32)), pa.array(col.values))
        else:
            out[key] = pa.array(col)
    return pa.table(out)


class LadybugStore(Store):
    backend = "ladybug"

    def __init__(self, folder: Path, write: bool = False, create: bool = False):
        import ladybug

        self.folder = Path(folder)
        self.writable = write
        self.lib = QueryLibrary("ladybug")
        db_file = self.folder / DB_FILE
        if not db_file.exists():
            if not create:
                raise StoreError(f"no store at {self.folder} (create one with 'basispath ingest' or 'basispath run')")
            if self.folder.exists() and not self.folder.is_dir():
                raise StoreError(f"store path {self.folder} exists and is not a folder")
            if self.folder.exists() and any(self.folder.iterdir()):
                raise StoreError(f"{self.folder} is not an empty folder and holds no store; refusing to write into it")
            self.folder.mkdir(parents=True, exist_ok=True)
        try:
            self._db = ladybug.Database(str(db_file), read_only=not write)
            self._conn = ladybug.Connection(self._db)
        except RuntimeError as exc:
            text = str(exc)
            holder = re.search(r"held by PID (\d+)", text)
            if "lock" in text.lower():
                pid = holder.group(1) if holder else "unknown"
                raise StoreLocked(f"store is locked by PID {pid} ({self.folder})") from None
            raise StoreError(f"cannot open store {self.folder}: {' '.join(text.split())}") from None
        if write:
            for statement in self.lib.statements("schema"):
                self._conn.execute(statement)

    # -- running queries ------------------------------------------------------------------
    def _execute(self, statement: str, params: dict):
        try:
            return self._conn.execute(statement, _used_params(statement, params))
        except RuntimeError as exc:
            text = " ".join(str(exc).split())
            if "read-only database" in text:
                raise WriteRefused(text) from None
            raise StoreError(text) from None

    @staticmethod
    def _rows(result) -> tuple[list[str], list[list]]:
        cols = result.get_column_names()
        rows = []
        while result.has_next():
            rows.append(result.get_next())
        return cols, rows

    def run(self, query_name: str, /, **params) -> list[dict]:
        cols, rows = [], []
        for statement in self.lib.statements(query_name):
            cols, rows = self._rows(self._execute(statement, params))
        return [dict(zip(cols, r)) for r in rows]

    def bulk(self, name: str, columns: dict[str, list], progress=None) -> None:
        n = len(next(iter(columns.values()))) if columns else 0
        if n == 0:
            return
        statements = self.lib.statements(name, shared_only=n < COPY_THRESHOLD)
        if statements[0].upper().startswith("COPY"):
            self._execute(statements[0], {"rows": _arrow_table(columns)})
            if progress:
                progress(n)
            return
        columns = python_columns(columns)
        keys = list(columns)
        for start in range(0, n, UNWIND_BATCH):
            rows = [dict(zip(keys, vals)) for vals in zip(*(columns[k][start : start + UNWIND_BATCH] for k in keys))]
            for statement in statements:
                self._execute(statement, {"rows": rows})
            if progress:
                progress(len(rows))

    def query(self, text: str, params: dict | None = None) -> tuple[list[str], list[list]]:
        return self._rows(self._execute(text, params or {}))

    def close(self) -> None:
        conn, db = getattr(self, "_conn", None), getattr(self, "_db", None)
        self._conn = self._db = None
        if conn is not None:
            conn.close()
        if db is not None:
            db.close()
