"""The sequence of an episode's model calls, as an Inspect log keeps it beside the messages, so a replay meets every
failed call where the episode met it.

A log's messages stand for the replies only: a call that failed (an API error, a refused request, a full context
window, a transient failure) leaves no message, so a replay that knew only the messages would run out of replies
where the episode met the failure ("replay log exhausted") and end it as `infra`. `model_calls` reads the
sequence from the episode's steps — `reply` for each model reply (an assistant step, or the harness's note that
stands for a reply: over the token cap, empty), a failure with its kind and the server's message otherwise — and
the sample's metadata keeps it under `agenthop_calls`; `failure` turns an entry back into the error the episode
met, which the replay raises in its turn. The step texts read here are the episode's own (`sandbox.episode`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal, TypedDict

from sandbox.agents.base import (
    InfrastructureError,
    ModelError,
    NonTransientModelError,
    RefusedRequest,
    TransientModelError,
)

REPLY = "reply"
MODEL_CALL_NOTES = ("[HARNESS] Token limit reached", "[HARNESS] Empty response")  # harness notes standing for a reply
FailureKind = Literal["transient", "api_error", "refused", "context_overflow", "infra"]


class Failure(TypedDict):
    """A model call that failed: how (`failure`) and the server's (or the client's) message."""

    failure: FailureKind
    message: str


CallEntry = str | Failure  # REPLY, or a failure

_RETRY = re.compile(r"^Transient error \(retry \d+ of \d+ in [\d.]+s\): ")
_ABANDONED = re.compile(r"^Abandoned after \d+ transient retries: ")
_OVERFLOW = re.compile(r"^context window full at turn \d+: ")
_NOT_SENT_AGAIN = " (not sent again: the same request would be refused again)"


def model_calls(steps: Iterable[tuple[str, str]]) -> list[CallEntry]:
    """Every model call of an episode, in order, from its steps' (kind, text)."""
    out: list[CallEntry] = []
    for kind, text in steps:
        if kind == "assistant" or (kind == "harness" and text.startswith(MODEL_CALL_NOTES)):
            out.append(REPLY)
        elif kind in ("retry", "error"):
            found = _failure(kind, text)
            if found is not None:
                out.append(found)
    return out


def _failure(kind: str, text: str) -> Failure | None:
    """The failed call a retry or error step stands for; None for an error that is no model call (our bug)."""
    for pattern in (_RETRY, _ABANDONED):
        match = pattern.match(text)
        if match is not None:
            return {"failure": "transient", "message": text[match.end() :]}
    if kind == "error" and text.startswith("Infrastructure error: "):
        return {"failure": "infra", "message": text.removeprefix("Infrastructure error: ")}
    if kind == "error" and text.startswith("API error: "):
        return _api_error(text.removeprefix("API error: "))
    return None


def _api_error(body: str) -> Failure:
    """An API error step's failure: refused (not sent again), a full context window among those, or another."""
    if not body.endswith(_NOT_SENT_AGAIN):
        return {"failure": "api_error", "message": body}
    body = body.removesuffix(_NOT_SENT_AGAIN)
    match = _OVERFLOW.match(body)
    if match is not None:
        return {"failure": "context_overflow", "message": body[match.end() :]}
    return {"failure": "refused", "message": body}


def failure(entry: Failure) -> ModelError:
    """The error a replay raises for a failed call, as the client raised it in the episode."""
    message, kind = entry["message"], entry["failure"]
    if kind == "transient":
        return TransientModelError(message)
    if kind == "infra":
        return InfrastructureError(message)
    if kind in ("refused", "context_overflow"):
        return RefusedRequest(message, overflow=kind == "context_overflow")
    return NonTransientModelError(message)


def logged_calls(value: object) -> tuple[CallEntry, ...]:
    """The `agenthop_calls` a sample's metadata holds, entries of another shape left out (empty: a log without it)."""
    if not isinstance(value, list):
        return ()
    out: list[CallEntry] = []
    for entry in value:
        if entry == REPLY:
            out.append(REPLY)
        elif isinstance(entry, dict) and isinstance(entry.get("message"), str):
            kind = entry.get("failure")
            if kind in ("transient", "api_error", "refused", "context_overflow", "infra"):
                out.append({"failure": kind, "message": entry["message"]})
    return tuple(out)
