"""`serve-mcp`: the sandbox as an MCP server, so any MCP-capable agent is measured under the same ledger.

The server is a thin transport: the run, its episodes and every text a client reads are
`workbench.service.campaign`'s (the same `Runner` and `Episode` as every other agent, the
client's `tools/call` requests one turn each); this module carries them over MCP (stdio or
streamable HTTP) and refuses what is no call at all.

A run's agent is `mcp:<client name>`, the name the client gave in `initialize`. What an
MCP server cannot see is said in the report's legend (`mcp`): the client model's tokens
(unmeasured, never 0) and its own turns (a turn here is one tool call).

Bad input never reaches the ledger as anything but a call: an unknown tool name or wrong
arguments are executed calls with the protocol's texts (as for a model); arguments too
large to be a call, or a malformed request, are refused as JSON-RPC errors before the
episode sees them; concurrent calls are taken one at a time, in order.
"""
from __future__ import annotations

import json
import sys
import unicodedata
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from workbench.service.campaign import NEXT_ITEM, Campaign, Reply, tool_schemas

MAX_ARGUMENT_CHARS = 65_536  # a call's arguments as JSON; more is no call a protocol agent makes
MAX_NAME_CHARS = 128
MAX_CLIENT_CHARS = 64


def client_label(name: Any) -> str:
    """The client's name from `initialize`, as a run's agent carries it: printable, at most 64 characters."""
    text = "".join(c for c in str(name or "") if unicodedata.category(c)[0] not in ("C", "Z") or c == " ").strip()
    return text[:MAX_CLIENT_CHARS] or "unknown"


<<<<<<< HEAD
def _result(reply: Reply) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=t) for t in reply.texts],
                                is_error=reply.error)
=======
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


class Campaign:
    """One run served to MCP clients. The runner starts at the first next_item, as `mcp:<client>`."""

    def __init__(self, base: RunSpec, corpus: Corpus, store: Store):
        self.base = base
        self.corpus = corpus
        self.store = store
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
        return None

    async def _factory(self, item: Item, replicate: int, attempt: int) -> ExternalAgent:
        """The agent of the runner's next episode, handed over when a client asks for the next item."""
        assert self.runner is not None
        offer = _Offer(item, replicate, ExternalAgent(self.runner.spec.agent),
                       asyncio.get_running_loop().create_future())
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

    async def next_item(self, client: str) -> types.CallToolResult:
        async with self.lock:
            refused = await self._start(client)
            if refused:
                return _result([refused], error=True)
            if self.current is not None and not self.current.ended.is_set():
                return _result([ITEM_OPEN.format(item=self.current.item.id)], error=True)
            offer = await self._next_offer()
            if offer is None:
                return _result([self._all_done()])
            self.current = _Open(offer.item, offer.replicate, offer.agent)
            offer.claimed.set_result(None)
            shown = await _first(offer.agent.turn(), self.current.ended.wait())
            texts = offer.agent.seen[-1].texts if shown == 0 else []
            runner = self.runner
            header = (f"Item: {offer.item.id}\nReplicate: {offer.replicate}\nRun: {self.base.name} "
                      f"({runner.done + 1} of {runner.planned})" if runner else f"Item: {offer.item.id}")
            return _result([header, *texts])

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

    async def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """One of the seven tools (or any other name: the protocol answers it) as the open episode's next turn."""
        async with self.lock:
            episode = self.current
            if episode is None:
                return _result([NO_ITEM], error=True)
            if episode.ended.is_set():
                return _result([self._ended(episode)], error=True)
            mark = len(episode.steps)
            try:
                episode.agent.send(name, arguments)
            except NotYourTurn:
                return _result([NO_ITEM], error=True)
            waits = [episode.agent.turn(), episode.ended.wait()] + ([self.task] if self.task is not None else [])
            which = await _first(*waits)
            if which == 0 and not episode.ended.is_set():
                return _result(episode.agent.seen[-1].texts)  # the tool result with its footer, then any nudge
            if which == 2 and not episode.ended.is_set():  # the run itself stopped (our failure, or the server closing): never wait forever
                return _result([f"The run stopped: {self._stopped()}"], error=True)
            return _result([*_last_words(episode.steps[mark:]), self._ended(episode)])

    def _stopped(self) -> str:
        task = self.task
        if task is None or task.cancelled():
            return "the server is closing"
        exc = task.exception()
        return f"{type(exc).__name__}: {exc}" if exc else "every item is finished"

    def _ended(self, episode: _Open) -> str:
        termination = episode.trajectory.termination if episode.trajectory else "stopped"
        return ENDED.format(item=episode.item.id, termination=termination)


