"""A scripted agent for tests: replays a list of turns (or raises errors) and records what it was shown."""

from __future__ import annotations

from typing import Any

from sandbox.records import AssistantTurn, ToolCall, Usage


def turn(*calls: tuple[str, dict], text: str | None = None, tokens: int = 0) -> AssistantTurn:
    return AssistantTurn(
        text=text, tool_calls=[ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(calls)], usage=Usage(prompt=tokens)
    )


class ScriptAgent:
    name = "script"

    def __init__(self, script: list[Any]):
        self.script = list(script)
        self.seen: list[list[dict]] = []

    async def act(self, messages: list[dict], tools: tuple[dict, ...]) -> AssistantTurn:
        self.seen.append([dict(m) for m in messages])
        nxt = self.script.pop(0) if self.script else AssistantTurn(text="thinking...")
        if isinstance(nxt, Exception):
            raise nxt
        return nxt
