"""The one place where store queries meet `stats`: the CLI and the TUI both call this, so they show the same numbers."""
from __future__ import annotations

from typing import Any

from stats import axes
from stats.ratio import Ratio
from storage import Store

PERCENT_KEYS = ("paper_recall", "section_recall", "conversion", "accuracy", "rate")


def values(obj: Any) -> Any:
    """Ratios replaced by their values, recursively."""
    if isinstance(obj, Ratio):
        return obj.value
    if isinstance(obj, dict):
        return {k: values(v) for k, v in obj.items()}
    return obj


def counts(obj: Any) -> Any:
    """Ratios replaced by [numerator, denominator], recursively (non-ratio leaves dropped)."""
    if isinstance(obj, Ratio):
        return obj.as_list()
    if isinstance(obj, dict):
        out = {k: counts(v) for k, v in obj.items()}
        return {k: v for k, v in out.items() if v is not None}
    return None


def run_report(store: Store, name: str) -> dict[str, Any]:
    """The foundation report of one run: accuracy, the four axes, terminations, splits, attribution."""
    run = store.run(name)
    records = store.trajectories(run["id"])
    four = axes.four_axes(records)
    acc = four.pop("accuracy")
    costs = [r["cost_usd"] for r in records if r.get("cost_usd") is not None]
    return {
        "run": run["name"],
        "agent": run["agent"],
        "model": run["model"],
        "dataset": run["dataset"],
        "ablation": run["ablation"],
        "status": run["status"],
        "n": len(records),
        "planned": run["planned"],
        "correct": int(acc.num),
        "accuracy": acc.value,
        "axes": values(four),
        "counts": {"accuracy": acc.as_list(), **counts(four)},
        "terminations": axes.terminations(records),
        "splits": {
            "type_depth": values(axes.type_depth(records)),
            "reasoning_type": values(axes.splits(records, "reasoning_type")),
            "consensus_tier": values(axes.splits(records, "consensus_tier")),
            "venue": values(axes.splits(records, "venue")),
        },
        "attribution": axes.attribution(records),
        "cost_usd": sum(costs) if costs else None,
        "priced": len(costs) == len(records) and bool(records),
    }


def runs_table(store: Store) -> list[dict[str, Any]]:
    """Rows of the runs list: name, agent/model, dataset, progress, accuracy, cost, status."""
    rows = []
    for r in store.runs():
        rows.append({
            "name": r["name"], "agent": r["agent"], "model": r["model"], "dataset": r["dataset"],
            "ablation": r["ablation"], "done": r["done"], "planned": r["planned"],
            "accuracy": (r["n_correct"] / r["done"]) if r["done"] else None,
            "cost_usd": r["cost"] if r["n_costed"] else None, "status": r["status"], "created_at": r["created_at"],
        })
    return rows


# ---------------------------------------------------------------- added for the workbench TUI


def transition_report(store: Store, name: str) -> dict[str, Any]:
    """The 7×7 tool transition matrix of a run (counts and row shares), from each trajectory's tool sequence."""
    from sandbox.records import TOOL_NAMES
    from stats.transitions import transition_matrix

    run = store.run(name)
    sequences = [t.get("tool_sequence") or [] for t in store.trajectories(run["id"])]
    names, matrix, rates = transition_matrix(sequences, TOOL_NAMES)
    return {"run": run["name"], "names": names, "counts": matrix, "rates": rates, "n": len(sequences)}
