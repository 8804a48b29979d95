"""The typed records the application layer hands the front ends and the views (what a report, an estimate or a
plan holds), below both floors so that each can name them: the service builds them, the views word them, and each
one's `to_json` is its `--format json` output."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
