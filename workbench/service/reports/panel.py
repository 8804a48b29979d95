"""The panel of several runs (the paper's Table 2): cells over the items every run answered, the best cell
marked where it beats the runner-up significantly, Cronbach's α, item coverage, replicate spread, tool lift."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from stats import axes, ngrams
from stats.axes import Table
from stats.ngrams import Encoded
from stats.significance import RunSpread
from storage import Store
from storage.rows import LightTrajectoryRow, RunRow, StoredRun
from workbench.service.families import TIERS, lineage
from workbench.service.records.columns import COLUMN_TERMS, PANEL_COLUMNS, PANEL_GROUPS
from workbench.service.records.leaderboard import BoardRow, BoardTest
from workbench.service.records.panel import (
    AblationLift,
    ColumnGroup,
    ColumnTest,
    ExternalCorrelation,
    LineageGroup,
    MarkTest,
    PanelBigram,
    PanelReport,
    PanelRow,
    PanelTables,
    PoolStatistics,
    RowErrors,
    cell,
)
from workbench.service.records.report import RunReport
from workbench.service.reports import fingerprints, panel_tables
from workbench.service.reports.panel_tables import legend
from workbench.service.reports.panel_tables.behaviour import RunBehaviour, run_behaviour
from workbench.service.reports.panel_tables.contact import table11
from workbench.service.reports.panel_tables.grouping import tier_of
from workbench.service.reports.panel_tables.significance import LOWER_IS_BETTER, ItemTerms, paired_column_test
from workbench.service.reports.panel_tables.stability import table17_across_runs
from workbench.service.reports.panel_tables.strata import table19
from workbench.service.reports.prompts import prompt_warnings
from workbench.service.reports.run import _dig, encoded_sequences, label_resolution, load_table, report_of

if TYPE_CHECKING:
    from sandbox.corpus import Corpus

PAIRED_BY_ID = "items are paired by id only, and an id may name a different question in each"


RESOURCE_COLUMNS = {"calls/turn", "tokens", "turns", "points", "MaxTok", "MaxTurn", "MaxBudget"}
# columns the paper gives no direction (neither more nor fewer calls per turn is better): never marked * or †
UNDIRECTED = {"calls/turn"}


PANEL_LEGEND = {
    "columns": "accuracy; Search: paper recall (PR) and section recall (SR) for single-target (st) and "
    "multi-target (mt) items; Synthesis: conversion = P(correct | paper recall); Tool use: calls per "
    "turn; Resources: mean tokens, model turns, points, and the shares ended by each cap.",
    "best": "* marks the best cell of a column as it stands (highest, or lowest for resources; every run sharing "
    "it; none where every run has the same value or only one has a value; never calls per turn, which has no "
    "better direction), among the evaluated models — the "
    "full-tool runs ('evaluated'); ablation runs (closed-book, no-search, "
    "gold-given) are never marked. Beside each mark, 'best_tests' has the paired test against the runner-up on "
    "the common items both have a value for: McNemar's exact test for the 0/1 columns (accuracy, recalls, "
    "conversion on the items both recalled, cap rates) with one trajectory per item; with replicates, and for "
    "calls per turn, tokens, turns and points, the exact sign test on the per-item values (an item's mean over "
    "its replicates). 'separated' says whether it separates them (p < 0.05, in the best's direction); the mark "
    "does not depend on it, as the paper's Table 2. Not adjusted across columns.",
    "cronbach_alpha": "Cronbach's α with the items as the components and the evaluated models (full-tool runs; no "
    "ablation run) as the respondents (the paper's orientation, §4.4 and Appendix E.1): k/(k−1)·(1 − Σ item "
    "variances across runs ÷ variance of the run "
    "totals), k = items. item_total_correlation: per item, the corrected item-total correlation in "
    "the same orientation: Pearson r across the runs between the item's correctness and the run's "
    "total over the other items (negative: strong runs miss it, weak ones get it).",
    "counts": "Every cell's [numerator, denominator] is in the row's 'counts'.",
    "replicates": "Run-to-run mean / std / range of accuracy over the replicates of each run; std is the population "
    "SD (ddof = 0) of the replicates' accuracies, as the paper's Table 17.",
    "common_items": "Every cell, best mark, tool lift and the Spearman accuracy are over the items every run "
    "answered (all their replicates; a row's n counts those trajectories, n_all all of the run's), "
    "as the paper's Table 2 compares models on one item set; Cronbach's α, item coverage and "
    "item-total correlations use the same items (replicate 0) and the evaluated models only. Bigram means (the "
    "evaluated models only) and replicate spread are over each run's own trajectories.",
    "external": "Spearman's ρ between run accuracy and the external scores; p exact (all orderings) for n ≤ 9.",
    "tier_best": "† marks a tier leader: the best cell of a column (calls per turn aside) among the evaluated runs of "
    "one capability tier, "
    "as it stands ('tier_best_tests' has the test against the tier's runner-up beside it). ‡ shades a tier "
    "leader's conversion cell (Conv st, Conv mt) only where the exact McNemar test on the items both recalled "
    "separates it from the tier's runner-up (p < 0.05; 'tier_shaded'), as the paper shades its Table 2. Rows "
    "are grouped by tier (Closed Frontier, Open Frontier, Compute-Efficient, then untiered), then by family "
    "(best accuracy first), then by accuracy, as the paper's Table 2; family and tier are each run's tags "
    "(`runs tag`), derived from the model string when not chosen.",
    "bigram_panel": "Bigram panel (the paper's Table 13) = mean Δ-accuracy across the evaluated models (full-tool "
    "runs, never an ablation run; over the models where Δ is defined) of the bigrams present in at least half of "
    "the runs (n_present; the paper: ≥ 10 of 19 models), with the models where it is significant (n_significant, "
    "Bonferroni over 49).",
}


def item_matrix(runs_records: Sequence[Sequence[LightTrajectoryRow] | Table]) -> tuple[list[str], list[list[int]]]:
    """Items answered by every run (replicate 0) and the item × run correctness matrix."""
    per_run = []
    for records in runs_records:
        t = Table.of(records)
        first = t["replicate"] == 0
        per_run.append(dict(zip(t["item_id"][first].tolist(), t["correct"][first].astype(int).tolist(), strict=True)))
    common = [i for i in per_run[0] if all(i in run for run in per_run[1:])] if per_run else []
    return common, [[run[i] for run in per_run] for i in common]


def replicate_spread(records: Sequence[LightTrajectoryRow] | Table) -> RunSpread | None:
    """Run-to-run mean / std / range of accuracy over the replicates of one run."""
    from stats.significance import run_spread

    t = Table.of(records)
    reps = t["replicate"]
    levels = sorted(set(reps[~np.isnan(reps)].tolist()))
    if len(levels) < 2:
        return None
    # stats.significance builds the record's keys in a plain dict
    return run_spread([float(t["correct"][reps == r].mean()) for r in levels])


def dataset_warnings(runs: Sequence[RunRow], who: str) -> list[str]:
    """A warning when runs paired by item id were made on different datasets (fingerprints differ)."""
    groups: dict[str, list[str]] = {}
    for run in runs:
        groups.setdefault(run["dataset_fingerprint"], []).append(run["name"])
    if len(groups) < 2:
        return []
    listed = " | ".join(", ".join(names) for names in groups.values())
    return [f"{who} ran on different datasets (their fingerprints differ: {listed}): {PAIRED_BY_ID}"]


def resolution_warnings(runs: Sequence[RunRow], who: str) -> list[str]:
    """A warning when runs' section recall was computed under different label rules (a run stored under older
    rules whose dataset could not be opened to recompute it): their section recalls are not comparable."""
    groups: dict[str, list[str]] = {}
    for run in runs:
        groups.setdefault(label_resolution(run)["version"], []).append(run["name"])
    if len(groups) < 2:
        return []
    listed = " | ".join(f"version {v}: {', '.join(names)}" for v, names in sorted(groups.items()))
    return [f"{who}' section recall was computed under different label resolutions ({listed}): not comparable"]


class PanelInputError(ValueError):
    """A panel that cannot be built as asked (a run named twice): the CLI prints it and exits 2."""

    exit_code = 2  # a user's mistake (workbench.cli.errors.ExitCode.USAGE)


def refuse_duplicates(names: Sequence[str]) -> None:
    """A run named twice would enter the panel as two identical rows (two identical respondents: α, the marks and
    every pooled table would count it twice): refused, naming it."""
    twice = sorted({n for n in names if list(names).count(n) > 1})
    if twice:
        raise PanelInputError(f"a run is named more than once in the panel: {', '.join(twice)} (name each run once)")


def evaluated(rows: Sequence[PanelRow]) -> list[bool]:
    """Which rows are evaluated models (full-tool runs): the pool of α, coverage, item-total correlations,
    Figures 4 and 5, the early-submission mean and the best / tier-leader marks (§4.4: "the evaluated models").
    Ablation runs (closed-book, no-search, gold-given) stay in the panel for Tables 4, 11 and 19 only."""
    return [r["ablation"] == "full" for r in rows]


def panel_report(
    store: Store, names: list[str], external: dict[str, float] | None = None, cache_dir: Any = None
) -> PanelReport:
    """A multi-run table shaped like the paper's Table 2 (grouped, best cell marked), plus panel statistics.
    With `cache_dir` (the corpus cache), the runs' dataset is opened for the tables that need its labels
    (Table 11); a dataset that cannot be opened leaves them out. A run named twice is refused."""
    refuse_duplicates(names)
    runs, tables, encoded = _load_runs(store, names)
    common, matrix = item_matrix(tables)
    masks, on_common = _on_common_items(tables, common)
    reports, rows = _table2_rows(runs, tables, on_common)
    pool = evaluated(rows)
    models = [r for r, keep in zip(rows, pool, strict=True) if keep]
    per_item = {r["run"]: per_item_terms(t) for r, t in zip(rows, on_common, strict=True)}
    best, best_tests = marked_best(models, per_item)
    leaders, leader_tests, shaded = tier_leaders(models, per_item)
    statistics = pool_statistics(common, _pool_columns(matrix, pool))
    behaviours, signatures = _behaviours(store, runs, rows, masks, tables, on_common)
    _add_trigrams(behaviours, encoded)
    bigrams = _bigram_panel(_pooled(tables, pool), _pooled(encoded, pool))
    further = panel_tables.panel_tables(
        rows, on_common, behaviours, statistics.get("item_total_correlation"), per_item, pool, bigrams
    )
    _add_run_tables(further, store, runs, rows, on_common, cache_dir)
    panel: PanelReport = {
        "warnings": panel_warnings(runs),
        "groups": column_groups(),
        "rows": rows,
        "evaluated": [r["run"] for r in models],
        "best": best,
        "best_tests": best_tests,
        "n_common_items": len(common),
        "lineage": lineage_order(rows),
        "tier_best": leaders,
        "tier_best_tests": leader_tests,
        "tier_shaded": shaded,
        **statistics,
        "bigram_panel": bigrams,
        "replicates": {n: replicate_spread(t) for n, t in zip(names, tables, strict=True)},
        "ablation_lift": ablation_lift(reports),
        "fingerprints": fingerprints.panel_fingerprints(rows, signatures),
        "tables": further,
        "legend": {**PANEL_LEGEND, **fingerprints.LEGEND, **legend.LEGEND},
    }
    if external:
        panel["external"] = external_correlation(rows, external)
        panel["warnings"] += external_warnings(panel["external"])
    return panel


def _load_runs(store: Store, names: list[str]) -> tuple[list[StoredRun], list[Table], list[Encoded]]:
    """The runs, each one's final trajectories (one read per run) and its tool sequences encoded."""
    runs = [store.run(n) for n in names]
    loaded = [load_table(store, run, ("tool_sequence",)) for run in runs]
    return runs, [t for t, _ in loaded], [encoded_sequences(extra["tool_sequence"]) for _, extra in loaded]


