"""The sequential side's typed records: what `workbench.service.scaling` returns to the views and the front ends for a
plateau (`plateau_result`, `scale plateau`), a sequential group's study (`group_plateau`, `scale sequential`), the
strategy comparison (`strategy_comparison`, `scale strategies`) and the registry-size study (`tools_report`,
`scale tools`; its table is also the general-agent setting's in `report --panel`), field by field.

They are TypedDicts: the JSON document `--format json` prints is the contract (one text for every front end), and
mypy checks every field the service writes and every field a view reads. Closed sets of words are `Literal`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

if TYPE_CHECKING:  # names for the type checker only: `--batch runs` must not import numpy through stats
    from stats.offdomain import Mechanism
    from stats.wilson import WilsonRecord

Axis = Literal["tokens", "points", "turns"]
Protocol = Literal["fresh", "continuation"]
StrategyName = Literal["continue", "summarize", "verifier"]  # `sandbox.strategies.STRATEGIES`
# the rule a group's levels ran under, as reported: a strategy, `cap` (points and turns without one) or
# `verifier:MODEL` (the verifier named), so a str beyond the Literal's words
StrategyLabel = str
CostMode = Literal["cache-aware", "study"]
Correction = Literal["bonferroni", "holm"]
Detail = Literal["full", "short", "names"]
BudgetLabel = str | int | float  # a grid label as given (`8k`, 16): `stats.plateau.BudgetLabel`

Transition = TypedDict(
    "Transition",
    {
        "from": BudgetLabel,
        "to": BudgetLabel,
        "d_bar": float,
        "sigma_boot": float,
        "z": float | None,
        "c_k": float | None,
        "significant": bool,
        "tested": bool,
        "borderline": bool,
        "mc_se": float | None,
        "degenerate_variance": bool,
        "improved": int,
        "worsened": int,
        "sign_test_p": float,
        "sign_test_significant": bool,
        "p_normal": float,
        "level": float | None,
    },
)


class VerifierUsage(TypedDict):
    """The verifier's calls summed in the agent's four token buckets (to price them by another rule)."""

    prompt: int
    completion: int
    cache_read: int
    cache_creation: int


class Reach(TypedDict):
    """How far a level's items went against its cap (`sequential._reach_summary`); the STOP count, the overhead and
    the two flags on the token axis only (None elsewhere)."""

    n_stopped: int | None
    n_reached: int
    max_reached: int
    overhead_tokens: float | None
    never_reached: bool | None
    degenerate: bool | None


class StrategySpend(TypedDict):
    """What a level's strategy did and spent itself (`Store.strategy_spend`): summaries, history replacements and the
    verifier's calls, tokens (None: the scripted verifier, nothing measured), cost, failures and token buckets."""

    summaries: int
    replacements: int
    verifier_calls: int
    verifier_tokens: int | None
    verifier_cost_usd: float | None
    verifier_errors: int
    verifier_usage: VerifierUsage


class LevelSpend(TypedDict):
    """What a level's answers spent: its own tokens and cost (marginal) and with the levels below it (cumulative,
    under continuation), and accuracy per dollar and per million tokens over the cumulative spend. None when not
    measured (a scripted agent calls no model) or nothing was priced, never 0."""

    tokens_marginal: int | None
    tokens_cumulative: int | None
    cost_usd_marginal: float | None
    cost_usd_cumulative: float | None
    accuracy_per_usd: float | None
    accuracy_per_million_tokens: float | None


class Level(LevelSpend, Reach, StrategySpend):
    """One budget level of a sequential group (`group_levels`): accuracy, spend, reach, the strategy's own spend.
    Tokens and cost are None when not measured (a scripted agent or verifier calls no model), never 0."""

    budget: BudgetLabel
    run: str
    n: int
    measured: bool
    correct: int
    continues: int
    accuracy: float | None
    accuracy_interval: WilsonRecord | None  # `stats.wilson.clustered_wilson`'s, as it gives it


