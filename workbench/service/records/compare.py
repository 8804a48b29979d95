"""Two runs compared on their common items (`--batch compare`, the compare screen): what
`workbench.service.reports.compare_report` returns and `workbench.views.compare` words.

TypedDicts: the JSON object is the contract (its keys and their order are what `--format json` prints).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from sandbox.records import Termination
from workbench.service.records.general import OffDomainMeasures
from workbench.service.records.ratio import Pair
from workbench.service.records.report import TransitionLayout

if TYPE_CHECKING:  # stats' record types by name only: importing stats at run time would load numpy
    from stats.axes import Attribution
    from stats.ngrams import TopTrigram

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