def _table2_rows(
    runs: Sequence[RunRow], tables: list[Table], on_common: list[Table]
) -> tuple[list[RunReport], list[PanelRow]]:
    """Each run's report over the common items and its Table 2 row."""
    reports = [report_of(run, t) for run, t in zip(runs, on_common, strict=True)]
    return reports, [table2_row(rep, table, run) for rep, table, run in zip(reports, tables, runs, strict=True)]


def _pooled(values: Sequence[Any], pool: list[bool]) -> list[Any]:
    """The evaluated models' entries of a per-run list (`pool`: which runs are evaluated models)."""
    return [v for v, keep in zip(values, pool, strict=True) if keep]


def _pool_columns(matrix: list[list[int]], pool: list[bool]) -> list[list[int]]:
    """The item × run matrix cut to the evaluated models' columns."""
    return [[v for v, keep in zip(row, pool, strict=True) if keep] for row in matrix]


def _add_trigrams(behaviours: list[RunBehaviour], encoded: list[Encoded]) -> None:
    """Each run's trigram occurrences over its own trajectories (Table 14)."""
    for behaviour, sequences in zip(behaviours, encoded, strict=True):
        behaviour.trigrams = ngrams.ngram_counts(sequences, 3)["occurrences"]


def panel_warnings(runs: Sequence[RunRow]) -> list[str]:
    """What makes the runs' numbers not comparable: different datasets, label resolutions or prompts."""
    return (
        dataset_warnings(runs, "the runs") + resolution_warnings(runs, "the runs") + prompt_warnings(runs, "the runs")
    )


