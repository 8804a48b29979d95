"""A run executing in the background of the TUI, through the same runner as --batch (`workbench.service.execution`).

The run is an app-level thread worker (`app.run_worker(..., thread=True)`), so popping
or switching screens never cancels it, and its SQLite writes and scripted agents never
block the UI's event loop. The worker runs its own asyncio loop; `cancel()` cancels the
runner's task on that loop (the runner marks the run interrupted and it stays
resumable), `stop()` lets the episodes in flight finish and starts no new ones.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypedDict

from sandbox.records import RunResult
from workbench.service.records.parallel import ParallelReport
from workbench.tui.monitor import RunMonitor


def describe(exc: BaseException) -> str:
    """What went wrong, in one line: the runner's TaskGroup wraps an episode's error in an ExceptionGroup
    ("unhandled errors in a TaskGroup (2 sub-exceptions)"), which says nothing; show the errors inside."""
    if isinstance(exc, BaseExceptionGroup):
        inner = list(dict.fromkeys(describe(e) for e in exc.exceptions))
        more = f" (and {len(inner) - 3} more)" if len(inner) > 3 else ""
        return "; ".join(inner[:3]) + more
    return f"{type(exc).__name__}: {exc}"


def session_seconds(started_at: str | None, finished_at: str | None) -> float:
    """How long a run's last recorded session took (its started_at → finished_at), 0 when it never finished one."""
    if started_at is None or finished_at is None:
        return 0.0
    try:
        return (datetime.fromisoformat(finished_at) - datetime.fromisoformat(started_at)).total_seconds()
    except ValueError:
        return 0.0


def background(app: Any, body: Callable[[], Any], kind: str, name: str, group: str) -> Any:
    """`body` as an app-level thread worker (`kind:name` in `group`): leaving a screen never cancels it, and an
    error in it is the job's to report, not the app's end."""
    return app.run_worker(
        body, name=f"{kind}:{name}", group=group, thread=True, exit_on_error=False, description=f"{kind} {name}"
    )


def tokens_measured(spec: Any) -> bool:
    """Whether the run's token counts are measurements (the reports' one rule): a scripted agent calls no model."""
    from workbench.service.agents import measures_tokens

    return measures_tokens(spec.agent, {"estimate_tokens": spec.estimate_tokens})


class LevelProgress(TypedDict):
    """How far one level of a study got: its run, status, episodes done of planned and correct so far."""

    run: str
    status: str
    done: int
    planned: int
    correct: int


