"""The paper's further panel tables and figures (AgentHop §4, App. E), computed with the panel in one call.

Each is over the panel's common items (as Table 2), each run's trajectories there, all replicates unless said:
Table 4 (closed-book → no-search → full chain), Table 9 (stopping shares over ours and the paper's denominators),
Table 10 (type × depth with a Wilson interval per cell), Table 15 (no answer by cap), early submission across the
panel, the item-total correlation summary, Figure 5 (accuracy against paper recall) and Figure 4 (item difficulty).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stats import panel_measures, stopping
from stats.axes import Table
from stats.ngrams import Gram
from stats.significance import fisher_exact_two_sided, mcnemar_exact
from stats.stopping import AfterEvidence, EarlySubmit, EvidenceGroup, MtFail
from storage.rows import RunRow
from workbench.service.families import TIERS
from workbench.service.records.panel import (
    ColumnTest,
    ContactGroup,
    EarlySubmission,
    EarlySubmitRun,
    Figure4,
    Figure5Point,
    FixedDelta,
    GenerationGap,
    ItcSummary,
    MovedAxis,
    PanelRow,
    PanelTables,
    RankStability,
    SigCounts,
    Spread,
    StratumCell,
    Table3Entry,
    Table4Chain,
    Table4Step,
    Table9Entry,
    Table9Group,
    Table9MtFail,
    Table10Entry,
    Table11,
    Table12,
    Table12Step,
    Table13,
    Table13Pair,
    Table14Tier,
    Table15Entry,
    Table17,
    Table17Runs,
    Table19Tier,
    TrigramConcentration,
    WrongReadEvents,
    cell,
)
from workbench.service.reports.run import stopping_rows

LOWER_IS_BETTER = {"tokens", "turns", "points", "MaxTok", "MaxTurn", "MaxBudget"}
MEAN_COLUMNS = {"calls/turn", "tokens", "turns", "points"}
TYPE_DEPTH = ("st_d1", "st_d2", "mt_d1", "mt_d2")
NA_CAPS = ("max_turns", "budget", "token_limit", "error", "answer")
PAPER_BUCKETS = (6, 12, 19)  # Figure 4: low 0–6, mid 7–12, high 13–19 models right, for the paper's 19
CHAIN = ("closed-book", "no-search", "full")

LEGEND = {
    "table11": "Table 11 (evidence contact), pooled over the full-tool runs on one dataset: each recall-credited "
    "trajectory (paper recall = 1) by what it read — header: a section a direct label of a gold paper "
    "resolves to by its header (exact, normalised, substring, word overlap); parent: else the section "
    "whose body holds a direct label's content (resolved by body text); none: no direct-labelled content "
    "— with each group's conversion and the same items' closed-book accuracy (the panel's closed-book "
    "runs on that dataset; — without one). Needs the dataset's labels: without the corpus it is left out.",
    "table19": "Table 19 (closed-book accuracy by stratum, per tier): the closed-book runs of each tier pooled, "
    "accuracy per the item's venue, its seed paper's year and the rank-based quartile of the seed's "
    "citation count among the items (Q1 lowest), both read from the seed's graph node where the release "
    "carries them (citationCount; the built-in benchmark carries both). Year and "
    "quartile need the dataset (opened from the corpus cache).",
    "table3": "Table 3 (action after a wrong-paper read), the paper's overlapping categories: per wrong-paper read, "
    "up to and including the next read_section: Recover (that read is of a gold paper), Stay (of a "
    "non-gold paper), Think / Re-nav / Submit (a think, another navigation call, a submit before it); "
    "an event may count in several, each share is over all events (stats.panel_measures).",
    "table17": "Table 17 (run-to-run): per run with replicates, accuracy, section recall, conversion (P(correct | "
    "paper recall)) and mean tokens per replicate: mean, population SD, range; rank stability = "
    "Kendall's τ-b between the runs' values at each pair of replicates all of them have (preserved: τ = 1 "
    "for every pair).",
    "figure2": "Figure 2 (within-family generation gap): a family's cohort is its evaluated runs whose model string "
    "names a generation right after the lineage's name (gemma-3-27b → 3, qwen3.5-27b → 3.5; claude-opus-4-6 "
    "names none, and two sizes of one generation are no gap); every run of one generation against every run "
    "of the next (Gemma 3 → 4, Qwen 3 → 3.5 → 3.6): Δ accuracy newer − older and the exact McNemar p on one "
    "basis (replicate 0, the items both answered), and the Table 2 axes that moved by 5 points or more. "
    "'run' is the newer run (the CSV's run column), 'older' the other.",
    "table4": "Table 4: for each agent, model and seed with a closed-book, a no-search and a full run in the "
    "panel, the accuracies on the items all three answered (replicate 0) and each step's Δ with the exact McNemar p "
    "between adjacent settings.",
    "table9": "Table 9 (ST after the gold; MT-both after both golds): Imm / Thnk / Read over ours (the three "
    "categories) and over the paper's denominator (every trajectory that read its golds, the residual — "
    "navigation without a read, or no submit — kept in it, so the three sum to at most 100 %).",
    "table10": "Table 10: accuracy per type × depth cell with its Wilson 95 % half-width (clustered by item with "
    "replicates); Δ = st_d1 − mt_d2, the design's easiest and hardest cells fixed before looking (never picked "
    "from the data), with Fisher's exact two-sided p on those two cells' right / wrong counts (over replicate 0 "
    "when the run has replicates, so the test counts independent items: 'p_basis').",
    "table12": "Table 12: the evaluated runs ranked by MT conversion (top 6); each adjacent pair tested on the MT "
    "items both recalled — McNemar's exact test with one trajectory per item, the exact sign test on per-item "
    "conversions with replicates; 'separated' where p < 0.05 in the higher run's direction. Ranks are read only "
    "where a step separates.",
    "table13": "Table 13 (our reading of its Sig. counts): every pair of evaluated runs tested on accuracy over the "
    "common items (McNemar's exact test; the sign test on per-item accuracies with replicates), Holm-adjusted "
    "across all pairs; per run, Sig. > = runs it beats and Sig. < = runs that beat it at Holm p < 0.05, the "
    "unadjusted counts beside.",
    "table14": "Table 14 by tier: each evaluated run's top-1 trigram of tool calls (most occurrences over its own "
    "trajectories, as the fingerprints; ties by name) and its concentration = those occurrences ÷ all the run's "
    "trigram occurrences; per tier the mean concentration.",
    "table17_runs": "Table 17 across separately stored runs: runs of one model (agent, model, dataset and "
    "setting) stored apart, two or more: each run's accuracy, section recall, conversion and mean tokens over "
    "its trajectories on the common items (all replicates), their mean, population SD and range across the "
    "runs; rank stability = Kendall's τ-b between the models' values at their first, second, … run (by seed, "
    "then name).",
    "table15": "Table 15: NA = trajectories without a parseable answer letter ÷ all, split by what ended them "
    "(max_turns, budget, token_limit, error; 'answer' = a voluntary submit without a letter).",
    "early_submit": "Early submission (App. E.2): per run, accuracy of trajectories submitting within 3 actions of "
    "a wrong-paper read minus the other wrong-read trajectories (Fisher's exact); across the panel (the "
    "evaluated models: full-tool runs), the mean Δ over runs where both groups exist and in how many of them "
    "p < 0.05.",
    "item_total_summary": "Item-total discrimination (§4.4): the corrected item-total correlations of the common "
    "items summarised: median, quartiles, share > 0.2 and share ≤ 0 (items with a value).",
    "figure5": "Figure 5: one point per evaluated model (full-tool run), accuracy against paper recall (all "
    "items), by tier; the diagonal is accuracy = recall.",
    "figure4": "Figure 4: each common item by how many evaluated models (full-tool runs) answered it right "
    "(replicate 0), bucketed low / mid / high with the paper's cut points (0–6, 7–12, 13–19 of 19) scaled to "
    "the panel's size (a bucket a small panel cannot fill reads 'none'), by type × depth and by consensus tier.",
    "table9_mt_fail": "Table 9's MT-fail block ('mt_fail' of each table9 entry): 0-Gold / Prem / Explored / Stayed "
    "over the MT trajectories whose paper recall failed (they sum to 100 %; see stopping's mt_fail).",
}


ItemTerms = dict[str, tuple[float, float]]  # item → (numerator, denominator) over the item's trajectories


def paired_column_test(col: str, first: ItemTerms, second: ItemTerms) -> ColumnTest:
    """The paired test of one column between the best run (`first`) and a runner-up, on items both have a value for."""
    from stats.significance import paired_sign_test

    items = [i for i in first if i in second and first[i][1] > 0 and second[i][1] > 0]
    test = paired_sign_test(_item_values(first, items), _item_values(second, items))
    better, worse = _best_first(col, test["first_higher"], test["second_higher"])
    return {
        "test": "McNemar exact" if _one_outcome_per_item(col, first, second, items) else "sign test on per-item values",
        "n": test["n"],
        "best_better": better,
        "runner_up_better": worse,
        "p": test["p"],
        "agrees": better > worse,
    }


def _item_values(terms: ItemTerms, items: list[str]) -> list[float]:
    """Each item's value: its numerator ÷ its denominator."""
    return [terms[i][0] / terms[i][1] for i in items]


