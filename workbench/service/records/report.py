"""A run's report (`report`, the diagnostics tab): its four axes, splits, counts, intervals, analytics, hops and
transitions, as `workbench.service.reports.run` fills them and `workbench.views.report` words them.

TypedDicts: the JSON object is the contract. Each ratio appears twice: its value (`axes`, `splits`, …; None where
its denominator is 0) and its [numerator, denominator] under `counts`; the generic records serve both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, NotRequired, TypedDict, TypeVar

from sandbox.records import ErrorKind, Termination
from workbench.service.records.general import GeneralBlock
from workbench.service.records.ratio import Pair

if TYPE_CHECKING:  # stats' record types by name only: importing stats at run time would load numpy
    from stats.axes import Attribution
    from stats.ngrams import BigramDelta, TopTrigram, TransitionMatrix
    from stats.stopping import (
        AfterEvidence,
        AfterWrongRead,
        EarlySubmit,
        MtFail,
        NonSubmission,
    )

V = TypeVar("V")


class ByType(TypedDict, Generic[V]):
    """One measure over the single-paper (ST), multi-paper (MT) and all trajectories."""

    st: V
    mt: V
    all: V


class SearchAxis(TypedDict, Generic[V]):
    paper_recall: ByType[V]
    section_recall: ByType[V]
    paper_recall_any: ByType[V]
    section_recall_any: ByType[V]
    section_recall_loose: ByType[V]


class SynthesisAxis(TypedDict, Generic[V]):
    conversion: ByType[V]
    conversion_section: ByType[V]


class ToolUseAxis(TypedDict, Generic[V]):
    calls_per_turn: V


class ResourceAxis(TypedDict, Generic[V]):
    avg_tokens: V
    avg_turns: V
    avg_points: V
    max_tokens_rate: V
    max_turns_rate: V
    max_budget_rate: V
    error_rate: V
    api_error_rate: V
    non_submission_rate: V
    avg_prompt_tokens: V
    cache_hit_rate: V


class Axes(TypedDict, Generic[V]):
    """The four axes (`stats.axes.four_axes` less accuracy)."""

    search: SearchAxis[V]
    synthesis: SynthesisAxis[V]
    tool_use: ToolUseAxis[V]
    resource: ResourceAxis[V]


class Splits(TypedDict, Generic[V]):
    """Accuracy by question type × depth (`st_d1` …), reasoning type, consensus tier and venue ("?": missing)."""

    type_depth: dict[str, V]
    reasoning_type: dict[str, V]
    consensus_tier: dict[str, V]
    venue: dict[str, V]


class ReportCounts(Axes[Pair]):
    """Every ratio of the report as [numerator, denominator]."""

    accuracy: Pair
    accuracy_by_type: ByType[Pair]
    splits: Splits[Pair]
    section_recall_ceiling: ByType[Pair]


class SectionRecallCeiling(TypedDict):
    """Trajectories whose item can never reach section recall (`unknown`: stored before that was recorded), and
    the highest section recall attainable by question type."""

    unreachable: int
    unknown: int
    st: float | None
    mt: float | None
    all: float | None


class CutOff(TypedDict):
    """Replies the completion limit cut off, the calls lost inside them, the trajectories with such a reply."""

    turns: int
    calls_lost: int
    trajectories: int


class LabelResolution(TypedDict):
    """The label rules' version a run's section recall was computed under, and the current one."""

    version: str
    current: str


class SectionLabels(LabelResolution):
    """The labels behind section recall (`unresolved`, `unresolved_direct`, `by_method`: None without the corpus)."""

    capped_items: list[str]
    unresolved: int | None
    unresolved_direct: int | None
    by_method: dict[str, int] | None


class PositionBias(TypedDict):
    """Letters predicted, letters of the gold answers, and accuracy per gold letter as [correct, items]."""

    predicted_distribution: dict[str, int]
    correct_position_distribution: dict[str, int]
    accuracy_when_correct_at: dict[str, Pair]


class Stopping(TypedDict):
    """Stopping behaviour (`stats.stopping.stopping_behaviour`; docs/metrics.md)."""

    mt_fail: MtFail
    after_evidence: AfterEvidence
    after_wrong_read: AfterWrongRead
    early_submit: EarlySubmit
    non_submission: NonSubmission


class Analytics(TypedDict):
    """A run's trajectory analytics: bigram Δ accuracy, the top trigram, transitions, stopping behaviour."""

    bigrams: list[BigramDelta]
    significant_bigrams: list[BigramDelta]
    top_trigram: TopTrigram | None
    transitions: TransitionMatrix
    stopping: Stopping


