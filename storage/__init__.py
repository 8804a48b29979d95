"""The results store: SQLite (WAL), forward-only migrations, one writer. Imports neither sandbox nor stats."""

from storage.errors import RunConflict, StoreError
from storage.store import Store

__all__ = ["RunConflict", "Store", "StoreError"]
