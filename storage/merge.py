"""Merging stores: runs copied from other stores, and the shards of one run (made on several hosts) joined.

A campaign split over hosts (`run --shard I/N`) leaves N stores each holding part of one run. Merging
copies every finished trajectory, with all its steps and texts, into one store, so that the run reads as
if one host had made it: same name, same identity, the selection without the shard, the trajectories in
the order one host would have written them, the run's planned count and status over the whole selection.

Refused, with nothing written (the whole merge is one transaction): a run whose configuration differs
apart from the shard (identity, prompt template, kind, selection), and an item/replicate present on both
sides with different results. The same result on both sides is skipped, so merging twice changes nothing.
Each source's run is remembered in the merged run's config (`merged`, keyed by the source run's name,
creation time and shard), which makes a repeated merge idempotent for the run's counters too.
Sources are opened as stores, so a store from an older workbench is migrated before it is read.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias, TypedDict, cast

from storage.errors import StoreError
from storage.json_types import JsonObject, JsonValue
from storage.locks import RunBusy, RunLock
from storage.rows import RunRow
from storage.store import Store
from storage.store.columns import inserted_id
from storage.store.runs import differ_phrase, identity_diff
from storage.store.trajectories import TRAJECTORY_FIELDS

# what a result is, when two stores hold the same item/replicate: everything but when and how long
TIMING = ("wall_time_s", "started_at", "finished_at")
RESULT_FIELDS = tuple(f for f in TRAJECTORY_FIELDS if f not in TIMING)
STEP_TIMING = ("elapsed_s",)

ItemOrder = Callable[[RunRow], dict[str, int] | None]
"""Given a run's row, each item id's position in its dataset (None: unknown, item ids sort instead)."""

SqlValue: TypeAlias = str | int | float | bytes | None
StoredRow: TypeAlias = dict[str, SqlValue]
"""A trajectory's row as stored, column by column: copied to another store as it is, never decoded."""


class Spend(TypedDict):
    """What discarded (unfinished) attempts cost: cap tokens and dollars."""

    tokens: int
    usd: float


class MergeEntry(TypedDict):
    """One source run merged into a run, as the run's config records it under `merged`."""

    shard: str | None
    planned: int
    status: str | None
    discarded: Spend


class MergeSummary(TypedDict):
    """What merging one run did (`RunMerge.as_dict`)."""

    name: str
    created: bool
    copied: int
    identical: int
    partial_skipped: int
    sources: list[str]
    status: str
    planned: int
    finished: int


class MergeRefused(StoreError):
    """The merge would mix runs that are not one run, or contradict a stored result: nothing was written."""


@dataclass
class RunMerge:
    """What merging one run did."""

    name: str
    created: bool = False
    copied: int = 0  # trajectories written (every attempt, and unfinished ones with --include-partial)
    identical: int = 0  # item/replicates already stored with the same result
    partial_skipped: int = 0  # item/replicates without a finished trajectory in the source, left out
    sources: list[str] = field(default_factory=list)
    status: str = ""
    planned: int = 0
    finished: int = 0

    def as_dict(self) -> MergeSummary:
        return MergeSummary(
            name=self.name,
            created=self.created,
            copied=self.copied,
            identical=self.identical,
            partial_skipped=self.partial_skipped,
            sources=list(self.sources),
            status=self.status,
            planned=self.planned,
            finished=self.finished,
        )


def merge_stores(
    dest: Store,
    sources: Sequence[Store],
    names: Sequence[str] | None = None,
    include_partial: bool = False,
    item_order: ItemOrder | None = None,
) -> list[RunMerge]:
    """Copy the runs `names` (default: all) of `sources` into `dest`, in one transaction; see the module docstring.

    Raises MergeRefused (nothing written) or RunBusy when a process is executing one of the runs in `dest`."""
    for src in sources:
        if _same_file(src, dest):
            raise MergeRefused(f"{src.path} is the store being merged into: name other stores")
    plan = _plan(sources, names)
    locks = [RunLock(dest.path, name) for name in plan]
    held: list[RunLock] = []
    try:
        for lock in locks:
            lock.acquire()
            held.append(lock)
        with dest.transaction():
            return [_merge_run(dest, name, parts, include_partial, item_order) for name, parts in plan.items()]
    except RunBusy as exc:
        raise MergeRefused(f"{exc}; nothing was merged") from None
    finally:
        for lock in held:
            lock.release()