class Interval(TypedDict):
    """A 95% interval of one ratio: Wilson (proportions: with its counts and design) or a bootstrap clustered by
    item (means, ratios of sums), with its own n (items) and n_trajectories; `no_variation` when every resample
    gave the same value."""

    estimate: float
    low: float
    high: float
    level: float
    method: str
    successes: NotRequired[float]
    trials: NotRequired[float]
    items: NotRequired[int]
    n_eff: NotRequired[float]
    design_effect: NotRequired[float]
    n: int
    n_trajectories: int
    n_boot: int | None
    seed: int | None
    no_variation: bool


class GoldSides(TypedDict, Generic[V]):
    """A measure of the reads of gold papers and of the others."""

    gold: V
    non_gold: V


class HopCounts(TypedDict):
    mean_hop: GoldSides[Pair]  # [hops summed, reachable reads]
    beyond_depth: Pair


class ReadHops(TypedDict):
    """A run's delivered reads by hop from the seed (`reports.hops.read_hops`): by bucket (0, 1, 2, 3+,
    unreachable), gold and non-gold reads' mean hop, the share beyond the item's depth; all None (with `measured`
    false) for a run whose hops were never measured."""

    measured: bool
    reads: int
    by_hop: dict[str, int] | None
    mean_hop: GoldSides[float | None] | None
    beyond_depth: float | None
    counts: HopCounts | None


class RunReport(TypedDict):
    """One run's report (`run_report`); the full diagnostics (`diagnostics`) add the NotRequired blocks, the TUI's
    tab (`run_diagnostics`) `read_hops`, and a run in the general-agent setting `general_setting`."""

    run: str
    agent: str
    model: str | None
    dataset: str
    dataset_repo: str | None  # the Hub repository and commit (None: not from the Hub)
    dataset_revision: str | None
    ablation: str
    status: str
    n: int
    planned: int
    correct: int
    accuracy: float | None
    accuracy_by_type: ByType[float | None]
    axes: Axes[float | None]
    counts: ReportCounts
    terminations: dict[Termination, int]
    error_kinds: dict[ErrorKind, int]
    splits: Splits[float | None]
    section_recall_ceiling: SectionRecallCeiling
    attribution: Attribution
    cut_off: CutOff
    cost_usd: float | None
    priced: bool
    label_resolution: LabelResolution
    position_bias: NotRequired[PositionBias]
    analytics: NotRequired[Analytics]
    intervals: NotRequired[dict[str, Interval | None]]  # keyed as `stats.axes.ratio_terms`
    section_labels: NotRequired[SectionLabels]
    read_hops: NotRequired[ReadHops]
    reference: NotRequired[dict[str, Any]]  # the reference evaluator's summary.json, as it wrote it (any JSON)
    general_setting: NotRequired[GeneralBlock]
    legend: NotRequired[dict[str, str]]


class TransitionLayout(TypedDict):
    """The transition matrix as the heat maps draw it: tool names, counts, row shares, trajectories."""

    names: list[str]
    counts: list[list[int]]
    rates: list[list[float]]
    n: int


class RunTransitions(TransitionLayout):
    """`transition_report`: a run's name and its transition layout."""

    run: str