class RunJob:
    def __init__(self, spec: Any, store_path: Path, cache_dir: Path):
        self.spec = spec
        self.store_path = store_path
        self.cache_dir = cache_dir
        self.monitor = RunMonitor(spec.name, spec.effective_caps().as_dict())
        self.monitor.tokens_measured = tokens_measured(spec)
        self.runner: Any = None
        self.worker: Any = None
        self.result: RunResult | None = None
        self.listeners: list[Callable[[Any], None]] = []  # hear the run's events too (a campaign's totals)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task | None = None
        self._cancelled = False

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def active(self) -> bool:
        return self.monitor.status in ("starting", "running")

    @property
    def in_progress(self) -> bool:
        """Active and begun: launched on its own worker, or reached by its campaign's lane. A campaign's run waiting
        its turn is active (it may not be deleted or renamed meanwhile) but not in progress."""
        return self.active and (self.worker is not None or self._loop is not None)

    def start(self, app) -> None:
        self.worker = background(app, self.execute, "run", self.name, "runs")

    async def execute(self) -> RunResult | None:
        """The worker body (on the worker's thread and loop)."""
        from workbench.service.datasets import open_dataset
        from workbench.service.errors import DatasetError, InvalidSlice, StoreError
        from workbench.service.execution import runner
        from workbench.service.stores import open_store

        self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        corpus = store = None
        try:
            if self._cancelled:
                raise asyncio.CancelledError
            self.monitor.note("opening the dataset…")
            corpus, _ = open_dataset(self.spec.dataset, self.cache_dir, on_fetch=self._fetching)
            self._load_model_client()
            store = open_store(self.store_path)
            self._seed(store)
            self.runner = runner(self.spec, corpus, store, on_event=self._feed)
            self.result = await self.runner.run()
            self.monitor.finish(self.result["status"], self.result["stop_reason"])  # a limit, a server gone
            return self.result
        except asyncio.CancelledError:
            self.monitor.finish(
                "interrupted", "cancelled: finished trajectories are stored; launch the same run to resume"
            )
            return None
        except (DatasetError, InvalidSlice, StoreError) as exc:
            self.monitor.finish("failed", str(exc))
            return None
        except Exception as exc:
            self.monitor.finish("failed", describe(exc))
            raise
        finally:
            if store is not None:
                store.close()
            if corpus is not None:
                corpus.close()

    def _feed(self, event: Any) -> None:
        """The runner's event to the live screen's monitor, then to each listener."""
        self.monitor.feed(event)
        for listener in self.listeners:
            listener(event)

    def _fetching(self, event: Any) -> None:
        """A Hub release's download, said on the live screen while the run starts (from the download's threads)."""
        if event.bytes_total:
            from workbench.views.cells import fetch_line

            self.monitor.note(fetch_line(event))

    def _seed(self, store: Any) -> None:
        """A relaunch: the live screen starts from what the store holds (terminations, cost, the last session's
        elapsed time), read before the runner marks the run running again."""
        from workbench.service.errors import StoreError

        try:
            run = store.run(self.name)
        except StoreError:
            return  # a new run
        rows = store.trajectories(run["id"], light=True)
        costs = [t["cost_usd"] for t in rows if t.get("cost_usd") is not None]
        elapsed = session_seconds(run["started_at"], run["finished_at"])
        self.monitor.seed(dict(Counter(t["termination"] for t in rows)), elapsed, sum(costs) if costs else None)

    def _load_model_client(self) -> None:
        """Import litellm before the run starts (several seconds), saying so: otherwise the first episodes import
        it and the live screen shows a running run with no episodes meanwhile."""
        from workbench.service.agents import load_litellm, needs_litellm

        if not needs_litellm(self.spec):
            return  # no model, a local one, or the native client serves it: litellm is never imported
        self.monitor.note("loading the model client (litellm)…")
        load_litellm()

    def stop(self) -> None:
        """Finish the episodes in flight, start no new ones."""
        if self.runner is not None:
            self.runner.request_stop()
        else:
            self.cancel()

    def cancel(self) -> None:
        """Interrupt now (thread-safe)."""
        self._cancelled = True
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                loop.call_soon_threadsafe(task.cancel)


class StudyJob:
    """A scaling study launched from the Scaling screen: its runs one after another (each a `RunJob`, executed in
    this job's one app-level thread worker, so leaving the screen never stops it), then, for a parallel study, its
    judge asked (`workbench.service.scaling.judge_study`). A level cut short (a run-wide limit, a server gone, a
    cancel) stops the study, as the CLI's sweep stops; launching the same study again resumes it level by level."""

    def __init__(self, plan: Any, store_path: Path, cache_dir: Path):
        self.plan = plan
        self.store_path = store_path
        self.cache_dir = cache_dir
        self.levels = [RunJob(spec, store_path, cache_dir) for spec in plan.specs]
        self.status = "starting"  # starting | running | judging | done | stopped | failed
        self.message = ""
        self.report: ParallelReport | None = None
        self.worker: Any = None
        self._current: RunJob | None = None
        self._cancelled = False
        self.listeners: list[Any] = []  # called on the app's thread when a level ends or the status changes
        self._app: Any = None

    @property
    def name(self) -> str:
        return self.plan.name

    def _changed(self) -> None:
        """Tell the listeners (a Scaling screen redraws), on the app's thread; never fails the study."""
        app = self._app
        for listener in list(self.listeners):
            # whatever the listener raises, or the app closing: never fails the study (its screen may be gone)
            with contextlib.suppress(Exception):
                app.call_from_thread(listener)

    @property
    def active(self) -> bool:
        return self.status in ("starting", "running", "judging")

    @property
    def finished_levels(self) -> int:
        return sum(job.monitor.status == "done" for job in self.levels)

    def start(self, app) -> None:
        self._app = app
        self.worker = background(app, self.execute, "study", self.name, "studies")

    async def execute(self) -> None:
        from workbench.service.scaling import judge_study

        try:
            for job in self.levels:
                if self._cancelled:
                    break
                self._current = job
                self.status = "running"
                result = await job.execute()
                if result is None or (result.get("stop_reason") and result["done"] < result["planned"]):
                    self.status, self.message = (
                        "stopped",
                        f"{job.name}: {job.monitor.snapshot().message or 'cut short'}",
                    )
                    return
                self._changed()
            if self._cancelled:
                self.status, self.message = "stopped", "cancelled: launch the same study to resume"
                return
            if self.plan.kind == "parallel" and self.plan.judge != "none":
                self.status = "judging"
                self._changed()
                self.report = await judge_study(self.store_path, self.cache_dir, self.plan)
            self.status = "done"
        except Exception as exc:
            self.status, self.message = "failed", describe(exc)
            raise
        finally:
            self._changed()

    def cancel(self) -> None:
        self._cancelled = True
        if self._current is not None:
            self._current.cancel()

    def progress(self) -> list[LevelProgress]:
        """Per level: its name, status, episodes done of planned and correct so far."""
        out = []
        for job in self.levels:
            snap = job.monitor.snapshot()
            out.append(
                LevelProgress(
                    run=job.name, status=snap.status, done=snap.done, planned=snap.planned, correct=snap.correct
                )
            )
        return out


