"""The parallel study's JSON document, field by field: what `ParallelStudy.to_json` writes (the shape
`scale parallel --format json` prints and the TUI exports) and what the scaling views read.

A row per k is flat, one key per number named by its strategy (`pointwise`, `gap_pointwise`, …); `STRATEGY_KEYS`
and `GAP_KEYS` name each strategy's keys, so a view reads a strategy's numbers through them and mypy checks every
read. Closed sets of words are `Literal`.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, NotRequired, TypedDict

from stats.judges import JudgeQuality, TrialAgreement, TrialSpread
from workbench.service.records.sequential import CostMode  # one cost rule for both scaling sides

Strategy = Literal["pass_at_k", "majority", "pointwise", "pairwise"]
"""Our strategies at k, averaged over the k-subsets of the K samples (pass@k is the oracle, unbiased)."""

Origin = Literal["sampled", "imported"]
"""Where the samples come from: runs sampled here (store), or a scores file measured elsewhere."""

Verdicts = Literal["ask", "stored", "file"]
"""Where the judges' verdicts come from: asked for, read from the store only, or read from the scores file."""

TieRule = Literal["split", "first"]

ReadingKind = Literal["majority", "pairwise", "best_at_k", "retain_at_k"]
"""The study's readings (GA-Bench Tables 15-18): majority over the first k, bump sort in the samples' own order,
and a pointwise judge's best@k and retain@k (neither selects a sample)."""

JudgeRole = Literal["evidence", "self", "external"]
"""Which judge: the offline evidence judge, the agent's own model (the study's self-choice), or another model."""


class StrategyValuesJson(TypedDict):
    """Each strategy's value at k with its 95% interval (when estimated) and whether every resample gave the same
    value; pass@k always, the others as the inputs support them."""

    pass_at_k: float
    pass_at_k_ci: NotRequired[list[float]]
    pass_at_k_ci_no_variation: NotRequired[bool]
    majority: NotRequired[float]
    majority_ci: NotRequired[list[float]]
    majority_ci_no_variation: NotRequired[bool]
    pointwise: NotRequired[float]
    pointwise_ci: NotRequired[list[float]]
    pointwise_ci_no_variation: NotRequired[bool]
    pairwise: NotRequired[float]
    pairwise_ci: NotRequired[list[float]]
    pairwise_ci_no_variation: NotRequired[bool]


class GapsJson(TypedDict):
    """Each committing strategy's gap to pass@k with its paired interval, relative gap, efficiency, and what
    committing to it at k costs (None: unknown or not measured, never 0)."""

    gap_majority: NotRequired[float]
    gap_majority_ci: NotRequired[list[float] | None]
    gap_majority_ci_no_variation: NotRequired[bool]
    relative_gap_majority: NotRequired[float | None]
    efficiency_majority: NotRequired[float | None]
    cost_usd_majority: NotRequired[float | None]
    tokens_majority: NotRequired[float | None]
    accuracy_per_usd_majority: NotRequired[float | None]
    accuracy_per_million_tokens_majority: NotRequired[float | None]
    gap_pointwise: NotRequired[float]
    gap_pointwise_ci: NotRequired[list[float] | None]
    gap_pointwise_ci_no_variation: NotRequired[bool]
    relative_gap_pointwise: NotRequired[float | None]
    efficiency_pointwise: NotRequired[float | None]
    cost_usd_pointwise: NotRequired[float | None]
    tokens_pointwise: NotRequired[float | None]
    accuracy_per_usd_pointwise: NotRequired[float | None]
    accuracy_per_million_tokens_pointwise: NotRequired[float | None]
    gap_pairwise: NotRequired[float]
    gap_pairwise_ci: NotRequired[list[float] | None]
    gap_pairwise_ci_no_variation: NotRequired[bool]
    relative_gap_pairwise: NotRequired[float | None]
    efficiency_pairwise: NotRequired[float | None]
    cost_usd_pairwise: NotRequired[float | None]
    tokens_pairwise: NotRequired[float | None]
    accuracy_per_usd_pairwise: NotRequired[float | None]
    accuracy_per_million_tokens_pairwise: NotRequired[float | None]


class KRowJson(StrategyValuesJson, GapsJson):
    """One k of our strategies (`KRow.to_json`): its items and k-subsets, each strategy's value, what sampling k of
    the K samples cost, each committing strategy's gap; with a judge, the study's accepted coverage and
    self-choice."""

    k: int
    n: int
    blocks: int  # the k-subsets averaged over
    sampling_cost_usd: float | None
    sampling_tokens: float | None
    subsets: int
    subsets_all: bool
    accepted_coverage: NotRequired[float]  # the study's `self_choice_best@k`: not a selection
    self_choice: NotRequired[float | None]


class StrategyKeys(NamedTuple):
    """A strategy's keys in a `KRowJson`: its value, its interval and whether every resample gave the same value."""

    value: Literal["pass_at_k", "majority", "pointwise", "pairwise"]
    ci: Literal["pass_at_k_ci", "majority_ci", "pointwise_ci", "pairwise_ci"]
    no_variation: Literal[
        "pass_at_k_ci_no_variation", "majority_ci_no_variation", "pointwise_ci_no_variation", "pairwise_ci_no_variation"
    ]


