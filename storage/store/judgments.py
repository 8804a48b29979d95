"""The judgments table: judges' verdicts on a parallel-scaling run's samples (one sample, or a pair), stored so a
rerun never pays for one twice, and what they cost, per kind or per call (to price them again by another rule)."""

from __future__ import annotations

from storage.rows import JudgmentRow
from storage.store.columns import as_record, now
from storage.store.connection import StoreConnection


class JudgmentsTable(StoreConnection):
    """The store's methods on judgments (`storage.store.Store` combines them with the other tables')."""

    def judgments(self, run_id: int, judge: str) -> dict[tuple[str, str, int, int | None], JudgmentRow]:
        """Stored verdicts keyed by (item, kind, sample a, sample b), so a rerun never pays for them twice."""
        rows = self.conn.execute("SELECT * FROM judgments WHERE run_id = ? AND judge = ?", (run_id, judge))
        return {(r["item_id"], r["kind"], r["sample_a"], r["sample_b"]): as_record(JudgmentRow, dict(r)) for r in rows}

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
