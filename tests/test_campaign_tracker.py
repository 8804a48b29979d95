"""A campaign's running totals (`workbench.service.campaign.CampaignTracker`), fed events by hand on a clock the
test turns: the time left is the slowest lane's, not the episodes left over the whole campaign's rate."""

from __future__ import annotations

import dataclasses

from sandbox.records import Trajectory
from sandbox.runner import RunEvent
from workbench.service.campaign import CampaignTracker, RunState
from workbench.views.campaign import totals_line


def episode(tokens: int = 0) -> Trajectory:
    """A finished episode with nothing but its tokens (the tracker reads those and its cost)."""
    values = {f.name: None for f in dataclasses.fields(Trajectory) if f.default is dataclasses.MISSING}
    values.update(item_id="i", termination="answer", tokens=tokens, cost_usd=None, reads=[])
    return Trajectory(**values)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def finish(tracker: CampaignTracker, run: str, n: int, start: int = 0) -> None:
    for done in range(start + 1, start + n + 1):
        tracker.feed(run, RunEvent("trajectory", trajectory=episode(), done=done))


def two_lanes(clock: Clock) -> CampaignTracker:
    """A scripted run of 100 episodes on this machine's lane, a model's run of 10 on its endpoint's."""
    states = [
        RunState("c-h-full", "h", "scripted", "run", 100, 0, "not started"),
        RunState("c-gpt-full", "gpt", "http://h/v1", "run", 10, 0, "not started"),
    ]
    tracker = CampaignTracker(states, clock=clock)
    tracker.feed("c-h-full", RunEvent("started", planned=100))
    tracker.feed("c-gpt-full", RunEvent("started", planned=10))
    return tracker


def test_a_fast_scripted_lane_does_not_hide_a_slow_model_lanes_time_left():
    clock = Clock()
    tracker = two_lanes(clock)
    finish(tracker, "c-h-full", 100)
    tracker.feed("c-h-full", RunEvent("finished", done=100, planned=100))
    finish(tracker, "c-gpt-full", 1)
    clock.now = 10.0  # the model's lane: 1 episode in 10s, 9 left
    totals = tracker.totals()
    assert totals.eta_s == 90.0
    assert totals_line("c", totals).endswith("· ETA 1m30s")
    assert tracker.lanes_left() == {"http://h/v1": 90.0}


def test_the_longest_lane_sets_the_time_left_and_a_lane_without_a_rate_leaves_it_unknown():
    clock = Clock()
    tracker = two_lanes(clock)
    finish(tracker, "c-h-full", 50)
    clock.now = 5.0
    assert tracker.totals().eta_s is None  # the model's lane has work and no episode yet: no honest estimate
    finish(tracker, "c-gpt-full", 5)
    finish(tracker, "c-h-full", 25, start=50)
    clock.now = 10.0  # the model's lane: 5 in 10s, 5 left (10s); the scripted lane: 75 in 10s, 25 left (3.3s)
    assert tracker.lanes_left() == {"scripted": 25 * 10 / 75, "http://h/v1": 10.0}
    assert tracker.totals().eta_s == 10.0


def test_a_run_that_ended_this_session_is_not_waited_for():
    clock = Clock()
    tracker = two_lanes(clock)
    finish(tracker, "c-h-full", 100)
    tracker.feed("c-h-full", RunEvent("finished", done=100, planned=100))
    tracker.ended("c-gpt-full", "interrupted")  # its endpoint unreachable: nothing more comes from its lane
    clock.now = 1.0
    assert tracker.lanes_left() == {}
    assert tracker.totals().eta_s == 0.0
