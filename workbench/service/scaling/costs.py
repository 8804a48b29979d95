"""What a trajectory cost under a cost mode: `cache-aware` (ours: as the run priced each call, cache reads and writes at
their own multipliers) or `study` (the scaling study's App. C.1: all input at the input price).

Every priced call of a run — the agent's, a verifier's, a judge's, under either mode — is priced by one lookup,
`run_price`: the run's recorded `[[pricing]]` rows first (the config file's, recorded with an LLM run), then the
built-in table, as the run's own calls were priced when it ran."""

from __future__ import annotations

from statistics import fmean
from typing import Any

from sandbox.pricing import Price, price_for, study_cost
from sandbox.records import Usage
from storage.rows import LightTrajectoryRow, RunRow

COST_MODES = ("cache-aware", "study")
COST_RULES = {
    "cache-aware": "cache-aware: each call as the run priced it (cache reads and writes at their multipliers)",
    "study": "study (App. C.1): every input token at the input price, cached or not, from the run's token "
    "counts and our price table",
}


def recorded_pricing(run: RunRow) -> list[dict[str, Any]] | None:
    """The `[[pricing]]` rows an LLM run recorded in its config (None: it recorded none)."""
    rows = (run.get("config") or {}).get("pricing")
    if not isinstance(rows, list):
        return None
    return [row for row in rows if isinstance(row, dict)] or None


def run_price(run: RunRow, model: str | None = None) -> Price | None:
    """The price of a call made for `run` by `model` (default: the run's own model; a verifier's or a judge's model
    otherwise): the run's recorded `[[pricing]]` rows first, then the built-in table; None when unpriced."""
    name = model or run["model"]
    return price_for(name, recorded_pricing(run)) if name else None


def trajectory_cost(run: RunRow, t: LightTrajectoryRow, mode: str = "cache-aware") -> float | None:
    """A stored trajectory of `run` priced in USD under `mode`; None when unpriced (a scripted agent, an unknown
    model). The study's rule prices the token counts at `run_price`, as the run priced each call."""
    if mode == "cache-aware":
        return t["cost_usd"]
    if t["cost_usd"] is None and not run["model"]:
        return None
    price = run_price(run)
    return study_cost(
        price,
        Usage(
            prompt=t["prompt_tokens"] or 0,
            completion=t["completion_tokens"] or 0,
            cache_read=t["cache_read_tokens"] or 0,
            cache_creation=t["cache_creation_tokens"] or 0,
        ),
    )


JudgeCostRow = tuple[str, float | None, int, float | None, float | None, int | None]
JudgeUsageRow = tuple[str, float | None, int | None, int | None, int | None, int | None]


def study_judge_rows(
    price: Price | None, rows: list[JudgeCostRow], verdicts: list[JudgeUsageRow]
) -> tuple[list[JudgeCostRow], int]:
    """A model judge's per-kind cost rows (`Store.judgment_costs`) with each verdict priced by the study's rule
    (App. C.1, `study_cost`) at `price` (the judge model's `run_price`) from its stored token buckets
    (`Store.judgment_usage`), and how many verdicts were stored without buckets: those keep their stored cost. The
    token columns stay as stored."""
    priced: dict[str, list[float]] = {}
    unrepriced = 0
    for kind, stored, *buckets in verdicts:
        if any(b is None for b in buckets):
            unrepriced += 1
            usd = stored
        else:
            prompt, completion, cache_read, cache_creation = (int(b or 0) for b in buckets)
            usd = study_cost(price, Usage(prompt, completion, cache_read, cache_creation))
        if usd is not None:
            priced.setdefault(kind, []).append(usd)
    out: list[JudgeCostRow] = []
    for kind, _mean, _n, mean_tokens, _sum, sum_tokens in rows:
        costs = priced.get(kind, [])
        out.append(
            (kind, fmean(costs) if costs else None, len(costs), mean_tokens, sum(costs) if costs else None, sum_tokens)
        )
    return out, unrepriced
