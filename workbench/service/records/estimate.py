"""What a run would play and spend (`--dry-run`, the launch form's cost line): the numbers
`workbench.service.estimate` computes and `workbench.views.estimate` words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from sandbox.pricing import Price
from sandbox.records import CapsRecord


@dataclass(frozen=True)
class EpisodeEstimate:
    """Expected tokens and cost of one episode, and what the expectation rests on (`basis`, in words)."""

    tokens: int
    basis: str
    price: Price | None
    usd: float | None
    extra_tools_tokens_per_call: int = 0


class PriceJson(TypedDict):
    """A model's price as an estimate shows it: the provider and its two rates (USD per million tokens). A cut of
    `sandbox.pricing.Price`, not the same record: the JSON leaves out its model prefixes and cache multipliers."""

    provider: str
    input_per_m: float
    output_per_m: float


class Estimate(TypedDict):
    """What a run would play and spend (`--dry-run`): the object `--dry-run --format json` prints, its price cut to
    the provider and the two rates."""

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