# ---------------------------------------------------------------- planning


@dataclass
class _Part:
    """One source store's run of a given name."""

    store: Store
    row: RunRow

    @property
    def where(self) -> str:
        return str(self.store.path)


def _plan(sources: Sequence[Store], names: Sequence[str] | None) -> dict[str, list[_Part]]:
    plan: dict[str, list[_Part]] = {}
    for src in sources:
        for row in src.conn.execute("SELECT * FROM runs ORDER BY id"):
            run = _decoded(row)
            if names is None or run["name"] in names:
                plan.setdefault(run["name"], []).append(_Part(src, run))
    _refuse_missing([n for n in names or () if n not in plan], sources)
    return plan


def _refuse_missing(missing: list[str], sources: Sequence[Store]) -> None:
    """Runs asked for by name that no source holds: nothing is merged."""
    if missing:
        raise MergeRefused(
            f"no run named {', '.join(repr(n) for n in missing)} in "
            f"{', '.join(str(s.path) for s in sources)}; nothing was merged"
        )


def _decoded(row: sqlite3.Row) -> RunRow:
    """A run's row with its JSON columns decoded. SQLite's rows are untyped; the schema fixes a run's columns, so
    the row is typed here, once."""
    d = dict(row)
    for key in ("caps", "config", "identity"):
        if isinstance(d.get(key), str):
            d[key] = json.loads(d[key])
    return cast(RunRow, d)


def _object(value: JsonValue | None) -> JsonObject:
    """A JSON value that holds an object when present: absent or null, it reads as an empty one."""
    return value if isinstance(value, dict) else {}


def _list(value: JsonValue | None) -> list[JsonValue]:
    """A JSON value that holds a list when present: absent or null, it reads as an empty one."""
    return value if isinstance(value, list) else []


def shard_of_run(run: RunRow) -> str | None:
    """The shard ("I/N") a run was made as, or None for a whole selection."""
    shard = _object(_object(run["config"]).get("slice")).get("shard")
    return shard if isinstance(shard, str) else None


def _selection(run: RunRow) -> JsonObject:
    """The run's recorded selection apart from the shard."""
    return {k: v for k, v in _object(_object(run["config"]).get("slice")).items() if k != "shard"}


def config_differences(a: RunRow, b: RunRow) -> list[str]:
    """What differs between two runs of one name apart from the shard: identity keys, prompt, kind, selection."""
    keys = identity_diff(a["identity"], b["identity"])
    if a["prompt_hash"] != b["prompt_hash"]:
        keys.append("prompt template")
    if a["kind"] != b["kind"]:
        keys.append("kind")
    if _selection(a) != _selection(b):
        keys.append("item selection")
    return keys


# ---------------------------------------------------------------- one run


def _merge_run(
    dest: Store, name: str, parts: list[_Part], include_partial: bool, item_order: ItemOrder | None
) -> RunMerge:
    conn = dest.conn
    row = conn.execute("SELECT * FROM runs WHERE name = ?", (name,)).fetchone()
    target = _decoded(row) if row is not None else None
    reference = target or parts[0].row
    _refuse_other_runs(name, target, reference, parts)
    _check_tags(name, target, parts)
    result = RunMerge(name, created=target is None, sources=[p.where for p in parts])
    run_id = target["id"] if target is not None else _create_run(conn, parts[0].row)
    if target is None:
        _copy_prompts(conn, parts[0])
    order = (item_order(reference) if item_order else None) or {}
    discarded = Spend(tokens=0, usd=0.0)
    for part, (item_id, replicate), rows in _ordered_groups(parts, order):
        _merge_pair(conn, part, run_id, name, item_id, replicate, rows, include_partial, result, discarded)
    _copy_judgments(conn, parts, run_id)
    _update_run(conn, run_id, target, parts, discarded, result)
    return result


