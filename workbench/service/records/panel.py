"""The panel report's typed records: what `workbench.service.reports.panel_report` returns to the views (the CLI's
`report --panel`, the Panel screen, the exports), field by field.

They are TypedDicts, so the report stays the JSON document `--format json` prints (one text for every front end)
while mypy checks every field the service writes and every field a view reads. A field a panel may lack (α with
fewer than two evaluated models, the external correlation without `--external`) is NotRequired.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from workbench.service.records.leaderboard import BoardRow
from workbench.service.records.ratio import Pair
from workbench.service.records.report import CutOff
from workbench.service.records.sequential import RegistryTable

if TYPE_CHECKING:  # stats' record types by name only (no numpy at import)
    from stats.significance import CoverageHistogram, RunSpread

Ablation = Literal["full", "closed-book", "no-search", "gold-given"]
Tier = Literal["closed-frontier", "open-frontier", "compute-efficient"]
Cell = float | None  # a Table 2 cell: None where not measured (a scripted agent's tokens), never 0


class RowErrors(TypedDict):
    """A run's failures beside its Table 2 row: episodes ended in error and episodes with any API error (each as
    [count, trajectories]), replies cut off by the completion limit with the calls lost in them."""

    error: Pair | None
    api_error: Pair | None
    cut_off: CutOff


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
        "counts": dict[str, Pair | None],  # column label → the cell's [numerator, denominator]
        "errors": RowErrors,
    },
)


def cell(row: PanelRow | BoardRow, column: str) -> Cell:
    """A panel or leaderboard row's Table 2 cell by its column's label (`columns.PANEL_COLUMNS`): the columns are
    read in loops over their labels, which a TypedDict's literal keys cannot name (`get` by a label gives an
    `object`, narrowed here to the number a cell holds). The panel's service and the views both read cells so, hence
    beside the record rather than with the wording."""
    value = row.get(column)
    return value if isinstance(value, int | float) else None


class ColumnGroup(TypedDict):
    """One of Table 2's column groups (`columns.PANEL_GROUPS`) and its column labels."""

    group: str
    columns: list[str]


class ColumnTest(TypedDict):
    """The paired test of one column between two runs (`panel_tables.paired_column_test`): McNemar's exact test
    or the sign test on per-item values, the items each side is better on, and whether the best is ahead."""

    test: str
    n: int
    best_better: int
    runner_up_better: int
    p: float
    agrees: bool


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
    """A run's Sig. counts over the pairwise accuracy tests (ours, not the paper's Table 13): runs it beats / runs
    that beat it (Holm), and unadjusted."""

    run: str
    accuracy: Cell
    wins: int
    losses: int
    wins_raw: int
    losses_raw: int


class AccuracyPair(TypedDict):
    """One pair of evaluated runs tested on accuracy (`first` is the one Table 2 lists first), Holm-adjusted."""

    first: str
    second: str
    test: str
    n: int
    best_better: int
    runner_up_better: int
    p: float
    p_holm: float | None


class PairwiseAccuracy(TypedDict):
    pairs: list[AccuracyPair]
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
    moved: list[MovedAxis]


class MovedAxis(TypedDict):
    """A Table 2 axis that moved between two generations (newer − older), by 5 points or more."""

    axis: str
    delta: float


class WrongReadEvents(TypedDict):
    """A run's wrong-paper read events and each (overlapping) category's count and share of them
    (`stats.panel_measures.table3`)."""

    n_events: int
    counts: dict[str, int]
    shares: dict[str, float | None]


class Table3Entry(WrongReadEvents):
    run: str


Table4Step = TypedDict("Table4Step", {"from": str, "to": str, "delta": float | None, "p": float | None})


class Table4Chain(TypedDict):
    """One agent and model's closed-book → no-search → full chain on the items all three answered."""

    agent: str
    model: str | None
    runs: dict[str, str]  # setting → run
    n: int
    accuracy: dict[str, float | None]  # setting → accuracy
    steps: list[Table4Step]


class Table9Group(TypedDict):
    """Imm / Thnk / Read after the gold in one group (ST, or MT reading both golds): over ours and the paper's
    denominator, with the counts."""

    n_ours: int
    n_paper: int
    left_out: dict[str, int]
    ours: dict[str, float | None]
    paper: dict[str, float | None]
    counts: dict[str, int]


class Table9MtFail(TypedDict):
    """0-Gold / Prem / Explored / Stayed over the MT trajectories whose paper recall failed."""

    n: int
    n_mt: int
    counts: dict[str, int]
    shares: dict[str, float | None]


class Table9Entry(TypedDict):
    run: str
    st: Table9Group
    mt_both: Table9Group
    mt_fail: Table9MtFail


class Table10Cell(TypedDict):
    """One type × depth cell: right of n, the accuracy and its Wilson 95 % half-width (clustered by item)."""

    right: int
    n: int
    accuracy: float | None
    half_width: float | None


class FixedDelta(TypedDict):
    """Table 10's Δ = easiest − hardest cell and Fisher's exact p, on the trajectories or replicate 0 (`p_basis`)."""

    easiest: str
    hardest: str
    delta: float
    p: float
    p_basis: str


class Table10Entry(TypedDict):
    run: str
    cells: dict[str, Table10Cell]
    delta: FixedDelta | None


