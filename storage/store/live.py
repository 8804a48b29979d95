"""What a reader following a run in progress asks the store: the steps committed since it last looked.

A run's writer (`storage.step_writer`) commits every episode's steps once per turn; a reader in another process
(the TUI's Live screen on a run `--batch` executes) polls. Each question reads only what moved: the episodes in
flight come from the (run_id, final, status) index and their new steps from the steps' (trajectory_id, idx)
key, no texts; the trajectories finished since are those above the highest id the reader saw or among the ones
it saw in flight (ids are given when an episode starts, so a finish is always one of the two).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from storage.rows import FinishedRow, LiveStepRow, TerminationTally
from storage.store.columns import as_records
from storage.store.connection import StoreConnection

_FINISHED_COLUMNS = "id, item_id, replicate, termination, correct, cost_usd, error"
_FINISHED_WHERE = "run_id = ? AND final = 1 AND status = 'done'"


class LiveReads(StoreConnection):
    """A run in progress as a reader in another process follows it (see the module docstring)."""

    def live_steps(self, run_id: int, known: Mapping[int, int]) -> list[LiveStepRow]:
        """The run's trajectories in flight, in the order they started, each with its steps from the index `known`
        gives it on (0 for one not seen yet): a row per new step, or one row with the step's columns None."""
        rows = self.conn.execute(
            "WITH known(tid, nxt) AS (SELECT CAST(key AS INTEGER), value FROM json_each(?)) "
            "SELECT t.id AS trajectory_id, t.item_id, t.replicate, s.idx, s.turn, s.kind, s.tool_name, s.tool_args, "
            "s.cost_usd, s.points_used, s.tokens, s.rejections "
            "FROM trajectories t LEFT JOIN known k ON k.tid = t.id "
            "LEFT JOIN steps s ON s.trajectory_id = t.id AND s.idx >= COALESCE(k.nxt, 0) "
            "WHERE t.run_id = ? AND t.final = 0 AND t.status = 'running' ORDER BY t.id, s.idx",
            (json.dumps({str(tid): nxt for tid, nxt in known.items()}), run_id),
        )
        return as_records(rows, LiveStepRow)

    def finished_since(self, run_id: int, after_id: int, ids: Iterable[int]) -> list[FinishedRow]:
        """The run's final trajectories finished since a reader last looked: those with an id above `after_id` (the
        highest it had seen) and those among `ids` (the ones it saw in flight), in id order."""
        rows = self.conn.execute(
            f"SELECT {_FINISHED_COLUMNS} FROM trajectories WHERE {_FINISHED_WHERE} AND id > ? "
            f"UNION SELECT {_FINISHED_COLUMNS} FROM trajectories "
            f"WHERE {_FINISHED_WHERE} AND id IN (SELECT value FROM json_each(?)) ORDER BY id",
            (run_id, after_id, run_id, json.dumps(sorted(ids))),
        )
        return as_records(rows, FinishedRow)

    def run_tally(self, run_id: int, since: str) -> list[TerminationTally]:
        """The run's finished final trajectories by termination: how many, correct, cost, how many finished at or
        after `since` (an ISO time as the store writes them: the session's start), and the highest id."""
        rows = self.conn.execute(
            "SELECT termination, COUNT(*) AS n, COALESCE(SUM(correct), 0) AS n_correct, SUM(cost_usd) AS cost, "
            "COALESCE(SUM(finished_at >= ?), 0) AS since, MAX(id) AS max_id FROM trajectories "
            f"WHERE {_FINISHED_WHERE} GROUP BY termination",
            (since, run_id),
        )
        return as_records(rows, TerminationTally)

    def latest_trajectory_id(self, run_id: int, item_id: str, replicate: int = 0) -> int | None:
        """The trajectory of an episode's latest attempt, in flight or finished (None before it started)."""
        row = self.conn.execute(
            "SELECT id FROM trajectories WHERE run_id = ? AND item_id = ? AND replicate = ? "
            "ORDER BY attempt DESC LIMIT 1",
            (run_id, item_id, replicate),
        ).fetchone()
        return None if row is None else row[0]
