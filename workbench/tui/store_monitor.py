"""The live state of any run in the store, read from what its writer commits: what the Live screen follows of a
run another process executes (`--batch run` over SSH, `serve-mcp`, another TUI, a campaign).

The runner commits each episode's steps once per turn, so the store holds every episode's ledger as of its last
turn. This reader has a read-only connection of its own (WAL: it never blocks the writer, which never waits for
it) and is polled by the screen: `poll` asks SQLite's `data_version` first (no read at all while nothing was
committed), then reads only what moved — the steps after the last one read of each episode in flight, the
trajectories finished since (`Store.live_episodes`, `Store.finished_since`). Whether the writer still runs is its run
lock's holder: a run recorded as running whose holder is gone was killed, and says interrupted. Plain Python, no
Textual; its snapshot is `monitor.Snapshot`, as the in-process `RunMonitor`'s.
"""

from __future__ import annotations

import json
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from sandbox.records import TERMINATIONS, CapsRecord
from storage.rows import FinishedRow, LiveEpisodeRow
from workbench.tui.monitor import KEEP_FINISHED, EpisodeLedger, Snapshot, tool_label

Key = tuple[str, int]
GONE = "the process executing it is gone (killed?): launch the same run to resume it"
DELETED = "the run is no longer in the store (deleted)"
ACTIVE = ("starting", "running")


def epoch(iso: str | None) -> float | None:
    """An ISO time as the store writes it, in seconds since the epoch (None when absent or unreadable)."""
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


@dataclass
class StoredEpisode(EpisodeLedger):
    """An episode as its committed steps leave it: its trajectory (a retried attempt is a new one) and ledger."""

    trajectory_id: int = field(kw_only=True)
    n_steps: int = 0
    cost: float = 0.0

    def step_count(self) -> int:
        return self.n_steps

    def take(self, now: LiveEpisodeRow) -> bool:
        """The episode as its committed steps leave it now; whether it moved since the last look."""
        if now["n_steps"] == self.n_steps:
            return False
        self.n_steps = now["n_steps"]
        self.turn = int(now["turn"] or 0)
        self.points_used = int(now["points_used"] or 0)
        self.tokens = int(now["tokens"] or 0)
        self.rejections = int(now["rejections"] or 0)
        if now["tool_name"] is not None:
            args = json.loads(now["tool_args"]) if now["tool_args"] else None
            self.last_call = tool_label(now["tool_name"], args)
        self.cost += now["new_cost_usd"] or 0.0
        return True


