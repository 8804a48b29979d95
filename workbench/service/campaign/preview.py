"""A campaign's plan before it runs, as the TUI shows it: each run's episodes (planned, already done) and its
estimated cost (`workbench.service.estimate`: earlier runs of the model in the store, else a stated assumption;
unpriced models are unpriced, never guessed)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.service.campaign.plan import CampaignPlan


@dataclass(frozen=True)
class RunPreview:
    """One run of the plan: its episodes planned and already done, and the estimated cost of the rest."""

    name: str
    model: str
    endpoint: str
    kind: str
    episodes: int
    already_done: int
    cost_usd: float | None  # None: a model without prices
    scripted: bool  # a scripted agent: it calls no model and costs nothing

    @property
    def left(self) -> int:
        return self.episodes - self.already_done


def preview(plan: CampaignPlan, corpus: Any, store_path: Path) -> list[RunPreview]:
    """Every run of `plan` with its estimate (the store is only read)."""
    from workbench.service.estimate import estimate
    from workbench.service.execution import select_items

    out = []
    for run in plan.runs:
        est = estimate(run.spec, select_items(corpus, run.spec), store_path)
        planned = est["items"] * est["replicates"]
        out.append(
            RunPreview(
                name=run.name,
                model=run.model,
                endpoint=run.endpoint,
                kind=run.kind,
                episodes=planned,
                already_done=est["already_done"],
                cost_usd=est["cost_usd"],
                scripted=run.spec.agent != "llm",
            )
        )
    return out


def total_cost(previews: list[RunPreview]) -> tuple[float, int]:
    """The estimated cost of every priced run's episodes left, and how many runs are unpriced (left out of it)."""
    priced = [p.cost_usd for p in previews if p.cost_usd is not None]
    return sum(priced), sum(1 for p in previews if p.cost_usd is None and not p.scripted and p.left)
