"""What a trajectory cost under a cost mode: `cache-aware` (ours: as the run priced each call, cache reads and writes at
their own multipliers) or `study` (the scaling study's App. C.1: all input at the input price)."""

from __future__ import annotations

from typing import Any

from sandbox.pricing import find_price, study_cost
from sandbox.records import Usage

COST_MODES = ("cache-aware", "study")
COST_RULES = {
    "cache-aware": "cache-aware: each call as the run priced it (cache reads and writes at their multipliers)",
    "study": "study (App. C.1): every input token at the input price, cached or not, from the run's token "
    "counts and our price table",
}


def trajectory_cost(run: dict[str, Any], t: dict[str, Any], mode: str = "cache-aware") -> float | None:
    """A stored trajectory's cost in USD under `mode`; None when unpriced (a scripted agent, an unknown model)."""
    if mode == "cache-aware":
        return t["cost_usd"]
    if t["cost_usd"] is None and not run.get("model"):
        return None
    price = find_price(run["model"]) if run.get("model") else None
    return study_cost(
        price,
        Usage(
            prompt=t.get("prompt_tokens") or 0,
            completion=t.get("completion_tokens") or 0,
            cache_read=t.get("cache_read_tokens") or 0,
            cache_creation=t.get("cache_creation_tokens") or 0,
        ),
    )
