"""What a reader following a run in progress asks the store: the steps committed since it last looked.

A run's writer (`storage.step_writer`) commits every episode's steps once per turn; a reader in another process
(the TUI's Live screen on a run `--batch` executes) polls. Each question reads only what moved: the episodes in
flight come from the (run_id, final, status) index and their last steps from the steps' (trajectory_id, idx)
key, one row per episode and no texts; the trajectories finished since are those above the highest id the reader
saw or among the ones it saw in flight (ids are given when an episode starts, so a finish is one of the two).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from storage.rows import FinishedRow, LiveEpisodeRow
from storage.store.columns import as_records
from storage.store.connection import StoreConnection

_FINISHED_COLUMNS = (
    "id, item_id, replicate, termination, correct, cost_usd, error, finished_at, turns, points_used, tokens"
)
_FINISHED_WHERE = "run_id = ? AND final = 1 AND status = 'done'"


class LiveReads(StoreConnection):
    """A run in progress as a reader in another process follows it (see the module docstring)."""

    def live_episodes(self, run_id: int, known: Mapping[int, int]) -> list[LiveEpisodeRow]:
        """The run's trajectories in flight, in the order they started, one row each: its steps as committed now
        (count, the last one's ledger), and of those from the index `known` gives it on (0 for one not seen yet),
        their cost and the last tool call. A row per episode whatever it did since: a poll of 256 episodes reads
        256 rows, each through the steps' (trajectory_id, idx) key."""
        rows = self.conn.execute(
            "WITH known(tid, nxt) AS (SELECT CAST(key AS INTEGER), value FROM json_each(?)), "
            "flight AS (SELECT t.id, t.item_id, t.replicate, COALESCE(k.nxt, 0) AS nxt, "
            "(SELECT MAX(idx) FROM steps WHERE trajectory_id = t.id) AS last, "
            "(SELECT MAX(idx) FROM steps WHERE trajectory_id = t.id AND idx >= COALESCE(k.nxt, 0) AND kind = 'tool') "
            "AS call FROM trajectories t LEFT JOIN known k ON k.tid = t.id "
            "WHERE t.run_id = ? AND t.final = 0 AND t.status = 'running') "
            "SELECT f.id AS trajectory_id, f.item_id, f.replicate, COALESCE(f.last + 1, 0) AS n_steps, s.turn, "
            "s.points_used, s.tokens, s.rejections, c.tool_name, c.tool_args, "
            "(SELECT SUM(cost_usd) FROM steps WHERE trajectory_id = f.id AND idx >= f.nxt) AS new_cost_usd "
            "FROM flight f LEFT JOIN steps s ON s.trajectory_id = f.id AND s.idx = f.last "
            "LEFT JOIN steps c ON c.trajectory_id = f.id AND c.idx = f.call ORDER BY f.id",
            (json.dumps({str(tid): nxt for tid, nxt in known.items()}), run_id),
        )
        return as_records(rows, LiveEpisodeRow)

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

    def latest_trajectory_id(self, run_id: int, item_id: str, replicate: int = 0) -> int | None:
        """The trajectory of an episode's latest attempt, in flight or finished (None before it started)."""
        row = self.conn.execute(
            "SELECT id FROM trajectories WHERE run_id = ? AND item_id = ? AND replicate = ? "
            "ORDER BY attempt DESC LIMIT 1",
            (run_id, item_id, replicate),
        ).fetchone()
        return None if row is None else row[0]
