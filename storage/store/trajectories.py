"""The trajectories table: an episode's row begun, finished with its outcome (and last steps) in one transaction,
patched by imports and re-measured under new label rules; read back per run (whole, light, column-wise, as a
list), per item across runs, per agent or model across runs."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

from storage.errors import StoreError
from storage.records import ItemMeta, StepRecord, TrajectoryRecord
from storage.rows import HistoryRow, ItemTrajectoryRow, LightTrajectoryRow, TrajectoryListRow, TrajectoryRow
from storage.store.columns import as_record, as_records, decode_json_column, inserted_id, json_text, now
from storage.store.steps import StepsTable

TRAJECTORY_FIELDS = (
    "termination",
    "answer",
    "predicted_index",
    "correct",
    "reasoning",
    "turns",
    "model_calls",
    "points_used",
    "tokens",
    "prompt_tokens",
    "completion_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "tool_calls",
    "turns_with_calls",
    "tool_errors",
    "api_errors",
    "transient_retries",
    "paper_recall",
    "paper_recall_any",
    "section_recall",
    "section_recall_any",
    "section_recall_loose",
    "reads",
    "tool_sequence",
    "cost_usd",
    "wall_time_s",
    "error",
    "error_kind",
    "continues",
    "chosen_type",
    "actions",
    "cut_off_turns",
    "lost_calls",
)
JSON_FIELDS = ("reads", "tool_sequence", "actions")
LIGHT_COLUMNS = ", ".join(
    c
    for c in (
        "id",
        "run_id",
        "item_id",
        "replicate",
        "attempt",
        "final",
        "kind",
        "depth",
        "question_type",
        "reasoning_type",
        "consensus_tier",
        "venue",
        "correct_index",
        *TRAJECTORY_FIELDS,
    )
    if c not in ("actions", "reads", "reasoning")
)
META_FIELDS = (
    "question_type",
    "kind",
    "depth",
    "reasoning_type",
    "consensus_tier",
    "venue",
    "correct_index",
    "budget_level",
    "n_gold",
    "section_reachable",
)

_INSERT_TRAJECTORY = (
    f"INSERT INTO trajectories (run_id, item_id, replicate, attempt, status, started_at, {', '.join(META_FIELDS)}) "
    f"VALUES (?, ?, ?, ?, 'running', ?, {', '.join('?' * len(META_FIELDS))})"
)
_RECORD_RESULT = (
    f"UPDATE trajectories SET {', '.join(f'{k} = ?' for k in TRAJECTORY_FIELDS)}, status = 'done', final = ?, "
    "finished_at = ? WHERE id = ?"
)


class TrajectoriesTable(StepsTable):
    """The store's methods on trajectories (`storage.store.Store` combines them with the other tables'); on steps'
    too, because a trajectory is finished together with its last steps."""

    def finished(self, run_id: int) -> set[tuple[str, int]]:
        """(item, replicate) pairs whose final attempt is written in full."""
        rows = self.conn.execute(
            "SELECT item_id, replicate FROM trajectories WHERE run_id = ? AND final = 1 AND status = 'done'", (run_id,)
        )
        return {(r[0], r[1]) for r in rows}

    def next_attempt(self, run_id: int, item_id: str, replicate: int) -> int:
        row = self.conn.execute(
            "SELECT MAX(attempt) FROM trajectories"
            " WHERE run_id = ? AND item_id = ? AND replicate = ? AND status = 'done'",
            (run_id, item_id, replicate),
        ).fetchone()
        return 0 if row[0] is None else row[0] + 1

    def final_trajectory_id(self, run_id: int, item_id: str, replicate: int = 0) -> int | None:
        row = self.conn.execute(
            "SELECT id FROM trajectories WHERE run_id = ? AND item_id = ? AND replicate = ? "
            "AND final = 1 AND status = 'done'",
            (run_id, item_id, replicate),
        ).fetchone()
        return None if row is None else row[0]

    def begin_trajectory(self, run_id: int, item_id: str, replicate: int, attempt: int, meta: ItemMeta) -> int:
        with self.transaction():
            return self.insert_trajectory(run_id, item_id, replicate, attempt, meta, now())

    def insert_trajectory(
        self, run_id: int, item_id: str, replicate: int, attempt: int, meta: ItemMeta, started_at: str
    ) -> int:
        """Insert a running trajectory inside the caller's transaction; its row id."""
        cur = self.conn.execute(
            _INSERT_TRAJECTORY, (run_id, item_id, replicate, attempt, started_at, *map(meta.get, META_FIELDS))
        )
        return inserted_id(cur)

    def finish_trajectory(
        self, trajectory_id: int, result: TrajectoryRecord, final: bool, steps: Sequence[StepRecord] = ()
    ) -> None:
        """Write the last `steps` and the outcome and mark the trajectory done, atomically: before this it does
        not count."""
        with self.transaction():
            if steps:
                self.insert_steps(trajectory_id, list(steps))
            self.record_result(trajectory_id, result, final, now())

    def record_result(self, trajectory_id: int, result: TrajectoryRecord, final: bool, finished_at: str) -> None:
        """Write a trajectory's outcome and mark it done, inside the caller's transaction."""
        values = [(json_text(result.get(k)) if k in JSON_FIELDS else result.get(k)) for k in TRAJECTORY_FIELDS]
        self.conn.execute(_RECORD_RESULT, [*values, int(final), finished_at, trajectory_id])

    PATCHABLE = frozenset(TRAJECTORY_FIELDS) | {"attempt"}

    def update_trajectory(self, trajectory_id: int, **fields: Any) -> None:
        """Overwrite outcome fields of a finished trajectory (imports set what a replay cannot observe,
        e.g. the reference's wall time and the retry counters of its failed attempts)."""
        unknown = set(fields) - self.PATCHABLE
        if unknown:
            raise StoreError(f"not a patchable trajectory field: {', '.join(sorted(unknown))}")
        if not fields:
            return
        values = [(json_text(v) if isinstance(v, (list, dict)) else v) for v in fields.values()]
        sets = ", ".join(f"{k} = ?" for k in fields)
        with self.transaction():
            self.conn.execute(f"UPDATE trajectories SET {sets} WHERE id = ?", [*values, trajectory_id])

    SECTION_FLAGS = ("section_recall", "section_recall_any", "section_recall_loose", "section_reachable")

    def set_section_flags(
        self, run_id: int, flags: Sequence[tuple[int, Mapping[str, int | None]]], label_resolution: str
    ) -> None:
        """Overwrite the section-recall flags of a run's trajectories (id → the `SECTION_FLAGS`) and record the
        label resolution they were computed under, in one transaction: a report never sees half of a run under
        one resolution and half under another."""
        sets = ", ".join(f"{k} = ?" for k in self.SECTION_FLAGS)
        with self.transaction():
            self.conn.executemany(
                f"UPDATE trajectories SET {sets} WHERE id = ? AND run_id = ?",
                [[f.get(k) for k in self.SECTION_FLAGS] + [tid, run_id] for tid, f in flags],
            )
            self.conn.execute("UPDATE runs SET label_resolution = ? WHERE id = ?", (label_resolution, run_id))

    @overload
    def trajectories(self, run_id: int, final_only: bool = ..., light: Literal[False] = ...) -> list[TrajectoryRow]: ...
    @overload
    def trajectories(
        self, run_id: int, final_only: bool = ..., *, light: Literal[True]
    ) -> list[LightTrajectoryRow]: ...
    def trajectories(
        self, run_id: int, final_only: bool = True, light: bool = False
    ) -> list[TrajectoryRow] | list[LightTrajectoryRow]:
        """Finished trajectories of a run, in order of insertion. `light` leaves out the per-call actions and
        reads (what panel reports over tens of thousands of trajectories do not need)."""
        cond = "AND final = 1" if final_only else ""
        cols = LIGHT_COLUMNS if light else "*"
        cur = self.conn.execute(
            f"SELECT {cols} FROM trajectories WHERE run_id = ? AND status = 'done' {cond} ORDER BY id", (run_id,)
        )
        names = [d[0] for d in cur.description]
        decode = [(i, n) for i, n in enumerate(names) if n in JSON_FIELDS]
        record = LightTrajectoryRow if light else TrajectoryRow
        out = []
        for row in cur:
            d = dict(zip(names, row, strict=True))
            for i, n in decode:
                d[n] = json.loads(row[i]) if row[i] else []
            out.append(as_record(record, d))
        return out

    def trajectory_columns(
        self, run_id: int, fields: tuple[str, ...], raw: tuple[str, ...] = ()
    ) -> dict[str, list[Any]]:
        """Finished final trajectories of a run as one list per field (in insertion order), JSON fields decoded.

        Column-wise, without a dict per row: what reports over tens of thousands of trajectories read.
        Only the named fields are read, so step texts and other large columns never leave the file. A
        NULL JSON field is None (not []), so a caller can tell a row written before the field existed.
        JSON fields named in `raw` stay as their stored text (for a caller with a faster parser).
        """
        present = set(self._trajectory_columns())
        unknown = set(fields) - present - set(META_FIELDS) - set(TRAJECTORY_FIELDS)
        if unknown:
            raise StoreError(f"not a trajectory field: {', '.join(sorted(unknown))}")
        # a store opened read-only is not migrated: fields added by later migrations read as NULL
        select = ", ".join(f if f in present else f"NULL AS {f}" for f in fields)
        cur = self.conn.execute(
            f"SELECT {select} FROM trajectories WHERE run_id = ? AND status = 'done' AND final = 1 ORDER BY id",
            (run_id,),
        )
        rows = cur.fetchall()
        columns = [list(col) for col in zip(*rows, strict=True)] if rows else [[] for _ in fields]
        out = dict(zip(fields, columns, strict=True))
        for name in set(fields) & set(JSON_FIELDS) - set(raw):
            out[name] = decode_json_column(out[name])
        return out

    def _trajectory_columns(self) -> list[str]:
        return [r[1] for r in self.conn.execute("PRAGMA table_info(trajectories)")]

    def trajectory(self, trajectory_id: int) -> TrajectoryRow:
        row = self.conn.execute("SELECT * FROM trajectories WHERE id = ?", (trajectory_id,)).fetchone()
        if row is None:
            raise StoreError(f"no trajectory {trajectory_id}")
        return as_record(TrajectoryRow, _traj_dict(row))

    LIST_FIELDS = (
        "id",
        "item_id",
        "replicate",
        "attempt",
        "kind",
        "question_type",
        "depth",
        "correct",
        "termination",
        "answer",
        "predicted_index",
        "chosen_type",
        "points_used",
        "turns",
        "tokens",
        "tool_calls",
        "paper_recall",
        "section_recall",
        "cost_usd",
        "wall_time_s",
        "error",
    )

    def trajectory_list(self, run_id: int) -> list[TrajectoryListRow]:
        """Finished final trajectories of a run with only the columns a list needs (no texts, no sequences)."""
        cols = ", ".join(self.LIST_FIELDS)
        rows = self.conn.execute(
            f"SELECT {cols} FROM trajectories WHERE run_id = ? AND status = 'done' AND final = 1 ORDER BY id", (run_id,)
        )
        return as_records(rows, TrajectoryListRow)

    # ------------------------------------------------------------ one item across runs

    def item_trajectories(self, fingerprint: str, item_id: str) -> list[ItemTrajectoryRow]:
        """Every finished final trajectory on `item_id` in runs over the dataset `fingerprint`, with its run's
        name, agent, model and ablation (the item browser, the human-vs-model reveal)."""
        cols = ", ".join(f"t.{c}" for c in self.LIST_FIELDS)
        rows = self.conn.execute(
            f"SELECT {cols}, r.name AS run, r.agent, r.model, r.ablation, r.kind AS run_kind, r.id AS run_id "
            "FROM trajectories t JOIN runs r ON r.id = t.run_id "
            "WHERE t.item_id = ? AND t.final = 1 AND t.status = 'done' AND r.dataset_fingerprint = ? "
            "ORDER BY r.id, t.replicate",
            (item_id, fingerprint),
        )
        return as_records(rows, ItemTrajectoryRow)

    def item_outcomes(self, fingerprint: str) -> dict[str, tuple[int, int]]:
        """item id -> (runs whose replicate-0 trajectory on it is correct, runs with one), over the dataset's runs."""
        rows = self.conn.execute(
            "SELECT t.item_id, COALESCE(SUM(t.correct), 0), COUNT(*) "
            "FROM trajectories t JOIN runs r ON r.id = t.run_id "
            "WHERE r.dataset_fingerprint = ? AND t.final = 1 AND t.status = 'done' AND t.replicate = 0 "
            "GROUP BY t.item_id",
            (fingerprint,),
        )
        return {r[0]: (int(r[1]), int(r[2])) for r in rows}

    def model_token_history(self, model: str) -> tuple[float, float, int] | None:
        """(mean prompt tokens, mean completion tokens, trajectories) over the finished final trajectories of every
        run of `model`, or None when there is none (what a cost estimate can rest on)."""
        row = self.conn.execute(
            "SELECT AVG(t.prompt_tokens), AVG(t.completion_tokens), COUNT(*) FROM trajectories t "
            "JOIN runs r ON r.id = t.run_id WHERE r.model = ? AND t.status = 'done' AND t.final = 1",
            (model,),
        ).fetchone()
        return (row[0], row[1], row[2]) if row and row[2] else None

    def agent_history(self, agent: str, fingerprint: str) -> list[HistoryRow]:
        """Every trajectory (final or not, finished or not) of every run of `agent` on a dataset, oldest first,
        with its run's name: what a person has played, left midway or replayed, across their sessions."""
        rows = self.conn.execute(
            "SELECT t.id, t.item_id, t.replicate, t.attempt, t.status, t.final, t.termination, t.error_kind, "
            "t.correct, t.tool_calls, r.name AS run, r.id AS run_id FROM trajectories t JOIN runs r ON r.id = t.run_id "
            "WHERE r.agent = ? AND r.dataset_fingerprint = ? ORDER BY t.id",
            (agent, fingerprint),
        )
        return as_records(rows, HistoryRow)


def _traj_dict(row: sqlite3.Row) -> dict[str, Any]:
    d = dict(row)
    for key in JSON_FIELDS:
        if key in d:
            d[key] = json.loads(d[key]) if d[key] else []
    return d
