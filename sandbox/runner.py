"""Many episodes at once (asyncio workers), each step committed as it happens, resumable by run name.

The batch CLI and the TUI both drive this one runner, so a run launched from either is
the same run. Resuming skips finished trajectories, discards half-written ones and
refuses a run whose identity (dataset, agent, caps, seed, ablation) differs.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Required, TypedDict

from sandbox.agents.base import Agent, ServerUnreachable
from sandbox.agents.continuation import PREFIX_MARK, ContinuationAgent, prefix_turns
from sandbox.agents.estimated import EstimatedUsage
from sandbox.agents.human import is_human
from sandbox.agents.registry import SCRIPTED, make_scripted
from sandbox.citations import HOP_RULE
from sandbox.corpus import Corpus
from sandbox.episode import Episode, RetryPolicy
from sandbox.extra_tools.registry import SettingRecord, setting_identity
from sandbox.extra_tools.setting import open_extra_tools
from sandbox.prompt_set import to_toml
from sandbox.prompts import DEFAULT_PROMPTS, Prompts, build_prompt, caps_for_ablation, template_hash
from sandbox.recall import section_reachable
from sandbox.records import (
    Caps,
    Item,
    RunEventKind,
    RunResult,
    RunStatus,
    SliceRecord,
    Step,
    Trajectory,
    VerifierOptions,
)
from sandbox.rescore import RECOMPUTED
from sandbox.sections import LABEL_RESOLUTION
from sandbox.shard import Shard
from storage import Store
from storage.json_types import JsonObject, JsonValue
from storage.locks import RunLock
from storage.records import ItemMeta, RunFields, StepRecord, TrajectoryRecord
from storage.step_writer import PendingTrajectory, StepWriter
from storage.store.columns import now as _now

VERSION = "0.1.0"
PROFILE = "agenthop-v1"
RETRYABLE = ("infra", "api_errors", "transient_exhausted")
READING_OPTIONS = ("ks", "judge", "orders", "tie_rule", "judge_trials", "cost_mode")  # how a parallel run is read,
# not how it was sampled
# May change between resumes: how to reach the model, not what it is asked. The base URLs used are kept in the config.
# The client (native or litellm) is one of them: both send the same request and read the reply the same way
# (tests/test_client_parity.py), so a run may be resumed through either; the clients used are kept in the config.
EXECUTION_OPTIONS = (
    "api_key",
    "base_url",
    "concurrency",
    "rpm",
    "timeout_s",
    "pricing",
    "client",
    "local_threads",
    "extra_tools_timeout_s",
)


@dataclass
class RunSpec:
    """Everything that defines a run (identity) and how to execute it (workers, slice)."""

    name: str
    dataset: str
    agent: str
    model: str | None = None
    seed: int = 0
    caps: Caps = field(default_factory=Caps)
    ablation: str = "full"
    replicates: int = 1
    workers: int = 4
    item_ids: tuple[str, ...] = ()
    question_type: str | None = None  # "single-target" | "multi-target" (or st/mt)
    depth: int | None = None
    limit: int | None = None
    agent_options: dict[str, Any] = field(default_factory=dict)
    max_attempts: int = 3
    attempt_backoff_s: float = 5.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    kind: str = "eval"
    group: str | None = None
    context_budget: int | None = None  # sequential scaling on the token axis: EXTEND below it, STOP above
    estimate_tokens: bool = False  # scripted agents report estimated usage (characters / 4)
    scaling: dict[str, Any] | None = None  # axis, budget label, protocol: recorded with the run
    max_run_tokens: int = 0  # 0 = no run-wide limit; counted like the per-episode cap
    max_run_cost: float = 0.0  # USD; 0 = no limit
    shard: Shard | None = None  # this host's part of the selection (a slice, like --limit: not the identity)
    # how to reach a model verifier (base_url, api_key_env, client, timeout_s): execution, not identity; which
    # verifier it is (`scaling["verifier"]`) is the identity
    verifier_options: VerifierOptions = field(default_factory=VerifierOptions)
    extra_tools: SettingRecord | None = None  # the general-agent setting's record (sandbox.extra_tools.setting)
    prompts: Prompts | None = None  # every text sent to the agent and the judges (--prompts FILE); None: ours

    def prompt_set(self) -> Prompts:
        return self.prompts or DEFAULT_PROMPTS

    family: str | None = None  # the model family and capability tier recorded at creation (tags, not the identity)
    tier: str | None = None
    tagged: tuple[str, ...] = ()  # which of family/tier the person chose: a resume re-tags only those

    def identity(self, fingerprint: str) -> dict[str, Any]:
        """What must match to resume into an existing run."""
        return {
            "profile": PROFILE,
            "dataset_fingerprint": fingerprint,
            "agent": self.agent,
            "model": self.model,
            "seed": self.seed,
            "caps": self.effective_caps().as_dict(),
            "ablation": self.ablation,
            "context_budget": self.context_budget,
            "estimate_tokens": self.estimate_tokens,
            "scaling": {k: v for k, v in (self.scaling or {}).items() if k not in READING_OPTIONS} or None,
            "agent_options": {k: v for k, v in sorted(self.agent_options.items()) if k not in EXECUTION_OPTIONS},
            **({"extra_tools": setting_identity(self.extra_tools)} if self.extra_tools else {}),
            # the prompts' digest, only when they are not ours: a run made before prompts could be replaced resumes
            **({} if self.prompt_set().is_default else {"prompts": self.prompt_set().digest}),
        }

    def effective_caps(self) -> Caps:
        """The ablation's caps; in the general-agent setting each extra tool costs the setting's points."""
        caps = caps_for_ablation(self.caps, self.ablation)
        if self.extra_tools:
            cost = int(self.extra_tools["cost"])
            caps = replace(caps, costs=caps.costs + tuple((name, cost) for name in self.extra_tools["tools"]))
        return caps


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


class RunConfig(TypedDict, total=False):
    """A run's config as created (`Runner._config`): how its samples are read (`scaling`), its execution (server
    addresses, clients, workers) and its selection; `extra_tools` on a general-agent run only, `clients` on an LLM
    run only. A resume adds what it asked for (`Runner._resumed_config`)."""

    scaling: Required[JsonObject | None]
    context_budget: Required[int | None]
    agent_options: Required[JsonObject]
    base_urls: Required[list[str]]
    workers: Required[int]
    slice: Required[SliceRecord]
    extra_tools: SettingRecord
    clients: list[str]


class Origin(TypedDict):
    """The Hub repository and commit a run's dataset was opened from (None for a directory or the built-in one)."""

    dataset_repo: str | None
    dataset_revision: str | None


