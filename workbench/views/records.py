"""The typed records the application layer hands the front ends and the views (what a compare report or an
estimate holds): the service builds them, the views word them, and each one's JSON (`to_json`, or the TypedDict
itself) is its `--format json` output. They live with the views, the floor that every other one can import (as the
Table 2 columns do), and hold data only: no wording, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, NotRequired, TypedDict, TypeVar

from sandbox.pricing import Price
from sandbox.records import CapsRecord, ErrorKind, Termination

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


@dataclass(frozen=True)
class EpisodeEstimate:
    """Expected tokens and cost of one episode, and what the expectation rests on (`basis`, in words)."""

    tokens: int
    basis: str
    price: Price | None
    usd: float | None
    extra_tools_tokens_per_call: int = 0


class PriceJson(TypedDict):
    """A model's price as an estimate shows it: the provider and its two rates (USD per million tokens)."""

    provider: str
    input_per_m: float
    output_per_m: float


class EstimateJson(TypedDict):
    """`Estimate.to_json`: the `--dry-run --format json` object."""

    run: str
    agent: str
    model: str | None
    episodes: int
    already_done: int
    items: int
    replicates: int
    item_ids: list[str]
    caps: CapsRecord
    ablation: str
    tokens_per_episode: int
    basis: str
    extra_tools_tokens_per_call: int
    price: PriceJson | None
    cost_usd: float | None


@dataclass(frozen=True)
class Estimate:
    """What a run would play and spend (`--dry-run`); `to_json` is the `--format json` output."""

    run: str
    agent: str
    model: str | None
    episodes: int
    already_done: int
    items: int
    replicates: int
    item_ids: list[str]
    caps: CapsRecord
    ablation: str
    tokens_per_episode: int
    basis: str
    extra_tools_tokens_per_call: int
    price: Price | None
    cost_usd: float | None

    def to_json(self) -> EstimateJson:
        """The JSON object, its price cut to the provider and the two rates."""
        price = self.price
        return {
            "run": self.run,
            "agent": self.agent,
            "model": self.model,
            "episodes": self.episodes,
            "already_done": self.already_done,
            "items": self.items,
            "replicates": self.replicates,
            "item_ids": self.item_ids,
            "caps": self.caps,
            "ablation": self.ablation,
            "tokens_per_episode": self.tokens_per_episode,
            "basis": self.basis,
            "extra_tools_tokens_per_call": self.extra_tools_tokens_per_call,
            "price": None
            if price is None
            else {"provider": price.provider, "input_per_m": price.input_per_m, "output_per_m": price.output_per_m},
            "cost_usd": self.cost_usd,
        }


# ---------------------------------------------------------------- the compare report (`--batch compare`)
# TypedDicts: the JSON object is the contract (its keys and their order are what `--format json` prints).

SeparationState = Literal["incomparable", "equal", "unsupported", "separates"]
CompareSide = Literal["a", "b"]
AgreementCell = Literal["both_right", "only_a", "only_b", "both_wrong"]


class McNemarTest(TypedDict):
    """Exact McNemar over paired 0/1 outcomes (`stats.significance.mcnemar_exact`: `only_first` = A right, B wrong),
    with its Holm-adjusted p within the comparison (`p_holm`, set by `adjust_comparison`)."""

    n: int
    both: int
    neither: int
    only_first: int
    only_second: int
    n_discordant: int
    p: float
    first: Pair
    second: Pair
    p_holm: NotRequired[float | None]


class ConvMarginals(TypedDict, total=False):
    """A conversion row's marginal values: each run over its own recalled items, as `report` prints them."""

    a_marginal: float | None
    b_marginal: float | None
    set: str
    counts_marginal: dict[str, Pair | None]  # by side, "a" and "b": [numerator, denominator]