class ContactGroup(TypedDict):
    """A Table 11 group: its trajectories, their share and conversion, the same models' closed-book accuracy."""

    n: int
    share: float | None
    conversion: float | None
    closed_book: float | None
    closed_book_n: int


class Table11(TypedDict):
    dataset: str
    n: int
    groups: dict[str, ContactGroup]


class Table15Entry(TypedDict):
    """A run's trajectories without a parseable answer letter, in all and by what ended them."""

    run: str
    n: int
    na: int
    na_share: float | None
    by_cap: dict[str, int]
    by_cap_share: dict[str, float | None]


class Spread(TypedDict):
    """Mean, population SD and range of one metric's values across replicates or runs (`n` values)."""

    mean: float
    std: float
    range: float
    n: int


class TauPair(TypedDict):
    """Kendall's τ-b between the runs' values at two replicates (or two stored runs), over `n_runs` runs."""

    replicates: list[int]
    n_runs: int
    tau: float | None


class RankStability(TypedDict):
    """Whether the runs' ordering on a metric survives across replicates (`stats.panel_measures.rank_stability`):
    τ-b at each pair, their mean and minimum, preserved when every τ is 1."""

    pairs: list[TauPair]
    mean_tau: float | None
    min_tau: float | None
    preserved: bool


class Table17(TypedDict):
    runs: dict[str, dict[str, Spread | None]]  # run → metric → its spread over the replicates
    rank_stability: dict[str, RankStability | None]  # by metric


class Table17Runs(TypedDict):
    models: dict[str, dict[str, Spread | None]]  # model → metric → its spread over the runs
    runs: dict[str, list[str]]  # model → its runs
    rank_stability: dict[str, RankStability | None]  # by metric


class StratumCell(TypedDict):
    right: int
    n: int
    accuracy: float


class Table19Tier(TypedDict):
    """A tier's closed-book runs pooled: accuracy per stratum (venue, seed year, citation quartile) and value."""

    tier: str | None
    runs: list[str]
    strata: dict[str, dict[str, StratumCell]]


class EarlySubmitRun(TypedDict):
    run: str
    delta: float | None
    p: float
    share: Pair


class EarlySubmission(TypedDict):
    """Early submission across the panel: each run's Δ, and over the runs where both groups exist the mean Δ and
    how many are significant."""

    runs: list[EarlySubmitRun]
    n_tested: int
    n_significant: int
    mean_delta: float | None


class ItcSummary(TypedDict):
    """The corrected item-total correlations of the common items summarised."""

    n: int
    median: float
    q1: float
    q3: float
    share_above_0_2: float
    share_at_most_0: float


class Figure5Point(TypedDict):
    run: str
    tier: str | None
    family: str | None
    accuracy: Cell
    paper_recall: float | None


class Figure4(TypedDict):
    """Items by how many evaluated runs got them right, bucketed (`edges`: each bucket's counts of runs)."""

    n_runs: int
    edges: dict[str, list[int]]
    type_depth: dict[str, dict[str, int]]  # cell → bucket → items
    consensus_tier: dict[str, dict[str, int]]  # tier → bucket → items


class AblationLift(TypedDict):
    """Full-tool minus closed-book accuracy of one agent and model on one dataset."""

    full: str
    closed_book: str
    lift: float | None


class PanelTables(TypedDict, total=False):
    """The paper's further tables and figures (AgentHop §4, App. E), each described in the report's legend."""

    table3: list[Table3Entry]
    table4: list[Table4Chain]
    table9: list[Table9Entry]
    table10: list[Table10Entry]
    table11: Table11 | None
    table12: Table12
    table13: list[PanelBigram]  # the paper's Table 13: bigram Δ, Sig. count, models (evaluated models)
    pairwise_accuracy: PairwiseAccuracy
    table14: list[Table14Tier]
    table15: list[Table15Entry]
    table17: Table17
    table17_runs: Table17Runs
    table19: list[Table19Tier]
    early_submit: EarlySubmission
    item_total_summary: ItcSummary | None
    figure2: list[GenerationGap]
    figure4: Figure4 | None
    figure5: list[Figure5Point]


class PanelBigram(TypedDict):
    """A bigram present in at least half of the runs: its mean Δ accuracy over the runs where Δ is defined
    (`stats.ngrams.panel_bigrams`)."""

    bigram: list[str]
    mean_delta: float | None
    n_runs: int
    n_present: int
    n_positive: int
    n_significant: int


class ExternalCorrelation(TypedDict):
    """Spearman's ρ between the runs' accuracy and external scores (`stats.significance.spearman`; `p_method` where
    ρ is defined), or why there is none (`error`), and the score rows naming runs not in the panel."""

    rho: NotRequired[float | None]
    p: NotRequired[float | None]
    n: NotRequired[int]
    p_method: NotRequired[str]
    error: NotRequired[str]
    not_in_panel: list[str]


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
    groups: list[ColumnGroup]
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
    bigram_panel: list[PanelBigram]
    replicates: dict[str, RunSpread | None]
    ablation_lift: list[AblationLift]
    external: NotRequired[ExternalCorrelation]
    fingerprints: dict[str, Any]
    tables: PanelTables
    legend: dict[str, str]
    registry: NotRequired[RegistryTable]
