"""Table 11: evidence contact of the recall-credited trajectories of the full-tool runs (what they read of the
direct-labelled evidence), each group's conversion beside the same models' closed-book accuracy on its items."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from stats import panel_measures
from stats.axes import Table
from storage.rows import RunRow
from workbench.service.records.panel import ContactGroup, PanelRow, Table11
from workbench.service.reports.panel_tables.grouping import ModelKey, first_replicate, model_key


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
            _tally_contacts(groups, closed_book, contacts, closed.get(model_key(row), {}))
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


def closed_book_outcomes(rows: list[PanelRow], tables: list[Table]) -> dict[ModelKey, dict[str, bool]]:
    """Per model (`model_key`): its closed-book run's replicate-0 outcome per item (the first such run listed)."""
    out: dict[ModelKey, dict[str, bool]] = {}
    for row, table in zip(rows, tables, strict=True):
        if row["ablation"] == "closed-book":
            out.setdefault(model_key(row), first_replicate(table))
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
