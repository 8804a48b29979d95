"""A campaign's running totals, fed by its runs' events: what the CLI's progress line and the TUI's campaign screen
show (runs done, episodes, tokens, cost, time left), counted once for both."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from workbench.service.campaign.status import RunState
from workbench.service.records.campaign import CampaignTotals

if TYPE_CHECKING:
    from sandbox.runner import RunEvent


@dataclass
class RunProgress:
    """One run's episodes finished of planned, and its status, as its events tell them."""

    planned: int
    done: int
    status: str
    correct: int = 0


@dataclass
class CampaignTracker:
    """Totals over every run of a campaign. Episodes planned and finished start from the store (`campaign_status`);
    tokens and cost count this session's finished episodes; the time left is the episodes left at this session's
    rate so far."""

    states: list[RunState]
    clock: Callable[[], float] = time.monotonic
    runs: dict[str, RunProgress] = field(init=False)
    tokens: int = 0
    cost: float | None = None
    new: int = 0  # episodes finished this session

    def __post_init__(self) -> None:
        self.runs = {s.name: RunProgress(s.planned, s.done, s.status) for s in self.states}
        self.started = self.clock()

    def feed(self, run: str, event: RunEvent) -> None:
        """A run's event: its start (its planned count, its status running), an episode finished, its end."""
        progress = self.runs[run]
        if event.kind == "started":
            progress.planned, progress.done, progress.status = event.planned, event.done, "running"
        elif event.kind == "trajectory" and event.trajectory is not None:
            progress.done, progress.correct = event.done, event.correct
            self.new += 1
            self.tokens += event.trajectory.tokens
            if event.trajectory.cost_usd is not None:
                self.cost = (self.cost or 0.0) + event.trajectory.cost_usd
        elif event.kind == "finished":
            progress.done = event.done
            progress.status = "done" if event.done >= event.planned else "interrupted"

    def ended(self, run: str, status: str) -> None:
        """A run's end as its result says it (interrupted, failed), or "not started" for a run its lane skipped."""
        self.runs[run].status = status

    def totals(self) -> CampaignTotals:
        episodes = sum(p.planned for p in self.runs.values())
        done = sum(min(p.done, p.planned) for p in self.runs.values())
        elapsed = self.clock() - self.started
        rate = self.new / elapsed if self.new and elapsed > 0 else None
        return CampaignTotals(
            runs_done=sum(p.planned > 0 and p.done >= p.planned for p in self.runs.values()),
            runs=len(self.runs),
            episodes_done=done,
            episodes=episodes,
            tokens=self.tokens,
            cost=self.cost,
            eta_s=(episodes - done) / rate if rate else None,
        )
