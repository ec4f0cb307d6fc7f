"""Embedded backend: LadybugDB (PyPI ``ladybug``), in-process, one folder on disk.

The folder holds the database file ``graph.lbug`` and the lock file ``store.lock``. Only one
process may open the store for writing; readers share it, but never with a writer. LadybugDB
itself only stops a second writer: a read-only open beside a live writer is not isolated from it
(it can read torn WAL records or pages a checkpoint is rewriting; upstream LadybugDB issues #666,
#766), so we hold an ``flock`` on ``store.lock`` for as long as the store is open: exclusive for
a writer (which records its PID there), shared for a reader. Whoever cannot get it fails at once
with ``StoreLocked`` naming the writer's PID, or retries for up to ``wait`` seconds.
Read-only opens also use LadybugDB's own read-only mode, so user queries cannot write.

Bulk loads are split into batches, each its own transaction (``BASISPATH_BATCH_ROWS`` rows,
default 5,000 through UNWIND and 1,000,000 through COPY); ``progress(rows)`` is called after each
batch is committed, which is where the crash-safety tests kill a run between batches.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import time
from pathlib import Path

from .base import BATCH_ENV, ArrowStrings, Nullable, Ragged, Store, StoreError, StoreLocked, WriteRefused, env_rows, python_columns
from .library import QueryLibrary

__all__ = ["LadybugStore", "holds_store", "DB_FILE", "LOCK_FILE", "BATCH_ENV", "WAIT_OPTION"]

DB_FILE = "graph.lbug"
LOCK_FILE = "store.lock"
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
UNWIND_BATCH = 5000
# COPY costs ~0.2 s however few rows it loads (measured); small loads go through UNWIND.
COPY_THRESHOLD = 20000
COPY_BATCH = 1_000_000
COPY_THRESHOLD_ENV = "BASISPATH_COPY_THRESHOLD"  # tests: force the COPY path for small loads
WAIT_POLL = 0.2  # seconds between attempts to get the lock under --wait
#: How a refusal names the option that waits instead: every CLI command that opens a store has
#: --wait; the Python API's open_store says wait=SECONDS in its place (graph_store.open_store).
WAIT_OPTION = "--wait SECONDS"


def holds_store(folder: Path) -> bool:
    """Whether FOLDER holds an embedded store, or one a writer is creating right now (its lock
    file is there, the database not yet)."""
    return (folder / DB_FILE).exists() or (folder / LOCK_FILE).is_file()


class _FolderLock:
    """An ``flock`` on ``folder/store.lock``: exclusive for the writer, shared for readers.

    ``flock`` locks belong to the open file, so they are released when it is closed or the
    process dies (a SIGKILLed writer never leaves a stale lock), and two opens in one process
    exclude each other like two processes do.
    """

    def __init__(self, folder: Path, write: bool):
        self.path = folder / LOCK_FILE
        self.write = write
        self.fd: int | None = None
        self.held = False

    def _open(self) -> int | None:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            if self.write:
                raise
        try:  # a reader of a store on read-only media: nobody can write it, so no lock is needed
            return os.open(self.path, os.O_RDONLY)
        except OSError:
            return None

    def try_acquire(self) -> bool:
        if self.fd is None:
            try:
                self.fd = self._open()
            except OSError as exc:
                raise StoreError(f"cannot open store {self.path.parent}: cannot create {LOCK_FILE}: {exc.strerror}") from None
            if self.fd is None:
                return True
        try:
            fcntl.flock(self.fd, (fcntl.LOCK_EX if self.write else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                return False
            raise
        self.held = True
        if self.write:  # tell whoever is refused who holds the store
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, f"{os.getpid()}\n".encode(), 0)
        return True

    def writer_pid(self) -> str | None:
        """The PID of the writer holding the lock, or None when only readers hold it."""
        probe = os.open(self.path, os.O_RDONLY)
        try:
            try:
                fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                text = os.pread(probe, 32, 0).decode(errors="replace").strip()
                return text if text.isdigit() else "unknown"
            return None
        finally:
            os.close(probe)  # also drops the probe's shared lock

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            if self.write and self.held:
                try:  # a writer that left names no one (a killed one leaves its PID: harmless)
                    os.ftruncate(fd, 0)
                except OSError:
                    pass
            self.held = False
            os.close(fd)


def _used_params(statement: str, params: dict) -> dict:
    """LadybugDB refuses parameters a statement does not use; pass only the used ones."""
    names = set(_PARAM.findall(statement))
    return {k: v for k, v in params.items() if k in names}


def _arrow_table(columns: dict):
    """Columns as an Arrow table for COPY: numpy columns go in without Python objects."""
    import pyarrow as pa

    return pa.table({key: _arrow_column(col) for key, col in columns.items()})


def _arrow_column(col):
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    missing = None  # a Nullable's null rows: a validity mask, no copy of the values
    if isinstance(col, Nullable):
        if isinstance(col.column, ArrowStrings):
            return pc.if_else(pa.array(col.valid), col.column.array, pa.scalar(None, pa.string()))
        col, missing = col.column, ~col.valid
    if isinstance(col, Ragged):
        # 64-bit offsets (large_list): a column of more than 2^31 list values (50 M paths
        # of a deep network) would wrap around in list's int32 offsets.
        offsets = pa.array(col.offsets.astype(np.int64, copy=False))
        return pa.LargeListArray.from_arrays(offsets, pa.array(col.values), mask=None if missing is None else pa.array(missing))
    if isinstance(col, ArrowStrings):
        return col.array
    return pa.array(col) if missing is None else pa.array(np.asarray(col), mask=missing)


class LadybugStore(Store):
    backend = "ladybug"

    def __init__(self, folder: Path, write: bool = False, create: bool = False, wait: float = 0):
        self.folder = Path(folder)
        self.writable = write
        self.lib = QueryLibrary("ladybug")
        self._lock = None
        db_file = self.folder / DB_FILE
        if not db_file.exists():
            if not create:
                if not holds_store(self.folder):
                    raise StoreError(self._missing())
                # else: being created by a writer right now; _open tells once it can look
            elif self.folder.exists() and not self.folder.is_dir():
                raise StoreError(f"store path {self.folder} exists and is not a folder")
            elif self.folder.exists() and any(p.name != LOCK_FILE for p in self.folder.iterdir()):
                raise StoreError(f"{self.folder} is not an empty folder and holds no store; refusing to write into it")
            else:
                self.folder.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + max(0.0, wait)
        try:
            while True:
                try:
                    self._open(db_file, write)
                    break
                except StoreLocked:
                    self.close()
                    if time.monotonic() >= deadline:
                        raise
                    time.sleep(min(WAIT_POLL, max(0.0, deadline - time.monotonic())))
            if write:
                for statement in self.lib.statements("schema"):
                    self._conn.execute(statement)
        except BaseException:
            self.close()
            raise

    def _open(self, db_file: Path, write: bool) -> None:
        """One attempt: take the folder lock, then open the database (``StoreLocked`` if held)."""
        import ladybug

        self._lock = _FolderLock(self.folder, write)
        if not self._lock.try_acquire():
            pid = self._lock.writer_pid()
            if pid is not None or not self._lock.try_acquire():  # (None: the holder may just have left)
                raise StoreLocked(self._held_message(pid, write))
        if not write and not db_file.exists():
            raise StoreError(self._missing())
        try:
            self._db = ladybug.Database(str(db_file), read_only=not write)
            self._conn = ladybug.Connection(self._db)
        except RuntimeError as exc:
            text = str(exc)
            holder = re.search(r"held by PID (\d+)", text)
            if "lock" in text.lower():  # a writer that does not take store.lock (an older version)
                pid = holder.group(1) if holder else "unknown"
                raise StoreLocked(self._held_message(pid, write=True)) from None
            raise StoreError(f"cannot open store {self.folder}: {' '.join(text.split())}") from None

    def _missing(self) -> str:
        return f"no store at {self.folder} (create one with 'basispath ingest' or 'basispath run')"

    def _held_message(self, pid: str | None, write: bool) -> str:
        if pid is None:
            return f"store is being read by another process ({self.folder}); try again, or use {WAIT_OPTION}"
        if write:
            return f"store is locked by PID {pid} ({self.folder}): another basispath is writing; retry with {WAIT_OPTION}"
        return (
            f"store is being written by PID {pid} ({self.folder}); a run in progress cannot be read until it ends: "
            f"try again, or use {WAIT_OPTION}"
        )

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
        statements = self.lib.statements(name, shared_only=n < env_rows(COPY_THRESHOLD_ENV, COPY_THRESHOLD))
        if statements[0].upper().startswith("COPY"):
            table = _arrow_table(columns)
            batch = env_rows(BATCH_ENV, COPY_BATCH)
            for start in range(0, n, batch):
                chunk = table.slice(start, batch)
                self._execute(statements[0], {"rows": chunk})
                if progress:
                    progress(chunk.num_rows)
            return
        columns = python_columns(columns)
        keys = list(columns)
        batch = env_rows(BATCH_ENV, UNWIND_BATCH)
        for start in range(0, n, batch):
            rows = [dict(zip(keys, vals)) for vals in zip(*(columns[k][start : start + batch] for k in keys))]
            for statement in statements:
                self._execute(statement, {"rows": rows})
            if progress:
                progress(len(rows))

    def query(self, text: str, params: dict | None = None) -> tuple[list[str], list[list]]:
        if not self.writable:  # what LadybugDB's read-only mode lets through (file access, ...)
            from .query_guard import check_read_only

            check_read_only(text)
        result = self._execute(text, params or {})
        if isinstance(result, list):  # several statements: the rows of the last one
            result = result[-1]
        return self._rows(result)

    def close(self) -> None:
        conn, db = getattr(self, "_conn", None), getattr(self, "_db", None)
        self._conn = self._db = None
        if conn is not None:
            conn.close()
        if db is not None:
            db.close()
        lock, self._lock = getattr(self, "_lock", None), None
        if lock is not None:  # only after the database is closed (and checkpointed)
            lock.release()