def _refuse_other_runs(name: str, target: RunRow | None, reference: RunRow, parts: list[_Part]) -> None:
    """Refuse a part whose configuration differs from the run's apart from the shard: it is another run."""
    for part in parts:
        diff = config_differences(reference, part.row)
        if diff:
            here = "this store" if target is not None else parts[0].where
            raise MergeRefused(
                f"run '{name}' in {part.where} is not the run '{name}' of {here} "
                f"({differ_phrase(diff)}); nothing was merged",
                remedy="rename_to_keep_both",
                run=name,
            )


def _ordered_groups(parts: list[_Part], order: dict[str, int]) -> list[tuple[_Part, tuple[str, int], list[StoredRow]]]:
    """Every part's trajectories by (item, replicate), in the order one host would have written them: replicate
    by replicate, in dataset order (item ids sort where the order is unknown)."""
    groups = [(p, key, rows) for p in parts for key, rows in _groups(p).items()]
    groups.sort(key=lambda g: (g[1][1], order.get(g[1][0], len(order)), g[1][0]))
    return groups


def _create_run(conn: sqlite3.Connection, source: RunRow) -> int:
    config = dict(source["config"])
    config.pop("merged", None)
    config.pop("discarded", None)  # summed from the sources by _update_run
    encoded = {"caps": source["caps"], "config": config, "identity": source["identity"]}
    columns = _columns(conn, "runs")
    record = {
        k: json.dumps(encoded[k], sort_keys=True) if k in encoded else v
        for k, v in source.items()
        if k != "id" and k in columns
    }
    cur = conn.execute(
        f"INSERT INTO runs ({', '.join(record)}) VALUES ({', '.join('?' * len(record))})", list(record.values())
    )
    return inserted_id(cur)


def _copy_prompts(conn: sqlite3.Connection, part: _Part) -> None:
    """The prompts file the run was sent (kept once in `texts`, by the hash its row holds) comes with it."""
    key = part.row["prompts_text"]
    body = part.store.conn.execute("SELECT body FROM texts WHERE hash = ?", (key,)).fetchone() if key else None
    if body is not None:
        conn.execute("INSERT OR IGNORE INTO texts (hash, body) VALUES (?, ?)", (key, body[0]))


def _groups(part: _Part) -> dict[tuple[str, int], list[StoredRow]]:
    """The source run's trajectories by (item, replicate), oldest attempt first."""
    out: dict[tuple[str, int], list[StoredRow]] = {}
    for r in part.store.conn.execute(
        "SELECT * FROM trajectories WHERE run_id = ? ORDER BY attempt, id", (part.row["id"],)
    ):
        out.setdefault((r["item_id"], r["replicate"]), []).append(dict(r))
    return out


def _final(rows: list[StoredRow]) -> StoredRow | None:
    return next((r for r in rows if r["final"] and r["status"] == "done"), None)


def _int(row: StoredRow, column: str) -> int:
    """An INTEGER NOT NULL column of a stored row (`id`, `attempt`)."""
    value = row[column]
    if not isinstance(value, int):
        raise TypeError(f"{column} of a stored row is {value!r}, not an integer")
    return value


def _merge_pair(
    conn: sqlite3.Connection,
    part: _Part,
    run_id: int,
    name: str,
    item_id: str,
    replicate: int,
    rows: list[StoredRow],
    include_partial: bool,
    result: RunMerge,
    discarded: Spend,
) -> None:
    """One item/replicate of a source: skipped when stored alike, refused when stored otherwise, else copied."""
    src_final = _final(rows)
    existing = _stored_attempts(conn, run_id, item_id, replicate)
    dest_final = _final(existing)
    if dest_final is not None:  # finished here already: the source's unfinished attempts add nothing
        if src_final is not None:
            _check_same_result(conn, part, name, item_id, replicate, src_final, dest_final)
            result.identical += 1
        return
    if src_final is None and not include_partial:
        result.partial_skipped += 1  # not finished in the source: its attempts so far stay there
        return
    if src_final is not None:  # the pair is finished now: this store's own unfinished attempts at it are obsolete
        rows = [r for r in rows if r["status"] == "done" or include_partial]
        existing = _drop_unfinished(conn, existing, discarded)
    shift = _attempt_shift(existing, rows)
    for r in rows:
        _copy_trajectory(part.store.conn, conn, r, run_id, _int(r, "attempt") + shift)
        result.copied += 1