class CampaignJob:
    """A campaign launched from its screen: its runs on their endpoints' lanes at once
    (`workbench.service.campaign.execute_campaign`, the CLI's ordering), each run a `RunJob` executed on this job's
    one app-level thread worker and registered in `app.jobs`, so each opens on the Live screen as any run launched
    here. The campaign's totals (`CampaignTracker`) are fed by every run's events; cancelling interrupts every run
    (each stays resumable: starting the same campaign again resumes it)."""

    def __init__(self, plan: Any, states: list[Any], store_path: Path, cache_dir: Path):
        from workbench.service.campaign import CampaignTracker

        self.plan = plan
        self.tracker = CampaignTracker(states)
        finished = {s.name for s in states if s.finished}  # left as they are: not run again
        self.runs = {run.name: RunJob(run.spec, store_path, cache_dir) for run in plan.runs if run.name not in finished}
        for name, job in self.runs.items():
            job.listeners.append(partial(self.tracker.feed, name))
        self.status = "starting"  # starting | running | done | stopped | failed
        self.message = ""
        self.outcome: Any = None
        self.worker: Any = None
        self._cancelled = False

    @property
    def name(self) -> str:
        return self.plan.campaign.name

    @property
    def active(self) -> bool:
        return self.status in ("starting", "running")

    def start(self, app) -> None:
        for name, job in self.runs.items():
            app.jobs[name] = job
        self.worker = background(app, self.execute, "campaign", self.name, "campaigns")

    async def execute(self) -> None:
        from workbench.service.campaign import execute_campaign

        async def run_one(run: Any) -> RunResult | None:
            if self._cancelled:
                return None
            job = self.runs[run.name]
            result = await job.execute()
            self.tracker.ended(run.name, job.monitor.snapshot().status)
            task = asyncio.current_task()
            if task is not None and task.cancelling():  # the job took its lane's cancel as its own: pass it on
                raise asyncio.CancelledError
            return result

        self.status = "running"
        try:
            finished = {run.name for run in self.plan.runs if run.name not in self.runs}
            self.outcome = await execute_campaign(self.plan, run_one, finished)
        except Exception as exc:
            self.status, self.message = "failed", describe(exc)
            raise
        finally:
            self._never_started()
        unreachable = self.outcome.unreachable()
        if self._cancelled or unreachable or self.outcome.incomplete():
            self.status = "stopped"
            self.message = "; ".join(f"{e} unreachable: {', '.join(r)}" for e, r in unreachable.items()) or (
                "cancelled: start the same campaign to resume" if self._cancelled else "some runs did not finish"
            )
        else:
            self.status = "done"

    def _never_started(self) -> None:
        """The runs the campaign did not start (their endpoint unreachable, a cancel, a failure): said so on their
        live screens and in the totals, and no longer taken for runs about to start."""
        for name, job in self.runs.items():
            if job.monitor.status == "starting" and job.runner is None:
                job.monitor.finish("interrupted", "not started: start the same campaign again to run it")
                self.tracker.ended(name, "not started")

    def cancel(self) -> None:
        """Interrupt every run now (thread-safe); the runs not started yet are not started."""
        self._cancelled = True
        for job in self.runs.values():
            if job.active:
                job.cancel()