class InvalidSlice(ValueError):
    """The requested items do not exist or select nothing."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)


def select_items(corpus: Corpus, spec: RunSpec) -> list[Item]:
    """Items of the slice, in dataset order: ids, then type, then depth, then limit (as the reference)."""
    items = _with_ids(corpus.items, spec.item_ids)
    if spec.question_type:
        kind = QUESTION_KINDS.get(spec.question_type, spec.question_type)
        items = [i for i in items if i.kind == kind]
    if spec.depth is not None:
        items = [i for i in items if i.depth == spec.depth]
    if spec.limit is not None:
        items = items[: spec.limit]
    if not items:
        raise InvalidSlice("the slice selects no items")
    return items


QUESTION_KINDS = {"single-target": "st", "multi-target": "mt"}  # a question type's long name → the item's kind


def _with_ids(items: list[Item], ids: tuple[str, ...]) -> list[Item]:
    """The items named by `ids`, in dataset order (all of them when none is named); an unknown id is refused."""
    if not ids:
        return items
    known = {i.id for i in items}
    missing = [i for i in ids if i not in known]
    if missing:
        raise InvalidSlice(f"unknown item id(s): {', '.join(missing[:5])}")
    wanted = set(ids)
    return [i for i in items if i.id in wanted]


AgentFactory = Callable[[Item, int, int], Agent | Awaitable[Agent]]
"""Builds the agent of one (item, replicate, attempt). It may be async: a human agent is ready when the person is
(after looking at the previous item's answer), so the episode, and its clock, start only then."""


def _merged_reading(recorded: JsonObject, asked: JsonObject) -> JsonObject:
    """A parallel run's reading after a resume: the options asked for last win, the k become every k ever asked."""
    reading = dict(recorded)
    for option in READING_OPTIONS:
        if asked.get(option) is not None:
            reading[option] = asked[option]
    if asked.get("ks"):
        ks: list[JsonValue] = [*sorted(_ks(recorded.get("ks")) | _ks(asked["ks"]))]
        reading["ks"] = ks
    return reading


def _ks(value: JsonValue) -> set[int]:
    """The k a parallel run's reading names (none when it names none)."""
    return {k for k in value if isinstance(k, int)} if isinstance(value, list) else set()


def _listed(value: JsonValue) -> list[JsonValue]:
    """A config's list (the base URLs or clients a run used); empty when it records none."""
    return value if isinstance(value, list) else []


def default_factory(spec: RunSpec) -> AgentFactory:
    """Scripted agents from the registry; the LLM agent is imported only when asked for."""
    caps = spec.effective_caps()
    if spec.agent in SCRIPTED:
        distractible = float(spec.agent_options.get("distractible", 0.0))
        return lambda item, replicate, attempt: make_scripted(
            spec.agent, item, caps, spec.seed, replicate, attempt, distractible=distractible
        )
    if spec.agent == "llm":
        from sandbox.agents.llm import llm_factory

        return llm_factory(spec)
    if is_human(spec.agent):
        raise ValueError(f"'{spec.agent}' is a person: humans play in the TUI's play screen, which supplies the agent")
    raise ValueError(f"unknown agent '{spec.agent}'")


def prompt_hash(prompts: Prompts) -> str:
    """What a run records as its `prompt_hash`: the templates' hash for ours (as every run before `--prompts`
    recorded), the set's digest for any other, so two runs' prompts differ exactly when their hashes do."""
    return template_hash() if prompts.is_default else prompts.digest


def item_meta(item: Item) -> ItemMeta:
    """The item fields every report splits by, stored with each trajectory so reports need no corpus."""
    return {
        "question_type": item.question_type,
        "kind": item.kind,
        "depth": item.depth,
        "reasoning_type": item.reasoning_type,
        "consensus_tier": item.consensus_tier,
        "venue": item.venue,
        "correct_index": item.correct_index,
        "n_gold": len(item.gold_paper_ids),
        "section_reachable": int(section_reachable(item)),
    }


def paper_role(item: Item, paper: JsonValue) -> str | None:
    """What a named paper is to this item: gold, bridge, seed or other (None when no paper is named)."""
    if not isinstance(paper, str):
        return None
    if paper in item.gold_paper_ids:
        return "gold"
    if paper in item.bridge_paper_ids:
        return "bridge"
    return "seed" if paper == item.seed_paper_id else "other"


def actions(item: Item, steps: list[Step]) -> list[list[JsonValue]]:
    """Every call as [tool, status, paper, role, delivered]: what trajectory analytics need, without texts."""
    out: list[list[JsonValue]] = []
    for s in steps:
        if s.kind != "tool":
            continue
        paper = s.tool_args.get("paper_id") if isinstance(s.tool_args, dict) else None
        paper = paper if isinstance(paper, str) else None
        out.append([s.tool_name, s.status, paper, paper_role(item, paper), int(s.delivered)])
    return out


def step_record(step: Step) -> StepRecord:
    """A step flattened for the store, its ledger's meters in place of the ledger (the values themselves, not copies:
    `asdict` would deep-copy every tool argument on the hot path)."""
    ledger = step.ledger
    return {
        "index": step.index,
        "turn": step.turn,
        "kind": step.kind,
        "text": step.text,
        "tool_name": step.tool_name,
        "tool_args": step.tool_args,
        "tool_call_id": step.tool_call_id,
        "cost": step.cost,
        "status": step.status,
        "paper_id": step.paper_id,
        "arxiv_id": step.arxiv_id,
        "section_index": step.section_index,
        "delivered": step.delivered,
        "usage": step.usage,
        "cost_usd": step.cost_usd,
        "elapsed_s": step.elapsed_s,
        "reasoning_chars": step.reasoning_chars,
        "hop": step.hop,
        "finish_reason": step.finish_reason,
        "points_used": ledger.points_used,
        "points_left": ledger.points_left,
        "tokens": ledger.tokens,
        "rejections": ledger.rejections,
    }


def trajectory_record(traj: Trajectory) -> TrajectoryRecord:
    """A trajectory's fields for the store, in the dataclass's order (the values themselves: `asdict` deep-copies
    every value, ~0.1 ms per episode, and the store only reads them)."""
    return {
        "item_id": traj.item_id,
        "termination": traj.termination,
        "answer": traj.answer,
        "predicted_index": traj.predicted_index,
        "correct": traj.correct,
        "reasoning": traj.reasoning,
        "turns": traj.turns,
        "model_calls": traj.model_calls,
        "points_used": traj.points_used,
        "tokens": traj.tokens,
        "prompt_tokens": traj.prompt_tokens,
        "completion_tokens": traj.completion_tokens,
        "cache_read_tokens": traj.cache_read_tokens,
        "cache_creation_tokens": traj.cache_creation_tokens,
        "tool_calls": traj.tool_calls,
        "turns_with_calls": traj.turns_with_calls,
        "tool_errors": traj.tool_errors,
        "api_errors": traj.api_errors,
        "transient_retries": traj.transient_retries,
        "paper_recall": traj.paper_recall,
        "paper_recall_any": traj.paper_recall_any,
        "section_recall": traj.section_recall,
        "section_recall_any": traj.section_recall_any,
        "section_recall_loose": traj.section_recall_loose,
        "reads": traj.reads,
        "cost_usd": traj.cost_usd,
        "wall_time_s": traj.wall_time_s,
        "error": traj.error,
        "error_kind": traj.error_kind,
        "continues": traj.continues,
        "chosen_type": traj.chosen_type,
        "cut_off_turns": traj.cut_off_turns,
        "lost_calls": traj.lost_calls,
    }


# The garbage collector's first threshold while a run executes (Python's default: 700 net allocations). Every
# episode in flight holds messages, steps and records for its length, and nearly all of it is freed by reference
# counting, not by the collector; a young collection walks every live young object. Measured (256 workers, 10,240
# calls): at 700 the collector took ~15 % of the run's CPU (~460 collections), at 10,000 ~7 % (~20 collections of
# ~15 ms), at 50,000 ~1 % (2 collections): above what the episodes in flight keep alive at once.
RUN_GC_FIRST_THRESHOLD = 50_000


@contextmanager
def fewer_young_collections() -> Iterator[None]:
    """The collector's first threshold at least `RUN_GC_FIRST_THRESHOLD` for the run (never lowered: the TUI raises
    it for its own caches), restored after."""
    first, *older = gc.get_threshold()
    if first >= RUN_GC_FIRST_THRESHOLD:
        yield
        return
    gc.set_threshold(RUN_GC_FIRST_THRESHOLD, *older)
    try:
        yield
    finally:
        gc.set_threshold(first, *older)


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
        self.unreachable: str | None = None  # the error of the model server that refused a connection (run stopped)
        self._workers: list[asyncio.Task] = []
        self.extra_tools: Any = None  # the setting's tools while the run executes (sandbox.extra_tools.registry)
        self.writer = StepWriter(store)  # the run's trajectories and steps, committed together (group commit)

    def prepare(self) -> tuple[int, list[tuple[Item, int]], int]:
        """Create or resume the run; (run id, pending work, already finished)."""
        items = select_items(self.corpus, self.spec)
        spec = self.spec
        run_id, existed = self.store.create_or_resume_run(
            spec.name, spec.identity(self.corpus.fingerprint), self._fields()
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
        self._record_resume(run_id)
        self._retag(run_id)
        reason = self._limit_reached(at_start=True)
        if reason:
            self.request_stop(reason)

    def _fields(self) -> RunFields:
        """The run's row as created: what ran, on what data, under which caps, prompts and settings."""
        spec = self.spec
        return {
            "kind": spec.kind,
            "agent": spec.agent,
            "model": spec.model,
            "dataset": spec.dataset,
            "dataset_fingerprint": self.corpus.fingerprint,
            "ablation": spec.ablation,
            "seed": spec.seed,
            "replicates": spec.replicates,
            "caps": self.caps.as_dict(),
            "version": VERSION,
            "prompt_hash": prompt_hash(spec.prompt_set()),
            "prompts": to_toml(spec.prompt_set()),
            "group_name": spec.group,
            "label_resolution": LABEL_RESOLUTION,
            "hop_rule": HOP_RULE,
            "family": spec.family,
            "tier": spec.tier,
            **self._origin(),
            "config": json.dumps(self._config(), sort_keys=True),
        }

    def _config(self) -> RunConfig:
        """The run's config as created: how its samples are read, its server, its workers and its selection."""
        spec = self.spec
        config: RunConfig = {
            "scaling": spec.scaling,
            "context_budget": spec.context_budget,
            "agent_options": spec.identity(self.corpus.fingerprint)["agent_options"],
            "base_urls": [spec.agent_options["base_url"]] if spec.agent_options.get("base_url") else [],
            "workers": spec.workers,
            "slice": self._slice(),
        }
        if spec.extra_tools:  # the general-agent setting, with its registry's size in the prompt
            config["extra_tools"] = spec.extra_tools
        if self.client:  # an LLM run: which model client sent its calls (more than one after a resume through another)
            config["clients"] = [self.client]
        return config

    def _slice(self) -> SliceRecord:
        """The selection as recorded in the run's config; `shard` ("I/N") only on a sharded run, so an unsharded
        run's config is what it always was."""
        spec = self.spec
        out: SliceRecord = {
            "ids": list(spec.item_ids),
            "question_type": spec.question_type,
            "depth": spec.depth,
            "limit": spec.limit,
        }
        if spec.shard is not None:
            out["shard"] = str(spec.shard)
        return out

    def _retag(self, run_id: int) -> None:
        """A resume keeps the run's family and tier (set at creation or by `runs tag`), except those the person
        chose again with this launch."""
        stored = self.store.run_by_id(run_id)
        changed = {
            key: getattr(self.spec, key) for key in self.spec.tagged if stored.get(key) != getattr(self.spec, key)
        }
        if changed:
            self.store.update_run(run_id, **changed)

    def _origin(self) -> Origin:
        """The Hub repository and commit the dataset was opened from (None for a directory or the built-in one)."""
        origin = getattr(self.corpus, "origin", None)
        return {
            "dataset_repo": origin.repo if origin else None,
            "dataset_revision": origin.commit if origin else None,
        }

    def _record_resume(self, run_id: int) -> None:
        """What a resume asked for that the run did not record yet: written in one update, so every report reads
        what was sampled and how.

        More replicates (`scale parallel --k 1,2,16` on a K = 8 run) raise the recorded K (never
        lower it: the samples beyond a smaller request stay valid); the k a parallel run is read at
        become every k ever asked for, and its judge and pairwise orders the ones asked for last.
        The server address is an execution option (it may change between resumes): the run keeps every one used.
        A resume from the Hub records the repository and the commit it resolved to (the data is the same: the
        fingerprint matched), so the run names the commit it was last fetched at.
        """
        row = self.store.run_by_id(run_id)
        updates: dict[str, str | int] = {
            k: v for k, v in self._origin().items() if isinstance(v, str) and v and row.get(k) != v
        }
        if self.spec.replicates > (row["replicates"] or 1):
            updates["replicates"] = self.spec.replicates
        stored = row["config"] or {}
        config = self._resumed_config(stored)
        if config != stored:
            updates["config"] = json.dumps(config, sort_keys=True)
        if updates:
            self.store.update_run(run_id, **updates)

    def _resumed_config(self, stored: JsonObject) -> JsonObject:
        """The run's config with what this launch adds: its reading of the samples, its server, its client."""
        config = dict(stored)
        scaling = config.get("scaling")
        recorded = dict(scaling) if isinstance(scaling, dict) else {}
        reading = _merged_reading(recorded, self.spec.scaling or {})
        if reading != recorded:
            config["scaling"] = reading
        url = self.spec.agent_options.get("base_url")
        for key, value in (("base_urls", url), ("clients", self.client)):
            used = _listed(config.get(key))
            if value and value not in used:
                config[key] = [*used, value]
        return config

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
            self.writer.close()
            self.store.update_run(run_id, status=status, finished_at=_now(), note=self.stop_reason)
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
            "done": self.done,
            "planned": self.planned,
            "correct": self.correct,
            "skipped": skipped,
            "elapsed_s": time.monotonic() - started,
        }

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
            await self.writer.written()  # on disk before it is announced (a caller may read it from the store)
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
