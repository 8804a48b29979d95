"""Our OpenAI-style messages and turns as Inspect's chat messages and model outputs, both ways.

The episode speaks OpenAI-style dicts (`sandbox.episode`); Inspect's models speak `ChatMessage`s. The texts cross
unchanged — every tool result, footer, nudge and rejection — so a model under Inspect reads what our own loop sends.
An assistant message carries what its model call measured in its metadata (`TurnFacts`): the token usage in our
four buckets (`usage`), the provider's raw usage, the finish reason, and the call a completion limit cut off
mid-way — which is how an imported log gives each turn the tokens it was measured at, and its cut-offs.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolCall as InspectCall
from inspect_ai.tool import ToolInfo, ToolParams

from sandbox.agents.base import arguments_json
from sandbox.agents.textcalls import reply_calls
from sandbox.records import TOOL_NAMES, AssistantTurn, ToolCall, ToolSchema, Usage, WireMessage, WireToolCall

# Inspect's stop reasons as the provider's finish_reason our episode reads ("length": the completion limit)
FINISH: dict[str, str] = {"stop": "stop", "tool_calls": "tool_calls", "max_tokens": "length", "model_length": "length"}


@dataclass(frozen=True)
class TurnUsage:
    """One model call's tokens in our four buckets, as an assistant message's metadata carries them."""

    prompt: int
    completion: int
    cache_read: int
    cache_creation: int

    @classmethod
    def of(cls, usage: Usage) -> TurnUsage:
        return cls(usage.prompt, usage.completion, usage.cache_read, usage.cache_creation)

    @classmethod
    def from_metadata(cls, value: Any) -> TurnUsage | None:
        """The usage an assistant message's metadata holds; None when it holds none (or not of this shape)."""
        if not isinstance(value, dict):
            return None
        try:
            return cls(*(int(value.get(k) or 0) for k in ("prompt", "completion", "cache_read", "cache_creation")))
        except (TypeError, ValueError):
            return None

    def as_usage(self) -> Usage:
        return Usage(self.prompt, self.completion, self.cache_read, self.cache_creation)

    def as_metadata(self) -> dict[str, int]:
        return {
            "prompt": self.prompt,
            "completion": self.completion,
            "cache_read": self.cache_read,
            "cache_creation": self.cache_creation,
        }


@dataclass(frozen=True)
class TurnFacts:
    """What an assistant message's metadata keeps of its model call: its tokens (`usage`), the provider's raw usage,
    why the model stopped (`finish_reason`: `length` for the completion limit) and the call that limit cut off
    mid-way (`cut_off`: counted, never run). Only what is known is written, so older logs read as before."""

    usage: TurnUsage
    raw_usage: dict[str, Any] | None = None
    finish_reason: str | None = None
    cut_off: str | None = None

    @classmethod
    def of(cls, turn: AssistantTurn) -> TurnFacts:
        return cls(TurnUsage.of(turn.usage), turn.usage.raw, turn.finish_reason, turn.cut_off)

    @classmethod
    def from_metadata(cls, metadata: Any) -> TurnFacts | None:
        """The facts an assistant message's metadata holds; None when it holds no usage."""
        meta = metadata if isinstance(metadata, dict) else {}
        usage = TurnUsage.from_metadata(meta.get("usage"))
        if usage is None:
            return None
        raw, finish, cut = meta.get("raw_usage"), meta.get("finish_reason"), meta.get("cut_off")
        return cls(
            usage,
            raw if isinstance(raw, dict) else None,
            finish if isinstance(finish, str) else None,
            cut if isinstance(cut, str) else None,
        )

    def as_metadata(self) -> dict[str, Any]:
        out: dict[str, Any] = {"usage": self.usage.as_metadata()}
        for key, value in (("raw_usage", self.raw_usage), ("finish_reason", self.finish_reason)):
            if value is not None:
                out[key] = value
        if self.cut_off is not None:
            out["cut_off"] = self.cut_off
        return out

    def as_usage(self) -> Usage:
        return replace(self.usage.as_usage(), raw=self.raw_usage)


def tool_info(schema: ToolSchema) -> ToolInfo:
    """One of our tool schemas (name, description, JSON-schema parameters) as Inspect's tool definition, sent as ours
    is sent: Inspect adds `additionalProperties: false` to every tool's parameters unless told otherwise, which the
    protocol's schemas do not carry (a chat template renders it into the prompt), so it is left out (None is not
    sent) unless our schema says it."""
    parameters = schema.get("parameters") or {"type": "object", "properties": {}}
    params = ToolParams.model_validate(parameters)
    if "additionalProperties" not in parameters:
        params.additionalProperties = None
    return ToolInfo(name=schema["name"], description=schema.get("description", ""), parameters=params)


