"""An MCP session: one run served to an outside agent, the runner handing its episodes to the client's calls.

The run is executed by the same `Runner` as every other agent (resumable, each step committed as it happens, one
process per run), and each episode by the same `Episode`; the episode's agent is an `ExternalAgent` whose calls
are the client's tool calls, one per turn. So the seven tools, their costs, rejections, error texts and status
footer are the protocol's, from the one implementation of them; this module only words what the protocol leaves
to a harness that is not a chat loop: handing out the next item (`next_item`) and telling a client that no item
is open or that its episode has ended. It answers in plain `Reply`s; `workbench.mcp.server` carries them over MCP.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any

from sandbox.agents.external import ExternalAgent, NotYourTurn, mcp_agent_name
from sandbox.corpus import Corpus
from sandbox.prompts import TOOL_SCHEMAS
from sandbox.records import Caps, Item, Step, Trajectory
from sandbox.runner import RunEvent, Runner, RunSpec
from storage import Store
from storage.json_types import JsonObject

NEXT_ITEM = "next_item"

NEXT_ITEM_SCHEMA = {
    "name": NEXT_ITEM,
    "description": (
        "Start the next item of the benchmark run: returns the item id and the task (the system prompt "
        "with the seed paper, the question, the four options and the budget rules, then the first "
        "message). Call the seven tools to navigate, then submit_answer, which ends the item."
    ),
    "parameters": {"type": "object", "properties": {}},
}

NO_ITEM = "No item is open: call next_item to receive a question."
ITEM_OPEN = "Item {item} is still open: finish it with submit_answer (or until a cap ends it) before calling next_item."
ENDED = "The episode on item {item} has ended ({termination}). Call next_item for the next question."
ALL_DONE = "Every item of run '{run}' is finished ({done} of {planned}): nothing is left to play."
OTHER_CLIENT = (
    "This server plays run '{run}' for the MCP client '{client}'; '{other}' cannot join it (a run is one "
    "agent's). Serve another --run for it."
)


@dataclass
class _Offer:
    """An item the runner is ready to start, waiting for a client's next_item."""

    item: Item
    replicate: int
    agent: ExternalAgent
    claimed: asyncio.Future


@dataclass
class _Open:
    """The episode a client is playing: its steps as they happen, and its end."""

    item: Item
    replicate: int
    agent: ExternalAgent
    steps: list[Step] = field(default_factory=list)
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    trajectory: Trajectory | None = None