def column_groups() -> list[ColumnGroup]:
    """Table 2's column groups and their columns' labels."""
    return [{"group": g, "columns": list(cols)} for g, cols in PANEL_GROUPS]


def _on_common_items(tables: list[Table], common: list[str]) -> tuple[list[np.ndarray], list[Table]]:
    """Each run's mask of the trajectories on the items all runs answered, and those trajectories. Table 2 compares
    models on one benchmark: every cell is over those items (all their replicates), so a best mark never compares
    different item sets; `n_all` keeps each run's own count."""
    wanted = set(common)  # a set look-up per trajectory: np.isin on object ids sorts them (0.7 s on 57k)
    masks = [np.fromiter((i in wanted for i in t["item_id"]), dtype=bool, count=t.n) for t in tables]
    return masks, [t.subset(m) for t, m in zip(tables, masks, strict=True)]


def _add_run_tables(
    tables: PanelTables,
    store: Store,
    runs: Sequence[RunRow],
    rows: list[PanelRow],
    on_common: list[Table],
    cache_dir: Any,
) -> None:
    """Add the tables read across the runs (Table 17) and those that need the dataset's labels (Tables 11 and 19;
    left out when the dataset cannot be opened from `cache_dir`)."""
    tables["table17_runs"] = table17_across_runs(rows, runs, on_common)
    with _corpora(cache_dir) as corpus_of:
        tables["table11"] = table11(store, runs, rows, on_common, corpus_of)
        tables["table19"] = table19(rows, runs, on_common, corpus_of)


