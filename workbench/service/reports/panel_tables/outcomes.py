"""What each run's answers came to: Table 10 (accuracy per type × depth cell with a Wilson interval, and the fixed
Δ between the easiest and hardest cells), Table 15 (no answer, by what ended the trajectory) and Figure 5
(accuracy against paper recall)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from stats.axes import Table
from stats.significance import fisher_exact_two_sided
from workbench.service.records.panel import Figure5Point, FixedDelta, PanelRow, Table10Entry, Table15Entry

TYPE_DEPTH = ("st_d1", "st_d2", "mt_d1", "mt_d2")


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


NA_CAPS = ("max_turns", "budget", "token_limit", "error", "answer")


def no_parsed_letter(letters: Any) -> np.ndarray:
    """Which trajectories carry no parsed answer letter: the episode stores −1 for "no letter" (a cap ended it, or
    the submit was not a letter); None / NaN (not recorded) count as none too."""
    return np.array([v is None or math.isnan(v) or v < 0 for v in letters], dtype=bool)


def table15(rows: list[PanelRow], tables: list[Table]) -> list[Table15Entry]:
    """Table 15 per run: NA = trajectories with no parsed answer letter (`no_parsed_letter`) ÷ all, by what ended
    them (the paper's caps; `answer` = a voluntary submit whose answer is not a letter)."""
    out: list[Table15Entry] = []
    for row, table in zip(rows, tables, strict=True):
        no_letter = no_parsed_letter(table["predicted_index"])
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
