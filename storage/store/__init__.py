"""The only code that talks to the results store.

One connection per Store, in autocommit mode with explicit short transactions: an episode's
steps are committed once per turn, before its next model call is sent (and the last ones with
the trajectory's result), so a killed run loses at most each episode's turn in flight, which a
resume discards anyway with the unfinished trajectory. A run commits the writes of all its
episodes at one moment together (`storage.step_writer`), through the `insert_…` and
`record_result` functions, which write inside the caller's transaction.
WAL lets the TUI read while a run writes; a generous busy timeout makes two writing
processes wait for each other instead of failing with `database is locked`.

Its methods are grouped by the table they work on, one module each, over one connection (`connection`): `runs`,
`trajectories`, `steps`, `judgments`, `audit`, and `live` (a run in progress as another process follows it);
`columns` holds how values cross the columns.
"""

from __future__ import annotations

from storage.store.audit import AuditTables
from storage.store.judgments import JudgmentsTable
from storage.store.live import LiveReads
from storage.store.runs import RunsTable
from storage.store.trajectories import TrajectoriesTable


class Store(RunsTable, TrajectoriesTable, JudgmentsTable, AuditTables, LiveReads):
    """A results store file. Not shared across threads; open one per thread or process."""


__all__ = ["Store"]
