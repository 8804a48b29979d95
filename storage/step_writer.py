"""Group commit of a run's trajectories and steps: the writes of every episode at one moment in one transaction.

A run with hundreds of episodes in flight wrote each one's start, each turn's steps and its result in
transactions of their own (about five per episode), and each BEGIN IMMEDIATE … COMMIT in WAL cost as
much as the inserts it held, on the event loop's one thread. Here an episode hands its writes over
and, before its next model call, waits until they are committed (`written`): the writes handed over
within one pass of the event loop are committed together, in the next pass, in one transaction.

So the store's promise holds: a turn's steps are on disk before the episode's next model call goes
out (a killed run loses at most each episode's turn in flight, which a resume discards with the
unfinished trajectory), and a finished trajectory is on disk before the runner announces it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from storage.records import ItemMeta, StepRecord, TrajectoryRecord
from storage.store import Store
from storage.store.columns import now


@dataclass
class PendingTrajectory:
    """A trajectory handed to the writer: its row id once its start is committed (the steps refer to it)."""

    id: int | None = None


class StepWriter:
    """Queues a run's writes and commits them together, once per pass of the event loop; see the module docstring.

    One per run, used from the run's event loop only (the store's connection is not shared across threads)."""

    def __init__(self, store: Store):
        self.store = store
        self._queue: list[Callable[[], None]] = []
        self._flush_due = False  # a commit of the queued writes is scheduled for the loop's next pass
        self._waiters: list[asyncio.Future[None]] = []  # one per episode waiting for that commit (`written`)
        self._failure: Exception | None = None  # a commit of the loop's pass that failed, raised again by `close`

    def begin(self, run_id: int, item_id: str, replicate: int, attempt: int, meta: ItemMeta) -> PendingTrajectory:
        """A running trajectory, inserted with the next commit (started now)."""
        trajectory = PendingTrajectory()
        started_at = now()

        def insert() -> None:
            trajectory.id = self.store.insert_trajectory(run_id, item_id, replicate, attempt, meta, started_at)

        self._enqueue(insert)
        return trajectory

    def add_steps(self, trajectory: PendingTrajectory, steps: list[StepRecord]) -> None:
        """Steps of a trajectory (the writer keeps the list: the caller hands over a list it no longer changes)."""
        if steps:
            self._enqueue(lambda: self.store.insert_steps(self._id(trajectory), steps))

    def finish(
        self, trajectory: PendingTrajectory, result: TrajectoryRecord, final: bool, steps: list[StepRecord]
    ) -> None:
        """The last steps and the outcome, in the same transaction: before it the trajectory does not count."""
        finished_at = now()

        def record() -> None:
            if steps:
                self.store.insert_steps(self._id(trajectory), steps)
            self.store.record_result(self._id(trajectory), result, final, finished_at)

        self._enqueue(record)

    async def written(self) -> None:
        """Return once everything handed over so far is committed (at once when nothing is waiting).

        Each waiting episode has a future of its own, which the commit resolves: a cancelled episode stops
        waiting and the others' commit goes on (a shared future would be cancelled with the first episode's
        task; shielding it cost every waiter one more pass of the event loop before it woke)."""
        if self._flush_due:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter

    def close(self) -> None:
        """The run's end: commit what is left (a cancelled episode's last steps); a failed earlier commit raises."""
        failure = self._commit() or self._failure
        if failure is not None:
            raise failure

    def _enqueue(self, write: Callable[[], None]) -> None:
        self._queue.append(write)
        if not self._flush_due:
            self._flush_due = True
            asyncio.get_running_loop().call_soon(self._flush_pass)

    def _flush_pass(self) -> None:
        """The event loop's commit: a failure reaches the episodes waiting for it (`written`) and the run's end
        (`close`), not the event loop's handler."""
        self._failure = self._failure or self._commit()

    def _commit(self) -> Exception | None:
        """Commit everything handed over, in one transaction, and wake the episodes waiting; the failure, if any."""
        queue, self._queue = self._queue, []
        waiters, self._waiters = self._waiters, []
        self._flush_due = False
        failure = None
        try:
            if queue:
                with self.store.transaction():
                    for write in queue:
                        write()
        except Exception as exc:  # noqa: BLE001 — handed to the waiting episodes and returned, none swallowed
            failure = exc
        for waiter in waiters:
            if waiter.done():  # its episode was cancelled while it waited
                continue
            if failure is None:
                waiter.set_result(None)
            else:
                waiter.set_exception(failure)
        return failure

    @staticmethod
    def _id(trajectory: PendingTrajectory) -> int:
        assert trajectory.id is not None  # its start is queued before its steps, so committed first
        return trajectory.id