def _stored_attempts(conn: sqlite3.Connection, run_id: int, item_id: str, replicate: int) -> list[StoredRow]:
    """Every attempt the store merged into holds at an item/replicate of the run."""
    rows = conn.execute(
        "SELECT * FROM trajectories WHERE run_id = ? AND item_id = ? AND replicate = ?", (run_id, item_id, replicate)
    )
    return [dict(r) for r in rows]


def _check_same_result(
    conn: sqlite3.Connection,
    part: _Part,
    name: str,
    item_id: str,
    replicate: int,
    src_final: StoredRow,
    dest_final: StoredRow,
) -> None:
    """Refuse a pair finished on both sides with different results: the shards overlap and disagree."""
    if _signature(part.store.conn, src_final) != _signature(conn, dest_final):
        raise MergeRefused(
            f"run '{name}': item {item_id} replicate {replicate} has a different result in {part.where} "
            f"({_outcome(src_final)}) than in the store merged into ({_outcome(dest_final)}); nothing was "
            "merged: the shards overlap with different results (were they made with another agent or seed?)"
        )


def _attempt_shift(existing: list[StoredRow], rows: list[StoredRow]) -> int:
    """How far the copied attempts move up so as not to collide with the attempts stored here already."""
    taken = {_int(r, "attempt") for r in existing}
    if not taken & {_int(r, "attempt") for r in rows}:
        return 0
    return max(taken) + 1 - min(_int(r, "attempt") for r in rows)


# Step fields computed from the stored reads after the fact (`sandbox.rescore.rehop` backfills them in any store a
# report opens): a part from before they existed holds NULL there and is still the same result.
DERIVED_STEP_FIELDS = ("hop",)


def _outcome(t: StoredRow) -> str:
    return f"{t['termination']!s}, answer {t['answer']!r}, {t['tool_calls']!s} tool calls"


def _signature(conn: sqlite3.Connection, t: StoredRow) -> str:
    """A digest of a trajectory's result: its outcome fields and every step with its full text, timing aside."""
    h = hashlib.sha256()
    h.update(json.dumps([t.get(f) for f in RESULT_FIELDS], default=str).encode())
    cur = conn.execute(
        "SELECT s.*, COALESCE(s.text, x.body) AS full_text FROM steps s "
        "LEFT JOIN texts x ON x.hash = s.text_hash WHERE s.trajectory_id = ? ORDER BY s.idx",
        (t["id"],),
    )
    names = [d[0] for d in cur.description]
    skip = {"trajectory_id", "text", "text_hash", *STEP_TIMING, *DERIVED_STEP_FIELDS}
    for row in cur:
        h.update(json.dumps([v for n, v in zip(names, row, strict=True) if n not in skip], default=str).encode())
    return h.hexdigest()


def _drop_unfinished(conn: sqlite3.Connection, existing: list[StoredRow], discarded: Spend) -> list[StoredRow]:
    """Delete the store's unfinished trajectories of a pair, keeping what their calls cost (as a resume does)."""
    kept = []
    for r in existing:
        if r["status"] == "done":
            kept.append(r)
            continue
        tokens, usd = conn.execute(
            "SELECT COALESCE(MAX(tokens), 0), COALESCE(SUM(cost_usd), 0.0) FROM steps WHERE trajectory_id = ?",
            (r["id"],),
        ).fetchone()
        discarded["tokens"] += int(tokens)
        discarded["usd"] += float(usd)
        conn.execute("DELETE FROM steps WHERE trajectory_id = ?", (r["id"],))
        conn.execute("DELETE FROM trajectories WHERE id = ?", (r["id"],))
    return kept


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _copy_trajectory(src: sqlite3.Connection, dst: sqlite3.Connection, t: StoredRow, run_id: int, attempt: int) -> None:
    """One trajectory with every step, and the deduplicated texts its steps point to."""
    columns = [c for c in _columns(dst, "trajectories") if c != "id" and c in t]
    values = [run_id if c == "run_id" else attempt if c == "attempt" else t[c] for c in columns]
    tid = inserted_id(
        dst.execute(f"INSERT INTO trajectories ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", values)
    )
    _copy_steps(src, dst, _int(t, "id"), tid)


