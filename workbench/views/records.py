"""The typed records the application layer hands the front ends and the views (what a compare report or an
estimate holds): the service builds them, the views word them, and each one's JSON (`to_json`, or the TypedDict
itself) is its `--format json` output. They live with the views, the floor that every other one can import (as the
Table 2 columns do), and hold data only: no wording, no I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from sandbox.pricing import Price


@dataclass(frozen=True)
class EpisodeEstimate:
    """Expected tokens and cost of one episode, and what the expectation rests on (`basis`, in words)."""

    tokens: int
    basis: str
    price: Price | None
    usd: float | None
    extra_tools_tokens_per_call: int = 0


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
    caps: dict[str, Any]
    ablation: str
    tokens_per_episode: int
    basis: str
    extra_tools_tokens_per_call: int
    price: Price | None
    cost_usd: float | None

    def to_json(self) -> dict[str, Any]:
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


class ConvMarginals(TypedDict, total=False):
    """A conversion row's marginal values: each run over its own recalled items, as `report` prints them."""

    a_marginal: float | None
    b_marginal: float | None
    set: str
    counts_marginal: dict[str, Any]


class CompareRow(TypedDict):
    """One compared axis: A, B, Δ = B − A with its paired bootstrap interval, McNemar's test (a 0/1 axis both
    sides measured) and its Holm-adjusted p. A conversion row adds each run's marginal conversion."""

    axis: str
    a_marginal: NotRequired[float | None]
    b_marginal: NotRequired[float | None]
    set: NotRequired[str]
    counts_marginal: NotRequired[dict[str, Any]]
    a: float | None
    b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    test: dict[str, Any] | None  # stats.significance.mcnemar_exact's, with its `p_holm`
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


class ItemPair(TypedDict):
    """One common item: its kind and depth, and what each run did on it (the agreement grid, the split stepper)."""

    kind: str | None
    depth: int | None
    a: dict[str, Any]
    b: dict[str, Any]


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
    runs: dict[str, dict[str, Any]]  # "a", "b": each run's name, agent, model, ablation, dataset
    rows: list[CompareRow]
    tests: dict[str, dict[str, Any] | None]
    holm: Holm
    n_boot: int
    seed: int
    agreement: dict[str, Agreement]  # by AgreementCell
    items: dict[str, ItemPair]
    attribution: dict[str, Any]
    terminations: dict[str, dict[str, int]]  # by side, "a" and "b"
    tokens: dict[str, SideTokens]
    tool_use: dict[str, dict[str, Any]]
    separation: Separation
    general_setting: NotRequired[dict[str, Any]]
