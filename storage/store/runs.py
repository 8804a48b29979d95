"""The runs table: a run created or resumed under its identity, read, listed, renamed, deleted; what its model calls
spent; and its half-written trajectories, discarded (a resume) or kept as abandoned attempts (a person who left)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from storage.errors import RunConflict, StoreError
from storage.json_types import JsonValue
from storage.records import RunFields
from storage.rows import RunListRow, StoredRun
from storage.store.columns import as_record, inserted_id, now, text_key
from storage.store.connection import StoreConnection


def identity_diff(stored: Mapping[str, JsonValue], requested: Mapping[str, JsonValue]) -> list[str]:
    """The identity keys whose values differ, sorted: what makes the store refuse to resume a run. The launch form
    asks the same question before starting, so a refused resume is explained where it can still be changed."""
    return sorted(k for k in set(stored) | set(requested) if stored.get(k) != requested.get(k))


def differ_phrase(keys: list[str]) -> str:
    """ "seed differs", "seed and caps differ", "a, b and c differ"."""
    if len(keys) == 1:
        return f"{keys[0]} differs"
    return f"{', '.join(keys[:-1])} and {keys[-1]} differ"


class RunsTable(StoreConnection):
    """The store's methods on runs (`storage.store.Store` combines them with the other tables')."""

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
        return as_record(StoredRun, _run_dict(row))

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
        return [as_record(RunListRow, _run_dict(r)) for r in rows]

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

    def runs_in_group(self, group: str) -> list[StoredRun]:
        rows = self.conn.execute(f"{_RUN_SELECT} WHERE r.group_name = ? ORDER BY r.id", (group,)).fetchall()
        return [as_record(StoredRun, _run_dict(r)) for r in rows]

    def trajectory_counts(self, run_id: int) -> tuple[int, int]:
        """(finished, unfinished) trajectories stored for a run, every attempt: an interrupted run holds the
        unfinished ones its stop left (what a delete removes with it)."""
        row = self.conn.execute(
            "SELECT COALESCE(SUM(status = 'done'), 0), COALESCE(SUM(status != 'done'), 0) FROM trajectories"
            " WHERE run_id = ?",
            (run_id,),
        ).fetchone()
        return int(row[0]), int(row[1])

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


SqlValue = str | int | float | None  # what a column of a row is given
RUN_JSON_COLUMNS = ("caps", "config")


def _run_columns(name: str, identity: str, fields: RunFields) -> dict[str, SqlValue]:
    """A new run's row: its name, identity and creation time, then its fields, the JSON ones encoded (an empty
    object when not given) and the prompts file by its hash (`text_key`)."""
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
        record["prompts_text"] = text_key(prompts)
    return record


def _column_value(key: str, value: object) -> SqlValue:
    """A plain column's value as given; anything else is a caller's mistake, named by its column."""
    if value is None or isinstance(value, (str, int, float)):
        return value
    raise StoreError(f"column {key} takes a number or a text, not {type(value).__name__}")


# A run with the prompts file it was sent (stored once in `texts`, by hash)
_RUN_SELECT = "SELECT r.*, x.body AS prompts FROM runs r LEFT JOIN texts x ON x.hash = r.prompts_text"


def _run_dict(row: sqlite3.Row) -> dict[str, Any]:
    d = dict(row)
    for key in ("caps", "config", "identity"):
        if isinstance(d.get(key), str):
            d[key] = json.loads(d[key])
    return d
