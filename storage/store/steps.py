"""The steps table (long texts kept once in `texts`): a turn's steps written, a trajectory's steps read back whole,
and what a run's steps say in aggregate without their texts — its tool calls, its delivered reads and their hops,
the context its calls sent, what a sequential strategy's own steps spent."""

from __future__ import annotations

import json
from typing import Any

from storage.records import StepRecord
from storage.rows import DeliveredStep, StrategySpend, ToolCallRow, VerifierUsage
from storage.store.columns import as_records, json_text, opt_str, text_key
from storage.store.connection import StoreConnection

INLINE_TEXT = 256  # longer step texts are stored once, by hash (section texts repeat across trajectories)

_INSERT_STEP = "INSERT OR REPLACE INTO steps VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"


class StepsTable(StoreConnection):
    """The store's methods on steps (`storage.store.Store` combines them with the other tables')."""

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
                text_hash = text_key(text)
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
                    json_text(step.get("tool_args")),
                    step.get("tool_call_id"),
                    step.get("cost", 0),
                    step.get("status"),
                    opt_str(step.get("paper_id")),
                    step.get("arxiv_id"),
                    step.get("section_index"),
                    int(bool(step.get("delivered"))),
                    json_text(step.get("usage")),
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

    def steps(self, trajectory_id: int, start: int = 0) -> list[dict[str, Any]]:
        """Every step of a trajectory with its full text restored; from index `start` on (a reader following a
        trajectory in progress asks for the steps committed since it last looked)."""
        rows = self.conn.execute(
            "SELECT s.*, COALESCE(s.text, x.body) AS full_text FROM steps s LEFT JOIN texts x ON x.hash = s.text_hash "
            "WHERE s.trajectory_id = ? AND s.idx >= ? ORDER BY s.idx",
            (trajectory_id, start),
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
        return as_records(rows, ToolCallRow)

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
        return as_records(rows, DeliveredStep)

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
