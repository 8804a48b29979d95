"""Executing a campaign: its runs on their endpoints' lanes, the lanes at once, each lane one run at a time.

A lane is an endpoint (a server's base URL, a provider, or this machine for the scripted agents): its runs go one
after another, each allowed the endpoint's calls in flight, so the endpoint never sees more than its limit, while
the other endpoints' runs proceed at the same time. A run that finds its endpoint unreachable (nothing listens:
the runner stops it, interrupted and resumable) stops its lane: the lane's other runs are not started, and the
other lanes go on. How one run is executed is the caller's (`run_one`): the CLI's runner on its store, the TUI's
background job; this module only orders them. Cancelling the campaign (Ctrl-C) cancels every lane: each runner
marks its run interrupted, and the same campaign resumes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.service.campaign.plan import CampaignPlan, PlannedRun

if TYPE_CHECKING:
    from sandbox.records import RunResult

RunOne = Callable[[PlannedRun], Awaitable["RunResult | None"]]


@dataclass(frozen=True)
class Outcome:
    """How one run of the campaign ended this time: its result, or why it was not started."""

    run: PlannedRun
    result: RunResult | None
    not_started: str | None = None
    finished_before: bool = False  # finished in the store before: not run again

    @property
    def complete(self) -> bool:
        r = self.result
        return self.finished_before or (r is not None and r["status"] == "done" and r["done"] >= r["planned"])


@dataclass(frozen=True)
class CampaignOutcome:
    """Every run's outcome, in the plan's order."""

    outcomes: list[Outcome]

    def unreachable(self) -> dict[str, list[str]]:
        """Endpoint → the runs it left unfinished (the run that found it unreachable and those never started)."""
        out: dict[str, list[str]] = {}
        for o in self.outcomes:
            if (o.result is not None and o.result.get("unreachable")) or o.not_started:
                out.setdefault(o.run.endpoint, []).append(o.run.name)
        return out

    def incomplete(self) -> list[str]:
        return [o.run.name for o in self.outcomes if not o.complete]


async def execute_campaign(
    plan: CampaignPlan, run_one: RunOne, finished: Collection[str] = frozenset()
) -> CampaignOutcome:
    """Run every lane at once (each its runs in order), but the runs `finished` names (all their episodes are in
    the store: left as they are); an error in one run (another process holds it, a broken store) cancels the others
    and is raised as itself."""
    outcomes: dict[str, Outcome] = {}

    async def lane(runs: list[PlannedRun]) -> None:
        stopped: str | None = None
        for run in runs:
            if run.name in finished:
                outcomes[run.name] = Outcome(run, None, finished_before=True)
                continue
            if stopped is not None:
                outcomes[run.name] = Outcome(run, None, stopped)
                continue
            result = await run_one(run)
            outcomes[run.name] = Outcome(run, result)
            if result is not None and result.get("unreachable"):
                stopped = f"not started: {run.endpoint} is unreachable ({result['unreachable']})"

    try:
        async with asyncio.TaskGroup() as group:
            for runs in plan.lanes().values():
                group.create_task(lane(runs))
    except BaseExceptionGroup as errors:  # one lane's error, as itself (the others were cancelled for it)
        raise errors.exceptions[0] from None
    return CampaignOutcome([outcomes[run.name] for run in plan.runs if run.name in outcomes])