def external_warnings(correlation: ExternalCorrelation) -> list[str]:
    """A warning naming the --external rows of runs not in the panel (left out of the correlation)."""
    ignored = correlation["not_in_panel"]
    if not ignored:
        return []
    return [
        f"--external: {len(ignored)} score rows name runs not in the panel and are left out: "
        + ", ".join(ignored[:5])
        + (" …" if len(ignored) > 5 else "")
    ]


def table2_row(rep: RunReport, table: Table, run: RunRow) -> PanelRow:
    """One run's Table 2 row: identity, lineage, the cells (over the common items) and their counts."""
    family, tier = lineage(run)
    row = {
        "run": rep["run"],
        "agent": rep["agent"],
        "model": rep["model"],
        "ablation": rep["ablation"],
        "family": family,
        "tier": tier,
        "seed": run.get("seed", 0),
        "dataset": run.get("dataset_fingerprint"),
        "n": rep["n"],
        "n_all": table.n,
        **{col: _dig(rep, path) for col, path in PANEL_COLUMNS},
        "counts": {col: _dig(rep["counts"], path[1:] if path[0] == "axes" else path) for col, path in PANEL_COLUMNS},
        "errors": errors_of(rep),
    }
    return cast(PanelRow, row)  # the columns are PANEL_COLUMNS' labels, the keys PanelRow names