def _one_outcome_per_item(col: str, first: ItemTerms, second: ItemTerms, items: list[str]) -> bool:
    """Whether each item is one 0/1 outcome on both sides (a proportion column, one trajectory each): then the sign
    test is McNemar's exact test."""
    return col not in MEAN_COLUMNS and all(first[i][1] == 1 and second[i][1] == 1 for i in items)


def _best_first(col: str, first_higher: int, second_higher: int) -> tuple[int, int]:
    """(items the first run is better on, items the second is): lower is better in the resource columns."""
    return (second_higher, first_higher) if col in LOWER_IS_BETTER else (first_higher, second_higher)


@dataclass
class RunBehaviour:
    """What the action-based tables need of one run (its trajectories on the common items), so its action lists
    can go: Table 3, Table 9's after-evidence breakdown, early submission; and (`trigrams`, set by the panel from
    the stored tool sequences) its trigram occurrences for Table 14."""

    table3: WrongReadEvents
    after_evidence: AfterEvidence
    mt_fail: MtFail
    early_submit: EarlySubmit
    trigrams: Counter[Gram] = field(default_factory=Counter)


def run_behaviour(table: Table, actions: list[Any]) -> RunBehaviour:
    """One run's `RunBehaviour`, with one `Facts` scan per trajectory."""
    trajs = stopping_rows(table, actions)
    facts = [stopping.Facts.of(t) for t in trajs]
    return RunBehaviour(
        table3=panel_measures.table3([a or [] for a in actions]),
        after_evidence=stopping.after_evidence(trajs, facts),
        mt_fail=stopping.mt_fail_breakdown(trajs, facts),
        early_submit=stopping.early_submit(trajs, facts=facts),
    )


