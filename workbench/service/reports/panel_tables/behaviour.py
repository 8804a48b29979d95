"""The action-based tables, read from each run's stored actions once (`RunBehaviour`): Table 3 (the action after a
wrong-paper read), Table 9 (stopping after the evidence, and why MT recall failed), early submission across the
panel (App. E.2) and Table 14 (each run's top-1 trigram and its concentration, by tier)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stats import panel_measures, stopping
from stats.axes import Table
from stats.ngrams import Gram
from stats.stopping import AfterEvidence, EarlySubmit, EvidenceGroup, MtFail
from workbench.service.families import TIERS
from workbench.service.records.panel import (
    EarlySubmission,
    EarlySubmitRun,
    PanelRow,
    Table3Entry,
    Table9Entry,
    Table9Group,
    Table9MtFail,
    Table14Tier,
    TrigramConcentration,
    WrongReadEvents,
)
from workbench.service.reports.panel_tables.grouping import tier_of
from workbench.service.reports.run import stopping_rows


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