def pool_statistics(common: list[str], matrix: list[list[int]]) -> PoolStatistics:
    """Cronbach's α, item coverage and the corrected item-total correlations over the evaluated models' columns of
    the item × run matrix (replicate 0, common items)."""
    from stats.significance import coverage_histogram, cronbach_alpha, item_total_correlations

    n_models = len(matrix[0]) if matrix else 0
    out: PoolStatistics = {"n_evaluated": n_models}
    if n_models >= 2 and len(common) >= 2:
        out["cronbach_alpha"] = cronbach_alpha(matrix)
        out["coverage"] = coverage_histogram(matrix)
        if n_models >= 3:
            itc = item_total_correlations(matrix)
            out["item_total_correlation"] = {
                i: (None if math.isnan(v) else float(v)) for i, v in zip(common, itc, strict=True)
            }
    return out


def _bigram_panel(tables: Sequence[Table], encoded: Sequence[Encoded]) -> list[PanelBigram]:
    """The bigrams present in at least half of the runs, with their mean Δ-accuracy (each run's own trajectories)."""
    per_run = [ngrams.bigram_delta_accuracy(seqs, t["correct"]) for t, seqs in zip(tables, encoded, strict=True) if t.n]
    return cast("list[PanelBigram]", ngrams.panel_bigrams(per_run))  # stats.ngrams builds the record's keys


def external_correlation(rows: Sequence[PanelRow], external: dict[str, float]) -> ExternalCorrelation:
    """Spearman's ρ between the runs' accuracy and the external scores (the scores of runs not in the panel are
    named, not dropped silently)."""
    from stats.significance import spearman

    pairs = [(r["accuracy"], external[r["run"]]) for r in rows if r["run"] in external and r["accuracy"] is not None]
    names = {r["run"] for r in rows}
    ignored = sorted(n for n in external if n not in names)
    if len(pairs) < 3:
        return {"error": _too_few_external(len(pairs), ignored), "not_in_panel": ignored}
    return _correlation(spearman([p[0] for p in pairs], [p[1] for p in pairs]), ignored)


def _correlation(found: dict[str, Any], ignored: list[str]) -> ExternalCorrelation:
    """`stats.significance.spearman`'s result as the report's record, the ignored score rows last."""
    if "p_method" not in found:  # ρ undefined (a constant side): no p to qualify
        return {"rho": found["rho"], "p": found["p"], "n": found["n"], "not_in_panel": ignored}
    return {
        "rho": found["rho"],
        "p": found["p"],
        "n": found["n"],
        "p_method": found["p_method"],
        "not_in_panel": ignored,
    }


def _too_few_external(n: int, ignored: list[str]) -> str:
    """Why no correlation: fewer than 3 runs with an external score (and how many score rows named none)."""
    return f"need at least 3 runs with external scores, got {n}" + (
        f" ({len(ignored)} score rows name runs not in the panel)" if ignored else ""
    )


def _behaviours(
    store: Store,
    runs: Sequence[RunRow],
    rows: Sequence[PanelRow],
    masks: Sequence[Any],
    tables: Sequence[Table],
    on_common: Sequence[Table],
) -> tuple[list[RunBehaviour], list[fingerprints.RunFingerprint | fingerprints.Excluded]]:
    """Each run's action-based facts (`run_behaviour`) and fingerprint, one run's action lists at a
    time (the panel's largest data), so only what the tables need is kept."""
    signatures, behaviours = [], []
    for run, row, mask, table, kept in zip(runs, rows, masks, tables, on_common, strict=True):
        actions = store.trajectory_columns(run["id"], ("actions",))["actions"]
        signatures.append(fingerprints.run_fingerprint(row, table, actions))
        behaviours.append(run_behaviour(kept, [a for a, keep in zip(actions, mask, strict=True) if keep]))
    return behaviours, signatures