def panel_tables(
    rows: list[PanelRow],
    tables: list[Table],
    behaviours: list[RunBehaviour],
    itc: dict[str, float | None] | None,
    per_item: dict[str, dict[str, ItemTerms]],
    pool: list[bool],
) -> PanelTables:
    """Every further table and figure of the panel; `tables` are each run's trajectories on the common items,
    `behaviours` their `run_behaviour`, `per_item` each run's per-item column terms and `pool` which rows are
    evaluated models (full-tool runs: Figures 4 and 5, the early-submission mean, Tables 12–14), in `rows`
    order. Tables 4, 11 and 19 read the ablation runs as ablations of their model."""
    models = [(r, t, b) for r, t, b, keep in zip(rows, tables, behaviours, pool, strict=True) if keep]
    m_rows, m_tables, m_behaviours = [m[0] for m in models], [m[1] for m in models], [m[2] for m in models]
    return {
        "table3": [table3_entry(r, b.table3) for r, b in zip(rows, behaviours, strict=True)],
        "table17": table17(rows, tables),
        "figure2": figure2(m_rows, m_tables),
        "table4": table4(rows, tables),
        "table9": table9(rows, behaviours),
        "table10": table10(rows, tables),
        "table12": table12(m_rows, per_item),
        "table13": table13(m_rows, per_item),
        "table14": table14(m_rows, m_behaviours),
        "table15": table15(rows, tables),
        "early_submit": early_submission(m_rows, m_behaviours),
        "item_total_summary": itc_summary(itc),
        "figure5": figure5(m_rows, m_tables),
        "figure4": figure4(m_rows, m_tables),
    }


def table3_entry(row: PanelRow, events: WrongReadEvents) -> Table3Entry:
    """A run's Table 3 row: its wrong-paper read events by (overlapping) category."""
    return {"run": row["run"], "n_events": events["n_events"], "counts": events["counts"], "shares": events["shares"]}


def table9(rows: list[PanelRow], behaviours: list[RunBehaviour]) -> list[Table9Entry]:
    """Per run: Imm / Thnk / Read for ST and MT-both (ours and the paper's denominator) and the MT-fail block
    (0-Gold / Prem / Explored / Stayed over the MT trajectories whose paper recall failed, summing to 100 %)."""
    return [
        {
            "run": row["run"],
            "st": table9_group(behaviour.after_evidence["st"]),
            "mt_both": table9_group(behaviour.after_evidence["mt_both"]),
            "mt_fail": table9_mt_fail(behaviour.mt_fail),
        }
        for row, behaviour in zip(rows, behaviours, strict=True)
    ]


def table9_group(g: EvidenceGroup) -> Table9Group:
    """One group's Imm / Thnk / Read shares over ours (the three categories) and the paper's denominator."""
    return {
        "n_ours": g["n"],
        "n_paper": g["n_reached"],
        "left_out": g["left_out"],
        "ours": {c: g["counts"][c] / g["n"] if g["n"] else None for c in stopping.AFTER_EVIDENCE},
        "paper": {c: g["counts"][c] / g["n_reached"] if g["n_reached"] else None for c in stopping.AFTER_EVIDENCE},
        "counts": {c: g["counts"][c] for c in stopping.AFTER_EVIDENCE},
    }


