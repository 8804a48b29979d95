"""What the runner tells its caller as a run goes: `RunEvent`, a step, a retry or a finished trajectory with the run's
running totals (the TUI's live screen and the CLI's progress read them)."""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.records import RunEventKind, Step, Trajectory


@dataclass
class RunEvent:
    """What the runner tells its caller: a step, or a finished trajectory, with the run's running totals."""

    kind: RunEventKind
    item_id: str | None = None
    replicate: int = 0
    step: Step | None = None
    trajectory: Trajectory | None = None
    done: int = 0
    planned: int = 0
    correct: int = 0
    skipped: int = 0
    note: str | None = None  # retry: why, which attempt, how long until it