def _copy_steps(src: sqlite3.Connection, dst: sqlite3.Connection, source_id: int, tid: int) -> None:
    """The steps of the source's trajectory `source_id`, as steps of `tid`, with the texts they point to."""
    step_columns = _columns(dst, "steps")
    cur = src.execute("SELECT * FROM steps WHERE trajectory_id = ? ORDER BY idx", (source_id,))
    names = [d[0] for d in cur.description]
    shared = [c for c in step_columns if c in names]
    insert = f"INSERT INTO steps ({', '.join(shared)}) VALUES ({', '.join('?' * len(shared))})"
    for row in cur.fetchall():
        step: StoredRow = dict(zip(names, row, strict=True))
        step["trajectory_id"] = tid
        _copy_text(src, dst, step["text_hash"])
        dst.execute(insert, [step[c] for c in shared])


def _copy_text(src: sqlite3.Connection, dst: sqlite3.Connection, text_hash: SqlValue) -> None:
    """A long step text (stored once in `texts`, by hash) the copied step points to; none when inline."""
    if not text_hash:
        return
    body = src.execute("SELECT body FROM texts WHERE hash = ?", (text_hash,)).fetchone()
    if body is not None:
        dst.execute("INSERT OR IGNORE INTO texts (hash, body) VALUES (?, ?)", (text_hash, body[0]))


def _copy_judgments(conn: sqlite3.Connection, parts: list[_Part], run_id: int) -> None:
    """Judge verdicts of a parallel run; one already stored for the same samples is kept."""
    columns = [c for c in _columns(conn, "judgments") if c not in ("id", "run_id")]
    for part in parts:
        for r in part.store.conn.execute(
            f"SELECT {', '.join(columns)} FROM judgments WHERE run_id = ?", (part.row["id"],)
        ):
            conn.execute(
                f"INSERT OR IGNORE INTO judgments (run_id, {', '.join(columns)}) "
                f"VALUES (?, {', '.join('?' * len(columns))})",
                (run_id, *r),
            )


# ---------------------------------------------------------------- the run's row


def _entry_key(run: RunRow) -> str:
    """A source run, the same on every merge of it: its name, creation time and shard."""
    return hashlib.sha256(f"{run['name']}\x00{run['created_at']}\x00{shard_of_run(run)}".encode()).hexdigest()[:16]


def _spend(value: JsonValue | None) -> Spend:
    """What discarded attempts cost, as a run's config records it (absent: nothing)."""
    gone = _object(value)
    tokens, usd = gone.get("tokens", 0), gone.get("usd", 0.0)
    return Spend(
        tokens=int(tokens) if isinstance(tokens, (int, float)) else 0,
        usd=float(usd) if isinstance(usd, (int, float)) else 0.0,
    )


def _entry(run: RunRow) -> MergeEntry:
    return MergeEntry(
        shard=shard_of_run(run),
        planned=run["planned"] or 0,
        status=run["status"],
        discarded=_spend(_object(run["config"]).get("discarded")),
    )


def _recorded_entries(config: JsonObject) -> dict[str, MergeEntry]:
    """The parts merged into a run so far, as its config records them (`_entry_json` wrote them)."""
    return {key: _entry_of_json(_object(value)) for key, value in _object(config.get("merged")).items()}


def _entry_of_json(value: JsonObject) -> MergeEntry:
    shard, planned, status = value.get("shard"), value.get("planned"), value.get("status")
    return MergeEntry(
        shard=shard if isinstance(shard, str) else None,
        planned=planned if isinstance(planned, int) else 0,
        status=status if isinstance(status, str) else None,
        discarded=_spend(value.get("discarded")),
    )


