"""The paper's further panel tables and figures (AgentHop §4, App. E), computed with the panel in one call.

Each is over the panel's common items (as Table 2), each run's trajectories there, all replicates unless said:
Table 4 (closed-book → no-search → full chain), Table 9 (stopping shares over ours and the paper's denominators),
Table 10 (type × depth with a Wilson interval per cell), Table 15 (no answer by cap), early submission across the
panel, the item-total correlation summary, Figure 5 (accuracy against paper recall) and Figure 4 (item difficulty).
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from stats import panel_measures, stopping
from stats.axes import Table
from stats.significance import fisher_exact_two_sided, mcnemar_exact

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
    "figure2": "Figure 2 (within-family generation gap): in each family with two or more full-tool runs, the runs "
    "in natural order of their model string (the run name when there is no model) — older first — and "
    "the newest minus the oldest: Δ accuracy with the exact McNemar p (replicate 0, common items) and "
    "the Table 2 axes that moved by 5 points or more.",
    "table4": "Table 4: for each agent, model and seed with a closed-book, a no-search and a full run in the "
    "panel, the accuracies on the items all three answered (replicate 0) and each step's Δ with the exact McNemar p "
    "between adjacent settings.",
    "table9": "Table 9 (ST after the gold; MT-both after both golds): Imm / Thnk / Read over ours (the three "
    "categories) and over the paper's denominator (every trajectory that read its golds, the residual — "
    "navigation without a read, or no submit — kept in it, so the three sum to at most 100 %).",
    "table10": "Table 10: accuracy per type × depth cell with its Wilson 95 % half-width (clustered by item with "
    "replicates); Δ = the hardest cell minus the easiest (by accuracy), Fisher's exact two-sided p.",
    "table15": "Table 15: NA = trajectories without a parseable answer letter ÷ all, split by what ended them "
    "(max_turns, budget, token_limit, error; 'answer' = a voluntary submit without a letter).",
    "early_submit": "Early submission (App. E.2): per run, accuracy of trajectories submitting within 3 actions of "
    "a wrong-paper read minus the other wrong-read trajectories (Fisher's exact); across the panel, "
    "the mean Δ over runs where both groups exist and in how many of them p < 0.05.",
    "item_total_summary": "Item-total discrimination (§4.4): the corrected item-total correlations of the common "
    "items summarised: median, quartiles, share > 0.2 and share ≤ 0 (items with a value).",
    "figure5": "Figure 5: one point per run, accuracy against paper recall (all items), by tier; the diagonal is "
    "accuracy = recall.",
    "figure4": "Figure 4: each common item by how many runs answered it right (replicate 0), bucketed low / mid / "
    "high with the paper's cut points (0–6, 7–12, 13–19 of 19) scaled to the panel's size, "
    "by type × depth and by consensus tier.",
}


def run_behaviour(table: Table, actions: list[Any]) -> dict[str, Any]:
    """What the action-based tables need of one run (its trajectories on the common items), so its action lists
    can go: Table 3, Table 9's after-evidence breakdown, early submission. One `Facts` scan per trajectory."""
    trajs = _trajectories(table, actions)
    facts = [stopping.Facts.of(t) for t in trajs]
    return {
        "table3": panel_measures.table3([a or [] for a in actions]),
        "after_evidence": stopping.after_evidence(trajs, facts),
        "early_submit": stopping.early_submit(trajs, facts=facts),
    }


def panel_tables(
    rows: list[dict[str, Any]],
    tables: list[Table],
    behaviours: list[dict[str, Any]],
    itc: dict[str, float | None] | None,
) -> dict[str, Any]:
    """Every further table and figure of the panel; `tables` are each run's trajectories on the common items and
    `behaviours` their `run_behaviour`, in `rows` order."""
    return {
        "table3": [{"run": r["run"], **b["table3"]} for r, b in zip(rows, behaviours)],
        "table17": table17(rows, tables),
        "figure2": figure2(rows, tables),
        "table4": table4(rows, tables),
        "table9": table9(rows, behaviours),
        "table10": table10(rows, tables),
        "table15": table15(rows, tables),
        "early_submit": early_submission(rows, behaviours),
        "item_total_summary": itc_summary(itc),
        "figure5": figure5(rows, tables),
        "figure4": figure4(rows, tables),
    }


