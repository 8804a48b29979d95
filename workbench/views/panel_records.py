"""The panel report's typed records: what `workbench.service.reports.panel_report` hands the views (the CLI's
`report --panel`, the Panel screen, the exports), field by field. They live with the views (as the Table 2 columns
do, `workbench.views.columns`) so the service that fills them and the views that read them share one definition.

They are TypedDicts, so the report stays the JSON document `--format json` prints (one text for every front end)
while mypy checks every field the service writes and every field a view reads. A field a panel may lack (α with
fewer than two evaluated models, the external correlation without `--external`) is NotRequired.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, cast

from stats.significance import CoverageHistogram, RunSpread
from workbench.views.sequential_records import RegistryTable

Ablation = Literal["full", "closed-book", "no-search", "gold-given"]
Tier = Literal["closed-frontier", "open-frontier", "compute-efficient"]
Cell = float | None  # a Table 2 cell: None where not measured (a scripted agent's tokens), never 0

PanelRow = TypedDict(
    "PanelRow",
    {
        "run": str,
        "agent": str,
        "model": str | None,
        "ablation": Ablation,
        "family": str | None,
        "tier": str | None,
        "seed": int,
        "dataset": str | None,
        "n": int,
        "n_all": int,
        "accuracy": Cell,
        "PR st": Cell,
        "PR mt": Cell,
        "SR st": Cell,
        "SR mt": Cell,
        "Conv st": Cell,
        "Conv mt": Cell,
        "calls/turn": Cell,
        "tokens": Cell,
        "turns": Cell,
        "points": Cell,
        "MaxTok": Cell,
        "MaxTurn": Cell,
        "MaxBudget": Cell,
        "counts": dict[str, Any],
        "errors": dict[str, Any],
    },
)


def cell(row: PanelRow, column: str) -> Cell:
    """A row's Table 2 cell by its column's label (`workbench.views.columns.PANEL_COLUMNS`): the columns are
    read in loops over their labels, which a TypedDict's literal keys cannot name."""
    value: Cell = cast(dict[str, Any], row)[column]
    return value


class MarkTest(TypedDict):
    """The paired test beside a `*` / `†` mark: the best run(s), the runner-up(s), and whether the test separates
    them (the mark does not depend on it)."""

    best: list[str]
    runner_up: list[str]
    separated: bool
    p: float | None
    test: NotRequired[str]
    n: NotRequired[int]
    best_better: NotRequired[int]
    runner_up_better: NotRequired[int]
    reason: NotRequired[str]


class LineageGroup(TypedDict):
    """One group of Table 2's rows: a tier and family, its runs in accuracy order."""

    tier: str | None
    family: str | None
    runs: list[str]


class Table12Step(TypedDict):
    """One step of Table 12's walk: the higher and the lower MT conversion, their paired test."""

    higher: str
    lower: str
    conversion: list[Cell]
    separated: bool
    test: str
    n: int
    best_better: int
    runner_up_better: int
    p: float


class Table12(TypedDict):
    ranked: list[str]
    steps: list[Table12Step]


class SigCounts(TypedDict):
    """A run's Table 13 counts: runs it beats / runs that beat it (Holm), and unadjusted."""

    run: str
    accuracy: Cell
    wins: int
    losses: int
    wins_raw: int
    losses_raw: int


class Table13(TypedDict):
    pairs: list[dict[str, Any]]
    sig: list[SigCounts]


class TrigramConcentration(TypedDict):
    run: str
    trigram: list[str] | None
    occurrences: int
    total: int
    concentration: float | None


class Table14Tier(TypedDict):
    tier: str | None
    runs: list[TrigramConcentration]
    mean_concentration: float | None


class GenerationGap(TypedDict):
    """One Figure 2 bar: the newer run (`run`) against the older, on one basis."""

    run: str
    family: str
    older: str
    newer: str
    generations: NotRequired[list[str]]
    delta: float | None
    p: float | None
    n: int
    moved: list[dict[str, Any]]


class PanelTables(TypedDict, total=False):
    """The paper's further tables and figures (AgentHop §4, App. E), each described in the report's legend."""

    table3: list[dict[str, Any]]
    table4: list[dict[str, Any]]
    table9: list[dict[str, Any]]
    table10: list[dict[str, Any]]
    table11: dict[str, Any] | None
    table12: Table12
    table13: Table13
    table14: list[Table14Tier]
    table15: list[dict[str, Any]]
    table17: dict[str, Any]
    table17_runs: dict[str, Any]
    table19: list[dict[str, Any]]
    early_submit: dict[str, Any]
    item_total_summary: dict[str, Any] | None
    figure2: list[GenerationGap]
    figure4: dict[str, Any] | None
    figure5: list[dict[str, Any]]


class PoolStatistics(TypedDict):
    """α, coverage and the item-total correlations over the evaluated models (absent when too few)."""

    n_evaluated: int
    cronbach_alpha: NotRequired[float | None]
    coverage: NotRequired[CoverageHistogram]
    item_total_correlation: NotRequired[dict[str, float | None]]


class PanelReport(TypedDict):
    """A panel: Table 2's rows and marks, the panel statistics, the fingerprints, every further table, the
    legend. `registry` is added by the general-agent setting's report when runs of that setting are in it."""

    warnings: list[str]
    groups: list[dict[str, Any]]
    rows: list[PanelRow]
    evaluated: list[str]
    best: dict[str, list[str]]
    best_tests: dict[str, MarkTest]
    n_common_items: int
    lineage: list[LineageGroup]
    tier_best: dict[str, dict[str, list[str]]]
    tier_best_tests: dict[str, dict[str, MarkTest]]
    tier_shaded: dict[str, dict[str, list[str]]]
    n_evaluated: int
    cronbach_alpha: NotRequired[float | None]
    coverage: NotRequired[CoverageHistogram]
    item_total_correlation: NotRequired[dict[str, float | None]]
    bigram_panel: list[dict[str, Any]]
    replicates: dict[str, RunSpread | None]
    ablation_lift: list[dict[str, Any]]
    external: NotRequired[dict[str, Any]]
    fingerprints: dict[str, Any]
    tables: PanelTables
    legend: dict[str, str]
    registry: NotRequired[RegistryTable]
