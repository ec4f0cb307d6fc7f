"""Graph storage of networks, runs and every DEAH artifact: LadybugDB (embedded) or Neo4j 5."""

from .base import Store, StoreError, StoreUnavailable, open_store, resolve_store_uri

__all__ = ["Store", "StoreError", "StoreUnavailable", "open_store", "resolve_store_uri"]