def to_inspect(messages: list[WireMessage], usages: list[TurnFacts] | None = None) -> list[ChatMessage]:
    """Our messages as Inspect's; the k-th assistant message gets `usages[k]` in its metadata when given."""
    out: list[ChatMessage] = []
    assistants = 0
    for message in messages:
        role, content = message.get("role"), message.get("content")
        text = content if isinstance(content, str) else ("" if content is None else json.dumps(content))
        if role in ("system", "user", "tool"):
            out.append(_plain_message(role, text, message.get("tool_call_id"), message.get("name")))
        else:
            usage = usages[assistants] if usages is not None and assistants < len(usages) else None
            assistants += 1
            out.append(_assistant_message(text, [_inspect_call(c) for c in message.get("tool_calls") or []], usage))
    return out


def _plain_message(role: str, text: str, tool_call_id: str | None, tool: str | None) -> ChatMessage:
    """A system, user or tool message as Inspect's (a tool message names its call and its tool)."""
    if role == "system":
        return ChatMessageSystem(content=text)
    if role == "user":
        return ChatMessageUser(content=text)
    return ChatMessageTool(content=text, tool_call_id=tool_call_id, function=tool)


def _assistant_message(text: str, calls: list[InspectCall], facts: TurnFacts | None) -> ChatMessageAssistant:
    """An assistant message as Inspect's with its calls, and what its call measured (if known) in the metadata."""
    return ChatMessageAssistant(
        content=text,
        tool_calls=calls or None,
        metadata=facts.as_metadata() if facts is not None else None,
    )


def _inspect_call(call: WireToolCall) -> InspectCall:
    """A call of our history as Inspect's; undecodable arguments are kept as its parse error (Inspect sends `{}`)."""
    function = call.get("function") or {}
    name, raw = function.get("name", ""), function.get("arguments")
    try:
        arguments = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except json.JSONDecodeError:
        arguments = None
    if not isinstance(arguments, dict):
        return InspectCall(id=call["id"], function=name, arguments={}, parse_error=str(raw))
    return InspectCall(id=call["id"], function=name, arguments=arguments)


def reply_message(turn: AssistantTurn) -> WireMessage:
    """An assistant turn as our OpenAI-style message (the shape the episode appends to the history)."""
    message: WireMessage = {"role": "assistant", "content": turn.text}
    if turn.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments_json(c.args)}}
            for c in turn.tool_calls
        ]
    return message


def turn_from_output(output: ModelOutput, names: Collection[str] = TOOL_NAMES) -> AssistantTurn:
    """What an Inspect model answered, as the turn our episode applies: text, calls, usage, finish reason — its calls
    read as our own client reads a reply (`textcalls.reply_calls`): native calls, else calls written in the text
    (`names`: the tools they may name), a call cut off mid-way kept as `cut_off` (counted, never run); `raw`, the
    message sent back, shows each call once, as structured calls, the call text taken out of the prose."""
    from sandbox.agents.llm import native_history

    message = output.message
    reasoning = "".join(c.reasoning for c in message.content if isinstance(c, ContentReasoning)) or None
    text = message.text or None
    finish = FINISH.get(output.stop_reason, output.stop_reason)
    read = reply_calls(text, [turn_call(c) for c in message.tool_calls or []], finish, names)
    return AssistantTurn(
        text=text,
        tool_calls=read.calls,
        usage=usage_of(output.usage),
        raw=native_history({}, text, read.calls, read.spans, None),
        reasoning=reasoning if not isinstance(message.content, str) else None,
        finish_reason=finish,
        cut_off=read.cut_off,
    )


def usage_of(usage: ModelUsage | None) -> Usage:
    """Inspect's usage in our four buckets: its input tokens are already the non-cached prompt (as ours)."""
    if usage is None:
        return Usage()
    return Usage(
        prompt=usage.input_tokens,
        completion=usage.output_tokens,
        cache_read=usage.input_tokens_cache_read or 0,
        cache_creation=usage.input_tokens_cache_write or 0,
        raw=usage.model_dump(exclude_none=True),
    )


def turn_call(call: InspectCall) -> ToolCall:
    """An Inspect tool call as ours: undecodable arguments kept as `{"_raw": text}`, as our clients keep them."""
    if call.parse_error is not None:
        return ToolCall(id=call.id, name=call.function, args={"_raw": call.parse_error})
    return ToolCall(id=call.id, name=call.function, args=dict(call.arguments))


def logged_turn(message: ChatMessageAssistant) -> AssistantTurn:
    """An assistant message of a log as the turn a replay returns: its text, its calls, its usage (raw usage
    included), its finish reason and the call a completion limit cut off in it (counted again, never run)."""
    facts = TurnFacts.from_metadata(message.metadata)
    return AssistantTurn(
        text=message.text or None,
        tool_calls=[turn_call(c) for c in message.tool_calls or []],
        usage=facts.as_usage() if facts is not None else Usage(),
        finish_reason=facts.finish_reason if facts is not None else None,
        cut_off=facts.cut_off if facts is not None else None,
    )