class StoreMonitor:
    """A run in the store followed by polling, with `RunMonitor`'s interface (see the module docstring).
    StoreError when there is no store or no such run."""

    def __init__(self, store_path: Path | str, name: str, clock: Callable[[], float] = time.time):
        from workbench.service.agents import measures_tokens
        from workbench.service.stores import open_store

        self.store_path = Path(store_path)
        self.name = name
        self.clock = clock
        self.store = open_store(self.store_path, readonly=True)
        try:
            run = self.store.run(name)
        except Exception:
            self.store.close()
            raise
        self.run_id: int = run["id"]
        self.caps = cast(CapsRecord, run["caps"])
        self.tokens_measured = measures_tokens(run["agent"], run["identity"])
        self.version = 0
        self.status = "starting"
        self.message: str | None = None
        self.kept: frozenset[Key] = frozenset()
        self._data_version: int | None = None
        self._progress: tuple[Any, ...] | None = None
        self._run: dict[str, Any] = {}
        self._start(dict(run))
        self.poll()

    def _start(self, run: dict[str, Any]) -> None:
        """Count what the run holds now (its finished trajectories by termination, correct, cost), from zero: at
        the first look, and again when a process takes the run up again (a resume: a new session)."""
        self._run = run
        self.done = self.correct = self.new_done = 0
        self.terminations: Counter[str] = Counter()
        self.errors: list[str] = []
        self.cost, self.priced = 0.0, False
        self.live: dict[Key, StoredEpisode] = {}
        self.finished_eps: OrderedDict[Key, StoredEpisode] = OrderedDict()
        # what makes every finish counted once (`_finished`): the trajectories counted, those seen in flight since
        # the last count, the highest id seen in flight, and that id as of the last count (0: read them all)
        self._counted: set[int] = set()
        self._unsettled: set[int] = set()
        self._max_id = self._watermark = 0
        self._progress = None  # the next poll counts (from the first trajectory on, after a new session's start)
        self.version += 1

    # ------------------------------------------------------------ reading the store

    def poll(self) -> None:
        """Read what was committed since the last poll (nothing when nothing was), then whether the writer runs."""
        if self.message == DELETED:
            return
        version = self.store.data_version()
        if version != self._data_version:
            self._data_version = version
            progress = self.store.run_progress(self.run_id)
            if progress[0] is None:  # no run row any more: deleted (by another process) while watched
                self._deleted()
                return
            if self.status in ACTIVE:
                self._in_flight()  # before the finished ones: see `_finished`
            if progress != self._progress:
                self._reread_run()
                self._progress = progress
                self._finished()
        self._writer()

    def _deleted(self) -> None:
        self.status, self.message = "failed", DELETED
        self.live.clear()
        self.version += 1

    def _reread_run(self) -> None:
        """The run's row again; a new session (a process took the run up again: a new start time) is counted
        anew, from what the store holds then."""
        run = dict(self.store.run_by_id(self.run_id))
        if run == self._run:
            return
        if run["started_at"] != self._run.get("started_at"):
            self._start(run)
        else:
            self._run = run
        self.version += 1

    def _finished(self) -> None:
        """The trajectories finished since the last count, each counted once, their episodes moved to the finished.

        Read after the episodes in flight, it asks for those seen in flight since the last count and those above
        the highest id seen in flight as of the last count: a trajectory that finished since began either before
        that look (then it was in flight at it) or after it (then its id is higher: ids are given at the start)."""
        for t in self.store.finished_since(self.run_id, self._watermark, self._unsettled):
            if t["id"] not in self._counted:
                self._counted.add(t["id"])
                self._count(t)
                self.version += 1
        self._unsettled = {ep.trajectory_id for ep in self.live.values()}  # the rest finished, not final (a retry)
        self._watermark = self._max_id

    def _count(self, t: FinishedRow) -> None:
        key = (t["item_id"], t["replicate"])
        termination = t["termination"] or "?"
        self.done += 1
        self.correct += bool(t["correct"])
        self.new_done += (t["finished_at"] or "") >= (self._run["started_at"] or "")  # in this session
        self.terminations[termination] += 1
        if t["cost_usd"] is not None:
            self.cost += t["cost_usd"]
            self.priced = True
        if termination == "error" and t["error"]:
            self.errors.append(f"{t['item_id']}: {t['error']}")
            del self.errors[:-20]
        ep = self.live.pop(key, None) or StoredEpisode(t["item_id"], t["replicate"], trajectory_id=t["id"])
        ep.finished, ep.correct, ep.termination = True, bool(t["correct"]), termination
        if t["turns"] is not None:  # where it ended, also for an episode begun and finished between two polls
            ep.turn, ep.points_used, ep.tokens = t["turns"], t["points_used"] or 0, t["tokens"] or 0
        self.finished_eps[key] = ep
        self.finished_eps.move_to_end(key)
        while len(self.finished_eps) > KEEP_FINISHED:
            oldest = next((k for k in self.finished_eps if k not in self.kept), None)
            if oldest is None:
                break
            del self.finished_eps[oldest]

    def _in_flight(self) -> None:
        """The episodes in flight as their committed steps leave them (only the steps since the last poll are read)."""
        by_id = {ep.trajectory_id: ep for ep in self.live.values()}
        live: dict[Key, StoredEpisode] = {}
        moved = False
        for now in self.store.live_episodes(self.run_id, {tid: ep.n_steps for tid, ep in by_id.items()}):
            tid = now["trajectory_id"]
            ep = by_id.get(tid)
            if ep is None:
                ep = StoredEpisode(now["item_id"], now["replicate"], trajectory_id=tid)
                self._unsettled.add(tid)
                self._max_id = max(self._max_id, tid)
            live[ep.key] = ep
            moved = ep.take(now) or moved
        if moved or live.keys() != self.live.keys():
            self.version += 1
        self.live = live  # an attempt retried (or abandoned) leaves; its episode comes back as the next attempt

    def _writer(self) -> None:
        """The run's state from its writer: running while a process holds its lock (starting until the runner
        marks it running); recorded as running with no holder: killed, interrupted; else as recorded."""
        from workbench.service.stores import lock_holder

        holder = lock_holder(self.store_path, self.name)
        if holder is None and self._run["status"] == "running":  # it may have ended since the last read
            if self.store.run_progress(self.run_id)[0] is None:
                self._deleted()
                return
            self._reread_run()
        if holder is not None:
            running = self._run["status"] == "running"
            status, message = ("running", None) if running else ("starting", "another process is starting it…")
        elif self._run["status"] == "running":
            status, message = "interrupted", GONE
        else:
            status, message = self._run["status"], self._run["note"]
        if (status, message) == (self.status, self.message):
            return
        self.status, self.message = status, message
        if status not in ACTIVE:
            self.live.clear()
        self.version += 1

    # ------------------------------------------------------------ the monitor's interface

    def snapshot(self) -> Snapshot:
        started, ended = epoch(self._run["started_at"]), epoch(self._run["finished_at"])
        end = ended if self.status not in ACTIVE and ended is not None else self.clock()
        elapsed = max(0.0, end - started) if started is not None else 0.0
        rate = self.new_done / elapsed if elapsed > 0 and self.new_done else None
        left = max(0, int(self._run["planned"] or 0) - self.done)
        eta = left / rate if rate else (0.0 if self.status == "running" and not left else None)
        live_cost = sum(ep.cost for ep in self.live.values())
        return Snapshot(
            name=self.name,
            status=self.status,
            done=self.done,
            planned=int(self._run["planned"] or 0),
            correct=self.correct,
            new_done=self.new_done,
            elapsed_s=elapsed,
            rate=rate,
            eta_s=eta,
            cost_usd=self.cost + live_cost if self.priced or live_cost else None,
            terminations={t: self.terminations.get(t, 0) for t in TERMINATIONS},
            errors=tuple(self.errors[-5:]),
            episodes=tuple(ep.row() for ep in self.live.values()),
            message=self.message,
            version=self.version,
            finished=tuple(ep.row() for ep in reversed(self.finished_eps.values())),
        )

    def steps(self, key: Key, start: int = 0) -> tuple[list[Any], bool, float] | None:
        """(the episode's steps from `start` on, read from the store; finished?; its attempt's mark, the
        trajectory's id: a retried attempt is another); None when the episode is not known."""
        ep = self.live.get(key) or self.finished_eps.get(key)
        if ep is None:
            return None
        return self.store.steps(ep.trajectory_id, start), ep.finished, float(ep.trajectory_id)

    def episode_outcome(self, key: Key) -> tuple[bool | None, str | None]:
        ep = self.live.get(key) or self.finished_eps.get(key)
        return (ep.correct, ep.termination) if ep else (None, None)

    def keep(self, *keys: Key | None) -> None:
        """Keep these episodes listed and followable once finished (the row under the cursor, the one followed)."""
        self.kept = frozenset(k for k in keys if k is not None)

    def close(self) -> None:
        self.store.close()