def errors_of(report: RunReport) -> RowErrors:
    """A run's failures beside its Table 2 row: episodes ended in error, episodes with any API error (each as
    [count, trajectories]) and replies cut off by the completion limit with the calls lost in them."""
    counts = report["counts"]["resource"]
    return {
        "error": counts.get("error_rate"),
        "api_error": counts.get("api_error_rate"),
        "cut_off": report.get("cut_off"),
    }


@contextmanager
def _corpora(cache_dir: Any) -> Iterator[Any]:
    """`corpus_of(run)`: the run's dataset opened from the cache (once per dataset), None when it cannot be (no
    cache given, a release directory gone or invalid); every corpus opened is closed at the end."""
    opened: dict[str, Corpus | None] = {}

    def corpus_of(run: RunRow) -> Corpus | None:
        if cache_dir is None:
            return None
        from sandbox.datasets import run_dataset

        key = run_dataset(run)
        if key not in opened:
            from sandbox.datasets import open_dataset
            from sandbox.release import DatasetError

            try:
                opened[key] = open_dataset(key, Path(cache_dir))[0]
            except (DatasetError, OSError):  # gone or invalid: only Table 11 is left out
                opened[key] = None
        return opened[key]

    try:
        yield corpus_of
    finally:
        for corpus in opened.values():
            if corpus is not None:
                corpus.close()


def lineage_order(rows: list[PanelRow]) -> list[LineageGroup]:
    """The rows as Table 2 groups them: by tier (the paper's order, untiered last), then family (the family with
    the best accuracy first, runs without a family last), then accuracy within the family (highest first)."""
    out: list[LineageGroup] = []
    for tier in _tiers_present(rows):
        members = [r for r in rows if tier_of(r) == tier]
        for fam in _families_by_best(members):
            runs = sorted((r for r in members if r["family"] == fam), key=lambda r: (-_accuracy_or_last(r), r["run"]))
            out.append({"tier": tier, "family": fam, "runs": [r["run"] for r in runs]})
    return out


def _accuracy_or_last(row: PanelRow) -> float:
    """A row's accuracy for ordering, -1 (after every measured one) where it has none."""
    return -1.0 if row["accuracy"] is None else row["accuracy"]


def _tiers_present(rows: list[PanelRow]) -> list[str | None]:
    """The tiers the rows have, in the paper's order, then None when some row is untiered."""
    tiers: list[str | None] = [t for t in TIERS if any(r["tier"] == t for r in rows)]
    return tiers + ([None] if any(tier_of(r) is None for r in rows) else [])


def _families_by_best(members: list[PanelRow]) -> list[str | None]:
    """The families of a tier's rows, the one with the best accuracy first, rows without a family last."""

    def best(fam: str | None) -> float:
        return max(_accuracy_or_last(r) for r in members if r["family"] == fam)

    return sorted({r["family"] for r in members}, key=lambda f: (f is None, -best(f), f or ""))


SHADED_COLUMNS = ("Conv st", "Conv mt")  # the conversion cells Table 2 shades where a paired test separates


def tier_leaders(
    rows: list[PanelRow], per_item: dict[str, dict[str, ItemTerms]]
) -> tuple[dict[str, dict[str, list[str]]], dict[str, dict[str, MarkTest]], dict[str, dict[str, list[str]]]]:
    """Per tier with at least two evaluated runs: the leader of each column as it stands (`marked_best` within
    the tier), the test against the tier's runner-up beside it, and the conversion cells shaded: the leader's
    Conv st / Conv mt where the exact McNemar test on the items both recalled separates it from the runner-up
    (p < 0.05, in the leader's direction), as the paper shades its Table 2."""
    leaders: dict[str, dict[str, list[str]]] = {}
    tests: dict[str, dict[str, MarkTest]] = {}
    shaded: dict[str, dict[str, list[str]]] = {}
    for tier in TIERS:
        members = [r for r in rows if r["tier"] == tier]
        if len(members) >= 2:
            leaders[tier], tests[tier] = marked_best(members, per_item)
            shaded[tier] = {
                col: tests[tier][col]["best"]
                for col in SHADED_COLUMNS
                if col in tests[tier] and tests[tier][col]["separated"]
            }
    return leaders, tests, shaded


