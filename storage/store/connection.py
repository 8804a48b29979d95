"""The store file's one connection: opened read-write (created, refused if it is someone else's database, migrated)
or read-only (checked in one line, not at the first query), closed, and short explicit transactions over it.

Every table's methods (`storage.store`) build on this class; see the package's docstring for why one connection in
autocommit mode with short transactions, WAL and a generous busy timeout.

The connection is the store's write door: whatever method writes, SQLite's "attempt to write a readonly database"
and "database or disk is full" leave it as the store's own errors (`StoreReadOnly`, `StoreFull`, naming the file
and why), never as an `OperationalError` traceback. Opened read-write, a store this process cannot write is refused
at once, before SQLite creates anything beside it; opened read-only, it reads."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, Self

from storage.access import check_writable, store_error
from storage.errors import StoreError
from storage.schema import SCHEMA_VERSION, SchemaTooNew, migrate, schema_version


class StoreSQLite(sqlite3.Connection):
    """The store's SQLite connection: a write SQLite refuses as read-only or out of room raises the store's error
    (`storage.access.store_error`), whichever table's method wrote."""

    store_path: Path

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.OperationalError as exc:
            error = store_error(self.store_path, exc)
            if error is None:
                raise
            raise error from None

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, parameters)
        except sqlite3.OperationalError as exc:
            error = store_error(self.store_path, exc)
            if error is None:
                raise
            raise error from None


class StoreConnection:
    """A results store file's connection. Not shared across threads; open one per thread or process."""

    conn: StoreSQLite

    def __init__(self, path: Path | str, readonly: bool = False):
        self.path = Path(path)
        if self.path.is_dir():
            raise StoreError(
                f"{self.path} is a directory, not a store file (e.g. {self.path / 'runs.sqlite'})",
                remedy="another_store",
            )
        if not readonly:
            check_writable(self.path)  # before SQLite creates its journal or the file beside it
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise store_error(self.path, exc) or StoreError(
                    f"cannot create the folder of the store {self.path}: {(exc.strerror or str(exc)).lower()}"
                ) from None
        elif not self.path.exists():
            raise StoreError(f"no store at {self.path}")
        try:
            self.conn = self._connect("mode=ro" if readonly else "")
            self.conn.execute("PRAGMA busy_timeout = 60000")
            self.conn.execute("PRAGMA foreign_keys = ON")
            if not readonly:
                self._refuse_foreign()  # before WAL mode, which rewrites the file's header
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.conn.execute("PRAGMA synchronous = NORMAL")
                migrate(self.conn)
            else:
                self._check_readable()
        except SchemaTooNew as exc:
            raise StoreError(f"{self.path}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: not a workbench store ({exc})") from None
        self.conn.row_factory = sqlite3.Row

    def _connect(self, query: str) -> StoreSQLite:
        uri = f"file:{self.path}?{query}" if query else f"file:{self.path}"
        conn = sqlite3.connect(
            uri, uri=True, isolation_level=None, timeout=60, check_same_thread=False, factory=StoreSQLite
        )
        conn.store_path = self.path
        return conn

    @cached_property
    def db(self) -> Any:
        """sqlite-utils' view of the same connection, for ad-hoc use; imported on first use, because importing
        it costs a third of a second that every headless command would otherwise pay."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    def _refuse_foreign(self) -> None:
        """An SQLite file no workbench wrote (schema version 0) that holds tables is someone else's database:
        adding our tables beside theirs would damage it. A new or empty file becomes a store."""
        if schema_version(self.conn) != 0:
            return
        tables = [
            r[0]
            for r in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name LIMIT 4"
            )
        ]
        if tables:
            shown = ", ".join(tables[:3]) + (", …" if len(tables) > 3 else "")
            raise StoreError(
                f"{self.path}: not a workbench store (an SQLite database with other tables: {shown}); "
                "nothing was changed",
                remedy="another_store",
            )

    def _check_readable(self) -> None:
        """A read-only open must fail here, in one line, not at the first query: a file that is not SQLite, an
        SQLite file no workbench wrote (version 0: any empty file), one from a newer workbench. One from an older
        workbench is migrated through a short read-write connection, as any read-write open would."""
        version = self._readable_version()
        if version == 0:
            raise StoreError(f"{self.path}: not a workbench store (no schema version)")
        if version < SCHEMA_VERSION:
            try:
                writer = sqlite3.connect(self.path, isolation_level=None, timeout=60)
                try:
                    migrate(writer)
                finally:
                    writer.close()
            except sqlite3.OperationalError as exc:
                raise StoreError(
                    f"{self.path}: written by an older workbench (schema {version}) and cannot be "
                    f"upgraded here ({exc}); open it once where it is writable"
                ) from None

    def _readable_version(self) -> int:
        """The schema version, read. A store in WAL mode whose folder cannot be written has no shared-memory file
        for its readers and SQLite cannot create one: nothing can write the store from here either, so it is read
        as an immutable file (SQLite then needs no shared memory)."""
        try:
            return schema_version(self.conn)
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorname", "") != "SQLITE_CANTOPEN" or os.access(self.path.parent, os.W_OK):
                raise
        self.conn.close()
        self.conn = self._connect("mode=ro&immutable=1")
        return schema_version(self.conn)

    def close(self) -> None:
        """Close the connection; the last one to close folds the WAL into the database file, so a copy of the file
        alone (a backup, a test fixture) then holds every commit."""
        self.conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            if self.conn.in_transaction:  # SQLite itself rolls back a transaction a full disk ended
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def data_version(self) -> int:
        """SQLite's `PRAGMA data_version`: changes whenever another connection commits (a cheap poll)."""
        return self.conn.execute("PRAGMA data_version").fetchone()[0]
