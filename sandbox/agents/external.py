"""An agent whose calls arrive from outside the episode, one per turn: a person at the play screen, an MCP client.

The episode asks it to act as it asks a model; `act` then waits until the outside sends
one tool call (`send`), and the outside learns what the agent was shown next by awaiting
`turn` (the tool result with its status footer, and any nudge). Nothing about the rules
lives here: costs, caps, rejection texts, footers and terminations are the episode's.

One call per turn: an outside agent never batches calls and never sends plain text, so
a turn of it is exactly one tool call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from sandbox.agents.base import split_footer, turn_number
from sandbox.records import AssistantTurn, ToolCall, ToolSchema, WireMessage
from storage.json_types import JsonObject

MCP_PREFIX = "mcp:"


def mcp_agent_name(client: str) -> str:
    """The agent string of runs an MCP client plays (`mcp:CLIENT`, the name its `initialize` gave)."""
    return f"{MCP_PREFIX}{client}"


def is_mcp(agent: str | None) -> bool:
    """Whether a run was played by an MCP client: its model's tokens are not visible to the workbench."""
    return bool(agent) and str(agent).startswith(MCP_PREFIX)


class NotYourTurn(RuntimeError):
    """A call was sent while the episode was not waiting for one (between turns, or after the end)."""


@dataclass(frozen=True)
class Observation:
    """What the agent is shown before it acts: the messages the episode added since the agent's last turn.

    On the first turn that is the system prompt and the first user message; afterwards the
    tool results (each with the status footer appended) and any nudge.
    """

    turn: int  # the turn the agent is about to take (1-based)
    messages: tuple[WireMessage, ...]

    @property
    def footer(self) -> str | None:
        """The last status footer shown (`Turn: T  |  Tokens used: U  |  Budget used: B`), exactly as sent."""
        for msg in reversed(self.messages):
            _, footer = split_footer(str(msg.get("content") or ""))
            if footer is not None:
                return footer
        return None

    @property
    def texts(self) -> list[str]:
        return [str(m.get("content") or "") for m in self.messages]


class ExternalAgent:
    """Awaits one tool call per turn from `send`; `on_turn` hears what the agent was shown, before it acts.

    A call's id is `call_{turn}`, as the scripted agents number theirs, so a scripted agent played from
    outside leaves the same transcript as in-process; the turn's text is None (no prose, as theirs).
    """

    text_tools = False
    turn_text: str | None = None
    tokens_measured = False  # the client's model is out of sight: its footer says so instead of "Tokens used: 0"

    def __init__(self, name: str, on_turn: Callable[[Observation], None] | None = None):
        self.name = name
        self.on_turn = on_turn
        self.seen: list[Observation] = []
        self._pending: asyncio.Future[ToolCall] | None = None
        self._waiting = asyncio.Event()
        self._read = 0  # messages already shown
        self._turn = 0  # the turn being waited for (the conversation's count)
        self._calls = 0

    @property
    def waiting(self) -> bool:
        """True while the episode waits for the next call."""
        return self._pending is not None and not self._pending.done()

    async def act(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        fresh = tuple(m for m in messages[self._read :] if m.get("role") != "assistant")
        self._read = len(messages)
        self._turn = turn_number(messages)
        observation = Observation(len(self.seen) + 1, fresh)
        self.seen.append(observation)
        self._pending = asyncio.get_running_loop().create_future()
        self._waiting.set()
        if self.on_turn is not None:
            self.on_turn(observation)
        try:
            call = await self._pending
        finally:
            self._pending = None
            self._waiting.clear()  # also when cancelled: an agent that left is not waited for
        return AssistantTurn(text=self.turn_text, tool_calls=[call])

    def call_id(self) -> str:
        return f"call_{self._turn}"

    def send(self, name: str, args: JsonObject) -> ToolCall:
        """This turn's call (from the loop that runs the episode). Raises NotYourTurn when none is awaited."""
        if not self.waiting:
            raise NotYourTurn("the episode is not waiting for a call")
        self._calls += 1
        call = ToolCall(id=self.call_id(), name=name, args=dict(args))
        assert self._pending is not None
        self._waiting.clear()
        self._pending.set_result(call)
        return call

    async def turn(self) -> Observation:
        """Wait until the episode asks for the next call; what the agent was shown (drivers and tests)."""
        await self._waiting.wait()
        return self.seen[-1]
