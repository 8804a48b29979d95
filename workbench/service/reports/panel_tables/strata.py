"""Table 19: closed-book accuracy by stratum, per tier: the item's venue and, from the dataset's graph, its seed
paper's year and citation-count quartile."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from stats.axes import Table
from storage.rows import RunRow
from workbench.service.records.panel import PanelRow, StratumCell, Table19Tier

CITATION_KEYS = ("citationCount", "citation_count", "citations")  # a graph node's citation count, where carried


def seed_strata(corpus: Any, item_ids: set[str]) -> dict[str, dict[str, str]]:
    """Per item: its seed paper's year and the rank-based quartile (Q1 lowest … Q4), among these items, of the
    maximum citation count over its gold papers (App. E: "each sample takes the maximum over its gold papers"),
    read from the release's graph nodes; "unknown" where the nodes lack the field (the quartile is left out
    entirely when no item's gold paper carries a count)."""
    years, counts = {}, {}
    for item_id in sorted(item_ids):
        year, count = _item_facts(corpus, item_id)
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


def _item_facts(corpus: Any, item_id: str) -> tuple[str, float | None]:
    """An item's seed paper's year ("unknown" where its graph node lacks it) and the maximum citation count over its
    gold papers' graph nodes (None: none of them carries one)."""
    item = corpus.item(item_id)
    nodes = corpus.view(item).nodes
    seed = nodes.get(item.seed_paper_id)
    data = seed.data if seed is not None else {}
    year = str(data["year"]) if isinstance(data.get("year"), int) else "unknown"
    counts = [c for c in (_citation_count(nodes.get(p)) for p in item.gold_paper_ids) if c is not None]
    return year, max(counts) if counts else None


def _citation_count(node: Any) -> float | None:
    """A graph node's citation count, under whichever key the release gives it (None: no node, or not carried)."""
    data = node.data if node is not None else {}
    count = next((data[k] for k in CITATION_KEYS if isinstance(data.get(k), int | float)), None)
    return None if count is None else float(count)


def _citation_quartiles(counts: dict[str, float]) -> dict[str, str]:
    """Each item's rank-based quartile of its citation count (the maximum over its gold papers) among the items (Q1
    lowest)."""
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