def _last_words(steps: list[Step]) -> list[str]:
    """What the call that ended an episode produced: its result with the status footer (the protocol sends
    nothing back after the end, so the footer is worded from the step's ledger), or the harness's note."""
    for step in reversed(steps):
        if step.kind == "tool":
            return [(step.text or "") + status_footer(step.ledger, tokens_measured=False)]
        if step.kind in ("harness", "error") and step.text:
            return [step.text]
    return []


async def _first(*awaitables: Any) -> int:
    """The index of the first of `awaitables` to finish; the others are cancelled (tasks given are not)."""
    tasks = [a if isinstance(a, asyncio.Task) else asyncio.ensure_future(a) for a in awaitables]
    done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for a, t in zip(awaitables, tasks):
        if t not in done and not isinstance(a, asyncio.Task):
            t.cancel()
    return next(i for i, t in enumerate(tasks) if t in done)


def _result(texts: list[str], error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=t) for t in texts], is_error=error)
>>>>>>> issue-26


# ---------------------------------------------------------------- the MCP server


def tool_list(prompts: Any = None) -> list[types.Tool]:
    """The seven tools with the protocol's names, descriptions and argument schemas (descriptions as the run's
    prompts' `[tools]` table replaces them, if it does), then next_item."""
    return [types.Tool(name=s["name"], description=s["description"], input_schema=s["parameters"])
            for s in tool_schemas(prompts)]


def build_server(campaign: Campaign) -> Server:
    tools = tool_list(campaign.base.prompt_set())

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        arguments = params.arguments or {}
        if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
            raise MCPError(types.INVALID_PARAMS, f"a tool name has at most {MAX_NAME_CHARS} characters")
        size = len(json.dumps(arguments, ensure_ascii=False, default=str))
        if size > MAX_ARGUMENT_CHARS:
            raise MCPError(types.INVALID_PARAMS, f"the arguments are {size:,} characters of JSON; a call takes at "
                                                 f"most {MAX_ARGUMENT_CHARS:,} (nothing was charged)")
        if name == NEXT_ITEM:
            return _result(await campaign.next_item(_client_of(ctx)))
        return _result(await campaign.call(name, arguments))

    return Server("agenthop-workbench", version="0.1.0",
                  instructions=("AgentHop: multi-hop scientific questions answered by navigating a citation graph. "
                                "Call next_item for a question, use the seven tools, end it with submit_answer."),
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _client_of(ctx: Any) -> str:
    params = getattr(getattr(ctx, "session", None), "client_params", None)
    info = getattr(params, "client_info", None)
    return client_label(getattr(info, "name", None))


async def serve_stdio(campaign: Campaign) -> None:
    """Serve one client over stdin/stdout until it disconnects."""
    from mcp.server.stdio import stdio_server

    server = build_server(campaign)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await campaign.close()


async def serve_http(campaign: Campaign, sock: Any) -> int | None:
    """Serve streamable HTTP on a bound socket until SIGINT or SIGTERM; the signal's number, if one stopped it."""
    import signal

    import uvicorn

    class _Server(uvicorn.Server):
        """uvicorn, but a signal only stops it: the run is closed here, then the command exits by the signal."""

        received: int | None = None

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.received = sig
            super().handle_exit(sig, frame)

        def capture_signals(self):  # type: ignore[override]
            from contextlib import contextmanager

            @contextmanager
            def captured():
                old = {s: signal.signal(s, self.handle_exit) for s in (signal.SIGINT, signal.SIGTERM)}
                try:
                    yield
                finally:
                    for s, handler in old.items():
                        signal.signal(s, handler)
            return captured()

    host, port = sock.getsockname()[:2]
    app = build_server(campaign).streamable_http_app(host=host)
    server = _Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    sys.stderr.write(f"serving run '{campaign.base.name}' at http://{host}:{port}/mcp\n")
    sys.stderr.flush()
    try:
        await server.serve(sockets=[sock])
    finally:
        await campaign.close()
    return server.received
