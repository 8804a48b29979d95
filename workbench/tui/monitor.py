"""The live state of one run this TUI executes, built from the runner's events; what the live screen polls.

Plain Python, no Textual: `feed` is called on the runner's thread for every event and
does a few O(1) updates under a lock; the screen takes a `snapshot()` at most ten
times a second and redraws only when `version` moved. The clock is injectable so
throughput and ETA are testable.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from sandbox.records import TERMINATIONS, CapsRecord

KEEP_FINISHED = 32  # finished episodes whose transcript stays followable


@dataclass
class EpisodeLedger:
    """An episode's ledger as of its last step, and its end: what its row on the Live screen shows. A run this TUI
    executes keeps its steps (`Episode`), a run read from the store counts them (`store_monitor.StoredEpisode`)."""

    item_id: str
    replicate: int
    turn: int = 0
    points_used: int = 0
    tokens: int = 0
    rejections: int = 0
    last_call: str = ""
    finished: bool = False
    correct: bool | None = None
    termination: str | None = None

    @property
    def key(self) -> tuple[str, int]:
        return self.item_id, self.replicate

    def step_count(self) -> int:
        raise NotImplementedError

    def row(self) -> EpisodeRow:
        return EpisodeRow(
            self.key,
            self.turn,
            self.points_used,
            self.tokens,
            self.rejections,
            self.last_call,
            self.step_count(),
            self.finished,
            self.correct,
            self.termination,
        )


@dataclass
class Episode(EpisodeLedger):
    """One (item, replicate) in flight: its ledger as of the last step and the steps so far."""

    started: float = field(kw_only=True)
    steps: list[Any] = field(default_factory=list)

    def step_count(self) -> int:
        return len(self.steps)


@dataclass(frozen=True)
class EpisodeRow:
    key: tuple[str, int]
    turn: int
    points_used: int
    tokens: int
    rejections: int
    last_call: str
    n_steps: int
    finished: bool = False
    correct: bool | None = None
    termination: str | None = None


@dataclass(frozen=True)
class Snapshot:
    name: str
    status: str
    done: int
    planned: int
    correct: int
    new_done: int
    elapsed_s: float
    rate: float | None  # episodes per second in this session
    eta_s: float | None
    cost_usd: float | None
    terminations: dict[str, int]
    errors: tuple[str, ...]
    episodes: tuple[EpisodeRow, ...]  # in flight, oldest first
    message: str | None
    version: int
    finished: tuple[EpisodeRow, ...] = ()  # the last KEEP_FINISHED to finish, most recent first (still followable)

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.done if self.done else None


class LiveSource(Protocol):
    """What the Live screen follows: a run this TUI executes (`RunMonitor`, fed by the runner's events) or any run
    in the store (`store_monitor.StoreMonitor`, read from what its writer commits). `poll` brings the source up to
    date (the screen calls it before each redraw), `version` moves when a snapshot would differ."""

    name: str
    caps: CapsRecord
    tokens_measured: bool
    version: int

    def poll(self) -> None: ...

    def snapshot(self) -> Snapshot: ...

    def steps(self, key: tuple[str, int], start: int = 0) -> tuple[list[Any], bool, float] | None: ...

    def episode_outcome(self, key: tuple[str, int]) -> tuple[bool | None, str | None]: ...

    def keep(self, *keys: tuple[str, int] | None) -> None: ...

    def close(self) -> None: ...


def call_label(step: Any) -> str:
    """`read_section(paper, C)`-style label of a tool step, from its name and arguments."""
    return tool_label(step.tool_name, step.tool_args)


def tool_label(name: str | None, args: Any) -> str:
    """`read_section(paper, C)`-style label of a call: each argument's value, long ones cut."""
    if isinstance(args, dict):
        parts = []
        for _key, value in args.items():
            text = str(value)
            parts.append(text if len(text) <= 14 else text[:12] + "…")
        inner = ", ".join(parts)
    elif args is None:
        inner = ""
    else:
        inner = "…"
    return f"{name}({inner})"


class RunMonitor:
    """Feeds on RunEvents; see the module docstring."""

    def __init__(self, name: str, caps: CapsRecord, clock: Callable[[], float] = time.monotonic):
        self.name = name
        self.caps = caps
        self.tokens_measured = True  # False for a scripted agent: its 0 tokens are no measurement (the Live "—")
        self.clock = clock
        self._lock = threading.Lock()
        self.version = 0
        self.status = "starting"
        self.message: str | None = None
        self.done = self.planned = self.correct = self.new_done = 0
        self.t0: float | None = None
        self.t_end: float | None = None
        self.cost = 0.0
        self.priced = False
        self.terminations: Counter[str] = Counter()
        self.errors: list[str] = []
        self.live: dict[tuple[str, int], Episode] = {}
        self.finished_eps: OrderedDict[tuple[str, int], Episode] = OrderedDict()
        self.kept: frozenset[tuple[str, int]] = frozenset()  # finished episodes a screen highlights or follows
        self.elapsed_before = 0.0  # what the run's earlier session took (a relaunch)

    def seed(self, terminations: dict[str, int], elapsed_before: float, cost: float | None) -> None:
        """What the stored run holds before this session: a relaunched run (finished already, or resumed) shows
        its real terminations, elapsed time and cost, not this session's zeros."""
        with self._lock:
            self.terminations.update({t: n for t, n in terminations.items() if n})
            self.elapsed_before = max(0.0, elapsed_before)
            if cost is not None:
                self.cost += cost
                self.priced = True
            self.version += 1

    # ------------------------------------------------------------ writer side (runner thread)

    def feed(self, event: Any) -> None:
        with self._lock:
            kind = event.kind
            if kind == "started":
                self.t0 = self.clock()
                self.status = "running"
                self.message = None
                self.done, self.planned, self.correct = event.done, event.planned, event.correct
            elif kind == "step":
                self._step(event)
            elif kind == "trajectory":
                self._trajectory(event)
            elif kind == "finished":
                self.done, self.planned, self.correct = event.done, event.planned, event.correct
                self.t_end = self.clock()
            self.version += 1

    def _step(self, event: Any) -> None:
        key = (event.item_id, event.replicate)
        step = event.step
        ep = self.live.get(key)
        if ep is None or step.index == 0:  # a new episode, or a retried attempt starting over
            ep = self.live[key] = Episode(event.item_id, event.replicate, started=self.clock())
            self.finished_eps.pop(key, None)
        ep.steps.append(step)
        led = step.ledger
        ep.turn, ep.points_used, ep.tokens, ep.rejections = led.turn, led.points_used, led.tokens, led.rejections
        if step.kind == "tool":
            ep.last_call = call_label(step)
        if step.cost_usd is not None:
            self.cost += step.cost_usd
            self.priced = True

    def _trajectory(self, event: Any) -> None:
        key = (event.item_id, event.replicate)
        traj = event.trajectory
        self.done, self.planned, self.correct = event.done, event.planned, event.correct
        self.new_done += 1
        self.terminations[traj.termination] += 1
        if traj.termination == "error" and traj.error:
            self.errors.append(f"{event.item_id}: {traj.error}")
            del self.errors[:-20]
        ep = self.live.pop(key, None)
        if ep is not None:
            ep.finished, ep.correct, ep.termination = True, bool(traj.correct), traj.termination
            self.finished_eps[key] = ep
            while len(self.finished_eps) > KEEP_FINISHED:
                oldest = next((k for k in self.finished_eps if k not in self.kept), None)
                if oldest is None:
                    break
                del self.finished_eps[oldest]

    def note(self, message: str) -> None:
        """What a starting run is doing (opening the dataset, loading the model client): shown until it starts."""
        with self._lock:
            self.message = message
            self.version += 1

    def finish(self, status: str, message: str | None = None) -> None:
        """The job's ending: done, interrupted or failed (with the reason)."""
        with self._lock:
            self.status = status
            self.message = message
            if self.t_end is None:
                self.t_end = self.clock()
            self.live.clear()
            self.version += 1

    def keep(self, *keys: tuple[str, int] | None) -> None:
        """Keep these episodes listed and followable once finished, past KEEP_FINISHED: the live screen keeps
        the one highlighted and the one followed, so a fast run cannot drop the row under the cursor."""
        with self._lock:
            self.kept = frozenset(k for k in keys if k is not None)

    # ------------------------------------------------------------ reader side (UI thread)

    def poll(self) -> None:
        """Nothing to read: the runner's events land here as they happen."""

    def close(self) -> None:
        """Nothing to release: the job owns the run's store connection."""

    def snapshot(self) -> Snapshot:
        with self._lock:
            now = self.t_end if self.t_end is not None else self.clock()
            session = max(0.0, now - self.t0) if self.t0 is not None else 0.0
            elapsed = self.elapsed_before + session
            rate = self.new_done / session if session > 0 and self.new_done else None
            left = max(0, self.planned - self.done)
            eta = left / rate if rate else (0.0 if self.status == "running" and not left else None)
            rows = tuple(ep.row() for ep in sorted(self.live.values(), key=lambda e: e.started))
            finished = tuple(ep.row() for ep in reversed(self.finished_eps.values()))
            return Snapshot(
                name=self.name,
                status=self.status,
                done=self.done,
                planned=self.planned,
                correct=self.correct,
                new_done=self.new_done,
                elapsed_s=elapsed,
                rate=rate,
                eta_s=eta,
                cost_usd=self.cost if self.priced else None,
                terminations={t: self.terminations.get(t, 0) for t in TERMINATIONS},
                errors=tuple(self.errors[-5:]),
                episodes=rows,
                message=self.message,
                version=self.version,
                finished=finished,
            )

    def steps(self, key: tuple[str, int], start: int = 0) -> tuple[list[Any], bool, float] | None:
        """(steps from `start`, finished?, the attempt's start time) of an episode; None when it is not known.

        The start time changes when a retried attempt starts over: a follower then reads again from 0.
        """
        with self._lock:
            ep = self.live.get(key) or self.finished_eps.get(key)
            if ep is None:
                return None
            return list(ep.steps[start:]), ep.finished, ep.started

    def episode_outcome(self, key: tuple[str, int]) -> tuple[bool | None, str | None]:
        with self._lock:
            ep = self.live.get(key) or self.finished_eps.get(key)
            return (ep.correct, ep.termination) if ep else (None, None)