def per_item_terms(table: Table) -> dict[str, dict[str, tuple[float, float]]]:
    """Per panel column: item id → (numerator, denominator) summed over the item's trajectories (its replicates),
    the per-item values the best-cell tests pair across runs."""
    from stats.bootstrap import by_cluster

    terms = axes.ratio_terms(table)
    keys = [COLUMN_TERMS[c] for c, _ in PANEL_COLUMNS]
    ids = list(dict.fromkeys(table["item_id"].tolist()))
    if not ids:
        return {c: {} for c, _ in PANEL_COLUMNS}
    _, (num, den) = by_cluster(table["item_id"], *_stacked(terms, keys))
    return {
        col: {i: (float(num[r, j]), float(den[r, j])) for r, i in enumerate(ids)}
        for j, (col, _) in enumerate(PANEL_COLUMNS)
    }


def marked_best(
    rows: list[PanelRow], per_item: dict[str, dict[str, ItemTerms]], alpha: float = 0.05
) -> tuple[dict[str, list[str]], dict[str, MarkTest]]:
    """The best cell of each column among `rows` (the evaluated models) as it stands — the highest value, or the
    lowest for resources, every run sharing it marked; none where
    fewer than two values differ — and beside it the paired test against the runner-up
    (see PANEL_LEGEND["best"]): McNemar's exact test when each item is one 0/1 outcome, otherwise the exact sign
    test on the per-item values. `separated` says whether that test separates them (p < `alpha`, in the best's
    direction); the mark does not depend on it. Returns (column → marked runs, column → the test)."""
    best: dict[str, list[str]] = {}
    tests: dict[str, MarkTest] = {}
    for col, _ in PANEL_COLUMNS:
        ranks = _best_and_runners(rows, col)
        if ranks is not None:
            best[col] = ranks[0]
            tests[col] = _mark_test(col, *ranks, per_item, alpha)
    return best, tests


def _mark_test(
    col: str, top: list[str], runners: list[str], per_item: dict[str, dict[str, ItemTerms]], alpha: float
) -> MarkTest:
    """The test beside a Table 2 mark: against the runner-up(s), the weakest of the tests; none for a tie."""
    if len(top) > 1:
        return {"best": top, "runner_up": runners, "separated": False, "p": None, "reason": "a tie at the top"}
    worst, separated = _weakest_test(col, top[0], runners, per_item, alpha)
    return {
        "best": top,
        "runner_up": runners,
        "separated": separated,
        "test": worst["test"],
        "n": worst["n"],
        "best_better": worst["best_better"],
        "runner_up_better": worst["runner_up_better"],
        "p": worst["p"],
    }


def _weakest_test(
    col: str, top: str, runners: list[str], per_item: dict[str, dict[str, ItemTerms]], alpha: float
) -> tuple[ColumnTest, bool]:
    """The best run's paired test against each runner-up: the one with the highest p, and whether every one
    separates them (p < `alpha`, the items agreeing in direction with the cells)."""
    found = [paired_column_test(col, per_item[top][col], per_item[r][col]) for r in runners]
    return max(found, key=lambda t: t["p"]), all(t["p"] < alpha and t["agrees"] for t in found)


