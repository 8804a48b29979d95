"""Token usage for agents that call no model: an estimate (characters / 4) so token axes mean something.

Used for sequential scaling on the token axis with scripted agents; the raw usage says
`estimated`, so nobody mistakes it for a provider's count.
"""

from __future__ import annotations

import json
from typing import Any

from sandbox.records import AssistantTurn, ToolSchema, Usage, WireMessage

CHARS_PER_TOKEN = 4


def estimate(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


class EstimatedUsage:
    """Wraps an agent; each turn's usage becomes the estimated context sent and the estimated reply."""

    def __init__(self, agent: Any):
        self.agent = agent
        self.name = agent.name

    async def act(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        turn = await self.agent.act(messages, tools)
        prompt = sum(estimate(str(m.get("content") or "")) for m in messages) + estimate(json.dumps(tools))
        reply = (turn.text or "") + "".join(json.dumps(c.args, default=str) + c.name for c in turn.tool_calls)
        turn.usage = Usage(prompt=prompt, completion=estimate(reply), raw={"estimated": True})
        return turn

    async def replay(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...], turn: AssistantTurn) -> None:
        """Pass a replayed turn (continuation) on to the wrapped agent, if it keeps state."""
        replay = getattr(self.agent, "replay", None)
        if replay is not None:
            await replay(messages, tools, turn)
