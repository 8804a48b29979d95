"""A person as an agent: each turn waits for one tool call from the UI, so a human plays under the same `Episode`.

Nothing about the rules lives here. The episode charges the same costs, applies the
same caps, sends the same rejection texts, exhausted nudge and status footer, and
ends with the same five terminations as for a model; this class only carries a
person's call in and tells the UI what the agent was shown.

A human turn is exactly one tool call (`think` is the notes field, `submit_answer`
the answer): a model may batch several calls in one turn, a person may not, and a
person never sends plain text, so a human never receives the plain-text nudge.

Token usage: a person's turn has no provider count. Play sessions run with
`RunSpec.estimate_tokens`, so the runner wraps this agent in `EstimatedUsage`
(characters / 4 of the whole conversation each turn, raw usage marked
`estimated`): the TOKENS meter and the 200K cap then mean for a person what they
mean for a model that reads the same text every turn.

Quitting mid-item is cancellation: the task running the episode is cancelled while
`act` waits and nothing is finished by the episode; the play session keeps what was
played as an abandoned attempt (`workbench.play`), and the item is played again from
its first turn, marked `resumed`.
"""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sandbox.agents.base import split_footer
from sandbox.records import AssistantTurn, ToolCall

HUMAN_PREFIX = "human:"
# How a person's record marks what they saw before (workbench.play): an attempt left midway is kept, ended by
# `error` with this error_kind; a later play of an item after seeing its tool results or its gold answer
# carries one of MARKED as its error_kind, and the leaderboard leaves it out.
ABANDONED, RESUMED, REPLAYED = "abandoned", "resumed", "replayed"
MARKED = (RESUMED, REPLAYED)


def human_agent_name(player: str) -> str:
    """The agent string a person's runs carry (`human:NAME`), which reports use to tell people from models."""
    return f"{HUMAN_PREFIX}{player}"


def is_human(agent: str | None) -> bool:
    return bool(agent) and str(agent).startswith(HUMAN_PREFIX)


class NotYourTurn(RuntimeError):
    """A call was sent while the episode was not waiting for one (between turns, or after the end)."""


@dataclass(frozen=True)
class Observation:
    """What the agent is shown before it acts: the messages the episode added since the agent's last turn.

    On the first turn that is the system prompt and the first user message; afterwards the
    tool results (each with the status footer appended) and any nudge.
    """

    turn: int  # the turn the agent is about to take (1-based)
    messages: tuple[dict[str, Any], ...]

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


class HumanAgent:
    """Awaits one tool call per turn from `send`; `on_turn` hears what the agent was shown, before it acts."""

    text_tools = False

    def __init__(self, player: str, on_turn: Callable[[Observation], None] | None = None):
        self.name = human_agent_name(player)
        self.on_turn = on_turn
        self.seen: list[Observation] = []
        self._pending: asyncio.Future[ToolCall] | None = None
        self._waiting = asyncio.Event()
        self._read = 0  # messages already shown
        self._calls = 0

    @property
    def waiting(self) -> bool:
        """True while the episode waits for this person's next call."""
        return self._pending is not None and not self._pending.done()

    async def act(self, messages: list[dict[str, Any]], tools: tuple[dict, ...]) -> AssistantTurn:
        fresh = tuple(m for m in messages[self._read:] if m.get("role") != "assistant")
        self._read = len(messages)
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
            self._waiting.clear()  # also when cancelled: a person who quit is not waited for
        return AssistantTurn(text="", tool_calls=[call])

    def send(self, name: str, args: dict[str, Any]) -> ToolCall:
        """This turn's call (from the loop that runs the episode). Raises NotYourTurn when none is awaited."""
        if not self.waiting:
            raise NotYourTurn("the episode is not waiting for a call")
        self._calls += 1
        call = ToolCall(id=f"human_{self._calls}", name=name, args=dict(args))
        assert self._pending is not None
        self._waiting.clear()
        self._pending.set_result(call)
        return call

    async def turn(self) -> Observation:
        """Wait until the episode asks for the next call; what the agent was shown (drivers and tests)."""
        await self._waiting.wait()
        return self.seen[-1]