def _entry_json(entry: MergeEntry) -> JsonObject:
    spent = entry["discarded"]
    return {
        "shard": entry["shard"],
        "planned": entry["planned"],
        "status": entry["status"],
        "discarded": {"tokens": spent["tokens"], "usd": spent["usd"]},
    }


def coverage(entries: Sequence[MergeEntry]) -> tuple[int, bool]:
    """(planned, complete) of a run made of these parts: a whole selection counts as it is; shards of N add up
    over their distinct indices, and are complete when every index 1..N is there and done."""
    planned, complete = 0, False
    for e in entries:
        if e["shard"] is None:
            planned = max(planned, e["planned"])
            complete = complete or e["status"] == "done"
    for count, shards in _best_shards(entries).items():
        planned = max(planned, sum(e["planned"] for e in shards.values()))
        complete = complete or (len(shards) == count and all(e["status"] == "done" for e in shards.values()))
    return planned, complete


def _best_shards(entries: Sequence[MergeEntry]) -> dict[int, dict[int, MergeEntry]]:
    """Per shard count N, per index I: the entry of shard I/N that planned most or is done (a later one wins a
    tie), so a shard merged twice counts once."""
    by_count: dict[int, dict[int, MergeEntry]] = {}
    for e in entries:
        if e["shard"] is None:
            continue
        index, count = (int(x) for x in e["shard"].split("/"))
        best = by_count.setdefault(count, {}).get(index)
        if best is None or e["planned"] > best["planned"] or e["status"] == "done":
            by_count[count][index] = e
    return by_count


def _update_run(
    conn: sqlite3.Connection,
    run_id: int,
    target: RunRow | None,
    parts: list[_Part],
    discarded: Spend,
    result: RunMerge,
) -> None:
    """Planned, status, counters, tags and times of the merged run, over every part ever merged into it."""
    current = _decoded(conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone())
    rows = [current, *(p.row for p in parts)]
    entries, spent = _ledger(current, target, parts, discarded)
    status, planned = _progress(entries, current, target)
    fields: dict[str, SqlValue] = {
        "config": json.dumps(_merged_config(current, rows, entries, spent), sort_keys=True),
        "planned": planned,
        "status": status,
        "replicates": max(r["replicates"] or 1 for r in rows),
        "created_at": min(r["created_at"] for r in rows),
        "started_at": _earliest(r["started_at"] for r in rows),
        "finished_at": _latest(r["finished_at"] for r in rows),
        "hop_rule": _hop_rule(rows if result.copied else [current]),
        **{tag: _recorded(rows, tag) for tag in TAGS},
    }
    conn.execute(f"UPDATE runs SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?", [*fields.values(), run_id])
    result.status, result.planned = status, planned
    result.finished = conn.execute(
        "SELECT COUNT(*) FROM trajectories WHERE run_id = ? AND final = 1 AND status = 'done'", (run_id,)
    ).fetchone()[0]


def _progress(entries: dict[str, MergeEntry], current: RunRow, target: RunRow | None) -> tuple[str, int]:
    """(status, planned) of the merged run: done when its parts cover the selection (or it was whole and done
    here already), else interrupted; planned never below what this store planned."""
    planned, complete = coverage(list(entries.values()))
    was_whole_and_done = target is not None and target["status"] == "done" and shard_of_run(target) is None
    status = "done" if complete or was_whole_and_done else "interrupted"
    return status, max(planned, (current["planned"] or 0) if target is not None else 0)


def _hop_rule(rows: Sequence[RunRow]) -> str | None:
    """The reads' hops are measured only if every part's were, under one rule: else None, backfilled when reported
    (the caller passes only the run itself when the merge copied nothing: its measurement stays as it was)."""
    rules = {r["hop_rule"] for r in rows}
    return rules.pop() if len(rules) == 1 else None