def table9_mt_fail(fail: MtFail) -> Table9MtFail:
    """The MT-fail categories' counts and their shares of the failed MT trajectories."""
    return {
        "n": fail["n"],
        "n_mt": fail["n_mt"],
        "counts": dict(fail["counts"]),
        "shares": {c: v / fail["n"] if fail["n"] else None for c, v in fail["counts"].items()},
    }


def _cells(table: Table) -> dict[str, tuple[int, int, float | None]]:
    """Per type × depth cell: (right, trajectories, the half-width of its Wilson interval clustered by item)."""
    from stats.bootstrap import by_cluster
    from stats.wilson import clustered_wilson

    keys = np.array(
        [f"{k}_d{int(d)}" if not math.isnan(d) else "" for k, d in zip(table["kind"], table["depth"], strict=True)]
    )
    out = {}
    for name in TYPE_DEPTH:
        mask = keys == name
        n = int(mask.sum())
        right = int(table["correct"][mask].sum())
        half_width = None
        if n:
            _, (succ, trials) = by_cluster(
                table["item_id"][mask], table["correct"][mask].astype(float)[:, None], np.ones((n, 1))
            )
            w = clustered_wilson(succ[:, 0], trials[:, 0])
            if w is not None:  # every item has a trial here: the interval is defined
                half_width = (w.high - w.low) / 2
        out[name] = (right, n, half_width)
    return out


def table10(rows: list[PanelRow], tables: list[Table]) -> list[Table10Entry]:
    out: list[Table10Entry] = []
    for row, table in zip(rows, tables, strict=True):
        cells = _cells(table)
        out.append(
            {
                "run": row["run"],
                "cells": {
                    c: {"right": r, "n": n, "accuracy": r / n if n else None, "half_width": half}
                    for c, (r, n, half) in cells.items()
                },
                "delta": fixed_delta(table, cells),
            }
        )
    return out


EASIEST, HARDEST = "st_d1", "mt_d2"  # the design's easiest and hardest cells, fixed before looking (Table 10)


def fixed_delta(table: Table, cells: dict[str, tuple[int, int, float | None]]) -> FixedDelta | None:
    """Table 10's Δ = st_d1 − mt_d2 (accuracy over all replicates, as the cells) and Fisher's exact two-sided p
    on the two cells' right / wrong counts — over one trajectory per item (replicate 0) when the run has
    replicates, so the test counts independent items; `p_basis` says which. None when either cell is empty."""
    (fe, fne, _), (fh, fnh, _) = cells[EASIEST], cells[HARDEST]
    if not fne or not fnh:
        return None
    replicated = bool((table["replicate"] > 0).any())
    tested = _cells(table.subset(table["replicate"] == 0)) if replicated else cells
    (re_, ne, _), (rh, nh, _) = tested[EASIEST], tested[HARDEST]
    return {
        "easiest": EASIEST,
        "hardest": HARDEST,
        "delta": fe / fne - fh / fnh,
        "p": fisher_exact_two_sided(re_, ne - re_, rh, nh - rh),
        "p_basis": "replicate 0" if replicated else "trajectories",
    }


def table15(rows: list[PanelRow], tables: list[Table]) -> list[Table15Entry]:
    out: list[Table15Entry] = []
    for row, table in zip(rows, tables, strict=True):
        letters = table["predicted_index"]
        no_letter = np.array([v is None or math.isnan(v) for v in letters], dtype=bool)
        ends = table["termination"]
        n = table.n
        by_cap = {cap: int((no_letter & (ends == cap)).sum()) for cap in NA_CAPS}
        out.append(
            {
                "run": row["run"],
                "n": n,
                "na": int(no_letter.sum()),
                "na_share": no_letter.sum() / n if n else None,
                "by_cap": by_cap,
                "by_cap_share": {c: v / n if n else None for c, v in by_cap.items()},
            }
        )
    return out


def early_submission(rows: list[PanelRow], behaviours: list[RunBehaviour]) -> EarlySubmission:
    per_run: list[EarlySubmitRun] = []
    for row, behaviour in zip(rows, behaviours, strict=True):
        e = behaviour.early_submit
        per_run.append({"run": row["run"], "delta": e["delta"], "p": e["p"], "share": e["share"]})
    deltas = [r["delta"] for r in per_run if r["delta"] is not None]
    return {
        "runs": per_run,
        "n_tested": len(deltas),
        "n_significant": sum(r["p"] < 0.05 for r in per_run if r["delta"] is not None),
        "mean_delta": float(np.mean(deltas)) if deltas else None,
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


def figure5(rows: list[PanelRow], tables: list[Table]) -> list[Figure5Point]:
    out: list[Figure5Point] = []
    for row, table in zip(rows, tables, strict=True):
        known = table.known("paper_recall")
        recall = float(table["paper_recall"][known].mean()) if known.any() else None
        out.append(
            {
                "run": row["run"],
                "tier": row.get("tier"),
                "family": row.get("family"),
                "accuracy": row["accuracy"],
                "paper_recall": recall,
            }
        )
    return out


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
        "consensus_tier": dict(sorted(by_tier.items())),
    }


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
    outcome = [_first_replicate(t) for t in tables]
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


