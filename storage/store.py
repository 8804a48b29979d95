"""The only code that talks to the results store.

One connection per Store, in autocommit mode with explicit short transactions: an episode's
steps are committed once per turn, before its next model call is sent (and the last ones with
the trajectory's result), so a killed run loses at most each episode's turn in flight, which a
resume discards anyway with the unfinished trajectory. A run commits the writes of all its
episodes at one moment together (`storage.step_writer`), through the `insert_…` and
`record_result` functions, which write inside the caller's transaction.
WAL lets the TUI read while a run writes; a generous busy timeout makes two writing
processes wait for each other instead of failing with `database is locked`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

import orjson

from storage.json_types import JsonValue
from storage.records import ItemMeta, RunFields, StepRecord, TrajectoryRecord
from storage.rows import (
    DeliveredStep,
    HistoryRow,
    ItemTrajectoryRow,
    JudgmentRow,
    LabelEditRow,
    LightTrajectoryRow,
    RunListRow,
    StoredRun,
    StrategySpend,
    ToolCallRow,
    TrajectoryListRow,
    TrajectoryRow,
    VerdictRow,
    VerifierUsage,
)
from storage.schema import SCHEMA_VERSION, SchemaTooNew, migrate, schema_version

INLINE_TEXT = 256  # longer step texts are stored once, by hash (section texts repeat across trajectories)

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
_INSERT_STEP = "INSERT OR REPLACE INTO steps VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"


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


def identity_diff(stored: Mapping[str, JsonValue], requested: Mapping[str, JsonValue]) -> list[str]:
    """The identity keys whose values differ, sorted: what makes the store refuse to resume a run. The launch form
    asks the same question before starting, so a refused resume is explained where it can still be changed."""
    return sorted(k for k in set(stored) | set(requested) if stored.get(k) != requested.get(k))


def differ_phrase(keys: list[str]) -> str:
    """ "seed differs", "seed and caps differ", "a, b and c differ"."""
    if len(keys) == 1:
        return f"{keys[0]} differs"
    return f"{', '.join(keys[:-1])} and {keys[-1]} differ"


def inserted_id(cur: sqlite3.Cursor) -> int:
    """The rowid the INSERT just run on `cur` wrote (sqlite3 types `lastrowid` Optional, None before any insert)."""
    rowid = cur.lastrowid
    assert rowid is not None, "an INSERT sets lastrowid"
    return rowid


def now() -> str:
    """The time in UTC to the second, as ISO 8601 (`2026-12-04T20:14:34+00:00`): written at each episode's start
    and end, so one second's text is built once (building it cost ~2 µs, twice per episode)."""
    return _iso_second(int(time.time()))


@lru_cache(maxsize=1)
def _iso_second(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).isoformat()