def _ledger(
    current: RunRow, target: RunRow | None, parts: list[_Part], discarded: Spend
) -> tuple[dict[str, MergeEntry], Spend]:
    """Every part ever merged into the run (keyed by `_entry_key`), and what discarded attempts cost in all: this
    merge's, plus each part's own, counted once however often it is merged."""
    config = _object(current["config"])
    entries = _recorded_entries(config)
    if target is not None and not entries:
        entries[_entry_key(target)] = _entry(target)  # this store's own part of the run, before any merge
    gone = _spend(config.get("discarded"))
    tokens, usd = gone["tokens"] + discarded["tokens"], gone["usd"] + discarded["usd"]
    for part in parts:
        key, entry = _entry_key(part.row), _entry(part.row)
        before = entries[key]["discarded"] if key in entries else Spend(tokens=0, usd=0.0)
        tokens += entry["discarded"]["tokens"] - before["tokens"]  # a repeated merge adds only what is new
        usd += entry["discarded"]["usd"] - before["usd"]
        entries[key] = entry
    return entries, Spend(tokens=tokens, usd=usd)


def _merged_config(current: RunRow, rows: Sequence[RunRow], entries: dict[str, MergeEntry], spent: Spend) -> JsonObject:
    """The run's config over all its parts: the ledger, the spend discarded, the selection without the shard, the
    scaling records and every base URL the parts were sent to."""
    config = dict(_object(current["config"]))
    config["merged"] = {key: _entry_json(entry) for key, entry in entries.items()}
    if spent["tokens"] or spent["usd"]:
        config["discarded"] = {"tokens": spent["tokens"], "usd": spent["usd"]}
    config["slice"] = _selection(current)
    config["scaling"] = _scalings(rows)
    urls = [u for r in rows for u in _list(_object(r["config"]).get("base_urls")) if isinstance(u, str)]
    config["base_urls"] = list(dict.fromkeys(urls))
    return config


# ---------------------------------------------------------------- tags

Tag = Literal["family", "tier"]
TAGS: tuple[Tag, ...] = ("family", "tier")


def _recorded(rows: Sequence[RunRow], tag: Tag) -> str | None:
    """The run's tag: the first part's that records one (`_check_tags` has refused parts that disagree); a part
    stored before tags existed records none, and reads a tag derived from its model."""
    return next((r[tag] for r in rows if r[tag] is not None), None)


def _check_tags(name: str, target: RunRow | None, parts: list[_Part]) -> None:
    """Refuse parts of one run tagged with different families or tiers (`runs tag`, `run --family/--tier`).

    A tag is not the run's identity, but the panel groups runs by it and tests families against each other: the
    merged run keeping one shard's tag would file the others' trajectories under a family they were not given,
    silently. The fix is one `runs tag` on a source store, and a refused merge writes nothing."""
    sides = ([("this store", target)] if target is not None else []) + [(p.where, p.row) for p in parts]
    for tag in TAGS:
        seen: dict[str, str] = {}
        for where, row in sides:
            value = row[tag]
            if value is not None:
                seen.setdefault(value, where)
        if len(seen) > 1:
            (a, where_a), (b, where_b) = list(seen.items())[:2]
            raise MergeRefused(
                f"run '{name}' is tagged {tag} '{a}' in {where_a} but {tag} '{b}' in {where_b}; nothing was merged",
                remedy="tag_alike",
                run=name,
            )


def _scaling_of(run: RunRow) -> JsonObject:
    """A run's scaling record (empty for a run that is not a scaling study)."""
    return _object(_object(run["config"]).get("scaling"))


def _scalings(rows: Sequence[RunRow]) -> JsonValue:
    """The parts' scaling records, with every k a parallel run was read at (as a resume records them)."""
    first = next((_scaling_of(r) for r in rows if _scaling_of(r)), None)
    if not first:
        return first
    out = dict(first)
    ks = {k for r in rows for k in _list(_scaling_of(r).get("ks")) if isinstance(k, int)}
    if ks:
        ordered: list[JsonValue] = list(sorted(ks))
        out["ks"] = ordered
    return out


def _earliest(values: Iterable[str | None]) -> str | None:
    present = [v for v in values if v]
    return min(present) if present else None


def _latest(values: Iterable[str | None]) -> str | None:
    present = [v for v in values if v]
    return max(present) if present else None


def _same_file(a: Store, b: Store) -> bool:
    try:
        return os.path.samefile(a.path, b.path)
    except OSError:
        return False