class Plateau(TypedDict):
    """`stats.plateau.PlateauResult.to_dict` with the plateau's budget label (`plateau_result`, `scale plateau`); a
    sequential group's (`group_plateau`, `scale sequential`) adds its design and its levels, which a plateau read
    from a scores file has not (NotRequired)."""

    k_star: int | None
    k_star_first: int | None
    k_star_sign_test: int | None
    plateau_budget: BudgetLabel | None
    budgets: list[BudgetLabel]
    accuracy: list[float]
    n: int
    n_dropped: int
    missing_per_budget: dict[str, int]
    dropped_items: list[str] | None
    n_trials: int
    n_trials_dropped: int
    population: int | None
    fpc: float
    z: float | None
    alpha: float
    correction: Correction
    n_boot: int
    seed: int
    two_stage: bool
    matched_trials: bool
    no_significant_gain: bool
    censored: bool
    degenerate_variance: bool
    fpc_zero: bool
    borderline: bool
    k_star_borderline: int | None
    transitions: list[Transition]
    axis: NotRequired[Axis]
    protocol: NotRequired[Protocol]
    strategy: NotRequired[StrategyLabel]
    group: NotRequired[str]
    levels: NotRequired[list[Level]]
    cost_mode: NotRequired[CostMode]


class StrategyLevel(Level):
    """A level as the strategy comparison shows it: its interval's bounds and the agent's tokens per trajectory."""

    accuracy_ci: list[float] | None
    tokens_per_trajectory: float | None


class StrategyStudy(TypedDict):
    """One group of a strategy comparison: its strategy, its plateau (k*) and its levels."""

    group: str
    strategy: StrategyLabel
    axis: Axis
    protocol: Protocol
    k_star: int | None
    plateau_budget: BudgetLabel | None
    censored: bool | None
    no_significant_gain: bool | None
    n: int
    budgets: list[BudgetLabel]
    transitions: list[Transition]
    levels: list[StrategyLevel]


class StrategyComparison(TypedDict):
    """The sequential strategies compared on one axis (`strategy_comparison`, the study's Figure 6 / Table 14)."""

    axis: Axis
    studies: list[StrategyStudy]
    rule: str
    differences: list[str]


class ComparisonRow(TypedDict):
    """One (strategy, level) row of a comparison, flat: the CSV, the CLI table and the TUI read these."""

    group: str
    strategy: StrategyLabel
    budget: BudgetLabel
    plateau_budget: BudgetLabel | None
    k_star: int | None
    at_plateau: bool
    n: int
    accuracy: float | None
    accuracy_low: float | None
    accuracy_high: float | None
    accuracy_interval: str | None
    n_eff: float | None
    tokens_per_trajectory: float | None
    cost_usd: float | None
    summaries: int
    verifier_calls: int
    verifier_tokens: int | None
    verifier_cost_usd: float | None
    verifier_errors: int


class RegistryRow(TypedDict):
    """One level of the registry-size table (the study's Table 8, `reports.general.registry_table`): its tools'
    tokens, accuracy [correct, n] over the items it shares with the plain run, Δ and McNemar p against it, the
    out-of-domain call share and the mechanism by the study's rule. The plain run's row (count 0, the study's
    "irrelevant tools filtered") has no share counts."""

    run: str
    count: int
    detail: Detail | Literal["irrelevant tools filtered"] | None
    tool_block_tokens: int | None
    tool_tokens: int
    prompt_tokens: float | None
    accuracy: list[int]
    delta: float | None
    p: float | None
    share: float | None
    share_counts: NotRequired[list[float | int] | None]
    mechanism: Mechanism | Literal["plain"]


class RegistryTable(TypedDict):
    """The registry-size table: the plain run it compares against (None: none found), its rows, the out-of-domain
    share that reads as tool confusion and the rule in words."""

    plain: str | None
    rows: list[RegistryRow]
    confusion_share: float
    rule: str


class ToolsReport(RegistryTable):
    """`scale tools`: a tools group's registry-size table (`tools_report`), named by its group."""

    group: str


__all__ = [
    "Axis",
    "BudgetLabel",
    "ComparisonRow",
    "Correction",
    "CostMode",
    "Detail",
    "Level",
    "LevelSpend",
    "Plateau",
    "Protocol",
    "Reach",
    "RegistryRow",
    "RegistryTable",
    "StrategyComparison",
    "StrategyLabel",
    "StrategyLevel",
    "StrategyName",
    "StrategySpend",
    "StrategyStudy",
    "ToolsReport",
    "Transition",
    "VerifierUsage",
]
