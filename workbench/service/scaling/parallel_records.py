"""What the application layer returns for a parallel study, sampled here or imported from a scores file: typed
records, and the JSON derived from them (`ParallelStudy.to_json`, the shape `scale parallel --format json` prints,
the TUI exports and the views read)."""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.service.records.parallel import (
    GAP_KEYS,
    STRATEGY_KEYS,
    CostMode,
    GapKeys,
    GapsJson,
    JudgeJson,
    JudgeTrials,
    KRowJson,
    Origin,
    ParallelReport,
    ReadingJson,
    ReadingKind,
    Strategy,
    StrategyValuesJson,
    StudyRowJson,
    TieRule,
    Verdicts,
)

Interval = tuple[float, float]


@dataclass(frozen=True)
class MeanEstimate:
    """A mean over items with its 95% bootstrap interval (None with fewer than two items); `no_variation` when
    every resample gave the same value."""

    mean: float
    ci: Interval | None = None
    no_variation: bool = False


@dataclass(frozen=True)
class Gap:
    """pass@k − a strategy at k: its paired interval, relative gap (gap / pass@k) and selection efficiency
    ((strategy − pass@1)/(pass@k − pass@1)), and what committing at k costs."""

    gap: float
    ci: Interval | None
    no_variation: bool
    relative_gap: float | None
    efficiency: float | None
    cost_usd: float | None = None
    tokens: float | None = None  # None: the samples' tokens were not measured (never 0)
    accuracy_per_usd: float | None = None
    accuracy_per_million_tokens: float | None = None


@dataclass(frozen=True)
class KRow:
    """One k of our strategies (every strategy averaged over the k-subsets of the K samples). Two records with its
    JSON (`KRowJson`) because the service keeps each number with its interval while the JSON is flat, one key each."""

    k: int
    n: int
    subsets: int
    subsets_all: bool
    sampling_cost_usd: float | None
    sampling_tokens: float | None  # None: not measured (a scripted agent, a scores file), never 0
    values: dict[Strategy, MeanEstimate]
    gaps: dict[Strategy, Gap]
    accepted_coverage: float | None = None
    self_choice: float | None = None

    def to_json(self) -> KRowJson:
        """Flat, one key per number (`pass_at_k`, `pass_at_k_ci`, `gap_pointwise`, …), as the views and CSV read."""
        values = StrategyValuesJson(pass_at_k=self.values["pass_at_k"].mean)
        for name, value in self.values.items():
            keys = STRATEGY_KEYS[name]
            values[keys.value] = value.mean
            if value.ci is not None:
                values[keys.ci] = list(value.ci)
                values[keys.no_variation] = value.no_variation
        gaps = GapsJson()
        for name, gap in self.gaps.items():
            _put_gap(gaps, GAP_KEYS[name], gap)
        row: KRowJson = {
            "k": self.k,
            "n": self.n,
            "blocks": self.subsets,  # `blocks`: the k-subsets
            **values,
            "sampling_cost_usd": self.sampling_cost_usd,
            "sampling_tokens": self.sampling_tokens,
            **gaps,
            "subsets": self.subsets,
            "subsets_all": self.subsets_all,
        }
        if self.accepted_coverage is not None:
            row["accepted_coverage"] = self.accepted_coverage  # the study's `self_choice_best@k`: not a selection
            row["self_choice"] = self.self_choice
        return row


def _put_gap(row: GapsJson, keys: GapKeys, gap: Gap) -> None:
    """A committing strategy's gap, its interval and what committing to it costs, under its keys in `row`."""
    row[keys.gap] = gap.gap
    row[keys.ci] = list(gap.ci) if gap.ci is not None else None
    row[keys.no_variation] = gap.no_variation
    row[keys.relative_gap] = gap.relative_gap
    row[keys.efficiency] = gap.efficiency
    row[keys.cost_usd], row[keys.tokens] = gap.cost_usd, gap.tokens
    row[keys.accuracy_per_usd] = gap.accuracy_per_usd
    row[keys.accuracy_per_million_tokens] = gap.accuracy_per_million_tokens