class Store:
    """A results store file. Not shared across threads; open one per thread or process."""

    def __init__(self, path: Path | str, readonly: bool = False):
        self.path = Path(path)
        if self.path.is_dir():
            raise StoreError(
                f"{self.path} is a directory, not a store file (e.g. {self.path / 'runs.sqlite'})",
                remedy="another_store",
            )
        if not readonly:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.exists():
            raise StoreError(f"no store at {self.path}")
        try:
            uri = f"file:{self.path}?mode=ro" if readonly else f"file:{self.path}"
            self.conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=60, check_same_thread=False)
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
        version = schema_version(self.conn)
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

    def close(self) -> None:
        """Close the connection; the last one to close folds the WAL into the database file, so a copy of the file
        alone (a backup, a test fixture) then holds every commit."""
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # ------------------------------------------------------------ runs

    def create_or_resume_run(self, name: str, identity: Mapping[str, JsonValue], fields: RunFields) -> tuple[int, bool]:
        """The run's id and whether it already existed. Refuses a run of the same name with another identity."""
        row = self.conn.execute("SELECT id, identity FROM runs WHERE name = ?", (name,)).fetchone()
        ident = json.dumps(identity, sort_keys=True)
        if row is not None:
            if row["identity"] != ident:
                diff = identity_diff(json.loads(row["identity"]), identity)
                raise RunConflict(
                    f"run '{name}' exists with a different configuration ({differ_phrase(diff)})",
                    remedy="rename_or_delete_run",
                    run=name,
                )
            return row["id"], True
        record = _run_columns(name, ident, fields)
        prompts = fields.get("prompts")  # the prompts file: once in `texts`, the run keeps its hash
        cols = ", ".join(record)
        with self.transaction():
            if prompts is not None:
                self.conn.execute("INSERT OR IGNORE INTO texts VALUES (?, ?)", (record["prompts_text"], prompts))
            cur = self.conn.execute(
                f"INSERT INTO runs ({cols}) VALUES ({', '.join('?' * len(record))})", list(record.values())
            )
        return inserted_id(cur), False

    def update_run(self, run_id: int, **fields: Any) -> None:
        """Set columns of a run; dicts and lists (`caps`, `config`) are stored as JSON, as at creation."""
        sets = ", ".join(f"{k} = ?" for k in fields)
        values = [json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v for v in fields.values()]
        with self.transaction():
            self.conn.execute(f"UPDATE runs SET {sets} WHERE id = ?", [*values, run_id])

    def run(self, name: str) -> StoredRun:
        """A run's row, with `prompts`: the prompts file it was sent (None when it recorded none)."""
        row = self.conn.execute(f"{_RUN_SELECT} WHERE r.name = ?", (name,)).fetchone()
        if row is None:
            raise StoreError(f"no run named '{name}' in {self.path}")
        return _record(StoredRun, _run_dict(row))

    def run_by_id(self, run_id: int) -> dict[str, Any]:
        return _run_dict(self.conn.execute(f"{_RUN_SELECT} WHERE r.id = ?", (run_id,)).fetchone())

    def runs(self) -> list[RunListRow]:
        """Every run with its progress and accuracy over final trajectories."""
        rows = self.conn.execute(
            """SELECT r.*, COUNT(t.id) AS done, COALESCE(SUM(t.correct), 0) AS n_correct,
                      SUM(t.cost_usd) AS cost, COUNT(t.cost_usd) AS n_costed
               FROM runs r LEFT JOIN trajectories t ON t.run_id = r.id AND t.final = 1 AND t.status = 'done'
               GROUP BY r.id ORDER BY r.id"""
        ).fetchall()
        return [_record(RunListRow, _run_dict(r)) for r in rows]

    def rename_run(self, old: str, new: str) -> None:
        run = self.run(old)
        try:
            self.update_run(run["id"], name=new)
        except sqlite3.IntegrityError:
            raise StoreError(f"a run named '{new}' already exists") from None

    def delete_run(self, name: str) -> None:
        run = self.run(name)
        with self.transaction():
            self.conn.execute("DELETE FROM judgments WHERE run_id = ?", (run["id"],))
            self.conn.execute(
                "DELETE FROM steps WHERE trajectory_id IN (SELECT id FROM trajectories WHERE run_id = ?)", (run["id"],)
            )
            self.conn.execute("DELETE FROM trajectories WHERE run_id = ?", (run["id"],))
            self.conn.execute("DELETE FROM runs WHERE id = ?", (run["id"],))

    # ------------------------------------------------------------ trajectories

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

    def spent(self, run_id: int) -> tuple[int, float]:
        """Tokens (the cap quantity) and dollars every model call of the run has cost: all attempts, finished or
        not, and the half-written trajectories a resume discarded (recorded in the run's config as `discarded`).

        A trajectory's steps carry its running token count, so its largest is what it spent;
        an unfinished one (cancelled, or a killed run's) spent it too.
        """
        tokens, usd = self._spent(run_id, "")
        gone = (self.run_by_id(run_id)["config"] or {}).get("discarded") or {}
        return tokens + int(gone.get("tokens", 0)), usd + float(gone.get("usd", 0.0))

    def _spent(self, run_id: int, where: str) -> tuple[int, float]:
        row = self.conn.execute(
            "SELECT COALESCE(SUM(tokens), 0), COALESCE(SUM(usd), 0.0) FROM (SELECT MAX(s.tokens) AS tokens, "
            "SUM(s.cost_usd) AS usd FROM steps s JOIN trajectories t ON t.id = s.trajectory_id WHERE t.run_id = ? "
            f"{where} GROUP BY s.trajectory_id)",
            (run_id,),
        ).fetchone()
        return int(row[0]), float(row[1])

    def discard_unfinished(self, run_id: int) -> int:
        """Delete half-written trajectories (a killed run's episodes in flight) and their steps, keeping what their
        calls cost in the run's config: they were paid for, and a run-wide limit must go on counting them."""
        with self.transaction():
            tokens, usd = self._spent(run_id, "AND t.status != 'done'")
            if tokens or usd:
                config = self.run_by_id(run_id)["config"] or {}
                gone = config.get("discarded") or {}
                config["discarded"] = {
                    "tokens": int(gone.get("tokens", 0)) + tokens,
                    "usd": float(gone.get("usd", 0.0)) + usd,
                }
                self.conn.execute(
                    "UPDATE runs SET config = ? WHERE id = ?", (json.dumps(config, sort_keys=True), run_id)
                )
            ids = [
                r[0]
                for r in self.conn.execute(
                    "SELECT id FROM trajectories WHERE run_id = ? AND status != 'done'", (run_id,)
                )
            ]
            for tid in ids:
                self.conn.execute("DELETE FROM steps WHERE trajectory_id = ?", (tid,))
            self.conn.execute("DELETE FROM trajectories WHERE run_id = ? AND status != 'done'", (run_id,))
        return len(ids)

    def abandon_unfinished(self, run_id: int, note: str) -> list[int]:
        """Keep half-written trajectories as finished, non-final attempts ended by `error` (`error_kind`
        'abandoned', `note` as the error), their totals from the last stored step, and return their ids.

        For a person who left an item midway: the tool results they saw are part of the record (a later
        attempt on the item is not a fresh one), as failed sample-level attempts are kept. Reports read
        final attempts only, so nothing else changes."""
        with self.transaction():
            ids = [
                r[0]
                for r in self.conn.execute(
                    "SELECT id FROM trajectories WHERE run_id = ? AND status != 'done' ORDER BY id", (run_id,)
                )
            ]
            for tid in ids:
                last = self.conn.execute(
                    "SELECT turn, points_used, tokens FROM steps WHERE trajectory_id = ? ORDER BY idx DESC LIMIT 1",
                    (tid,),
                ).fetchone()
                calls = self.conn.execute(
                    "SELECT COUNT(*) FROM steps WHERE trajectory_id = ? AND kind = 'tool'", (tid,)
                ).fetchone()[0]
                turns, points, tokens = tuple(last) if last else (0, 0, 0)
                self.conn.execute(
                    "UPDATE trajectories SET status = 'done', final = 0, termination = 'error', "
                    "error_kind = 'abandoned', error = ?, correct = 0, turns = ?, points_used = ?, tokens = ?, "
                    "tool_calls = ?, finished_at = ? "
                    "WHERE id = ?",
                    (note, turns, points, tokens, calls, now(), tid),
                )
        return ids

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
        return _records(rows, HistoryRow)

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

    def add_step(self, trajectory_id: int, step: StepRecord) -> None:
        """Commit one step now. `step` holds the Step's fields flattened (ledger state included)."""
        self.add_steps(trajectory_id, [step])

    def add_steps(self, trajectory_id: int, steps: list[StepRecord]) -> None:
        """Commit several steps of one trajectory in one transaction (a turn's: its reply and its tool calls)."""
        if steps:
            with self.transaction():
                self.insert_steps(trajectory_id, steps)

    def insert_steps(self, trajectory_id: int, steps: list[StepRecord]) -> None:
        """Insert steps of one trajectory inside the caller's transaction (long texts stored once, by hash)."""
        rows, texts = [], []
        for step in steps:
            text = step.get("text")
            text_hash = None
            if text is not None and len(text) > INLINE_TEXT:
                text_hash = _text_hash(text)
                texts.append((text_hash, text))
                text = None
            rows.append(
                (
                    trajectory_id,
                    step["index"],
                    step["turn"],
                    step["kind"],
                    text,
                    text_hash,
                    step.get("tool_name"),
                    _json(step.get("tool_args")),
                    step.get("tool_call_id"),
                    step.get("cost", 0),
                    step.get("status"),
                    _opt_str(step.get("paper_id")),
                    step.get("arxiv_id"),
                    step.get("section_index"),
                    int(bool(step.get("delivered"))),
                    _json(step.get("usage")),
                    step.get("cost_usd"),
                    step["points_used"],
                    step["points_left"],
                    step["tokens"],
                    step["rejections"],
                    step.get("elapsed_s"),
                    step.get("reasoning_chars"),
                    step.get("hop"),
                    step.get("finish_reason"),
                )
            )
        if texts:
            self.conn.executemany("INSERT OR IGNORE INTO texts VALUES (?, ?)", texts)
        self.conn.executemany(_INSERT_STEP, rows)

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
        values = [(_json(result.get(k)) if k in JSON_FIELDS else result.get(k)) for k in TRAJECTORY_FIELDS]
        self.conn.execute(_RECORD_RESULT, [*values, int(final), finished_at, trajectory_id])

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
            out.append(_record(record, d))
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
            out[name] = _decode_json_column(out[name])
        return out

    def _trajectory_columns(self) -> list[str]:
        return [r[1] for r in self.conn.execute("PRAGMA table_info(trajectories)")]

    def trajectory(self, trajectory_id: int) -> TrajectoryRow:
        row = self.conn.execute("SELECT * FROM trajectories WHERE id = ?", (trajectory_id,)).fetchone()
        if row is None:
            raise StoreError(f"no trajectory {trajectory_id}")
        return _record(TrajectoryRow, _traj_dict(row))

    def steps(self, trajectory_id: int) -> list[dict[str, Any]]:
        """Every step of a trajectory with its full text restored."""
        rows = self.conn.execute(
            "SELECT s.*, COALESCE(s.text, x.body) AS full_text FROM steps s LEFT JOIN texts x ON x.hash = s.text_hash "
            "WHERE s.trajectory_id = ? ORDER BY s.idx",
            (trajectory_id,),
        )
        out = []
        for r in rows:
            d = dict(r)
            d["text"] = d.pop("full_text")
            d["tool_args"] = json.loads(d["tool_args"]) if d["tool_args"] else None
            d["usage"] = json.loads(d["usage"]) if d["usage"] else None
            out.append(d)
        return out

    def tool_calls(self, run_id: int) -> list[ToolCallRow]:
        """Every tool call of a run's finished final trajectories, in order, without texts: trajectory, item,
        replicate, turn, tool, status and points charged (what the general-agent setting's measures count)."""
        rows = self.conn.execute(
            "SELECT t.id AS trajectory_id, t.item_id, t.replicate, s.turn, s.tool_name, s.status, s.cost "
            "FROM trajectories t JOIN steps s ON s.trajectory_id = t.id "
            "WHERE t.run_id = ? AND t.final = 1 AND t.status = 'done' AND s.kind = 'tool' ORDER BY t.id, s.idx",
            (run_id,),
        )
        return _records(rows, ToolCallRow)

    # ------------------------------------------------------------ added for the workbench TUI (cheap reads, export)

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

    def data_version(self) -> int:
        """SQLite's `PRAGMA data_version`: changes whenever another connection commits (a cheap poll)."""
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def run_progress(self, run_id: int) -> tuple[Any, ...]:
        """(status, finished final trajectories, the last one's id, label resolution, hop rule) of a run: what a
        screen showing the run polls, and what its cached numbers are keyed by — so section recall recomputed or
        hops backfilled under it (at the TUI's start, on a thread) reach a screen already open.

        Answered from the (run_id, final, status) index, so it costs well under a millisecond however big the
        store; `data_version` moves on any commit by anyone, this only when this run moves on."""
        row = self.conn.execute(
            "SELECT r.status, COUNT(t.id), MAX(t.id), r.label_resolution, r.hop_rule FROM runs r "
            "LEFT JOIN trajectories t ON t.run_id = r.id AND t.final = 1 AND t.status = 'done' WHERE r.id = ?",
            (run_id,),
        ).fetchone()
        return tuple(row)

    def trajectory_list(self, run_id: int) -> list[TrajectoryListRow]:
        """Finished final trajectories of a run with only the columns a list needs (no texts, no sequences)."""
        cols = ", ".join(self.LIST_FIELDS)
        rows = self.conn.execute(
            f"SELECT {cols} FROM trajectories WHERE run_id = ? AND status = 'done' AND final = 1 ORDER BY id", (run_id,)
        )
        return _records(rows, TrajectoryListRow)

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
        return _records(rows, ItemTrajectoryRow)

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

    # ------------------------------------------------------------ judgments (parallel scaling)

    def judgments(self, run_id: int, judge: str) -> dict[tuple[str, str, int, int | None], JudgmentRow]:
        """Stored verdicts keyed by (item, kind, sample a, sample b), so a rerun never pays for them twice."""
        rows = self.conn.execute("SELECT * FROM judgments WHERE run_id = ? AND judge = ?", (run_id, judge))
        return {(r["item_id"], r["kind"], r["sample_a"], r["sample_b"]): _record(JudgmentRow, dict(r)) for r in rows}

    def judge_names(self, run_id: int) -> list[str]:
        """The judges with stored verdicts on a run, in the order they first judged it."""
        rows = self.conn.execute(
            "SELECT judge FROM judgments WHERE run_id = ? GROUP BY judge ORDER BY MIN(id)", (run_id,)
        )
        return [r[0] for r in rows]

    def add_judgment(
        self,
        run_id: int,
        item_id: str,
        kind: str,
        judge: str,
        sample_a: int,
        sample_b: int | None,
        verdict: bool | None,
        prompt: str | None,
        reply: str | None,
        tokens: int | None,
        cost_usd: float | None,
        buckets: tuple[int, int, int, int] | None = None,
    ) -> None:
        """Store one verdict; `buckets` is the judge call's (non-cached prompt, completion, cache read, cache creation)
        tokens (None: an offline judge, no call)."""
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO judgments (run_id, item_id, kind, judge, sample_a, sample_b, verdict, prompt, "
                "reply, tokens, cost_usd, created_at, prompt_tokens, completion_tokens, cache_read_tokens, "
                "cache_creation_tokens) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    run_id,
                    item_id,
                    kind,
                    judge,
                    sample_a,
                    sample_b,
                    None if verdict is None else int(verdict),
                    prompt,
                    reply,
                    tokens,
                    cost_usd,
                    now(),
                    *(buckets or (None, None, None, None)),
                ),
            )

    def judgment_costs(
        self, run_id: int, judge: str
    ) -> list[tuple[str, float | None, int, float | None, float | None, int | None]]:
        """Per verdict kind of one judge on one run: (kind, mean cost of the priced verdicts, how many were priced,
        mean tokens, total cost, total tokens)."""
        return [
            tuple(r)
            for r in self.conn.execute(
                "SELECT kind, AVG(cost_usd), COUNT(cost_usd), AVG(tokens), SUM(cost_usd), SUM(tokens) FROM judgments "
                "WHERE run_id = ? AND judge = ? GROUP BY kind",
                (run_id, judge),
            )
        ]

    def judgment_usage(
        self, run_id: int, judge: str
    ) -> list[tuple[str, float | None, int | None, int | None, int | None, int | None]]:
        """Every verdict of one judge on one run: (kind, stored cost, and the call's non-cached prompt, completion,
        cache read and cache creation tokens; all four None for a verdict stored without them), so a cost rule can
        price each call again."""
        return [
            tuple(r)
            for r in self.conn.execute(
                "SELECT kind, cost_usd, prompt_tokens, completion_tokens, cache_read_tokens, cache_creation_tokens "
                "FROM judgments WHERE run_id = ? AND judge = ? ORDER BY id",
                (run_id, judge),
            )
        ]

    def context_profile(self, run_id: int, stop_text: str, prefix_key: str) -> dict[int, dict[str, int]]:
        """Per finished trajectory: the context sent on its first and on its largest model call, the number of
        nudges that start with `stop_text`, and the cap tokens of turns whose usage.raw carries `prefix_key`
        (replayed, not paid for again). Context = prompt + cache read + cache creation tokens of one call."""
        ctx = (
            "COALESCE(json_extract(usage, '$.prompt'), 0) + COALESCE(json_extract(usage, '$.cache_read'), 0)"
            " + COALESCE(json_extract(usage, '$.cache_creation'), 0)"
        )
        cap = (
            "COALESCE(json_extract(usage, '$.prompt'), 0) + COALESCE(json_extract(usage, '$.completion'), 0)"
            " + COALESCE(json_extract(usage, '$.cache_creation'), 0)"
        )
        mine = "trajectory_id IN (SELECT id FROM trajectories WHERE run_id = ? AND final = 1 AND status = 'done')"
        out: dict[int, dict[str, int]] = {}
        rows = self.conn.execute(
            f"SELECT trajectory_id, MAX(CASE WHEN kind IN ('assistant', 'harness', 'summary') THEN {ctx} END), "
            f"SUM(kind = 'nudge' AND substr(COALESCE(text, ''), 1, ?) = ?), "
            f"SUM(CASE WHEN kind = 'assistant' AND json_extract(usage, '$.raw.' || ?) THEN {cap} ELSE 0 END) "
            f"FROM steps WHERE {mine} GROUP BY trajectory_id",
            (len(stop_text), stop_text, prefix_key, run_id),
        )
        for tid, largest, stops, prefix in rows:
            out[tid] = {
                "first_context": 0,
                "max_context": int(largest or 0),
                "stops": int(stops or 0),
                "prefix_tokens": int(prefix or 0),
            }
        first = self.conn.execute(  # SQLite takes the bare column from the row holding MIN(idx)
            f"SELECT trajectory_id, MIN(idx), {ctx} FROM steps WHERE kind IN ('assistant', 'harness') AND {mine} "
            "GROUP BY trajectory_id",
            (run_id,),
        )
        for tid, _, context in first:
            out.setdefault(tid, {"max_context": 0, "stops": 0, "prefix_tokens": 0})["first_context"] = int(context or 0)
        return out

    def strategy_spend(self, run_id: int) -> StrategySpend:
        """Over a run's final, finished trajectories: the sequential strategy's own steps (`sandbox.strategies`) —
        summary turns, history replacements, and the verifier's calls with their tokens and dollars (kept apart
        from the agent's: its steps never enter the ledger) and its failures (error steps it left). The verifier's
        tokens count as the agent's do (non-cached input + output + cache writes, `Usage.cap_quantity`); its four
        buckets summed are `verifier_usage` (to price them by another rule)."""
        row = self.conn.execute(
            "SELECT SUM(kind = 'summary'), SUM(kind = 'history'), SUM(kind = 'verifier'), "
            "SUM(CASE WHEN kind = 'verifier' THEN COALESCE(json_extract(usage, '$.prompt'), 0) + "
            "COALESCE(json_extract(usage, '$.completion'), 0) + COALESCE(json_extract(usage, '$.cache_creation'), 0) "
            "ELSE 0 END), "
            "SUM(CASE WHEN kind = 'verifier' THEN cost_usd END), "
            "SUM(kind = 'error' AND substr(COALESCE(text, ''), 1, 15) = 'Verifier error '), "
            "SUM(CASE WHEN kind = 'verifier' THEN COALESCE(json_extract(usage, '$.prompt'), 0) END), "
            "SUM(CASE WHEN kind = 'verifier' THEN COALESCE(json_extract(usage, '$.completion'), 0) END), "
            "SUM(CASE WHEN kind = 'verifier' THEN COALESCE(json_extract(usage, '$.cache_read'), 0) END), "
            "SUM(CASE WHEN kind = 'verifier' THEN COALESCE(json_extract(usage, '$.cache_creation'), 0) END) "
            "FROM steps WHERE trajectory_id IN (SELECT id FROM trajectories WHERE run_id = ? AND final = 1 "
            "AND status = 'done')",
            (run_id,),
        ).fetchone()
        return StrategySpend(
            summaries=int(row[0] or 0),
            replacements=int(row[1] or 0),
            verifier_calls=int(row[2] or 0),
            verifier_tokens=int(row[3] or 0),
            verifier_cost_usd=row[4],
            verifier_errors=int(row[5] or 0),
            verifier_usage=VerifierUsage(
                prompt=int(row[6] or 0),
                completion=int(row[7] or 0),
                cache_read=int(row[8] or 0),
                cache_creation=int(row[9] or 0),
            ),
        )

    def runs_in_group(self, group: str) -> list[StoredRun]:
        rows = self.conn.execute(f"{_RUN_SELECT} WHERE r.group_name = ? ORDER BY r.id", (group,)).fetchall()
        return [_record(StoredRun, _run_dict(r)) for r in rows]

    # ------------------------------------------------------------ additive: interop

    PATCHABLE = frozenset(TRAJECTORY_FIELDS) | {"attempt"}

    def update_trajectory(self, trajectory_id: int, **fields: Any) -> None:
        """Overwrite outcome fields of a finished trajectory (imports set what a replay cannot observe,
        e.g. the reference's wall time and the retry counters of its failed attempts)."""
        unknown = set(fields) - self.PATCHABLE
        if unknown:
            raise StoreError(f"not a patchable trajectory field: {', '.join(sorted(unknown))}")
        if not fields:
            return
        values = [(_json(v) if isinstance(v, (list, dict)) else v) for v in fields.values()]
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

    def delivered_steps(self, run_id: int, final_only: bool = True) -> list[DeliveredStep]:
        """The tool steps of a run's finished trajectories whose call delivered text, in order, each with its
        trajectory's item and depth; no step text is read. Which of them are reads is the sandbox's to say
        (`sandbox.recall.stored_reads`); this only leaves out the steps that cannot be."""
        cond = "AND t.final = 1" if final_only else ""
        rows = self.conn.execute(
            "SELECT s.trajectory_id, t.item_id, t.depth, s.idx, s.paper_id, s.arxiv_id, s.section_index, s.delivered, "
            "s.hop FROM trajectories t JOIN steps s ON s.trajectory_id = t.id "
            f"WHERE t.run_id = ? AND t.status = 'done' {cond} AND s.kind = 'tool' AND s.delivered = 1 "
            "ORDER BY t.id, s.idx",
            (run_id,),
        ).fetchall()
        return _records(rows, DeliveredStep)

    def set_step_hops(self, run_id: int, hops: list[tuple[int, int, int | None]], hop_rule: str) -> None:
        """Write the hop of each (trajectory id, step index) and record the rule they were computed under, in one
        transaction: a report never sees a run half measured."""
        with self.transaction():
            # whose steps these are is checked once, not per row: a per-row subquery on the run's trajectories took
            # 16 s (write lock held) for a 3,033-trajectory run's 30,330 reads, against 0.06 s
            owned = {tid for (tid,) in self.conn.execute("SELECT id FROM trajectories WHERE run_id = ?", (run_id,))}
            self.conn.executemany(
                "UPDATE steps SET hop = ? WHERE trajectory_id = ? AND idx = ?",
                [(hop, tid, idx) for tid, idx, hop in hops if tid in owned],
            )
            self.conn.execute("UPDATE runs SET hop_rule = ? WHERE id = ?", (hop_rule, run_id))

    # ------------------------------------------------------------ benchmark audit

    VERDICTS = ("pass", "flag", "remove")
    LABEL_ACTIONS = ("add", "remove", "reclassify", "undo")

    def add_verdict(
        self,
        fingerprint: str,
        item_id: str,
        reviewer: str,
        verdict: str,
        note: str = "",
        checks: dict[str, bool | None] | None = None,
    ) -> None:
        """Record a reviewer's verdict; the latest one per item counts, earlier ones stay as history. A check
        that is absent or None was not assessed and is stored as NULL (not as failed)."""
        if verdict not in self.VERDICTS:
            raise StoreError(f"verdict must be one of {', '.join(self.VERDICTS)}, got {verdict!r}")
        checks = checks or {}
        flags = [
            None if checks.get(k) is None else int(bool(checks[k]))
            for k in ("question_ok", "gold_supported", "labels_accurate")
        ]
        with self.transaction():
            self.conn.execute(
                "INSERT INTO audit_verdicts (dataset_fingerprint, item_id, reviewer, verdict, note, question_ok, "
                "gold_supported, labels_accurate, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (fingerprint, item_id, reviewer, verdict, note, *flags, now()),
            )

    def add_label_edit(
        self,
        fingerprint: str,
        item_id: str,
        reviewer: str,
        action: str,
        arxiv_id: str,
        section: str,
        relevance: str | None = None,
        undoes: int | None = None,
    ) -> int:
        """Add, remove or re-classify (change the relevance of) one section label of an item, or undo an earlier
        edit of it (`undoes`: that edit's id; the edit stays in the history). Returns the new edit's id."""
        if action not in self.LABEL_ACTIONS:
            raise StoreError(f"label action must be one of {', '.join(self.LABEL_ACTIONS)}, got {action!r}")
        if action in ("add", "reclassify") and relevance not in ("direct", "supporting"):
            raise StoreError("a label's relevance must be 'direct' or 'supporting'")
        if (action == "undo") != (undoes is not None):
            raise StoreError("an undo names the edit it undoes, and only an undo does")
        with self.transaction():
            cur = self.conn.execute(
                "INSERT INTO audit_labels (dataset_fingerprint, item_id, action, arxiv_id, section, relevance,"
                " reviewer, created_at, undoes) VALUES (?,?,?,?,?,?,?,?,?)",
                (fingerprint, item_id, action, arxiv_id, section, relevance, reviewer, now(), undoes),
            )
        return inserted_id(cur)

    def verdicts(self, fingerprint: str) -> dict[str, VerdictRow]:
        """The latest verdict per item of a dataset."""
        rows = self.conn.execute(
            "SELECT * FROM audit_verdicts WHERE dataset_fingerprint = ? ORDER BY id", (fingerprint,)
        )
        return {r["item_id"]: _record(VerdictRow, dict(r)) for r in rows}

    def label_edits(self, fingerprint: str, item_id: str | None = None) -> list[LabelEditRow]:
        """Every label edit of a dataset (or of one item), oldest first, undo rows included (`undoes` is None
        on other rows and on stores read before migration 7)."""
        sql = "SELECT * FROM audit_labels WHERE dataset_fingerprint = ?"
        args: tuple[Any, ...] = (fingerprint,)
        if item_id is not None:
            sql, args = sql + " AND item_id = ?", (fingerprint, item_id)
        return [
            _record(LabelEditRow, {"undoes": None, **dict(r)}) for r in self.conn.execute(sql + " ORDER BY id", args)
        ]


