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
from sandbox.records import AssistantTurn, StepUsage, ToolCall, ToolSchema, Usage, WireMessage
from sandbox.words import split_words
from storage.json_types import JsonObject

PREFIX_MARK = "prefix"  # `usage.raw[PREFIX_MARK]` marks a replayed turn: no new model call, no new cost


def prefix_turns(steps: list[dict[str, Any]], termination: str | None, stop: str = STOP_NOW) -> list[AssistantTurn]:
    """The assistant turns to replay: all of them but a final turn that submitted or was the forced STOP call
    (`stop`: the STOP instruction as the run's prompts word it, `--prompts`)."""
    turns = [_stored_turn(s) for s in steps if s["kind"] == "assistant"]
    if turns and _answered_last(steps, termination, turns[-1], stop):
        turns.pop()
    return turns


def _stored_turn(step: dict[str, Any]) -> AssistantTurn:
    """A stored assistant step as the turn it was: text, reasoning, calls (an id-less one numbered) and usage."""
    calls = [
        ToolCall(c.get("id") or f"prefix_{i}", c.get("name") or "", c.get("args"))
        for i, c in enumerate(step.get("tool_args") or [])
    ]
    return AssistantTurn(
        text=step.get("text"),
        reasoning=split_words(step.get("text"), step.get("reasoning_chars")).reasoning or None,
        tool_calls=calls,
        usage=_replayed_usage(step.get("usage") or StepUsage()),
    )


def _replayed_usage(usage: StepUsage) -> Usage:
    """A stored step's usage, its raw record marked as a replayed turn's (`PREFIX_MARK`)."""
    raw = usage.get("raw") or {}
    marked: JsonObject = dict(raw) if isinstance(raw, dict) else {"raw": raw}
    marked[PREFIX_MARK] = True
    return Usage(
        prompt=usage.get("prompt", 0),
        completion=usage.get("completion", 0),
        cache_read=usage.get("cache_read", 0),
        cache_creation=usage.get("cache_creation", 0),
        raw=marked,
    )


def _answered_last(steps: list[dict[str, Any]], termination: str | None, last: AssistantTurn, stop: str) -> bool:
    """Whether the stored episode's last turn was its answer: it was told to STOP, ended on an answer, or the last
    turn submitted."""
    stopped = any(s["kind"] == "nudge" and (s.get("text") or "").startswith(stop) for s in steps)
    return stopped or termination == "answer" or any(c.name == "submit_answer" for c in last.tool_calls)


class ContinuationAgent:
    """Replays a prefix of stored turns, then hands the conversation to the live agent."""

    def __init__(self, agent: Any, prefix: list[AssistantTurn]):
        self.agent = agent
        self.name = agent.name
        self.text_tools = getattr(agent, "text_tools", False)
        self.prefix = list(prefix)
        self.replayed = 0

    async def act(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        if self.prefix:
            self.replayed += 1
            turn = self.prefix.pop(0)
            replay = getattr(self.agent, "replay", None)
            if replay is not None:
                await replay(messages, tools, turn)
            return turn
        return unique_ids(await self.agent.act(messages, tools), messages)


def unique_ids(
    turn: AssistantTurn,
    messages: list[WireMessage],
    used: frozenset[str] | set[str] = frozenset(),
    held: ConversationIds | None = None,
) -> AssistantTurn:
    """The turn with every call id the conversation already holds, `used` holds (the episode's ids from before its
    history was replaced by a summary) or the turn repeats renamed `<id>-<n>` (letters, digits, `_` and `-` only:
    Anthropic refuses a `tool_use` id with any other character). `held`: the conversation's ids kept as it grows
    (else its messages are all read).

    The provider-native message (`raw`), when it lists the calls, is renamed alike, so tool results
    still answer the ids the model's own message carries.
    """
    taken = held(messages) if held is not None else _ids_in(messages)
    renamed = _fresh_ids(turn.tool_calls, taken | set(used))
    if not renamed:
        return turn
    for i, new in renamed.items():
        turn.tool_calls[i] = ToolCall(new, turn.tool_calls[i].name, turn.tool_calls[i].args)
    if turn.raw is not None:
        turn.raw = _raw_with_ids(turn.raw, turn.tool_calls)
    return turn


class ConversationIds:
    """The call ids a conversation holds (`_ids_in`), each message read once: an episode's history only grows turn by
    turn and every turn's reply is checked against it, so reading it whole each time cost the square of its length
    (a summary that replaces it, in place, is noticed and the history read again)."""

    def __init__(self) -> None:
        self._messages: list[WireMessage] | None = None
        self._read = 0  # how many of its messages were read
        self._last: WireMessage | None = None  # the last of them, to notice a history replaced in place
        self._ids: set[str | None] = set()

    def __call__(self, messages: list[WireMessage]) -> set[str | None]:
        read = self._read
        if messages is not self._messages or read > len(messages) or (read and messages[read - 1] is not self._last):
            self._messages, self._ids, read = messages, set(), 0
        if read < len(messages):
            self._ids |= _ids_in(messages[read:])
            self._read, self._last = len(messages), messages[-1]
        return self._ids


def _ids_in(messages: list[WireMessage]) -> set[str | None]:
    """The call ids a conversation holds: its assistant messages' calls and its tool results'."""
    taken = {tc.get("id") for m in messages if m.get("role") == "assistant" for tc in (m.get("tool_calls") or [])}
    return taken | {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}


def _fresh_ids(calls: list[ToolCall], taken: set[str | None]) -> dict[int, str]:
    """{position: new id} for each call whose id is taken (or repeats an earlier call's): `<id>-<n>`, the first n
    from 2 that is free."""
    renamed: dict[int, str] = {}
    for i, c in enumerate(calls):
        new, n = c.id, 1
        while new in taken:
            n += 1
            new = f"{c.id}-{n}"
        taken.add(new)
        if new != c.id:
            renamed[i] = new
    return renamed


def _raw_with_ids(raw: WireMessage, calls: list[ToolCall]) -> WireMessage:
    """The provider-native message with the ids of `calls`, when it lists as many calls (else as it is)."""
    raw_calls = raw.get("tool_calls")
    if not isinstance(raw_calls, list) or len(raw_calls) != len(calls):
        return raw
    return {**raw, "tool_calls": [{**rc, "id": c.id} for rc, c in zip(raw_calls, calls, strict=True)]}
