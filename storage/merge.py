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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from storage.locks import RunBusy, RunLock
from storage.store import TRAJECTORY_FIELDS, Store, StoreError, differ_phrase, identity_diff, inserted_id

# what a result is, when two stores hold the same item/replicate: everything but when and how long
TIMING = ("wall_time_s", "started_at", "finished_at")
RESULT_FIELDS = tuple(f for f in TRAJECTORY_FIELDS if f not in TIMING)
STEP_TIMING = ("elapsed_s",)

ItemOrder = Callable[[Mapping[str, Any]], Mapping[str, int] | None]
"""Given a run's row, each item id's position in its dataset (None: unknown, item ids sort instead)."""


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

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


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
    row: dict[str, Any]

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
    missing = [n for n in names or () if n not in plan]
    if missing:
        raise MergeRefused(
            f"no run named {', '.join(repr(n) for n in missing)} in "
            f"{', '.join(str(s.path) for s in sources)}; nothing was merged"
        )
    return plan


def _decoded(row: sqlite3.Row | Mapping[str, Any]) -> dict[str, Any]:
    d = dict(row)
    for key in ("caps", "config", "identity"):
        if isinstance(d.get(key), str):
            d[key] = json.loads(d[key])
    return d


def shard_of_run(run: Mapping[str, Any]) -> str | None:
    """The shard ("I/N") a run was made as, or None for a whole selection."""
    return ((run.get("config") or {}).get("slice") or {}).get("shard")


def _selection(run: Mapping[str, Any]) -> dict[str, Any]:
    """The run's recorded selection apart from the shard."""
    return {k: v for k, v in ((run.get("config") or {}).get("slice") or {}).items() if k != "shard"}


def config_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """What differs between two runs of one name apart from the shard: identity keys, prompt, kind, selection."""
    keys = identity_diff(a["identity"], b["identity"])
    if a.get("prompt_hash") != b.get("prompt_hash"):
        keys.append("prompt template")
    if a.get("kind") != b.get("kind"):
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
    _check_tags(name, target, parts)
    result = RunMerge(name, created=target is None, sources=[p.where for p in parts])
    run_id = target["id"] if target is not None else _create_run(conn, parts[0].row)
    if target is None:
        _copy_prompts(conn, parts[0])
    order = (item_order(reference) if item_order else None) or {}
    groups = [(p, key, rows) for p in parts for key, rows in _groups(p).items()]
    # the order one host would have written them in: replicate by replicate, in dataset order
    groups.sort(key=lambda g: (g[1][1], order.get(g[1][0], len(order)), g[1][0]))
    discarded = {"tokens": 0, "usd": 0.0}
    for part, (item_id, replicate), rows in groups:
        _merge_pair(conn, part, run_id, name, item_id, replicate, rows, include_partial, result, discarded)
    _copy_judgments(conn, parts, run_id)
    _update_run(conn, run_id, target, parts, discarded, result)
    return result


def _create_run(conn: sqlite3.Connection, source: dict[str, Any]) -> int:
    record = {k: v for k, v in source.items() if k != "id"}
    config = dict(record.get("config") or {})
    config.pop("merged", None)
    config.pop("discarded", None)  # summed from the sources by _update_run
    record["config"] = config
    for key in ("caps", "config", "identity"):
        record[key] = json.dumps(record[key], sort_keys=True)
    columns = _columns(conn, "runs")
    record = {k: v for k, v in record.items() if k in columns}
    cur = conn.execute(
        f"INSERT INTO runs ({', '.join(record)}) VALUES ({', '.join('?' * len(record))})", list(record.values())
    )
    return inserted_id(cur)


def _copy_prompts(conn: sqlite3.Connection, part: _Part) -> None:
    """The prompts file the run was sent (kept once in `texts`, by the hash its row holds) comes with it."""
    key = part.row.get("prompts_text")
    body = part.store.conn.execute("SELECT body FROM texts WHERE hash = ?", (key,)).fetchone() if key else None
    if body is not None:
        conn.execute("INSERT OR IGNORE INTO texts (hash, body) VALUES (?, ?)", (key, body[0]))