def significant_best(
    rows: Sequence[BoardRow],
    per_item: dict[str, dict[str, ItemTerms]],
    alpha: float = 0.05,
) -> tuple[dict[str, list[str]], dict[str, BoardTest]]:
    """The best cell per column, kept only where it beats the runner-up significantly: the leaderboard's gated mark
    (the panel marks as the paper does, `marked_best`).

    Candidates are the rows with a value (full-tool runs only in the tool-use and resource columns); the
    runner-up is the next value (every run sharing it must be beaten).
    The test pairs the two runs' per-item values (numerator ÷ denominator over the item's trajectories) on the
    items both have a value for: McNemar's exact test when each is one 0/1 outcome, otherwise the exact sign
    test on the per-item values (the same test, generalised). Marked when p < `alpha` and the items agree in
    direction with the cells. Returns (column → marked runs, column → the test)."""
    best: dict[str, list[str]] = {}
    tests: dict[str, BoardTest] = {}
    for col, _ in PANEL_COLUMNS:
        ranks = _best_and_runners(rows, col)
        if ranks is None:
            continue
        tests[col] = _best_test(col, *ranks, per_item, alpha)
        if tests[col]["marked"]:
            best[col] = ranks[0]
    return best, tests


def _best_and_runners(rows: Sequence[PanelRow | BoardRow], col: str) -> tuple[list[str], list[str]] | None:
    """The runs holding a column's best value and those holding the next one (full-tool runs only in the tool-use
    and resource columns); None when fewer than two values compete, or the column has no direction (`UNDIRECTED`:
    calls per turn, which the paper's Table 2 marks neither way)."""
    if col in UNDIRECTED:
        return None
    pool = [(r["run"], value) for r in rows if (value := _competing_cell(r, col)) is not None]
    values = sorted({value for _, value in pool}, reverse=col not in LOWER_IS_BETTER)
    if len(values) < 2:
        return None
    return [run for run, v in pool if v == values[0]], [run for run, v in pool if v == values[1]]


def _competing_cell(row: PanelRow | BoardRow, col: str) -> float | None:
    """A row's cell where it competes for a column's best (None: it does not): measured, and a full-tool run's in
    the tool-use and resource columns."""
    return cell(row, col) if col not in RESOURCE_COLUMNS or row["ablation"] == "full" else None


def _best_test(
    col: str,
    top: list[str],
    runners: list[str],
    per_item: dict[str, dict[str, ItemTerms]],
    alpha: float,
) -> BoardTest:
    """The test beside a column's best: marked when the one best run beats every runner-up (p < `alpha`, the items
    agreeing in direction), with the weakest of those tests; unmarked when several runs share the best value."""
    if len(top) > 1:
        return {
            "best": top,
            "runner_up": runners,
            "marked": False,
            "p": None,
            "reason": "several runs share the best value",
        }
    worst, marked = _weakest_test(col, top[0], runners, per_item, alpha)
    return {
        "best": top,
        "runner_up": runners,
        "marked": marked,
        "test": worst["test"],
        "n": worst["n"],
        "best_better": worst["best_better"],
        "runner_up_better": worst["runner_up_better"],
        "p": worst["p"],
    }


def ablation_lift(reports: list[RunReport]) -> list[AblationLift]:
    """Full-tool minus zero-tool (closed-book) accuracy for runs of the same agent and model on the same data."""
    out: list[AblationLift] = []
    for full in reports:
        if full["ablation"] != "full":
            continue
        for closed in reports:
            if (
                closed["ablation"] == "closed-book"
                and closed["agent"] == full["agent"]
                and closed["model"] == full["model"]
                and closed["dataset"] == full["dataset"]
            ):
                lift = (
                    None
                    if full["accuracy"] is None or closed["accuracy"] is None
                    else full["accuracy"] - closed["accuracy"]
                )
                out.append({"full": full["run"], "closed_book": closed["run"], "lift": lift})
    return out


def _stacked(terms: dict[str, tuple[Any, Any]], keys: list[str]) -> tuple[Any, Any]:
    """(numerators, denominators) as (items × statistics) arrays, columns in `keys` order."""
    return (
        np.column_stack([terms[k][0] for k in keys]).astype(float),
        np.column_stack([terms[k][1] for k in keys]).astype(float),
    )