MOVED_AXES = ("PR st", "PR mt", "SR st", "SR mt", "Conv st", "Conv mt", "calls/turn")
GENERATION = re.compile(r"^[a-z]+[-_ ]?(\d+(?:\.\d+)?)(?![\d.])")


def generation(model: str | None) -> tuple[int, ...] | None:
    """The generation a model string names right after its lineage's name — `gemma-3-27b-it` → (3,),
    `qwen3.5-27b` → (3, 5), `Qwen/Qwen3.6-35B-A3B` → (3, 6) — or None (`claude-opus-4-6`, `deepseek-chat`: no
    number follows the name, so no generation can be read and the run is in no cohort)."""
    if not model:
        return None
    m = GENERATION.match(model.rsplit("/", 1)[-1].lower())
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def _first_replicate(table: Table) -> dict[str, bool]:
    first = table["replicate"] == 0
    return dict(zip(table["item_id"][first].tolist(), table["correct"][first].astype(bool).tolist(), strict=True))


def figure2(rows: list[PanelRow], tables: list[Table]) -> list[GenerationGap]:
    """Within-family generation gaps (see LEGEND["figure2"]): in each family, the evaluated runs by the generation
    their model string names; every run of one generation against every run of the next (Gemma 3 → 4, Qwen 3 →
    3.5 → 3.6), Δ accuracy and its McNemar p on one basis (replicate 0, the items both answered)."""
    cohorts: dict[str, dict[tuple[int, ...], list[int]]] = {}
    for i, row in enumerate(rows):
        gen, family = generation(row["model"]), row["family"]
        if family and gen is not None:
            cohorts.setdefault(family, {}).setdefault(gen, []).append(i)
    out = []
    for fam, gens in sorted(cohorts.items()):
        steps = sorted(gens)
        for older_gen, newer_gen in itertools.pairwise(steps):
            for old in sorted(gens[older_gen], key=lambda i: rows[i]["run"]):
                for new in sorted(gens[newer_gen], key=lambda i: rows[i]["run"]):
                    out.append(_generation_gap(fam, rows[old], rows[new], tables[old], tables[new]))
                    out[-1]["generations"] = [".".join(map(str, older_gen)), ".".join(map(str, newer_gen))]
    return out


def _generation_gap(fam: str, old: PanelRow, new: PanelRow, t_old: Table, t_new: Table) -> GenerationGap:
    a, b = _first_replicate(t_old), _first_replicate(t_new)
    items = [i for i in a if i in b]
    test = mcnemar_exact([b[i] for i in items], [a[i] for i in items]) if items else None
    return {
        "run": new["run"],  # the row's run in the tidy CSV: the newer generation, whose gap it is
        "family": fam,
        "older": old["run"],
        "newer": new["run"],
        "delta": (sum(b[i] for i in items) - sum(a[i] for i in items)) / len(items) if items else None,
        "p": None if test is None else test["p"],
        "n": len(items),
        "moved": moved_axes(old, new),
    }


def moved_axes(old: PanelRow, new: PanelRow) -> list[MovedAxis]:
    """The Table 2 axes that moved from `old` to `new` by at least their step (calls per turn by 0.1, rates by 5
    points), the largest move first."""
    moved: list[MovedAxis] = []
    for axis in MOVED_AXES:
        x, y = cell(old, axis), cell(new, axis)
        least = 0.1 if axis == "calls/turn" else 0.05
        if x is not None and y is not None and abs(y - x) >= least:
            moved.append({"axis": axis, "delta": y - x})
    moved.sort(key=lambda m: -abs(m["delta"]))
    return moved


def table12(rows: list[PanelRow], per_item: dict[str, dict[str, ItemTerms]], top: int = 6) -> Table12:
    """Table 12's walk: the `top` evaluated runs by MT conversion (highest first), each adjacent pair tested with
    `paired_column_test` on the MT items both recalled (McNemar's exact test with one trajectory per item); a
    step separates where p < 0.05 in the higher run's direction."""
    valued = [(r["Conv mt"], r) for r in rows if r["Conv mt"] is not None]
    ranked = [r for _, r in sorted(valued, key=lambda vr: (-vr[0], vr[1]["run"]))][:top]
    steps: list[Table12Step] = []
    for hi, lo in itertools.pairwise(ranked):
        test = paired_column_test("Conv mt", per_item[hi["run"]]["Conv mt"], per_item[lo["run"]]["Conv mt"])
        steps.append(
            {
                "higher": hi["run"],
                "lower": lo["run"],
                "conversion": [hi["Conv mt"], lo["Conv mt"]],
                "separated": test["p"] < 0.05 and test["agrees"],
                "test": test["test"],
                "n": test["n"],
                "best_better": test["best_better"],
                "runner_up_better": test["runner_up_better"],
                "p": test["p"],
            }
        )
    return {"ranked": [r["run"] for r in ranked], "steps": steps}


