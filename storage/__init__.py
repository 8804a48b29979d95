"""The results store: SQLite (WAL), forward-only migrations, one writer. Imports neither sandbox nor stats."""

from storage.store import RunConflict, Store, StoreError

__all__ = ["RunConflict", "Store", "StoreError"]
