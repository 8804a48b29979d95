"""How far a campaign is: for each of its runs, the episodes it plans and those the store holds finished.

Read-only: `campaign status` and the TUI's campaign screen ask it without running anything; `campaign run` asks
it for its totals before it starts (the progress display's denominators). A store made by `campaign run FILE --shard
I/N` holds that shard's runs (each records its shard): `plan.store_shard` says which, so the TUI plans that shard rather
than the whole campaign.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from workbench.service.campaign.plan import CampaignPlan, PlannedRun

RunStatusWord = Literal["done", "left", "not started", "running", "interrupted", "failed"]


class RunStateJson(TypedDict):
    """A run's state as `campaign status --format json` prints it."""

    run: str
    model: str
    endpoint: str
    kind: str
    planned: int
    done: int
    left: int
    status: str


@dataclass(frozen=True)
class RunState:
    """One run of a campaign: its episodes planned (this shard's, with `--shard`) and finished, and its status in
    the store ("not started" when it holds no run of that name)."""

    name: str
    model: str
    endpoint: str
    kind: str
    planned: int
    done: int
    status: str

    @property
    def left(self) -> int:
        return max(0, self.planned - self.done)

    @property
    def finished(self) -> bool:
        return self.planned > 0 and self.done >= self.planned

    def to_json(self) -> RunStateJson:
        return {
            "run": self.name,
            "model": self.model,
            "endpoint": self.endpoint,
            "kind": self.kind,
            "planned": self.planned,
            "done": self.done,
            "left": self.left,
            "status": self.status,
        }


def planned_pairs(run: PlannedRun, corpus: Any) -> set[tuple[str, int]]:
    """The (item, replicate) pairs the run plays: its slice of the data, its replicates, its shard."""
    from workbench.service.execution import select_items

    spec = run.spec
    return {
        (item.id, r)
        for r in range(spec.replicates)
        for item in select_items(corpus, spec)
        if spec.shard is None or spec.shard.holds(item.id, r)
    }


def campaign_status(store: Any, plan: CampaignPlan, corpus: Any) -> list[RunState]:
    """Every run of the plan with its progress in `store` (None: no store yet, nothing done)."""
    from workbench.service.errors import StoreError

    states = []
    for run in plan.runs:
        pairs = planned_pairs(run, corpus)
        done, status = 0, "not started"
        if store is not None:
            try:
                row = store.run(run.name)
            except StoreError:
                row = None
            if row is not None:
                done = len(pairs & store.finished(row["id"]))
                status = row["status"]
        if done >= len(pairs) and pairs:
            status = "done"
        elif status == "done":  # done once, but the file now asks for more (a larger limit, more replicates)
            status = "left"
        states.append(RunState(run.name, run.model, run.endpoint, run.kind, len(pairs), done, status))
    return states