class GapKeys(NamedTuple):
    """A committing strategy's keys in a `KRowJson`: its gap to pass@k and what committing to it at k costs."""

    gap: Literal["gap_majority", "gap_pointwise", "gap_pairwise"]
    ci: Literal["gap_majority_ci", "gap_pointwise_ci", "gap_pairwise_ci"]
    no_variation: Literal[
        "gap_majority_ci_no_variation", "gap_pointwise_ci_no_variation", "gap_pairwise_ci_no_variation"
    ]
    relative_gap: Literal["relative_gap_majority", "relative_gap_pointwise", "relative_gap_pairwise"]
    efficiency: Literal["efficiency_majority", "efficiency_pointwise", "efficiency_pairwise"]
    cost_usd: Literal["cost_usd_majority", "cost_usd_pointwise", "cost_usd_pairwise"]
    tokens: Literal["tokens_majority", "tokens_pointwise", "tokens_pairwise"]
    accuracy_per_usd: Literal["accuracy_per_usd_majority", "accuracy_per_usd_pointwise", "accuracy_per_usd_pairwise"]
    accuracy_per_million_tokens: Literal[
        "accuracy_per_million_tokens_majority",
        "accuracy_per_million_tokens_pointwise",
        "accuracy_per_million_tokens_pairwise",
    ]


STRATEGY_KEYS: dict[Strategy, StrategyKeys] = {
    "pass_at_k": StrategyKeys("pass_at_k", "pass_at_k_ci", "pass_at_k_ci_no_variation"),
    "majority": StrategyKeys("majority", "majority_ci", "majority_ci_no_variation"),
    "pointwise": StrategyKeys("pointwise", "pointwise_ci", "pointwise_ci_no_variation"),
    "pairwise": StrategyKeys("pairwise", "pairwise_ci", "pairwise_ci_no_variation"),
}

GAP_KEYS: dict[Strategy, GapKeys] = {
    "majority": GapKeys(
        "gap_majority",
        "gap_majority_ci",
        "gap_majority_ci_no_variation",
        "relative_gap_majority",
        "efficiency_majority",
        "cost_usd_majority",
        "tokens_majority",
        "accuracy_per_usd_majority",
        "accuracy_per_million_tokens_majority",
    ),
    "pointwise": GapKeys(
        "gap_pointwise",
        "gap_pointwise_ci",
        "gap_pointwise_ci_no_variation",
        "relative_gap_pointwise",
        "efficiency_pointwise",
        "cost_usd_pointwise",
        "tokens_pointwise",
        "accuracy_per_usd_pointwise",
        "accuracy_per_million_tokens_pointwise",
    ),
    "pairwise": GapKeys(
        "gap_pairwise",
        "gap_pairwise_ci",
        "gap_pairwise_ci_no_variation",
        "relative_gap_pairwise",
        "efficiency_pairwise",
        "cost_usd_pairwise",
        "tokens_pairwise",
        "accuracy_per_usd_pairwise",
        "accuracy_per_million_tokens_pairwise",
    ),
}


class ReadingJson(TypedDict):
    """One of the study's readings at k (`Reading.to_json`) with its gap to the study's pass@k on the same items."""

    reading: str
    kind: ReadingKind
    judge: str | None
    n: int
    value: float
    value_ci: list[float] | None
    gap: float
    gap_ci: list[float] | None
    gap_ci_no_variation: bool
    relative_gap: float | None
    efficiency: float | None
    copies_pass1: bool


class StudyRowJson(TypedDict):
    """The study's table at one k (`StudyRow.to_json`): its pass@k (best of the first k) and its readings."""

    k: int
    n: int
    pass_at_k: float
    pass_at_k_ci: list[float] | None
    readings: list[ReadingJson]


class JudgeJson(JudgeQuality):
    """A pointwise judge measured against the truth over the samples it judged (`judging.judges_measured`, or a
    scores file's judge in `imported`): its name and role beside `stats.judges.judge_quality`'s counts and rates,
    extended rather than restated. `tasks`: how many tasks it judged (a scores file may hold a judge for some only);
    `pairwise` / `pairwise_unparsed`: its stored pairwise verdicts on a run sampled here and how many were not read
    (bump sort keeps the leader on those, so they are counted where the judge is shown). The last three only when
    known."""

    judge: str
    role: JudgeRole
    tasks: NotRequired[int]
    pairwise: NotRequired[int]
    pairwise_unparsed: NotRequired[int]


class ItemAgreement(TrialAgreement):
    """The trials' agreement on one item's samples."""

    item: str


class TrialRow(TypedDict):
    """One k over the judge's trials: each judged strategy's accuracy and gap, spread over the trials."""

    k: int
    pointwise: TrialSpread
    pairwise: TrialSpread
    gap_pointwise: TrialSpread
    gap_pairwise: TrialSpread


class JudgeTrials(TypedDict):
    """N trials of one judge: their verdicts' agreement and, when every verdict is stored, the spread per k."""

    trials: int
    verdicts_missing: int
    agreement: TrialAgreement
    per_item: list[ItemAgreement]
    per_k: list[TrialRow] | None


class ParallelReport(TypedDict):
    """A parallel study (`ParallelStudy.to_json`): our strategies per k, the study's readings per k, the judges
    measured, the trials' spread, and the study's facts and costs."""

    run: str
    origin: Origin
    source: str | None
    tasks: str | None  # `--tasks`: the subset of a scores file's tasks read (None: all of them)
    k_max: int
    items: int
    items_incomplete: int
    measured: bool
    ks_unavailable: list[int]
    null_scores: int
    success_threshold: float | None
    judge: str | None
    verdicts: Verdicts | None
    verdicts_missing: int | None
    tie_rule: str
    majority_rule: TieRule | None
    pairwise_orders: int | None
    cost_mode: CostMode
    judges: list[JudgeJson]
    judge_trials: JudgeTrials | None
    per_k: list[KRowJson]
    study: list[StudyRowJson]
    study_note: str
    sampling_cost_usd: float | None
    sampling_tokens: float | None
    judge_cost_usd: float | None
    judge_tokens: int | None
    judge_verdicts_unrepriced: int | None
    cost_rule: str
