"""A campaign's running totals, fed by its runs' events: what the CLI's progress line and the TUI's campaign screen
show (runs done, episodes, tokens, cost, time left), counted once for both.

The time left is counted per lane (an endpoint: its runs go one after another, the lanes at once): a lane's
episodes left over its own rate this session, the campaign's the longest lane's. A whole-campaign rate would let a
fast lane (scripted agents finish hundreds of episodes a second) promise the end while a slow model's lane still
has most of its work. A lane with episodes left but none finished yet this session has no rate: the time left is
unknown (None) until it finishes one. A run that ended this session (interrupted, failed, not started) is not
waited for."""

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
    """One run's episodes finished of planned, and its status, as its events tell them; its lane (its endpoint),
    and whether it ended this session (nothing more to wait for from it)."""

    planned: int
    done: int
    status: str
    correct: int = 0
    lane: str = ""
    ended: bool = False

    @property
    def left(self) -> int:
        return 0 if self.ended else max(0, self.planned - self.done)


@dataclass
class CampaignTracker:
    """Totals over every run of a campaign. Episodes planned and finished start from the store (`campaign_status`);
    tokens and cost count this session's finished episodes; the time left is the longest lane's (its episodes left
    at its own rate this session)."""

    states: list[RunState]
    clock: Callable[[], float] = time.monotonic
    runs: dict[str, RunProgress] = field(init=False)
    tokens: int = 0
    cost: float | None = None
    new: int = 0  # episodes finished this session
    lane_new: dict[str, int] = field(init=False)  # episodes finished this session, per lane

    def __post_init__(self) -> None:
        self.runs = {s.name: RunProgress(s.planned, s.done, s.status, lane=s.endpoint) for s in self.states}
        self.lane_new = {}
        self.started = self.clock()

    def feed(self, run: str, event: RunEvent) -> None:
        """A run's event: its start (its planned count, its status running), an episode finished, its end."""
        progress = self.runs[run]
        if event.kind == "started":
            progress.planned, progress.done, progress.status = event.planned, event.done, "running"
        elif event.kind == "trajectory" and event.trajectory is not None:
            progress.done, progress.correct = event.done, event.correct
            self.new += 1
            self.lane_new[progress.lane] = self.lane_new.get(progress.lane, 0) + 1
            self.tokens += event.trajectory.tokens
            if event.trajectory.cost_usd is not None:
                self.cost = (self.cost or 0.0) + event.trajectory.cost_usd
        elif event.kind == "finished":
            progress.done = event.done
            progress.status = "done" if event.done >= event.planned else "interrupted"
            progress.ended = True

    def ended(self, run: str, status: str) -> None:
        """A run's end as its result says it (interrupted, failed), or "not started" for a run its lane skipped."""
        self.runs[run].status = status
        self.runs[run].ended = True

    def lanes_left(self) -> dict[str, float | None]:
        """Each lane with episodes left: its seconds left at its own rate (None: none finished yet, no rate)."""
        left: dict[str, int] = {}
        for p in self.runs.values():
            if p.left:
                left[p.lane] = left.get(p.lane, 0) + p.left
        elapsed = self.clock() - self.started
        out: dict[str, float | None] = {}
        for lane, episodes in left.items():
            new = self.lane_new.get(lane, 0)
            out[lane] = episodes * elapsed / new if new and elapsed > 0 else None
        return out

    def eta_s(self) -> float | None:
        """The longest lane's time left (0 when no lane has work left; None while a lane with work has no rate)."""
        lanes = self.lanes_left()
        if any(s is None for s in lanes.values()):
            return None
        return max((s for s in lanes.values() if s is not None), default=0.0)

    def totals(self) -> CampaignTotals:
        return CampaignTotals(
            runs_done=sum(p.planned > 0 and p.done >= p.planned for p in self.runs.values()),
            runs=len(self.runs),
            episodes_done=sum(min(p.done, p.planned) for p in self.runs.values()),
            episodes=sum(p.planned for p in self.runs.values()),
            tokens=self.tokens,
            cost=self.cost,
            eta_s=self.eta_s(),
        )
