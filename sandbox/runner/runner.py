"""The Runner: a run's episodes on asyncio workers, each attempt's steps committed as it happens (group commit),
run-wide limits, resumable by run name.

The batch CLI and the TUI both drive this one runner, so a run launched from either is
the same run. Resuming skips finished trajectories, discards half-written ones and
refuses a run whose identity (dataset, agent, caps, seed, ablation) differs.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

from sandbox.agents.base import Agent, ServerUnreachable
from sandbox.agents.continuation import PREFIX_MARK, ContinuationAgent, prefix_turns
from sandbox.agents.estimated import EstimatedUsage
from sandbox.corpus import Corpus
from sandbox.episode import Episode
from sandbox.extra_tools.setting import open_extra_tools
from sandbox.prompts import build_prompt
from sandbox.records import Item, RunResult, RunStatus, Step
from sandbox.rescore import RECOMPUTED
from sandbox.runner.collector import fewer_young_collections
from sandbox.runner.events import RunEvent
from sandbox.runner.factory import AgentFactory, default_factory
from sandbox.runner.run_row import record_resume, retag, run_fields
from sandbox.runner.selection import select_items
from sandbox.runner.spec import RunSpec
from sandbox.runner.store_records import actions, item_meta, step_record, trajectory_record
from storage import Store
from storage.errors import StoreFull
from storage.locks import RunLock
from storage.records import StepRecord
from storage.step_writer import PendingTrajectory, StepWriter
from storage.store.columns import now as _now

RETRYABLE = ("infra", "api_errors", "transient_exhausted")  # error kinds of an attempt worth another one


class Runner:
    """Executes a RunSpec against a corpus and a store."""

    def __init__(
        self,
        spec: RunSpec,
        corpus: Corpus,
        store: Store,
        factory: AgentFactory | None = None,
        on_event: Callable[[RunEvent], None] | None = None,
    ):
        self.spec = spec
        self.corpus = corpus
        self.store = store
        self.factory = factory or default_factory(spec)
        self.on_event = on_event or (lambda _event: None)
        self.client: str | None = getattr(self.factory, "client", None)  # which model client the run's calls use
        self.caps = spec.effective_caps()
        self.done = self.correct = 0
        self.planned = 0
        self.run_id: int | None = None
        self.resumed = False  # the run existed before this session (`prepare`)
        self.stop_requested = False
        self.stop_reason: str | None = None
        self.run_tokens = 0
        self.run_cost = 0.0
        self.halted = False
        self.limit_hit: str | None = None  # "tokens" | "cost": which run-wide limit stopped the run
        self.store_full: str | None = None  # the store's error when its disk filled up (run stopped)
        self.unreachable: str | None = None  # the error of the model server that refused a connection (run stopped)
        self._workers: list[asyncio.Task] = []
        self.extra_tools: Any = None  # the setting's tools while the run executes (sandbox.extra_tools.registry)
        self.writer = StepWriter(store)  # the run's trajectories and steps, committed together (group commit)

    def prepare(self) -> tuple[int, list[tuple[Item, int]], int]:
        """Create or resume the run; (run id, pending work, already finished)."""
        items = select_items(self.corpus, self.spec)
        spec = self.spec
        run_id, existed = self.store.create_or_resume_run(
            spec.name, spec.identity(self.corpus.fingerprint), run_fields(spec, self.corpus, self.caps, self.client)
        )
        self.resumed = existed
        if existed:
            self._resume(run_id)
        finished = self.store.finished(run_id)
        pairs = [
            (item, r)
            for r in range(spec.replicates)
            for item in items
            if spec.shard is None or spec.shard.holds(item.id, r)
        ]
        work = [(item, r) for item, r in pairs if (item.id, r) not in finished]
        self.run_id = run_id
        self.planned = len(pairs)
        total_planned = max(self.planned, self.store.run_by_id(run_id)["planned"] or 0)
        self.store.update_run(run_id, status="running", started_at=_now(), planned=total_planned, finished_at=None)
        wanted = {(i.id, r) for i, r in pairs}
        prior = [t for t in self.store.trajectories(run_id) if (t["item_id"], t["replicate"]) in wanted]
        self.done, self.correct = len(prior), sum(1 for t in prior if t["correct"])
        return run_id, work, len(pairs) - len(work)

    def _resume(self, run_id: int) -> None:
        """Take up a stored run: what it spent, its unfinished trajectories dropped, stale derived columns
        recomputed, what this launch asked for recorded, its tags, and a run-wide limit already reached."""
        self.run_tokens, self.run_cost = self.store.spent(run_id)  # before discarding: those calls were paid for
        self.store.discard_unfinished(run_id)
        for stale, recompute in RECOMPUTED:  # older label rules, reads stored before their hops were recorded
            if stale(self.store.run_by_id(run_id)):
                recompute(self.store, self.store.run_by_id(run_id), self.corpus)
        record_resume(self.store, run_id, self.spec, self.corpus, self.client)
        retag(self.store, run_id, self.spec)
        reason = self._limit_reached(at_start=True)
        if reason:
            self.request_stop(reason)

    async def run(self, locked: bool = False) -> RunResult:
        """Run every pending episode; on cancellation the run is marked interrupted and stays resumable.

        One process at a time: a second one on the same run (another shell, the TUI) is refused with
        `RunBusy` before it reads or writes anything, instead of redoing the first one's pending items.
        `locked`: the caller holds the run's lock already (serve-mcp holds it for as long as it serves)."""
        if locked:
            return await self._run_with_tools()
        with RunLock(self.store.path, self.spec.name):
            return await self._run_with_tools()

    async def _run_with_tools(self) -> RunResult:
        """The run with its extra tools open (an MCP registry's server runs for as long as the run)."""
        async with open_extra_tools(
            self.spec.extra_tools, self.spec.agent_options.get("extra_tools_timeout_s")
        ) as extra:
            self.extra_tools = extra
            with fewer_young_collections():
                return await self._run_locked()

    async def _run_locked(self) -> RunResult:
        run_id, work, skipped = self.prepare()
        self.on_event(RunEvent("started", done=self.done, planned=self.planned, correct=self.correct, skipped=skipped))
        queue: asyncio.Queue[tuple[Item, int]] = asyncio.Queue()
        for job in work:
            queue.put_nowait(job)
        status: RunStatus = "done"
        started = time.monotonic()
        try:
            async with asyncio.TaskGroup() as tg:  # a worker cancelled by `_halt` ends quietly; the others go on
                self._workers = [
                    tg.create_task(self._worker(queue)) for _ in range(max(1, min(self.spec.workers, len(work) or 1)))
                ]
        except asyncio.CancelledError:
            status = "interrupted" if self.done < self.planned else "done"  # Ctrl-C after the last episode
            raise
        except BaseException:
            status = "failed"
            raise
        finally:
            if self.stop_requested and status == "done":
                status = "interrupted"
            status = self._last_writes(run_id, status)
            close = getattr(self.factory, "aclose", None)
            if close is not None:  # the run's connection pool; shielded so a cancelled run still closes it
                await asyncio.shield(close())
            self.on_event(RunEvent("finished", done=self.done, planned=self.planned, correct=self.correct))
        return {
            "run_id": run_id,
            "status": status,
            "stop_reason": self.stop_reason,
            "limit": self.limit_hit,
            "unreachable": self.unreachable,
            "store_full": self.store_full,
            "done": self.done,
            "planned": self.planned,
            "correct": self.correct,
            "skipped": skipped,
            "elapsed_s": time.monotonic() - started,
        }

    def _last_writes(self, run_id: int, status: RunStatus) -> RunStatus:
        """The run's end in the store: what the writer still holds (a cancelled episode's last steps), then the run's
        status. On a full disk either may find no room: the run then ends as stopped by it (`store_full`), its
        stored status possibly still `running` (the runs list shows a run whose process is gone as interrupted, and
        the same command resumes it)."""
        try:
            self.writer.close()
        except StoreFull as exc:
            self._store_full(exc)
            status = "interrupted" if status == "done" else status
        try:
            self.store.update_run(run_id, status=status, finished_at=_now(), note=self.stop_reason)
        except StoreFull as exc:
            self._store_full(exc)
        return status

    def _prefix(self, run_name: str, item_id: str, replicate: int) -> list:
        """The previous budget level's turns for this item (none when it has no finished trajectory there)."""
        previous = self.store.run(run_name)
        for t in self.store.trajectories(previous["id"], light=True):
            if t["item_id"] == item_id and t["replicate"] == replicate:
                return prefix_turns(self.store.steps(t["id"]), t["termination"], self.spec.prompt_set().stop)
        return []

    def request_stop(self, reason: str = "stopped by the user") -> None:
        """Finish the episodes in flight, start no new ones."""
        self.stop_requested = True
        self.stop_reason = self.stop_reason or reason

    def _account(self, step: Step) -> None:
        """Run-wide token and dollar limits, over everything the run has spent (earlier sessions included)."""
        if step.usage and not (step.usage.get("raw") or {}).get(PREFIX_MARK):  # a replayed turn spends nothing new
            self.run_tokens += step.usage["prompt"] + step.usage["completion"] + step.usage["cache_creation"]
        self.run_cost += step.cost_usd or 0.0
        if not self.halted:
            reason = self._limit_reached()
            if reason:
                self._halt(reason)

    def _limit_reached(self, at_start: bool = False) -> str | None:
        """Why the run must stop spending, if it must: past a limit (at start: at it, since any call would pass it).

        The count is every model call the run has paid for, which is more than a report's cost or tokens (final
        trajectories only): failed attempts that were retried, and the episodes in flight when a limit was crossed
        (cancelled, redone on resume) count too; the message says so. Sets `limit_hit` to "tokens" or "cost"."""
        spec = self.spec
        spent = "spent by every model call of the run, retried attempts and episodes cut short included"
        if spec.max_run_tokens and (
            self.run_tokens >= spec.max_run_tokens if at_start else self.run_tokens > spec.max_run_tokens
        ):
            self.limit_hit = "tokens"
            return f"run token limit reached ({self.run_tokens:,} tokens {spent}; the limit is {spec.max_run_tokens:,})"
        if spec.max_run_cost and (
            self.run_cost >= spec.max_run_cost if at_start else self.run_cost > spec.max_run_cost
        ):
            self.limit_hit = "cost"
            return f"run cost limit reached (${self.run_cost:.4f} {spent}; the limit is ${spec.max_run_cost:.4f})"
        return None

    def _halt(self, reason: str) -> None:
        """A run-wide stop (a limit crossed, the model server gone): cancel the episodes in flight now. They stay
        unfinished, so a resume redoes them."""
        self.halted = True
        self.stop_requested = True
        # what ended the run comes first: a stop asked for before (finish the episodes in flight) is overtaken
        self.stop_reason = reason if self.stop_reason is None else f"{reason} (after: {self.stop_reason})"
        for task in self._workers:
            task.cancel()

    def _server_gone(self, error: str | None) -> None:
        """The model server on this machine refused a connection (`ServerUnreachable`): every other item would end
        the same way within seconds, as a final error counted wrong that a resume never redoes. So the run stops
        as on a run-wide limit (interrupted, resumable), with the server's address (and a local model's log) as
        the reason; the episode that hit it is left unfinished like the ones cancelled here."""
        if self.unreachable is None:
            self.unreachable = error or "connection refused"
        if not self.halted:
            self._halt(f"the model server is unreachable: {self.unreachable}")

    def _store_full(self, exc: StoreFull) -> None:
        """The store's disk is full: no episode's steps can be committed any more, so every one in flight would be
        played for nothing. The run stops as on a run-wide limit (interrupted, resumable) with what was committed
        kept: the episodes in flight stay unfinished, and the same command redoes them once there is room."""
        if self.store_full is None:
            self.store_full = str(exc)
        if not self.halted:
            self._halt(str(exc))

    def _strategy(self):
        """The sequential strategy the run's scaling records (None: the original rule), its verifier made once."""
        scaling = self.spec.scaling or {}
        name = scaling.get("strategy")
        if not name:
            return None
        from sandbox.strategies import VERIFIER_TIMEOUT_S, Strategy, make_verifier  # only a scaling run needs it

        if name != "verifier":
            return Strategy(name)
        if getattr(self, "_verifier", None) is None:
            options = self.spec.verifier_options
            self._verifier = make_verifier(
                scaling.get("verifier") or "evidence",
                base_url=options.get("base_url"),
                api_key_env=options.get("api_key_env"),
                client=options.get("client") or "auto",
                instructions=self.spec.prompt_set().verifier,
                pricing=self.spec.agent_options.get("pricing"),
            )
        return Strategy(name, self._verifier, self.spec.verifier_options.get("timeout_s") or VERIFIER_TIMEOUT_S)

    async def _worker(self, queue: asyncio.Queue[tuple[Item, int]]) -> None:
        while not queue.empty() and not self.stop_requested:
            item, replicate = queue.get_nowait()
            await self._sample(item, replicate)

    async def _agent(self, item: Item, replicate: int, attempt: int) -> Agent:
        """The agent of one attempt, as the run asks for it: usage estimated, a previous level's turns replayed."""
        agent = self.factory(item, replicate, attempt)
        if inspect.isawaitable(agent):
            agent = await agent
        if self.spec.estimate_tokens:
            agent = EstimatedUsage(agent)
        if self.spec.scaling and self.spec.scaling.get("continue_from"):
            agent = ContinuationAgent(agent, self._prefix(self.spec.scaling["continue_from"], item.id, replicate))
        return agent

    async def _sample(self, item: Item, replicate: int) -> None:
        """One (item, replicate): up to `max_attempts` attempts, retrying only infrastructure failures."""
        assert self.run_id is not None
        # a run created by this session holds no attempt but its own: a query per episode only on a resume
        attempt = self.store.next_attempt(self.run_id, item.id, replicate) if self.resumed else 0
        view = self.corpus.view(item)
        while True:
            agent = await self._agent(item, replicate, attempt)
            text_tools = bool(getattr(agent, "text_tools", False))
            prompt = build_prompt(
                item,
                self.caps,
                self.spec.ablation,
                text_tools=text_tools,
                texts=self.spec.prompts,
                extra_tools=self.extra_tools,
            )
            meta = item_meta(item)
            trajectory = self.writer.begin(self.run_id, item.id, replicate, attempt, meta)
            pending: list[StepRecord] = []

            async def commit(trajectory: PendingTrajectory = trajectory, pending: list[StepRecord] = pending) -> None:
                """The turn's steps committed (with every other episode's of the moment) before the next model
                call is sent."""
                if pending:
                    self.writer.add_steps(trajectory, pending[:])
                    pending.clear()
                    await self.writer.written()

            # Offline agents never await anything: without a yield per step one worker would run every episode
            # to the end, other workers would never start and Ctrl-C (a cancellation) would wait for it. An agent
            # that awaits a server on every call yields there (each yield costs the event loop's one thread).
            yields = not getattr(agent, "yields_in_act", False)

            async def sink(step: Step, pending: list[StepRecord] = pending, yields: bool = yields) -> None:
                pending.append(step_record(step))
                self._account(step)
                self.on_event(RunEvent("step", item.id, replicate, step=step, done=self.done, planned=self.planned))
                if yields:
                    await asyncio.sleep(0)

            episode = Episode(
                view,
                agent,
                self.caps,
                prompt,
                on_step=sink,
                retry=self.spec.retry,
                context_budget=self.spec.context_budget,
                before_call=commit,
                strategy=self._strategy(),
                extra_tools=self.extra_tools,
            )
            try:
                traj = await episode.run()
            except StoreFull as exc:  # its turn's steps found no room: the run stops, this episode unfinished
                self._store_full(exc)
                return
            except BaseException:  # cancelled (Ctrl-C, a run-wide limit): what it spent stays counted (the run's
                self.writer.add_steps(trajectory, pending)  # end commits it)
                raise
            if traj.error_kind == ServerUnreachable.kind:  # not final: a resume runs this item again
                self.writer.add_steps(trajectory, pending)
                self._server_gone(traj.error)
                return
            retry = (
                traj.termination == "error"
                and traj.error_kind in RETRYABLE
                and attempt + 1 < self.spec.max_attempts
                and not self.stop_requested
            )
            record = trajectory_record(traj)
            record["tool_sequence"] = [s.tool_name for s in episode.steps if s.kind == "tool"]
            record["actions"] = actions(item, episode.steps)
            self.writer.finish(trajectory, record, final=not retry, steps=pending)
            try:
                await self.writer.written()  # on disk before it is announced (a caller may read it from the store)
            except StoreFull as exc:  # not on disk: not finished (a resume redoes it)
                self._store_full(exc)
                return
            if not retry:
                break
            attempt += 1
            delay = self.spec.attempt_backoff_s * attempt
            self.on_event(
                RunEvent(
                    "retry",
                    item.id,
                    replicate,
                    done=self.done,
                    planned=self.planned,
                    note=(
                        f"attempt {attempt + 1} of {self.spec.max_attempts} in {delay:.1f}s after {traj.error_kind}: "
                        f"{traj.error}"
                    ),
                )
            )
            await asyncio.sleep(delay)
        self.done += 1
        self.correct += int(traj.correct)
        self.on_event(
            RunEvent(
                "trajectory",
                item.id,
                replicate,
                trajectory=traj,
                done=self.done,
                planned=self.planned,
                correct=self.correct,
            )
        )