def _groups(part: _Part) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """The source run's trajectories by (item, replicate), oldest attempt first."""
    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in part.store.conn.execute(
        "SELECT * FROM trajectories WHERE run_id = ? ORDER BY attempt, id", (part.row["id"],)
    ):
        out.setdefault((r["item_id"], r["replicate"]), []).append(dict(r))
    return out


def _final(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((r for r in rows if r["final"] and r["status"] == "done"), None)


def _merge_pair(
    conn: sqlite3.Connection,
    part: _Part,
    run_id: int,
    name: str,
    item_id: str,
    replicate: int,
    rows: list[dict[str, Any]],
    include_partial: bool,
    result: RunMerge,
    discarded: dict[str, Any],
) -> None:
    """One item/replicate of a source: skipped when stored alike, refused when stored otherwise, else copied."""
    src_final = _final(rows)
    existing = [
        dict(r)
        for r in conn.execute(
            "SELECT * FROM trajectories WHERE run_id = ? AND item_id = ? AND replicate = ?",
            (run_id, item_id, replicate),
        )
    ]
    dest_final = _final(existing)
    if dest_final is not None:
        if src_final is None:
            return  # finished here already; the source's unfinished attempts add nothing
        if _signature(part.store.conn, src_final) != _signature(conn, dest_final):
            raise MergeRefused(
                f"run '{name}': item {item_id} replicate {replicate} has a different result in {part.where} "
                f"({_outcome(src_final)}) than in the store merged into ({_outcome(dest_final)}); nothing was "
                "merged: the shards overlap with different results (were they made with another agent or seed?)"
            )
        result.identical += 1
        return
    if src_final is None and not include_partial:
        result.partial_skipped += 1  # not finished in the source: its attempts so far stay there
        return
    if src_final is not None:
        rows = [r for r in rows if r["status"] == "done" or include_partial]
    if src_final is not None:  # the pair is finished now: this store's own unfinished attempts at it are obsolete
        existing = _drop_unfinished(conn, existing, discarded)
    taken = {r["attempt"] for r in existing}
    shift = 0
    if taken & {r["attempt"] for r in rows}:
        shift = max(taken) + 1 - min(r["attempt"] for r in rows)
    for r in rows:
        _copy_trajectory(part.store.conn, conn, r, run_id, r["attempt"] + shift)
        result.copied += 1


# Step fields computed from the stored reads after the fact (`sandbox.rescore.rehop` backfills them in any store a
# report opens): a part from before they existed holds NULL there and is still the same result.
DERIVED_STEP_FIELDS = ("hop",)


def _outcome(t: Mapping[str, Any]) -> str:
    return f"{t.get('termination')}, answer {t.get('answer')!r}, {t.get('tool_calls')} tool calls"


def _signature(conn: sqlite3.Connection, t: Mapping[str, Any]) -> str:
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


def _drop_unfinished(
    conn: sqlite3.Connection, existing: list[dict[str, Any]], discarded: dict[str, Any]
) -> list[dict[str, Any]]:
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


def _copy_trajectory(
    src: sqlite3.Connection, dst: sqlite3.Connection, t: dict[str, Any], run_id: int, attempt: int
) -> None:
    """One trajectory with every step, and the deduplicated texts its steps point to."""
    columns = [c for c in _columns(dst, "trajectories") if c != "id" and c in t]
    values = [run_id if c == "run_id" else attempt if c == "attempt" else t[c] for c in columns]
    tid = dst.execute(
        f"INSERT INTO trajectories ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", values
    ).lastrowid
    step_columns = _columns(dst, "steps")
    cur = src.execute("SELECT * FROM steps WHERE trajectory_id = ? ORDER BY idx", (t["id"],))
    names = [d[0] for d in cur.description]
    shared = [c for c in step_columns if c in names]
    insert = f"INSERT INTO steps ({', '.join(shared)}) VALUES ({', '.join('?' * len(shared))})"
    for row in cur.fetchall():
        step = dict(zip(names, row, strict=True))
        step["trajectory_id"] = tid
        if step.get("text_hash"):
            body = src.execute("SELECT body FROM texts WHERE hash = ?", (step["text_hash"],)).fetchone()
            if body is not None:
                dst.execute("INSERT OR IGNORE INTO texts (hash, body) VALUES (?, ?)", (step["text_hash"], body[0]))
        dst.execute(insert, [step[c] for c in shared])


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


def _entry_key(run: Mapping[str, Any]) -> str:
    """A source run, the same on every merge of it: its name, creation time and shard."""
    return hashlib.sha256(f"{run['name']}\x00{run['created_at']}\x00{shard_of_run(run)}".encode()).hexdigest()[:16]


def _entry(run: Mapping[str, Any]) -> dict[str, Any]:
    gone = (run.get("config") or {}).get("discarded") or {}
    return {
        "shard": shard_of_run(run),
        "planned": run.get("planned") or 0,
        "status": run.get("status"),
        "discarded": {"tokens": int(gone.get("tokens", 0)), "usd": float(gone.get("usd", 0.0))},
    }


def coverage(entries: Sequence[Mapping[str, Any]]) -> tuple[int, bool]:
    """(planned, complete) of a run made of these parts: a whole selection counts as it is; shards of N add up
    over their distinct indices, and are complete when every index 1..N is there and done."""
    planned, complete = 0, False
    by_count: dict[int, dict[int, Mapping[str, Any]]] = {}
    for e in entries:
        if e["shard"] is None:
            planned = max(planned, e["planned"])
            complete = complete or e["status"] == "done"
            continue
        index, count = (int(x) for x in e["shard"].split("/"))
        best = by_count.setdefault(count, {}).get(index)
        if best is None or e["planned"] > best["planned"] or e["status"] == "done":
            by_count[count][index] = e
    for count, shards in by_count.items():
        planned = max(planned, sum(e["planned"] for e in shards.values()))
        complete = complete or (len(shards) == count and all(e["status"] == "done" for e in shards.values()))
    return planned, complete


def _update_run(
    conn: sqlite3.Connection,
    run_id: int,
    target: dict[str, Any] | None,
    parts: list[_Part],
    discarded: dict[str, Any],
    result: RunMerge,
) -> None:
    """Planned, status, counters, tags and times of the merged run, over every part ever merged into it."""
    current = _decoded(conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone())
    rows = [current, *(p.row for p in parts)]
    entries, spent = _ledger(current, target, parts, discarded)
    status, planned = _progress(entries, current, target)
    fields = {
        "config": json.dumps(_merged_config(current, rows, entries, spent), sort_keys=True),
        "planned": planned,
        "status": status,
        "replicates": max(r["replicates"] or 1 for r in rows),
        **_times(rows),
        "hop_rule": _hop_rule(rows if result.copied else [current]),
        **{tag: _recorded(rows, tag) for tag in TAGS},
    }
    conn.execute(f"UPDATE runs SET {', '.join(f'{k} = ?' for k in fields)} WHERE id = ?", [*fields.values(), run_id])
    result.status, result.planned = status, planned
    result.finished = conn.execute(
        "SELECT COUNT(*) FROM trajectories WHERE run_id = ? AND final = 1 AND status = 'done'", (run_id,)
    ).fetchone()[0]


def _progress(entries: dict[str, Any], current: dict[str, Any], target: dict[str, Any] | None) -> tuple[str, int]:
    """(status, planned) of the merged run: done when its parts cover the selection (or it was whole and done
    here already), else interrupted; planned never below what this store planned."""
    planned, complete = coverage(list(entries.values()))
    was_whole_and_done = target is not None and target["status"] == "done" and shard_of_run(target) is None
    status = "done" if complete or was_whole_and_done else "interrupted"
    return status, max(planned, (current["planned"] or 0) if target is not None else 0)


def _times(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """When the run was created, started and finished: the earliest part's creation and start, the last finish."""
    return {
        "created_at": min(r["created_at"] for r in rows),
        "started_at": _earliest(r.get("started_at") for r in rows),
        "finished_at": _latest(r.get("finished_at") for r in rows),
    }


def _hop_rule(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The reads' hops are measured only if every part's were, under one rule: else None, backfilled when reported
    (the caller passes only the run itself when the merge copied nothing: its measurement stays as it was)."""
    rules = {r.get("hop_rule") for r in rows}
    return rules.pop() if len(rules) == 1 else None


def _ledger(
    current: dict[str, Any], target: dict[str, Any] | None, parts: list[_Part], discarded: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every part ever merged into the run (keyed by `_entry_key`), and what discarded attempts cost in all: this
    merge's, plus each part's own, counted once however often it is merged."""
    config = current["config"] or {}
    entries: dict[str, Any] = dict(config.get("merged") or {})
    if target is not None and not entries:
        entries[_entry_key(target)] = _entry(target)  # this store's own part of the run, before any merge
    gone = config.get("discarded") or {}
    tokens, usd = int(gone.get("tokens", 0)) + discarded["tokens"], float(gone.get("usd", 0.0)) + discarded["usd"]
    for part in parts:
        key, entry = _entry_key(part.row), _entry(part.row)
        before = (entries.get(key) or {}).get("discarded") or {"tokens": 0, "usd": 0.0}
        tokens += entry["discarded"]["tokens"] - before["tokens"]  # a repeated merge adds only what is new
        usd += entry["discarded"]["usd"] - before["usd"]
        entries[key] = entry
    return entries, {"tokens": tokens, "usd": usd}


def _merged_config(
    current: dict[str, Any], rows: Sequence[Mapping[str, Any]], entries: dict[str, Any], spent: dict[str, Any]
) -> dict[str, Any]:
    """The run's config over all its parts: the ledger, the spend discarded, the selection without the shard, the
    scaling records and every base URL the parts were sent to."""
    config = dict(current["config"] or {})
    config["merged"] = entries
    if spent["tokens"] or spent["usd"]:
        config["discarded"] = spent
    config["slice"] = _selection(current)
    config["scaling"] = _scalings(rows)
    urls = [u for r in rows for u in ((r.get("config") or {}).get("base_urls") or [])]
    config["base_urls"] = list(dict.fromkeys(urls))
    return config


# ---------------------------------------------------------------- tags

TAGS = ("family", "tier")


def _recorded(rows: Sequence[Mapping[str, Any]], tag: str) -> Any:
    """The run's tag: the first part's that records one (`_check_tags` has refused parts that disagree); a part
    stored before tags existed records none, and reads a tag derived from its model."""
    return next((r.get(tag) for r in rows if r.get(tag) is not None), None)


def _check_tags(name: str, target: dict[str, Any] | None, parts: list[_Part]) -> None:
    """Refuse parts of one run tagged with different families or tiers (`runs tag`, `run --family/--tier`).

    A tag is not the run's identity, but the panel groups runs by it and tests families against each other: the
    merged run keeping one shard's tag would file the others' trajectories under a family they were not given,
    silently. The fix is one `runs tag` on a source store, and a refused merge writes nothing."""
    sides = ([("this store", target)] if target is not None else []) + [(p.where, p.row) for p in parts]
    for tag in TAGS:
        seen: dict[Any, str] = {}
        for where, row in sides:
            if row.get(tag) is not None:
                seen.setdefault(row[tag], where)
        if len(seen) > 1:
            (a, where_a), (b, where_b) = list(seen.items())[:2]
            raise MergeRefused(
                f"run '{name}' is tagged {tag} '{a}' in {where_a} but {tag} '{b}' in {where_b}; nothing was merged",
                remedy="tag_alike",
                run=name,
            )


def _scalings(rows: Sequence[Mapping[str, Any]]) -> Any:
    """The parts' scaling records, with every k a parallel run was read at (as a resume records them)."""
    first = next(((r.get("config") or {}).get("scaling") for r in rows if (r.get("config") or {}).get("scaling")), None)
    if not first:
        return first
    out = dict(first)
    ks = {k for r in rows for k in (((r.get("config") or {}).get("scaling") or {}).get("ks") or [])}
    if ks:
        out["ks"] = sorted(ks)
    return out


def _earliest(values: Any) -> str | None:
    present = [v for v in values if v]
    return min(present) if present else None


def _latest(values: Any) -> str | None:
    present = [v for v in values if v]
    return max(present) if present else None


def _same_file(a: Store, b: Store) -> bool:
    try:
        return os.path.samefile(a.path, b.path)
    except OSError:
        return False
