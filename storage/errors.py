"""The store's errors a user can act on: raised by the `Store`, the run lock and the merge alike, so each front end
catches one class and words its remedy."""

from __future__ import annotations


class StoreError(Exception):
    """A store problem a user can act on (unreadable file, newer schema, unknown run).

    The message says what is wrong in the store's terms; `remedy` names what the user can do about it (a key:
    "another_store", "rename_or_delete_run"), and each front end words the remedy in its own controls (the CLI
    in flags, the TUI in keys), so storage never speaks in either's."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)

    def __init__(self, message: str, remedy: str | None = None, run: str | None = None):
        super().__init__(message)
        self.remedy, self.run = remedy, run


class RunConflict(StoreError):
    """Resuming into a run whose recorded configuration differs from the requested one."""


class StoreReadOnly(StoreError):
    """The store cannot be written here: its mode, an immutable flag, its folder, a file system mounted read-only."""


class StoreFull(StoreError):
    """The store's disk is full (or SQLite's own size limit is reached): nothing more can be committed."""
