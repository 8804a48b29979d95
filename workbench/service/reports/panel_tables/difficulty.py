"""The common items across the panel: Figure 4 (each item by how many evaluated models got it right, bucketed)
and the summary of the corrected item-total correlations (§4.4)."""

from __future__ import annotations

import math

import numpy as np

from sandbox.records import consensus_order
from stats.axes import Table
from workbench.service.records.panel import Figure4, ItcSummary, PanelRow

PAPER_BUCKETS = (6, 12, 19)  # Figure 4: low 0–6, mid 7–12, high 13–19 models right, for the paper's 19


def _bucket_edges(n_runs: int) -> tuple[int, int]:
    """The last count of `low` and of `mid`: the paper's 6 and 12 of 19, scaled to `n_runs` (rounded)."""
    return round(PAPER_BUCKETS[0] / PAPER_BUCKETS[2] * n_runs), round(PAPER_BUCKETS[1] / PAPER_BUCKETS[2] * n_runs)


def figure4(rows: list[PanelRow], tables: list[Table]) -> Figure4 | None:
    """Items by how many runs got them right (replicate 0), bucketed, by type × depth and consensus tier."""
    if len(tables) < 2:
        return None
    right: dict[str, int] = {}
    facts: dict[str, tuple[str, str]] = {}
    for table in tables:
        first = table["replicate"] == 0
        for item, ok, kind, depth, tier in zip(
            table["item_id"][first],
            table["correct"][first],
            table["kind"][first],
            table["depth"][first],
            table["consensus_tier"][first],
            strict=True,
        ):
            right[item] = right.get(item, 0) + int(ok)
            facts[item] = (f"{kind}_d{int(depth)}" if not math.isnan(depth) else str(kind), str(tier) if tier else "—")
    low, mid = _bucket_edges(len(tables))

    def bucket(k: int) -> str:
        return "low" if k <= low else "mid" if k <= mid else "high"

    by_cell: dict[str, dict[str, int]] = {}
    by_tier: dict[str, dict[str, int]] = {}
    for item, k in right.items():
        cell, tier = facts[item]
        for group, key in ((by_cell, cell), (by_tier, tier)):
            counts = group.setdefault(key, {"low": 0, "mid": 0, "high": 0})
            counts[bucket(k)] += 1
    return {
        "n_runs": len(tables),
        "edges": {"low": [0, low], "mid": [low + 1, mid], "high": [mid + 1, len(tables)]},
        "type_depth": dict(sorted(by_cell.items())),
        "consensus_tier": dict(sorted(by_tier.items(), key=lambda kv: consensus_order(kv[0]))),  # gold, silver, …
    }


def itc_summary(itc: dict[str, float | None] | None) -> ItcSummary | None:
    values = np.array([v for v in (itc or {}).values() if v is not None], dtype=float)
    if not values.size:
        return None
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return {
        "n": int(values.size),
        "median": float(median),
        "q1": float(q1),
        "q3": float(q3),
        "share_above_0_2": float(np.mean(values > 0.2)),
        "share_at_most_0": float(np.mean(values <= 0)),
    }
