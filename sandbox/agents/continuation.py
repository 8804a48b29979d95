"""Continuation protocol for sequential scaling on the token axis: resume from the trajectory at the lower budget.

The stored assistant turns of the previous level are replayed through the episode (our sandbox
recomputes their tool results, which are the same because only the context budget changed),
minus the forced final answer, then the live agent takes over. The model is not called for the
replayed turns: the prefix costs no new money (what it cost at the level below is the chain's
cumulative cost, reported beside each level's marginal cost).

An agent that keeps state between turns (the scripted ones) would otherwise meet the
conversation half-way with its state at turn 1: it would redo its first moves and reuse its
first call ids. Such an agent has a `replay(messages, tools, turn)` method, called on every
replayed turn with the conversation that turn answered; an LLM agent (stateless: it reads the
messages) has none. Whatever the agent, a live call id that the conversation already holds is
renamed, so ids never collide with the prefix's.
"""

from __future__ import annotations

from typing import Any

from sandbox.prompts import STOP_NOW
from sandbox.records import AssistantTurn, ToolCall, Usage
from sandbox.words import split_words

PREFIX_MARK = "prefix"  # `usage.raw[PREFIX_MARK]` marks a replayed turn: no new model call, no new cost


def prefix_turns(steps: list[dict[str, Any]], termination: str | None, stop: str = STOP_NOW) -> list[AssistantTurn]:
    """The assistant turns to replay: all of them but a final turn that submitted or was the forced STOP call
    (`stop`: the STOP instruction as the run's prompts word it, `--prompts`)."""
    turns = []
    for s in steps:
        if s["kind"] != "assistant":
            continue
        usage = s.get("usage") or {}
        calls = [
            ToolCall(c.get("id") or f"prefix_{i}", c.get("name") or "", c.get("args"))
            for i, c in enumerate(s.get("tool_args") or [])
        ]
        raw = dict(usage.get("raw") or {}) if isinstance(usage.get("raw") or {}, dict) else {"raw": usage.get("raw")}
        raw[PREFIX_MARK] = True
        reasoning = split_words(s.get("text"), s.get("reasoning_chars")).reasoning or None
        turns.append(
            AssistantTurn(
                text=s.get("text"),
                reasoning=reasoning,
                tool_calls=calls,
                usage=Usage(
                    prompt=usage.get("prompt", 0),
                    completion=usage.get("completion", 0),
                    cache_read=usage.get("cache_read", 0),
                    cache_creation=usage.get("cache_creation", 0),
                    raw=raw,
                ),
            )
        )
    stopped = any(s["kind"] == "nudge" and (s.get("text") or "").startswith(stop) for s in steps)
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
            turn = self.prefix.pop(0)
            replay = getattr(self.agent, "replay", None)
            if replay is not None:
                await replay(messages, tools, turn)
            return turn
        return unique_ids(await self.agent.act(messages, tools), messages)


def unique_ids(
    turn: AssistantTurn, messages: list[dict[str, Any]], used: frozenset[str] | set[str] = frozenset()
) -> AssistantTurn:
    """The turn with every call id the conversation already holds, `used` holds (the episode's ids from before its
    history was replaced by a summary) or the turn repeats renamed `<id>-<n>` (letters, digits, `_` and `-` only:
    Anthropic refuses a `tool_use` id with any other character).

    The provider-native message (`raw`), when it lists the calls, is renamed alike, so tool results
    still answer the ids the model's own message carries.
    """
    taken = {tc.get("id") for m in messages if m.get("role") == "assistant" for tc in (m.get("tool_calls") or [])}
    taken |= {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    taken |= set(used)
    renamed: dict[int, str] = {}
    for i, c in enumerate(turn.tool_calls):
        new, n = c.id, 1
        while new in taken:
            n += 1
            new = f"{c.id}-{n}"
        taken.add(new)
        if new != c.id:
            renamed[i] = new
    if not renamed:
        return turn
    for i, new in renamed.items():
        turn.tool_calls[i] = ToolCall(new, turn.tool_calls[i].name, turn.tool_calls[i].args)
    raw = turn.raw or {}
    raw_calls = raw.get("tool_calls")
    if isinstance(raw_calls, list) and len(raw_calls) == len(turn.tool_calls):
        turn.raw = {**raw, "tool_calls": [{**rc, "id": c.id} for rc, c in zip(raw_calls, turn.tool_calls)]}
    return turn
