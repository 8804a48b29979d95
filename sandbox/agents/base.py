"""The agent interface and the error classes the episode loop acts on.

Errors are classified by type here, once, by the agent that knows its transport;
the episode never looks at message text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from contextvars import ContextVar
from typing import Any, Protocol

from sandbox.prompts import STOP_NOW, SUMMARIZE_PROMPT
from sandbox.records import AssistantTurn, ChatRole, ErrorKind, ToolCall, ToolSchema, WireMessage


class ModelError(Exception):
    """A model call failed. Subclasses say how the episode must react."""

    kind: ErrorKind = "api_error"


class TransientModelError(ModelError):
    """429, 5xx, overloaded, timeouts, connection resets: retried in place, not counted as a turn."""

    kind: ErrorKind = "transient"

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class NonTransientModelError(ModelError):
    """A bad request and the like: counts as a turn; five in a row end the episode as `error`."""

    kind: ErrorKind = "api_error"


class RefusedRequest(NonTransientModelError):
    """The server refused the request itself (HTTP 400, 413 or 422, not a rate limit): the same request meets the
    same refusal, so it is never sent again: the episode ends `error` at once with the server's message.
    `overflow`: the refusal is a full context window (the conversation no longer fits the model)."""

    kind: ErrorKind = "refused"

    def __init__(self, message: str, overflow: bool = False):
        super().__init__(message)
        self.overflow = overflow
        if overflow:
            self.kind = "context_overflow"


class InfrastructureError(ModelError):
    """Authentication, a missing model, persistent server failure: end the attempt; the runner retries the sample."""

    kind: ErrorKind = "infra"


class ServerUnreachable(InfrastructureError):
    """Nothing listens at a server on this machine (connection refused): it is not running (or still loading), and
    no backoff brings it back (ten backoffs and three attempts took minutes per item). The episode ends at once and
    the runner stops the whole run, interrupted and resumable, leaving that episode unfinished
    (`Runner._server_gone`)."""

    kind: ErrorKind = "unreachable"


class Agent(Protocol):
    """Given the conversation so far (OpenAI-style messages), return the next assistant turn."""

    name: str

    async def act(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn: ...


def call(name: str, n: int, **args: Any) -> ToolCall:
    """A tool call with a synthetic id, for scripted agents."""
    return ToolCall(id=f"call_{n}", name=name, args=args)


def turn_number(messages: list[WireMessage]) -> int:
    """The number of the turn about to be taken: one more than the assistant turns already in the conversation.

    Scripted agents number their call ids with it rather than with a counter of their own, so a
    conversation they join half-way (a continuation prefix) never gets an id twice.
    """
    return 1 + sum(1 for m in messages if m.get("role") == "assistant")


# The STOP text of the episode being played (its prompts', `--prompts`): set by the episode for as long as it runs, so
# a scripted agent recognises the instruction however the run words it (a context variable: per asyncio task)
STOP_TEXT: ContextVar[str] = ContextVar("stop_text", default=STOP_NOW)
# and its summarize request (the summarize strategy's), so a scripted agent writes its summary when the run's prompts
# word the request otherwise
SUMMARIZE_TEXT: ContextVar[str] = ContextVar("summarize_text", default=SUMMARIZE_PROMPT)


def answer_now(messages: list[WireMessage]) -> bool:
    """Whether the harness has just told the agent to answer immediately (the token axis's STOP)."""
    if not messages:
        return False
    last = messages[-1]
    return last["role"] == "user" and (last.get("content") or "").startswith(STOP_TEXT.get())


def summary_requested(messages: list[WireMessage]) -> bool:
    """Whether the last turn's submit was answered with the summarize strategy's request (`sandbox.strategies`):
    the agent's next reply is its summary, which then replaces the conversation."""
    return any(text.startswith(SUMMARIZE_TEXT.get()) for text in tool_results(messages))


def same_calls(a: AssistantTurn, b: AssistantTurn) -> bool:
    """The same tool calls (names and arguments, in order), whatever their ids."""
    return [(c.name, c.args) for c in a.tool_calls] == [(c.name, c.args) for c in b.tool_calls]


def tool_results(messages: list[WireMessage]) -> list[str]:
    """The tool-result texts of the last turn (what a scripted agent may see), footers stripped."""
    out: list[str] = []
    for msg in reversed(messages):
        if msg.get("role") == "tool":
            out.append(split_footer(msg.get("content") or "")[0])
        elif msg.get("role") == "assistant":
            break
    return list(reversed(out))


BUDGET_USED = re.compile(r"Budget used: (\d+)\s*$")  # the status footer's last field


def last_budget_used(messages: list[WireMessage], roles: Collection[ChatRole]) -> int | None:
    """The points used as the latest message from one of `roles` ending in a status footer states them (None before
    any footer): what a scripted agent knows of its spending."""
    for msg in reversed(messages):
        m = BUDGET_USED.search(msg.get("content") or "") if msg.get("role") in roles else None
        if m:
            return int(m.group(1))
    return None


FOOTER_MARK = "\nTurn: "


def split_footer(content: str) -> tuple[str, str | None]:
    """(text, status footer or None): a tool result or nudge without the `Turn: …` line the ledger appends."""
    if FOOTER_MARK not in content:
        return content, None
    text, footer = content.rsplit(FOOTER_MARK, 1)
    return text, FOOTER_MARK.lstrip("\n") + footer


def arguments_json(args: Any) -> str:
    """Arguments as the string an OpenAI-style assistant message carries (`json.dumps(args, ensure_ascii=False)`)."""
    if isinstance(args, dict) and set(args) == {"_raw"}:
        return str(args["_raw"])
    return _ARGUMENTS.encode(args)


# json.dumps with a non-default option builds an encoder on every call; one kept encoder writes the same text
_ARGUMENTS = json.JSONEncoder(ensure_ascii=False)