Record = TypeVar("Record")


def _records(rows: Iterable[sqlite3.Row], record: Callable[..., Record]) -> list[Record]:
    """Rows of a query as the records its columns make (`storage.rows`)."""
    return [_record(record, dict(r)) for r in rows]


def _record(record: Callable[..., Record], columns: Mapping[str, Any]) -> Record:
    """One row's columns as its record: SQLite's rows are untyped, the query's columns fix the record's keys."""
    return record(**columns)


# json.dumps with these options builds an encoder on every call; one kept encoder writes the same text
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


# orjson writes what json writes, value for value (its text is compact), ~10× faster: a step's arguments and usage, a
# trajectory's reads and actions, on the engine's one thread. Passed through to `default` (as json does): datetimes
# and dataclasses; what orjson refuses (an integer beyond 64 bits) goes through json. A NaN or an infinity, which
# JSON cannot carry, is written as null rather than as json's invalid `NaN` (which SQLite's JSON functions refuse).
_AS_JSON_DOES = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _json(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return orjson.dumps(value, default=str, option=_AS_JSON_DOES).decode()
    except (orjson.JSONEncodeError, TypeError):
        return _ENCODER.encode(value)


def _decode_json_column(texts: list[str | None]) -> list[Any]:
    """Many JSON texts decoded by one parser call (an array of them), NULL ones as None: a run's
    action lists decode faster than with one `json.loads` per row."""
    if not texts:
        return []
    return json.loads("[" + ",".join(t if t else "null" for t in texts) + "]")


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


SqlValue = str | int | float | None  # what a column of a row is given
RUN_JSON_COLUMNS = ("caps", "config")


def _run_columns(name: str, identity: str, fields: RunFields) -> dict[str, SqlValue]:
    """A new run's row: its name, identity and creation time, then its fields, the JSON ones encoded (an empty
    object when not given) and the prompts file by its hash (`_text_hash`)."""
    record: dict[str, SqlValue] = {"name": name, "identity": identity, "created_at": now()}
    for key, value in fields.items():
        if key in RUN_JSON_COLUMNS:
            record[key] = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
        elif key != "prompts":
            record[key] = _column_value(key, value)
    for key in RUN_JSON_COLUMNS:
        record.setdefault(key, "{}")
    prompts = fields.get("prompts")
    if prompts is not None:
        record["prompts_text"] = _text_hash(prompts)
    return record


def _column_value(key: str, value: object) -> SqlValue:
    """A plain column's value as given; anything else is a caller's mistake, named by its column."""
    if value is None or isinstance(value, (str, int, float)):
        return value
    raise StoreError(f"column {key} takes a number or a text, not {type(value).__name__}")


# A run with the prompts file it was sent (stored once in `texts`, by hash)
_RUN_SELECT = "SELECT r.*, x.body AS prompts FROM runs r LEFT JOIN texts x ON x.hash = r.prompts_text"


def _text_hash(text: str) -> str:
    """The key of a long text in `texts` (a step's, a run's prompts file)."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _run_dict(row: sqlite3.Row) -> dict[str, Any]:
    d = dict(row)
    for key in ("caps", "config", "identity"):
        if isinstance(d.get(key), str):
            d[key] = json.loads(d[key])
    return d


def _traj_dict(row: sqlite3.Row) -> dict[str, Any]:
    d = dict(row)
    for key in JSON_FIELDS:
        if key in d:
            d[key] = json.loads(d[key]) if d[key] else []
    return d