@dataclass(frozen=True)
class Reading:
    """One of the study's readings at k, with its gap to the study's pass@k (best of the first k) on the same items.

    `copies_pass1`: at k = 1 the study's table prints pass@1 in its Majority, Self-Choice and Pairwise columns (no
    judge involved); the value is then that copy. `n` is the items the reading covers (the released bump sort
    leaves out tasks missing a sample), the gap is over those items. Two records with its JSON (`ReadingJson`) because
    the JSON is flat, one key per number, and names the reading.
    """

    kind: ReadingKind
    judge: str | None
    value: MeanEstimate
    gap: Gap
    n: int
    copies_pass1: bool = False

    @property
    def name(self) -> str:
        return self.kind if self.judge is None else f"{self.kind}:{self.judge}"

    def to_json(self) -> ReadingJson:
        return {
            "reading": self.name,
            "kind": self.kind,
            "judge": self.judge,
            "n": self.n,
            "value": self.value.mean,
            "value_ci": list(self.value.ci) if self.value.ci else None,
            "gap": self.gap.gap,
            "gap_ci": list(self.gap.ci) if self.gap.ci else None,
            "gap_ci_no_variation": self.gap.no_variation,
            "relative_gap": self.gap.relative_gap,
            "efficiency": self.gap.efficiency,
            "copies_pass1": self.copies_pass1,
        }


@dataclass(frozen=True)
class StudyRow:
    """The study's table at one k: its pass@k (best of the first k samples, in their order) and its readings. Two
    records with its JSON (`StudyRowJson`) because the JSON is flat, one key per number."""

    k: int
    n: int
    pass_at_k: MeanEstimate
    readings: list[Reading]

    def to_json(self) -> StudyRowJson:
        return {
            "k": self.k,
            "n": self.n,
            "pass_at_k": self.pass_at_k.mean,
            "pass_at_k_ci": list(self.pass_at_k.ci) if self.pass_at_k.ci else None,
            "readings": [r.to_json() for r in self.readings],
        }


@dataclass(frozen=True)
class Costs:
    """Sampling and judging totals (None: unpriced or unknown)."""

    sampling_usd: float | None = None
    sampling_tokens: float | None = None
    judge_usd: float | None = None
    judge_tokens: int | None = None
    # under the study's cost rule: the judge's verdicts stored without token buckets, kept at their stored cost
    # (None: cache-aware, or an offline judge)
    judge_unrepriced: int | None = None


@dataclass(frozen=True)
class ParallelStudy:
    """A parallel study's numbers: our strategies per k (the default), the study's readings per k beside them, the
    judges measured against the truth, and the study's facts (items, K, nulls, where verdicts came from)."""

    name: str
    origin: Origin
    k_max: int
    items: int
    per_k: list[KRow]
    study: list[StudyRow]
    tie_rule: str
    cost_rule: str
    items_incomplete: int = 0
    measured: bool = False
    ks_unavailable: list[int] = field(default_factory=list)
    judge: str | None = None
    verdicts: Verdicts | None = None
    verdicts_missing: int | None = None
    majority_rule: TieRule | None = None
    pairwise_orders: int | None = None
    cost_mode: CostMode = "cache-aware"
    judges: list[JudgeJson] = field(default_factory=list)
    judge_trials: JudgeTrials | None = None
    costs: Costs = field(default_factory=Costs)
    source: str | None = None  # imported: the file read
    null_scores: int = 0  # imported: null scores, counted 0 as the study counts them
    tasks: str | None = None  # imported through `--tasks`: the subset of the file's tasks read (its name or file)
    success_threshold: float | None = None  # imported: a score at or above it is a success
    study_note: str = ""

    def to_json(self) -> ParallelReport:
        return {
            "run": self.name,
            "origin": self.origin,
            "source": self.source,
            "tasks": self.tasks,
            "k_max": self.k_max,
            "items": self.items,
            "items_incomplete": self.items_incomplete,
            "measured": self.measured,
            "ks_unavailable": self.ks_unavailable,
            "null_scores": self.null_scores,
            "success_threshold": self.success_threshold,
            "judge": self.judge,
            "verdicts": self.verdicts,
            "verdicts_missing": self.verdicts_missing,
            "tie_rule": self.tie_rule,
            "majority_rule": self.majority_rule,
            "pairwise_orders": self.pairwise_orders,
            "cost_mode": self.cost_mode,
            "judges": list(self.judges),
            "judge_trials": self.judge_trials,
            "per_k": [row.to_json() for row in self.per_k],
            "study": [row.to_json() for row in self.study],
            "study_note": self.study_note,
            "sampling_cost_usd": self.costs.sampling_usd,
            "sampling_tokens": self.costs.sampling_tokens,
            "judge_cost_usd": self.costs.judge_usd,
            "judge_tokens": self.costs.judge_tokens,
            "judge_verdicts_unrepriced": self.costs.judge_unrepriced,
            "cost_rule": self.cost_rule,
        }
