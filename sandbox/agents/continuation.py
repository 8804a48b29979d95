"""Continuation protocol for sequential scaling on the token axis: resume from the trajectory at the lower budget.

The stored assistant turns of the previous level are replayed through the episode (our sandbox
recomputes their tool results, which are the same because only the context budget changed),
minus the forced final answer, then the live agent takes over. The model is not called for the
replayed turns, so the prefix costs nothing.
"""
from __future__ import annotations

from typing import Any

from sandbox.records import AssistantTurn, ToolCall, Usage


def prefix_turns(steps: list[dict[str, Any]], termination: str | None) -> list[AssistantTurn]:
    """The assistant turns to replay: all of them but a final turn that submitted or was the forced STOP call."""
    turns = []
    for s in steps:
        if s["kind"] != "assistant":
            continue
        usage = s.get("usage") or {}
        calls = [ToolCall(c.get("id") or f"prefix_{i}", c.get("name") or "", c.get("args"))
                 for i, c in enumerate(s.get("tool_args") or [])]
        turns.append(AssistantTurn(text=s.get("text"), tool_calls=calls, usage=Usage(
            prompt=usage.get("prompt", 0), completion=usage.get("completion", 0), cache_read=usage.get("cache_read", 0),
            cache_creation=usage.get("cache_creation", 0), raw=usage.get("raw"))))
    stopped = any(s["kind"] == "nudge" and (s.get("text") or "").startswith("**CRITICAL") for s in steps)
    if turns and (stopped or termination == "answer" or any(c.name == "submit_answer" for c in turns[-1].tool_calls)):
        turns.pop()
    return turns


class ContinuationAgent:
    """Replays a prefix of stored turns, then hands the conversation to the live agent."""

    def __init__(self, agent: Any, prefix: list[AssistantTurn]):
        self.agent = agent
        self.name = agent.name
        self.text_tools = getattr(agent, "text_tools", False)
        self.prefix = list(prefix)
        self.replayed = 0

    async def act(self, messages: list[dict[str, Any]], tools: tuple[dict, ...]) -> AssistantTurn:
        if self.prefix:
            self.replayed += 1
            return self.prefix.pop(0)
        return await self.agent.act(messages, tools)