def table13(rows: list[PanelRow], per_item: dict[str, dict[str, ItemTerms]]) -> Table13:
    """Every pair of evaluated runs tested on accuracy (`paired_column_test` on the common items; McNemar's exact
    test with one trajectory per item), Holm-adjusted across the pairs; per run its Sig. counts — how many runs it
    beats and how many beat it at Holm p < 0.05 (and unadjusted, beside)."""
    from stats.multiplicity import holm

    tests = [
        (
            a["run"],
            b["run"],
            paired_column_test("accuracy", per_item[a["run"]]["accuracy"], per_item[b["run"]]["accuracy"]),
        )
        for i, a in enumerate(rows)
        for b in rows[i + 1 :]
    ]
    adjusted = holm([test["p"] for _, _, test in tests])
    pairs: list[Table13Pair] = [
        {
            "first": first,
            "second": second,
            "test": test["test"],
            "n": test["n"],
            "best_better": test["best_better"],
            "runner_up_better": test["runner_up_better"],
            "p": test["p"],
            "p_holm": p_holm,
        }
        for (first, second, test), p_holm in zip(tests, adjusted, strict=True)
    ]
    return {"pairs": pairs, "sig": sig_counts(rows, pairs)}


def sig_counts(rows: list[PanelRow], pairs: list[Table13Pair]) -> list[SigCounts]:
    """Per run: the runs it beats and the runs that beat it at p < 0.05, Holm-adjusted and unadjusted (a pair
    whose items split evenly has no winner)."""
    counts = {r["run"]: {"wins": 0, "losses": 0, "wins_raw": 0, "losses_raw": 0} for r in rows}
    for pair in pairs:
        if pair["best_better"] == pair["runner_up_better"]:
            continue
        first_wins = pair["best_better"] > pair["runner_up_better"]
        winner, loser = (pair["first"], pair["second"]) if first_wins else (pair["second"], pair["first"])
        for key, p in (("", pair["p_holm"]), ("_raw", pair["p"])):
            if p is not None and p < 0.05:
                counts[winner]["wins" + key] += 1
                counts[loser]["losses" + key] += 1
    return [
        {
            "run": r["run"],
            "accuracy": r["accuracy"],
            "wins": counts[r["run"]]["wins"],
            "losses": counts[r["run"]]["losses"],
            "wins_raw": counts[r["run"]]["wins_raw"],
            "losses_raw": counts[r["run"]]["losses_raw"],
        }
        for r in rows
    ]


def table14(rows: list[PanelRow], behaviours: list[RunBehaviour]) -> list[Table14Tier]:
    """Per tier (the paper's order, untiered last): each evaluated run's top-1 trigram (most occurrences over its
    own trajectories, ties by name) and its concentration (its occurrences ÷ all trigram occurrences of the run),
    and the tier's mean concentration."""
    out: list[Table14Tier] = []
    for tier in [*TIERS, None]:
        entries = [
            trigram_concentration(r, b.trigrams) for r, b in zip(rows, behaviours, strict=True) if tier_of(r) == tier
        ]
        valued = [e["concentration"] for e in entries if e["concentration"] is not None]
        if entries:
            out.append(
                {"tier": tier, "runs": entries, "mean_concentration": float(np.mean(valued)) if valued else None}
            )
    return out


def tier_of(row: PanelRow) -> str | None:
    """The row's tier when it is one of the paper's (`workbench.service.families.TIERS`), else None (untiered)."""
    tier = row.get("tier")
    return tier if tier in TIERS else None


def trigram_concentration(row: PanelRow, counts: Counter[Gram]) -> TrigramConcentration:
    """A run's top-1 trigram (most occurrences, ties by name) and its share of all the run's trigram occurrences."""
    total = sum(counts.values())
    gram, top = min(counts.items(), key=lambda kv: (-kv[1], kv[0])) if counts else (None, 0)
    return {
        "run": row["run"],
        "trigram": list(gram) if gram else None,
        "occurrences": top,
        "total": total,
        "concentration": top / total if total else None,
    }


CITATION_KEYS = ("citationCount", "citation_count", "citations")  # a graph node's citation count, where carried