class CompareRow(TypedDict):
    """One compared axis: A, B, Δ = B − A with its paired bootstrap interval, McNemar's test (a 0/1 axis both
    sides measured) and its Holm-adjusted p. A conversion row adds each run's marginal conversion."""

    axis: str
    a_marginal: NotRequired[float | None]
    b_marginal: NotRequired[float | None]
    set: NotRequired[str]
    counts_marginal: NotRequired[dict[str, Pair | None]]
    a: float | None
    b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    test: McNemarTest | None
    n: int | None
    ci_no_variation: bool
    p_holm: float | None


class Separation(TypedDict):
    """Which split separates the runs most among those the comparison's adjusted test supports (`separates`), or
    why none is named (`state`); `family` is the number of tests Holm's adjustment ran over."""

    state: SeparationState
    family: int | None
    axis: NotRequired[str]
    kind: NotRequired[str]
    split: NotRequired[str]
    delta: NotRequired[float]
    p_holm: NotRequired[float]
    n: NotRequired[int | None]
    same_recall: NotRequired[bool]


class Holm(TypedDict):
    method: str
    m: int
    family: list[str]


class Agreement(TypedDict):
    n: int
    items: list[str]


class ItemSide(TypedDict):
    """What one run did on an item (its replicate-0 trajectory): the agreement grid's and split stepper's view."""

    id: int
    answer: str | None
    predicted_index: int | None
    correct: bool
    termination: Termination | None
    points: int | None
    turns: int | None
    tokens: int | None
    paper_recall: bool
    section_recall: bool


class ItemPair(TypedDict):
    """One common item: its kind and depth, and what each run did on it (the agreement grid, the split stepper)."""

    kind: str | None
    depth: int | None
    a: ItemSide
    b: ItemSide


class RunLabel(TypedDict):
    """Who a compared run is: its name, agent, model, ablation and dataset."""

    name: str
    agent: str
    model: str | None
    ablation: str
    dataset: str
    dataset_fingerprint: str


class AttributionDelta(TypedDict):
    """One option type's rate among each run's wrong answers, Δ = B − A and its paired bootstrap interval."""

    a: float | None
    b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    ci_no_variation: bool


class CompareAttribution(TypedDict):
    a: Attribution
    b: Attribution
    delta: dict[str, AttributionDelta]  # by option type


class ToolUse(TypedDict):
    """Some trajectories' transitions (as the heat maps draw them) and their top trigram."""

    transitions: TransitionLayout
    top_trigram: TopTrigram | None


class SideTokens(TypedDict):
    protocol: float | None
    prompt_incl_cache: float | None
    cache_hit_rate: float | None


class CompareReport(TypedDict):
    """Two runs on their common items (replicate 0): what `compare_report` returns and `--batch compare` prints."""

    a: str
    b: str
    warnings: list[str]
    n_common: int
    only_in_a: int
    only_in_b: int
    runs: dict[str, RunLabel]  # by side, "a" and "b"
    rows: list[CompareRow]
    tests: dict[str, McNemarTest | None]
    holm: Holm
    n_boot: int
    seed: int
    agreement: dict[str, Agreement]  # by AgreementCell
    items: dict[str, ItemPair]
    attribution: CompareAttribution
    terminations: dict[str, dict[Termination, int]]  # by side, "a" and "b"
    tokens: dict[str, SideTokens]
    tool_use: dict[str, ToolUse]  # by side
    separation: Separation
    general_setting: NotRequired[dict[str, OffDomainMeasures | None]]  # by side, when either is in the setting


# ---------------------------------------------------------------- the general-agent setting's blocks


class TokenSplit(TypedDict):
    """Estimated tokens (characters / 4) of the protocol's seven tools and of the setting's extra tools."""

    protocol: int
    extra: int


class SettingShown(TypedDict):
    """What a report shows of a run's general-agent setting (`sandbox.extra_tools.registry.setting_record`, None
    where the record lacks the field): where the tools come from, how many, how described, their cost, the
    order seed, the registry's size and its tokens in the prompt."""

    source: str | None
    count: int | None
    detail: str | None
    cost: int | None
    seed: int | None
    registry_size: int | None
    tool_block_tokens: TokenSplit | None
    schema_tokens: TokenSplit | None
    tokens_estimated: bool | None


