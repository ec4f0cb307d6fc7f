"""Graph storage of networks, runs and every DEAH artifact: LadybugDB (embedded) or Neo4j 5.

``open_store`` picks the backend from a URI; both implement ``base.Store``. Run records are
``runs.py``, a solved run's artifacts ``artifacts.py``, Step 1 and its Cypher-derived relations
``relations.py``, the named-query library ``library.py``.
"""

from __future__ import annotations

from pathlib import Path

from .base import Store, StoreError, StoreLocked, StoreUnavailable, is_neo4j_uri, resolve_store_uri

__all__ = ["Store", "StoreError", "StoreUnavailable", "StoreLocked", "open_store", "resolve_store_uri"]


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
        from .neo4j_store import Neo4jStore  # imported here: the driver is only loaded when used

        return Neo4jStore(uri, write=write)
    if "://" in uri:
        raise StoreError(f"unsupported store URI {uri!r}: use a folder path or neo4j://, neo4j+s://, bolt:// URIs")
    from .ladybug_store import LadybugStore

    return LadybugStore(Path(uri), write=write, create=write if create is None else create, wait=wait)