def seed_strata(corpus: Any, item_ids: set[str]) -> dict[str, dict[str, str]]:
    """Per item: its seed paper's year and the rank-based quartile (Q1 lowest … Q4) of its citation count among
    these items' seeds, read from the release's graph node of the seed; "unknown" where the node lacks the field
    (the quartile is left out entirely when no seed carries a count)."""
    years, counts = {}, {}
    for item_id in sorted(item_ids):
        year, count = _seed_facts(corpus, item_id)
        years[item_id] = year
        if count is not None:
            counts[item_id] = count
    out = {i: {"seed year": years[i]} for i in years}
    if counts:
        for i, quartile in _citation_quartiles(counts).items():
            out[i]["citation quartile"] = quartile
        for cells in out.values():
            cells.setdefault("citation quartile", "unknown")
    return out


def _seed_facts(corpus: Any, item_id: str) -> tuple[str, float | None]:
    """An item's seed paper's year ("unknown" where its graph node lacks it) and citation count (None: not carried)."""
    item = corpus.item(item_id)
    node = corpus.view(item).nodes.get(item.seed_paper_id)
    data = node.data if node is not None else {}
    year = str(data["year"]) if isinstance(data.get("year"), int) else "unknown"
    count = next((data[k] for k in CITATION_KEYS if isinstance(data.get(k), int | float)), None)
    return year, None if count is None else float(count)


def _citation_quartiles(counts: dict[str, float]) -> dict[str, str]:
    """Each item's rank-based quartile of its seed's citation count among the items (Q1 lowest)."""
    from stats.significance import average_ranks

    ids = list(counts)
    ranks = average_ranks(np.array([counts[i] for i in ids]))
    return {i: f"Q{min(4, int((r - 1) * 4 / len(ids)) + 1)}" for i, r in zip(ids, ranks, strict=True)}


def table19(rows: list[PanelRow], runs: Sequence[RunRow], tables: list[Table], corpus_of: Any) -> list[Table19Tier]:
    """Per tier with closed-book runs: their pooled accuracy by the item's venue and, with the dataset, by the
    seed's year and citation-count quartile (where the release carries them)."""
    out: list[Table19Tier] = []
    for tier in sorted({r.get("tier") or "" for r in rows}):
        members = _closed_book_of_tier(rows, runs, tables, tier)
        if not members:
            continue
        strata: dict[str, dict[str, list[int]]] = {}
        for _, run, t in members:
            _count_strata(strata, t, corpus_of(run))
        out.append({"tier": tier or None, "runs": [r["run"] for r, _, _ in members], "strata": _stratum_cells(strata)})
    return out


def _closed_book_of_tier(
    rows: list[PanelRow], runs: Sequence[RunRow], tables: list[Table], tier: str
) -> list[tuple[PanelRow, RunRow, Table]]:
    """The closed-book runs of one tier ("" untiered) with their rows and trajectories."""
    return [
        (r, run, t)
        for r, run, t in zip(rows, runs, tables, strict=True)
        if r["ablation"] == "closed-book" and (r.get("tier") or "") == tier
    ]


def _count_strata(strata: dict[str, dict[str, list[int]]], table: Table, corpus: Any) -> None:
    """Add one run's trajectories to `strata` (stratum → value → [right, n]): the item's venue, and with the
    dataset (`corpus`, or None) its seed's year and citation quartile."""
    known = {it.id for it in corpus.items} if corpus is not None else set()
    seeds = seed_strata(corpus, set(table["item_id"].tolist()) & known) if corpus is not None else {}
    for item, venue, ok in zip(table["item_id"], table["venue"], table["correct"], strict=True):
        keys = {"venue": str(venue) if venue else "—", **seeds.get(item, {})}
        for stratum, value in keys.items():
            counts = strata.setdefault(stratum, {}).setdefault(value, [0, 0])
            counts[0] += int(ok)
            counts[1] += 1


def _stratum_cells(strata: dict[str, dict[str, list[int]]]) -> dict[str, dict[str, StratumCell]]:
    """Each stratum's values (sorted) with their right, n and accuracy."""
    return {
        k: {v: {"right": c[0], "n": c[1], "accuracy": c[0] / c[1]} for v, c in sorted(vals.items())}
        for k, vals in strata.items()
    }


def table11(
    store: Any, runs: Sequence[RunRow], rows: list[PanelRow], tables: list[Table], corpus_of: Any
) -> Table11 | None:
    """Evidence contact of recall-credited trajectories, pooled over the full-tool runs (see LEGEND["table11"]).
    `corpus_of(run)` gives the run's corpus or None; the first dataset with a corpus is the one used. Each group's
    closed-book column is the same models' closed-book accuracy on the same items: for each of the group's
    trajectories, the replicate-0 outcome on its item of the closed-book run of its own model (agent, model,
    dataset), where the panel has one."""
    full = [(run, row, t) for run, row, t in zip(runs, rows, tables, strict=True) if row["ablation"] == "full"]
    corpus = next((c for c in map(corpus_of, [run for run, _, _ in full]) if c is not None), None)
    if corpus is None:
        return None
    groups, closed_book = _contact_counts(store, full, closed_book_outcomes(rows, tables), corpus)
    total = sum(n for _, n in groups.values())
    return {
        "dataset": corpus.fingerprint,
        "n": total,
        "groups": {g: _contact_group(right, n, total, closed_book[g]) for g, (right, n) in groups.items()},
    }


