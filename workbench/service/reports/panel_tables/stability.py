"""Table 17: run-to-run spread of accuracy, section recall, conversion and tokens, and whether the runs' ordering
survives, over each run's replicates and across separately stored runs of one model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stats import panel_measures
from stats.axes import Table
from storage.rows import RunRow
from workbench.service.records.panel import PanelRow, RankStability, Spread, Table17, Table17Runs
from workbench.service.reports.panel_tables.grouping import model_key

T17_METRICS = ("accuracy", "section_recall", "conversion", "tokens")


def _replicate_values(table: Table, tokens_measured: bool) -> dict[str, list[float | None]]:
    """Each Table 17 metric per replicate (in replicate order)."""
    levels = sorted(set(table["replicate"][~np.isnan(table["replicate"])].tolist()))
    out: dict[str, list[float | None]] = {m: [] for m in T17_METRICS}
    for r in levels:
        values = _run_values(table.subset(table["replicate"] == r), tokens_measured)
        for m in T17_METRICS:
            out[m].append(values[m])
    return out


def table17(rows: list[PanelRow], tables: list[Table]) -> Table17:
    """Run-to-run spread of four metrics and whether the runs' ordering on each survives across replicates."""
    per_run = {}
    for row, table in zip(rows, tables, strict=True):
        if table.n and len(set(table["replicate"].tolist())) >= 2:
            per_run[row["run"]] = _replicate_values(table, row.get("tokens") is not None)
    return {"runs": _spreads(per_run), "rank_stability": _rank_stability(per_run)}


def table17_across_runs(rows: list[PanelRow], runs: Sequence[RunRow], tables: list[Table]) -> Table17Runs:
    """Table 17 across separately stored runs of one model (agent, model, dataset, setting; two or more runs):
    each run's accuracy, section recall, conversion and mean tokens over its trajectories on the common items
    (all replicates), their mean / population SD / range across the runs, and the rank stability of the models'
    ordering between their first, second, … runs (by seed, then name)."""
    per_model: dict[str, dict[str, list[float | None]]] = {}
    members: dict[str, list[str]] = {}
    for key, idx in _stored_apart(rows).items():
        label = " · ".join(str(k) for k in key[:2] if k) + ("" if key[3] == "full" else f" [{key[3]}]")
        members[label] = [rows[i]["run"] for i in idx]
        values = [_run_values(tables[i], rows[i].get("tokens") is not None) for i in idx]
        per_model[label] = {m: [v[m] for v in values] for m in T17_METRICS}
    return {"models": _spreads(per_model), "runs": members, "rank_stability": _rank_stability(per_model)}


def _stored_apart(rows: list[PanelRow]) -> dict[tuple[str, str | None, str | None, str], list[int]]:
    """The rows of each model and setting stored as two runs or more (agent, model, dataset, ablation → the rows'
    indices, by seed, then name)."""
    groups: dict[tuple[str, str | None, str | None, str], list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault((*model_key(row), row["ablation"]), []).append(i)
    return {
        key: sorted(idx, key=lambda i: (rows[i].get("seed") or 0, rows[i]["run"]))
        for key, idx in groups.items()
        if len(idx) >= 2
    }


def _run_values(table: Table, tokens_measured: bool) -> dict[str, float | None]:
    known = table.known("section_recall")
    recalled = table.known("paper_recall") & (table["paper_recall"] == 1)
    return {
        "accuracy": float(table["correct"].mean()) if table.n else None,
        "section_recall": float(table["section_recall"][known].mean()) if known.any() else None,
        "conversion": float(table["correct"][recalled].mean()) if recalled.any() else None,
        "tokens": float(np.nanmean(table["tokens"])) if tokens_measured and table.n else None,
    }


def _spread(vals: list[float | None]) -> Spread | None:
    v = [x for x in vals if x is not None]
    if len(v) < 2:
        return None
    return {"mean": float(np.mean(v)), "std": float(np.std(v)), "range": float(max(v) - min(v)), "n": len(v)}


def _spreads(per_key: dict[str, dict[str, list[float | None]]]) -> dict[str, dict[str, Spread | None]]:
    """Each key's (a run's, a model's) spread of each metric over its values."""
    return {key: {m: _spread(vals) for m, vals in metrics.items()} for key, metrics in per_key.items()}


def _rank_stability(per_key: dict[str, dict[str, list[float | None]]]) -> dict[str, RankStability | None]:
    """Per metric: the rank stability of the keys' ordering across their values (keys with no value left out)."""
    return {
        m: panel_measures.rank_stability(
            {key: metrics[m] for key, metrics in per_key.items() if any(x is not None for x in metrics[m])}
        )
        for m in T17_METRICS
    }