class McpSession:
    """One run served to MCP clients. The runner starts at the first next_item, as `mcp:<client>`."""

    def __init__(self, base: RunSpec, corpus: Corpus, store: Store, token_env: str | None = None):
        self.base = base
        self.corpus = corpus
        self.store = store
        self.token_env = token_env  # the variable an HTTP server's bearer token came from (its name only)
        self.client: str | None = None
        self.runner: Runner | None = None
        self.task: asyncio.Task | None = None
        self.offers: asyncio.Queue[_Offer] = asyncio.Queue()
        self.current: _Open | None = None
        self.started = asyncio.Event()
        self.finished = asyncio.Event()
        self.lock = asyncio.Lock()  # one call at a time, in the order they came

    # ---------------------------------------------------------------- the runner

    async def _start(self, client: str) -> str | None:
        """Start (or join) the run for `client`; a refusal's text, or None."""
        if self.task is not None and not self.task.done():
            if client != self.client:
                return OTHER_CLIENT.format(run=self.base.name, client=self.client, other=client)
            return None
        if self.finished.is_set():
            return None
        self.client = client
        spec = replace(self.base, agent=mcp_agent_name(client))
        self.runner = Runner(spec, self.corpus, self.store, factory=self._factory, on_event=self._event)
        self.started.clear()
        self.task = asyncio.create_task(self.runner.run(locked=True))
        waiter = asyncio.create_task(self.started.wait())
        await asyncio.wait({self.task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self.task.done() and not self.started.is_set():
            exc = self.task.exception()
            self.task = None
            return f"The run cannot start: {exc}"
        self._record_token_env()
        return None

    def _record_token_env(self) -> None:
        """The name of the variable the bearer token was read from, kept in the run's config (`token_envs`, every
        one a serving of the run used); the token itself is never stored."""
        if self.token_env is None:
            return
        run = self.store.run(self.base.name)
        config = dict(run["config"])
        recorded = config.get("token_envs")
        used = list(recorded) if isinstance(recorded, list) else []
        if self.token_env not in used:
            self.store.update_run(run["id"], config={**config, "token_envs": [*used, self.token_env]})

    async def _factory(self, item: Item, replicate: int, _attempt: int) -> ExternalAgent:
        """The agent of the runner's next episode, handed over when a client asks for the next item (a retried
        attempt is offered like a first one: the runner's factory signature passes its number)."""
        assert self.runner is not None
        offer = _Offer(
            item, replicate, ExternalAgent(self.runner.spec.agent), asyncio.get_running_loop().create_future()
        )
        await self.offers.put(offer)
        await offer.claimed
        return offer.agent

    def _event(self, event: RunEvent) -> None:
        if event.kind == "started":
            self.started.set()
        elif event.kind == "step" and self.current is not None and event.step is not None:
            self.current.steps.append(event.step)
        elif event.kind == "trajectory" and self.current is not None:
            self.current.trajectory = event.trajectory
            self.current.ended.set()
        elif event.kind == "finished":
            self.finished.set()

    async def close(self) -> None:
        """Stop the runner: an episode in flight stays unfinished (a resume redoes it), the run interrupted."""
        if self.task is not None and not self.task.done():
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)

    # ---------------------------------------------------------------- the client's calls

    async def next_item(self, client: str) -> Reply:
        async with self.lock:
            refused = await self._start(client)
            if refused:
                return Reply([refused], error=True)
            if self.current is not None and not self.current.ended.is_set():
                return Reply([ITEM_OPEN.format(item=self.current.item.id)], error=True)
            offer = await self._next_offer()
            if offer is None:
                return Reply([self._all_done()])
            self.current = _Open(offer.item, offer.replicate, offer.agent)
            offer.claimed.set_result(None)
            shown = await _first(offer.agent.turn(), self.current.ended.wait())
            texts = offer.agent.seen[-1].texts if shown == 0 else []
            runner = self.runner
            header = (
                f"Item: {offer.item.id}\nReplicate: {offer.replicate}\nRun: {self.base.name} "
                f"({runner.done + 1} of {runner.planned})"
                if runner
                else f"Item: {offer.item.id}"
            )
            return Reply([header, *texts])

    async def _next_offer(self) -> _Offer | None:
        if not self.offers.empty():
            return self.offers.get_nowait()
        if self.task is None or self.task.done():
            return None
        getter = asyncio.create_task(self.offers.get())
        which = await _first(getter, self.task)
        if which == 0:
            return getter.result()
        getter.cancel()
        return None

    def _all_done(self) -> str:
        runner = self.runner
        done, planned = (runner.done, runner.planned) if runner else (0, 0)
        return ALL_DONE.format(run=self.base.name, done=done, planned=planned)

    async def call(self, name: str, arguments: JsonObject) -> Reply:
        """One of the seven tools (or any other name: the protocol answers it) as the open episode's next turn."""
        async with self.lock:
            episode = self.current
            if episode is None:
                return Reply([NO_ITEM], error=True)
            if episode.ended.is_set():
                return Reply([self._ended(episode)], error=True)
            mark = len(episode.steps)
            try:
                episode.agent.send(name, arguments)
            except NotYourTurn:
                return Reply([NO_ITEM], error=True)
            waits = [episode.agent.turn(), episode.ended.wait()] + ([self.task] if self.task is not None else [])
            which = await _first(*waits)
            if which == 0 and not episode.ended.is_set():
                return Reply(episode.agent.seen[-1].texts)  # the tool result with its footer, then any nudge
            if (
                which == 2 and not episode.ended.is_set()
            ):  # the run itself stopped (our failure, or the server closing): never wait forever
                return Reply([f"The run stopped: {self._stopped()}"], error=True)
            return Reply([*_last_words(episode.steps[mark:], self.base.prompt_set()), self._ended(episode)])

    def _stopped(self) -> str:
        task = self.task
        if task is None or task.cancelled():
            return "the server is closing"
        exc = task.exception()
        return f"{type(exc).__name__}: {exc}" if exc else "every item is finished"

    def _ended(self, episode: _Open) -> str:
        termination = episode.trajectory.termination if episode.trajectory else "stopped"
        return ENDED.format(item=episode.item.id, termination=termination)


def _last_words(steps: list[Step], prompts: Any) -> list[str]:
    """What the call that ended an episode produced: its result with the status footer (the protocol sends
    nothing back after the end, so the footer is worded from the step's ledger, as the run's prompts word it), or
    the harness's note."""
    for step in reversed(steps):
        if step.kind == "tool":
            return [(step.text or "") + prompts.footer(step.ledger, tokens_measured=False)]  # a client's: unseen
        if step.kind in ("harness", "error") and step.text:
            return [step.text]
    return []


async def _first(*awaitables: Any) -> int:
    """The index of the first of `awaitables` to finish; the others are cancelled (tasks given are not)."""
    tasks = [a if isinstance(a, asyncio.Task) else asyncio.ensure_future(a) for a in awaitables]
    done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for a, t in zip(awaitables, tasks, strict=True):
        if t not in done and not isinstance(a, asyncio.Task):
            t.cancel()
    return next(i for i, t in enumerate(tasks) if t in done)


@dataclass(frozen=True)
class Reply:
    """What a call answers: its texts in order, and whether it was refused."""

    texts: list[str]
    error: bool = False


def tool_schemas(prompts: Any = None) -> list[dict[str, Any]]:
    """The seven tools with the protocol's names, descriptions and argument schemas (the descriptions as the run's
    prompts' `[tools]` table replaces them, if it does), then next_item."""
    return [*(prompts.tool_schemas() if prompts is not None else TOOL_SCHEMAS), NEXT_ITEM_SCHEMA]


def session_spec(
    name: str,
    dataset: str,
    caps: Caps,
    replicates: int,
    item_ids: tuple[str, ...],
    question_type: str | None,
    depth: int | None,
    limit: int | None,
    prompts: Any = None,
) -> RunSpec:
    """The run an MCP client plays: one worker (a client plays one item at a time); its agent becomes
    `mcp:<client>` when the first client joins. `prompts`: the `--prompts` set (None: ours)."""
    return RunSpec(
        name=name,
        dataset=dataset,
        agent="mcp:",
        workers=1,
        caps=caps,
        replicates=replicates,
        item_ids=item_ids,
        question_type=question_type,
        depth=depth,
        limit=limit,
        prompts=prompts,
    )
