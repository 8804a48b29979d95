"""Table 4: each model's closed-book → no-search → full chain, the accuracies on the items all three settings
answered and each step's Δ with McNemar's exact p."""

from __future__ import annotations

import numpy as np

from stats.axes import Table
from stats.significance import mcnemar_exact
from workbench.service.records.panel import PanelRow, Table4Chain, Table4Step
from workbench.service.reports.panel_tables.grouping import first_replicate

CHAIN = ("closed-book", "no-search", "full")


def table4(rows: list[PanelRow], tables: list[Table]) -> list[Table4Chain]:
    """The closed-book → no-search → full chain of each agent and model the panel has all three settings of."""
    by_key: dict[tuple[str, str | None, int], dict[str, int]] = {}
    for i, row in enumerate(rows):
        by_key.setdefault((row["agent"], row["model"], row.get("seed", 0)), {})[row["ablation"]] = i
    return [
        _chain(agent, model, {s: rows[settings[s]]["run"] for s in CHAIN}, [tables[settings[s]] for s in CHAIN])
        for (agent, model, _seed), settings in by_key.items()
        if all(s in settings for s in CHAIN)
    ]


def _chain(agent: str, model: str | None, runs: dict[str, str], tables: list[Table]) -> Table4Chain:
    """One model's chain: its three settings' accuracies on the items all three answered (replicate 0), and each
    step's Δ with the exact McNemar p between adjacent settings."""
    outcome = [first_replicate(t) for t in tables]
    items = [i for i in outcome[0] if all(i in o for o in outcome[1:])]
    accs = [float(np.mean([o[i] for i in items])) if items else None for o in outcome]
    return {
        "agent": agent,
        "model": model,
        "runs": runs,
        "n": len(items),
        "accuracy": dict(zip(CHAIN, accs, strict=True)),
        "steps": [_chain_step(a, b, outcome, accs, items) for a, b in ((0, 1), (1, 2))],
    }


def _chain_step(
    a: int, b: int, outcome: list[dict[str, bool]], accs: list[float | None], items: list[str]
) -> Table4Step:
    """The step from setting `a` to setting `b` of the chain: Δ accuracy and McNemar's exact p (None: no items)."""
    test = mcnemar_exact([outcome[b][i] for i in items], [outcome[a][i] for i in items]) if items else None
    before, after = accs[a], accs[b]
    return {
        "from": CHAIN[a],
        "to": CHAIN[b],
        "delta": None if before is None or after is None else after - before,
        "p": None if test is None else test["p"],
    }