def _contact_counts(
    store: Any, full: list[tuple[RunRow, PanelRow, Table]], closed: dict[ModelKey, dict[str, bool]], corpus: Any
) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Per Table 11 group: [right, n] of the recall-credited trajectories of the full-tool runs on the corpus's
    dataset, and [right, n] of the same models' closed-book outcomes on those items."""
    groups = {g: [0, 0] for g in panel_measures.CONTACT}
    closed_book = {g: [0, 0] for g in panel_measures.CONTACT}
    for run, row, t in full:
        if run["dataset_fingerprint"] == corpus.fingerprint:
            contacts = contact_groups(store, run, t, corpus)
            _tally_contacts(groups, closed_book, contacts, closed.get(_model_key(row), {}))
    return groups, closed_book


def _tally_contacts(
    groups: dict[str, list[int]],
    closed_book: dict[str, list[int]],
    contacts: Iterator[tuple[str, bool, str]],
    outcomes: dict[str, bool],
) -> None:
    """Count one run's recall-credited trajectories into their Table 11 groups, and beside each the closed-book
    outcome of its model on the same item (`outcomes`, where the panel has one)."""
    for item_id, correct, group in contacts:
        _tally(groups[group], correct)
        if item_id in outcomes:
            _tally(closed_book[group], outcomes[item_id])


def _tally(counts: list[int], correct: bool) -> None:
    """Count one outcome into [right, n]."""
    counts[0] += int(correct)
    counts[1] += 1


def _contact_group(right: int, n: int, total: int, closed_book: list[int]) -> ContactGroup:
    """A Table 11 group from its counts: its share of all, its conversion, the closed-book accuracy beside."""
    return {
        "n": n,
        "share": n / total if total else None,
        "conversion": right / n if n else None,
        "closed_book": closed_book[0] / closed_book[1] if closed_book[1] else None,
        "closed_book_n": closed_book[1],
    }


ModelKey = tuple[str, str | None, str | None]  # agent, model, dataset


def _model_key(row: PanelRow) -> ModelKey:
    """What makes runs ablations of one model: agent, model and dataset."""
    return (row["agent"], row["model"], row.get("dataset"))


def closed_book_outcomes(rows: list[PanelRow], tables: list[Table]) -> dict[ModelKey, dict[str, bool]]:
    """Per model (`_model_key`): its closed-book run's replicate-0 outcome per item (the first such run listed)."""
    out: dict[ModelKey, dict[str, bool]] = {}
    for row, table in zip(rows, tables, strict=True):
        if row["ablation"] == "closed-book":
            out.setdefault(_model_key(row), _first_replicate(table))
    return out


def contact_groups(store: Any, run: RunRow, table: Table, corpus: Any) -> Iterator[tuple[str, bool, str]]:
    """(item, correct, Table 11 group) of each recall-credited trajectory of `run` on the common items (`table`)."""
    reads = _delivered_reads(store, run["id"])
    known = {it.id for it in corpus.items}
    wanted = set(table["item_id"].tolist())  # the common items
    cols = store.trajectory_columns(run["id"], ("id", "item_id", "paper_recall", "correct"))
    for tid, item_id, recalled, correct in zip(
        cols["id"], cols["item_id"], cols["paper_recall"], cols["correct"], strict=True
    ):
        if recalled and item_id in known and item_id in wanted:
            yield item_id, bool(correct), _contact_group_of(corpus.item(item_id), reads.get(int(tid), set()))


def _delivered_reads(store: Any, run_id: int) -> dict[int, set[tuple[str, int]]]:
    """Per trajectory id: the (paper, section) reads delivered in it."""
    from sandbox.recall import delivered_read

    reads: dict[int, set[tuple[str, int]]] = {}
    for step in store.delivered_steps(run_id):
        read = delivered_read(step["delivered"], step["arxiv_id"], step["section_index"])
        if read is not None:
            reads.setdefault(step["trajectory_id"], set()).add(read)
    return reads


def _contact_group_of(item: Any, reads: set[tuple[str, int]]) -> str:
    """The Table 11 group of a recall-credited trajectory of `item` that delivered `reads`."""
    labels = [
        (lab.arxiv_id, lab.section_index, lab.method)
        for lab in item.labels
        if lab.relevance == "direct" and lab.section_index is not None
    ]
    return panel_measures.evidence_contact(item.gold_arxiv_ids, labels, reads)


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
        groups.setdefault((*_model_key(row), row["ablation"]), []).append(i)
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