class OffDomainMeasures(TypedDict):
    """A run's out-of-domain tool use (`reports.offdomain.offdomain_measures`): the share of calls to the extra
    tools (with its Wilson interval), of trajectories with one, of points and turns; by tool and by item."""

    setting: SettingShown
    share: float | None
    share_counts: Pair
    share_interval: list[float] | None
    trajectories_with_any: Pair
    points: Pair
    points_per_trajectory: float | None
    turns: Pair
    turns_per_trajectory: float | None
    per_tool: dict[str, int]
    per_item: dict[str, list[int]]  # item → [out-of-domain calls, calls]
    rejected: int


class PlainRow(TypedDict):
    """One axis of a run against its plain counterpart (a compare row's values, its Δ, interval and McNemar p)."""

    axis: str
    a: float | None
    b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    n: int | None


class AgainstPlain(TypedDict):
    plain: str
    run: str
    n_common: int
    rows: list[PlainRow]


class GeneralBlock(OffDomainMeasures):
    """What `report` adds for a run in the general-agent setting: its measures, the comparison with its plain
    counterpart (None: none in the store) and its transitions with the out-of-domain calls as one `other` tool."""

    against_plain: AgainstPlain | None
    transitions: TransitionMatrix


# ---------------------------------------------------------------- the run report (`report`, the diagnostics tab)
# TypedDicts: the JSON object is the contract. Each ratio appears twice: its value (`axes`, `splits`, …; None where
# its denominator is 0) and its [numerator, denominator] under `counts`; the generic records serve both.

V = TypeVar("V")
Pair = list[float | int]  # a ratio's [numerator, denominator]


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


# ---------------------------------------------------------------- the leaderboard (`leaderboard`, the TUI's board)

# One row: an entrant (a person over all their sessions, or one model run), then the Table 2 columns by their labels
# (`workbench.views.columns.PANEL_COLUMNS`; labels with spaces and slashes, hence the functional form).
BoardRow = TypedDict(
    "BoardRow",
    {
        "run": str,  # the entrant: a person's agent (`human:NAME`) or a model run's name
        "name": str,  # the latest session, `+N` for the others
        "runs": list[str],
        "agent": str,
        "model": str | None,
        "ablation": str,
        "human": bool,
        "n": int,
        "correct": int,
        "coverage": float,
        "accuracy_ci": list[float] | None,  # Wilson 95% [low, high] over the items covered
        "excluded": int,  # a person's plays left out as marked (resumed, replayed)
        "ranked": bool,
        "tokens_measured": bool,
        "rank": int | None,
        "unranked": str | None,  # why not ranked
        "accuracy": float | None,
        "PR st": float | None,
        "PR mt": float | None,
        "SR st": float | None,
        "SR mt": float | None,
        "Conv st": float | None,
        "Conv mt": float | None,
        "calls/turn": float | None,
        "tokens": float | None,
        "turns": float | None,
        "points": float | None,
        "MaxTok": float | None,
        "MaxTurn": float | None,
        "MaxBudget": float | None,
    },
)


class BoardTest(TypedDict):
    """The test beside a leaderboard column's best: the best run(s), the runner-up(s), whether the best is marked
    (the one best run beats every runner-up significantly), the weakest of those tests, or why none is marked."""

    best: list[str]
    runner_up: list[str]
    marked: bool
    test: NotRequired[str]
    n: NotRequired[int]
    best_better: NotRequired[int]
    runner_up_better: NotRequired[int]
    p: float | None
    reason: NotRequired[str]


class Board(TypedDict):
    """The leaderboard of one dataset people played: its rows over the items people played (ranked ones first), the
    best cells (`*`) and the test beside each column's mark."""

    dataset: str
    fingerprint: str
    n_items: int
    items: list[str]
    min_coverage: float
    rows: list[BoardRow]
    best: dict[str, list[str]]  # column label → the marked rows
    best_tests: dict[str, BoardTest]  # column label → `reports.panel.significant_best`'s test, or why none
    n_boot: int
    seed: int