def _trajectories(table: Table, actions: list[Any]) -> list[dict[str, Any]]:
    """The stopping tables' trajectory dicts (`analytics` builds the same)."""
    recalls = [r if known else None for known, r in zip(table.known("paper_recall"), table["paper_recall"])]
    return [
        {
            "kind": k,
            "correct": bool(c),
            "termination": e,
            "n_gold": None if math.isnan(g) else int(g),
            "paper_recall": None if r is None else bool(r),
            "actions": a or [],
        }
        for k, c, e, g, r, a in zip(
            table["kind"], table["correct"], table["termination"], table["n_gold"], recalls, actions
        )
    ]


def table9(rows: list[dict[str, Any]], behaviours: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row, behaviour in zip(rows, behaviours):
        ev = behaviour["after_evidence"]
        entry: dict[str, Any] = {"run": row["run"]}
        for group in ("st", "mt_both"):
            g = ev[group]
            entry[group] = {
                "n_ours": g["n"],
                "n_paper": g["n_reached"],
                "left_out": g["left_out"],
                "ours": {c: g["counts"][c] / g["n"] if g["n"] else None for c in stopping.AFTER_EVIDENCE},
                "paper": {
                    c: g["counts"][c] / g["n_reached"] if g["n_reached"] else None for c in stopping.AFTER_EVIDENCE
                },
                "counts": {c: g["counts"][c] for c in stopping.AFTER_EVIDENCE},
            }
        out.append(entry)
    return out


def _cells(table: Table) -> dict[str, tuple[int, int, dict[str, Any] | None]]:
    """Per type × depth cell: (right, trajectories, Wilson interval clustered by item)."""
    from stats.bootstrap import by_cluster
    from stats.wilson import clustered_wilson

    keys = np.array([f"{k}_d{int(d)}" if not math.isnan(d) else "" for k, d in zip(table["kind"], table["depth"])])
    out = {}
    for cell in TYPE_DEPTH:
        mask = keys == cell
        n = int(mask.sum())
        right = int(table["correct"][mask].sum())
        interval = None
        if n:
            _, (succ, trials) = by_cluster(
                table["item_id"][mask], table["correct"][mask].astype(float)[:, None], np.ones((n, 1))
            )
            w = clustered_wilson(succ[:, 0], trials[:, 0])
            if w is not None:  # every item has a trial here: the interval is defined
                interval = {"low": w.low, "high": w.high, "half_width": (w.high - w.low) / 2, "n_eff": w.n_eff}
        out[cell] = (right, n, interval)
    return out


def table10(rows: list[dict[str, Any]], tables: list[Table]) -> list[dict[str, Any]]:
    out = []
    for row, table in zip(rows, tables):
        cells = _cells(table)
        entry = {
            "run": row["run"],
            "cells": {
                c: {
                    "right": r,
                    "n": n,
                    "accuracy": r / n if n else None,
                    "half_width": None if iv is None else iv["half_width"],
                }
                for c, (r, n, iv) in cells.items()
            },
        }
        valued = [c for c in TYPE_DEPTH if cells[c][1]]
        if len(valued) >= 2:
            ranked = sorted(valued, key=lambda c: (-cells[c][0] / cells[c][1], TYPE_DEPTH.index(c)))
            easy, hard = ranked[0], ranked[-1]  # all equal: the first and last cell in table order
            (re, ne, _), (rh, nh, _) = cells[easy], cells[hard]
            entry["delta"] = {
                "easiest": easy,
                "hardest": hard,
                "delta": rh / nh - re / ne,
                "p": fisher_exact_two_sided(re, ne - re, rh, nh - rh),
            }
        out.append(entry)
    return out


def table15(rows: list[dict[str, Any]], tables: list[Table]) -> list[dict[str, Any]]:
    out = []
    for row, table in zip(rows, tables):
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


def early_submission(rows: list[dict[str, Any]], behaviours: list[dict[str, Any]]) -> dict[str, Any]:
    per_run = []
    for row, behaviour in zip(rows, behaviours):
        e = behaviour["early_submit"]
        per_run.append({"run": row["run"], "delta": e["delta"], "p": e["p"], "share": e["share"]})
    tested = [r for r in per_run if r["delta"] is not None]
    return {
        "runs": per_run,
        "n_tested": len(tested),
        "n_significant": sum(r["p"] < 0.05 for r in tested),
        "mean_delta": float(np.mean([r["delta"] for r in tested])) if tested else None,
    }


def itc_summary(itc: dict[str, float | None] | None) -> dict[str, Any] | None:
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


def figure5(rows: list[dict[str, Any]], tables: list[Table]) -> list[dict[str, Any]]:
    out = []
    for row, table in zip(rows, tables):
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


def figure4(rows: list[dict[str, Any]], tables: list[Table]) -> dict[str, Any] | None:
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


def table4(rows: list[dict[str, Any]], tables: list[Table]) -> list[dict[str, Any]]:
    """The closed-book → no-search → full chain of each agent and model the panel has all three settings of."""
    by_key: dict[tuple, dict[str, int]] = {}
    for i, row in enumerate(rows):
        by_key.setdefault((row["agent"], row["model"], row.get("seed", 0)), {})[row["ablation"]] = i
    out = []
    for (agent, model, _seed), settings in by_key.items():
        if not all(s in settings for s in CHAIN):
            continue
        outcome = []
        for s in CHAIN:
            t = tables[settings[s]]
            first = t["replicate"] == 0
            outcome.append(dict(zip(t["item_id"][first].tolist(), t["correct"][first].astype(bool).tolist())))
        items = [i for i in outcome[0] if all(i in o for o in outcome[1:])]
        accs = [float(np.mean([o[i] for i in items])) if items else None for o in outcome]
        steps = []
        for a, b in ((0, 1), (1, 2)):
            test = mcnemar_exact([outcome[b][i] for i in items], [outcome[a][i] for i in items]) if items else None
            before, after = accs[a], accs[b]
            steps.append(
                {
                    "from": CHAIN[a],
                    "to": CHAIN[b],
                    "delta": None if before is None or after is None else after - before,
                    "p": None if test is None else test["p"],
                }
            )
        out.append(
            {
                "agent": agent,
                "model": model,
                "runs": {s: rows[settings[s]]["run"] for s in CHAIN},
                "n": len(items),
                "accuracy": dict(zip(CHAIN, accs)),
                "steps": steps,
            }
        )
    return out


T17_METRICS = ("accuracy", "section_recall", "conversion", "tokens")


def _replicate_values(table: Table, tokens_measured: bool) -> dict[str, list[float | None]]:
    """Each Table 17 metric per replicate (in replicate order)."""
    levels = sorted(set(table["replicate"][~np.isnan(table["replicate"])].tolist()))
    out: dict[str, list[float | None]] = {m: [] for m in T17_METRICS}
    for r in levels:
        t = table.subset(table["replicate"] == r)
        known = t.known("section_recall")
        recalled = t.known("paper_recall") & (t["paper_recall"] == 1)
        out["accuracy"].append(float(t["correct"].mean()) if t.n else None)
        out["section_recall"].append(float(t["section_recall"][known].mean()) if known.any() else None)
        out["conversion"].append(float(t["correct"][recalled].mean()) if recalled.any() else None)
        out["tokens"].append(float(np.nanmean(t["tokens"])) if tokens_measured and t.n else None)
    return out


def table17(rows: list[dict[str, Any]], tables: list[Table]) -> dict[str, Any]:
    """Run-to-run spread of four metrics and whether the runs' ordering on each survives across replicates."""
    per_run = {}
    for row, table in zip(rows, tables):
        if table.n and len(set(table["replicate"].tolist())) >= 2:
            per_run[row["run"]] = _replicate_values(table, row.get("tokens") is not None)
    spread: dict[str, dict[str, dict[str, float] | None]] = {}
    for run, metrics in per_run.items():
        spread[run] = {}
        for m, vals in metrics.items():
            v = [x for x in vals if x is not None]
            spread[run][m] = (
                None
                if len(v) < 2
                else {"mean": float(np.mean(v)), "std": float(np.std(v)), "range": float(max(v) - min(v)), "n": len(v)}
            )
    stability = {
        m: panel_measures.rank_stability(
            {run: per_run[run][m] for run in per_run if any(x is not None for x in per_run[run][m])}
        )
        for m in T17_METRICS
    }
    return {"runs": spread, "rank_stability": stability}


def _natural(text: str) -> list[Any]:
    return [(0, int(p), "") if p.isdigit() else (1, 0, p.lower()) for p in re.findall(r"\d+|\D+", text)]


MOVED_AXES = ("PR st", "PR mt", "SR st", "SR mt", "Conv st", "Conv mt", "calls/turn")


def figure2(rows: list[dict[str, Any]], tables: list[Table]) -> list[dict[str, Any]]:
    by_family: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        if row.get("family") and row["ablation"] == "full":
            by_family.setdefault(row["family"], []).append(i)
    out = []
    for fam, members in sorted(by_family.items()):
        if len(members) < 2:
            continue
        ordered = sorted(members, key=lambda i: (_natural(rows[i]["model"] or rows[i]["run"]), rows[i]["run"]))
        old, new = ordered[0], ordered[-1]
        outcome = []
        for i in (old, new):
            t = tables[i]
            first = t["replicate"] == 0
            outcome.append(dict(zip(t["item_id"][first].tolist(), t["correct"][first].astype(bool).tolist())))
        items = [i for i in outcome[0] if i in outcome[1]]
        test = mcnemar_exact([outcome[1][i] for i in items], [outcome[0][i] for i in items]) if items else None
        moved = []
        for axis in MOVED_AXES:
            a, b = rows[old][axis], rows[new][axis]
            least = 0.1 if axis == "calls/turn" else 0.05  # calls per turn move by 0.1, rates by 5 points
            if a is not None and b is not None and abs(b - a) >= least:
                moved.append({"axis": axis, "delta": b - a})
        moved.sort(key=lambda m: -abs(m["delta"]))
        delta = (
            None
            if rows[old]["accuracy"] is None or rows[new]["accuracy"] is None
            else rows[new]["accuracy"] - rows[old]["accuracy"]
        )
        out.append(
            {
                "family": fam,
                "older": rows[old]["run"],
                "newer": rows[new]["run"],
                "delta": delta,
                "p": None if test is None else test["p"],
                "n": len(items),
                "moved": moved,
            }
        )
    return out


CITATION_KEYS = ("citationCount", "citation_count", "citations")  # a graph node's citation count, where carried


def seed_strata(corpus: Any, item_ids: set[str]) -> dict[str, dict[str, str]]:
    """Per item: its seed paper's year and the rank-based quartile (Q1 lowest … Q4) of its citation count among
    these items' seeds, read from the release's graph node of the seed; "unknown" where the node lacks the field
    (the quartile is left out entirely when no seed carries a count)."""
    from stats.significance import average_ranks

    years, counts = {}, {}
    for item_id in sorted(item_ids):
        item = corpus.item(item_id)
        node = corpus.view(item).nodes.get(item.seed_paper_id)
        data = node.data if node is not None else {}
        years[item_id] = str(data["year"]) if isinstance(data.get("year"), int) else "unknown"
        count = next((data[k] for k in CITATION_KEYS if isinstance(data.get(k), (int, float))), None)
        if count is not None:
            counts[item_id] = float(count)
    out = {i: {"seed year": years[i]} for i in years}
    if counts:
        ids = list(counts)
        ranks = average_ranks(np.array([counts[i] for i in ids]))
        for i, r in zip(ids, ranks):
            out[i]["citation quartile"] = f"Q{min(4, int((r - 1) * 4 / len(ids)) + 1)}"
        for cells in out.values():
            cells.setdefault("citation quartile", "unknown")
    return out


def table19(
    rows: list[dict[str, Any]], runs: list[dict[str, Any]], tables: list[Table], corpus_of: Any
) -> list[dict[str, Any]]:
    """Per tier with closed-book runs: their pooled accuracy by the item's venue and, with the dataset, by the
    seed's year and citation-count quartile (where the release carries them)."""
    out = []
    for tier in sorted({r.get("tier") or "" for r in rows}):
        members = [
            (r, run, t)
            for r, run, t in zip(rows, runs, tables)
            if r["ablation"] == "closed-book" and (r.get("tier") or "") == tier
        ]
        if not members:
            continue
        strata: dict[str, dict[str, list[int]]] = {}
        for _, run, t in members:
            corpus = corpus_of(run)
            known = {it.id for it in corpus.items} if corpus is not None else set()
            seeds = seed_strata(corpus, set(t["item_id"].tolist()) & known) if corpus is not None else {}
            for item, venue, ok in zip(t["item_id"], t["venue"], t["correct"]):
                keys = {"venue": str(venue) if venue else "—", **seeds.get(item, {})}
                for stratum, value in keys.items():
                    counts = strata.setdefault(stratum, {}).setdefault(value, [0, 0])
                    counts[0] += int(ok)
                    counts[1] += 1
        out.append(
            {
                "tier": tier or None,
                "runs": [r["run"] for r, _, _ in members],
                "strata": {
                    k: {v: {"right": c[0], "n": c[1], "accuracy": c[0] / c[1]} for v, c in sorted(vals.items())}
                    for k, vals in strata.items()
                },
            }
        )
    return out


def table11(
    store: Any, runs: list[dict[str, Any]], rows: list[dict[str, Any]], tables: list[Table], corpus_of: Any
) -> dict[str, Any] | None:
    """Evidence contact of recall-credited trajectories, pooled over the full-tool runs (see LEGEND["table11"]).
    `corpus_of(run)` gives the run's corpus or None; the first dataset with a corpus is the one used."""
    from sandbox.recall import delivered_read

    full = [(run, row, t) for run, row, t in zip(runs, rows, tables) if row["ablation"] == "full"]
    corpus = next((c for c in (corpus_of(run) for run, _, _ in full) if c is not None), None)
    if corpus is None:
        return None
    known = {it.id for it in corpus.items}
    groups = {g: [0, 0] for g in panel_measures.CONTACT}  # correct, n
    items_of: dict[str, set[str]] = {g: set() for g in panel_measures.CONTACT}
    for run, _row, t in full:
        if run["dataset_fingerprint"] != corpus.fingerprint:
            continue
        reads: dict[int, set[tuple[str, int]]] = {}
        for step in store.delivered_steps(run["id"]):
            read = delivered_read(step["delivered"], step["arxiv_id"], step["section_index"])
            if read is not None:
                reads.setdefault(step["trajectory_id"], set()).add(read)
        wanted = set(t["item_id"].tolist())  # the common items
        cols = store.trajectory_columns(run["id"], ("id", "item_id", "paper_recall", "correct"))
        for tid, item_id, recalled, correct in zip(cols["id"], cols["item_id"], cols["paper_recall"], cols["correct"]):
            if not recalled or item_id not in known or item_id not in wanted:
                continue
            item = corpus.item(item_id)
            labels = [
                (lab.arxiv_id, lab.section_index, lab.method)
                for lab in item.labels
                if lab.relevance == "direct" and lab.section_index is not None
            ]
            g = panel_measures.evidence_contact(item.gold_arxiv_ids, labels, reads.get(int(tid), set()))
            groups[g][0] += int(correct)
            groups[g][1] += 1
            items_of[g].add(item_id)
    total = sum(n for _, n in groups.values())
    closed = [t for row, t in zip(rows, tables) if row["ablation"] == "closed-book"]
    out = {}
    for g, (right, n) in groups.items():
        cb = [
            bool(ok)
            for t in closed
            for item, ok, rep in zip(t["item_id"], t["correct"], t["replicate"])
            if item in items_of[g] and rep == 0
        ]
        out[g] = {
            "n": n,
            "share": n / total if total else None,
            "conversion": right / n if n else None,
            "closed_book": sum(cb) / len(cb) if cb else None,
            "closed_book_n": len(cb),
        }
    return {"dataset": corpus.fingerprint, "n": total, "groups": out}
