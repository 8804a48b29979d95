"""What one model call's reply amounts to, for either client (native or litellm): the message, the usage buckets
and the argument JSON read from it, or the error it is — by the HTTP status the server sent, else (no response) by
exception type; never by message text — with the key scrubbed from anything that may reach the store or a log.

Pure reading and classification: sending the call and deciding what an episode does next is `llm`'s job.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, Required, TypedDict

import orjson

from sandbox.agents.base import (
    InfrastructureError,
    ModelError,
    NonTransientModelError,
    RefusedRequest,
    TransientModelError,
)
from sandbox.agents.litellm_import import litellm_module, loaded_litellm
from sandbox.agents.wire import Wire, parse_retry_after, status_in_chain
from sandbox.records import Usage
from storage.json_types import JsonObject, JsonValue

NO_KEY = "sk-no-key-required"  # OpenAI-compatible local servers still want some key string; it is no secret


class ReplyFunction(TypedDict, total=False):
    """The function of a tool call in a reply: its arguments as JSON text (`decode_arguments` reads what a server
    sends instead)."""

    name: str | None
    arguments: JsonValue


class ReplyToolCall(TypedDict, total=False):
    """One of a reply message's `tool_calls` (a call without an id is numbered by the turn)."""

    id: str | None
    type: str
    function: ReplyFunction


class ReplyMessage(TypedDict, total=False):
    """The OpenAI-shaped message of a reply, as the server sent it or as `litellm_message` reads litellm's: the
    turn reads each field defensively (a server may send any JSON)."""

    content: str | None
    reasoning_content: str | None
    reasoning: str | None
    tool_calls: list[ReplyToolCall] | None
    thinking_blocks: list[JsonObject]  # Anthropic's signed thinking, replayed with the turn


class ReplyChoice(TypedDict, total=False):
    """One of a reply's `choices`: its message (`reply_outcome` checks there is one) and why the model stopped."""

    message: Required[ReplyMessage]
    finish_reason: str | None


class ReplyBody(TypedDict, total=False):
    """A reply holding a choice to read (`reply_outcome`), with the provider's usage record."""

    choices: Required[list[ReplyChoice]]
    usage: JsonObject | None


# What litellm reports for a response without usage; the native client reports the same.
EMPTY_USAGE = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}


def litellm_message(msg: Any) -> ReplyMessage:
    """The fields of litellm's Message the turn reads, as the plain dict the server sent."""
    calls: list[ReplyToolCall] = []
    for tc in getattr(msg, "tool_calls", None) or []:
        fn = tc.function
        calls.append({"id": tc.id, "type": "function", "function": {"name": fn.name, "arguments": fn.arguments}})
    out: ReplyMessage = {
        "content": msg.content,
        "reasoning_content": getattr(msg, "reasoning_content", None),
        "tool_calls": calls,
    }
    thinking = getattr(msg, "thinking_blocks", None)
    if thinking:
        out["thinking_blocks"] = thinking
    return out


def litellm_usage(response: Any) -> JsonObject | None:
    usage = getattr(response, "usage", None)
    if usage is None:
        return None
    return usage.model_dump() if hasattr(usage, "model_dump") else dict(usage) if isinstance(usage, dict) else None


def compact(obj: Any) -> Any:
    """Without null fields (litellm fills every field it knows with null; the server sends only what it has)."""
    if isinstance(obj, dict):
        return {k: compact(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, list):
        return [compact(v) for v in obj]
    return obj


def reply_outcome(status: int, retry_after: str | None, body: bytes, secret: str | None) -> ReplyBody | ModelError:
    """The server's answer to one call: its JSON if it holds a choice to read, else the error it amounts to.

    An error status decides alone (408, 429, 5xx transient with Retry-After; 401/403/404
    infrastructure; any other 4xx counts as a turn). A success whose body is not JSON is
    transient (a proxy's page, a truncated body); JSON without a choice is a turn's error.
    """
    if status >= 400:
        message = scrub(f"HTTP {status}: {error_detail(body)}", secret)
        return status_error(status, message, parse_retry_after(retry_after), body)
    try:
        data = read_json(body)
    except (ValueError, UnicodeDecodeError):
        return TransientModelError(scrub(f"unreadable response (HTTP {status}): not JSON: {snippet(body)}", secret))
    choices = data.get("choices") if isinstance(data, dict) else None
    if (
        not choices
        or not isinstance(choices, list)
        or not isinstance(choices[0], dict)
        or not isinstance(choices[0].get("message"), dict)
    ):
        return NonTransientModelError(f"the provider returned a response without choices (HTTP {status})")
    return data


def status_error(status: int, message: str, retry_after: float | None, body: bytes | None = None) -> ModelError:
    """What an error status amounts to, from either client: 408, 429 and 5xx are transient (waiting Retry-After),
    401/403/404 infrastructure; 400, 413 and 422 a refusal of the request itself (`RefusedRequest`: sending it
    again meets the same answer) unless the body's error code says rate limit (a provider that sends its rate
    limit as a 400: transient); any other 4xx counts as a turn."""
    if status in (408, 429) or status >= 500:
        return TransientModelError(message, retry_after=retry_after)
    if status in (401, 403, 404):
        return InfrastructureError(message)
    if status in REFUSED:
        codes = error_codes(body)
        if any("rate_limit" in code for code in codes):
            return TransientModelError(message, retry_after=retry_after)
        return RefusedRequest(message, overflow=bool(codes & OVERFLOW_CODES) or bool(OVERFLOW_WORDS.search(message)))
    return NonTransientModelError(message)


REFUSED = (400, 413, 422)  # the request itself is refused: the same request gets the same answer
# How servers name a full context window: OpenAI's and vLLM's code, llama.cpp's type, and the words of the messages
# of those that send no code (vLLM "maximum context length", llama.cpp "exceeds the available context size",
# Anthropic "prompt is too long"). The words only name the refusal; what the episode does is decided by the status.
OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error", "context_window_exceeded"})
OVERFLOW_WORDS = re.compile(
    r"context (length|size|window)|maximum context|prompt is too long|too many (input )?tokens", re.I
)


def error_codes(body: bytes | None) -> set[str]:
    """The machine-readable `code` and `type` of an error body (`{"error": {"code": …, "type": …}}`), lower case."""
    try:
        data = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return set()
    err = data.get("error", data) if isinstance(data, dict) else None
    if not isinstance(err, dict):
        return set()
    return {str(err[k]).lower() for k in ("code", "type") if isinstance(err.get(k), str)}


def read_json(body: bytes) -> Any:
    """A reply's JSON: orjson (~4× faster than json on a completion), json for what orjson refuses and json
    reads (NaN, a lone surrogate escape), so what counts as readable does not change (an integer beyond 64
    bits, which no field we read holds, reads as a float)."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)


def error_detail(body: bytes) -> str:
    """The provider's own error message from an error body (OpenAI's `{"error": {"message": …}}` and the like)."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return snippet(body)
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
        if isinstance(err, str):
            return err
        if isinstance(data.get("message"), str):
            return data["message"]
    return snippet(body)


def snippet(body: bytes, limit: int = 300) -> str:
    text = body.decode("utf-8", "replace").strip()
    return text if len(text) <= limit else text[:limit] + "…"


def lost_response(exc: BaseException, timeout_s: float) -> ModelError | None:
    """No response came back: a timeout, or a refused or dropped connection (transient), from either client."""
    import httpx

    timeouts: tuple[type[BaseException], ...] = (httpx.TimeoutException, asyncio.TimeoutError, TimeoutError)
    transport: tuple[type[BaseException], ...] = (httpx.TransportError, ConnectionError)
    litellm = loaded_litellm()
    if litellm is not None:
        timeouts = (*timeouts, litellm.Timeout)
        transport = (*transport, *(getattr(litellm, name) for name in TRANSPORT_FAILURES))
    if isinstance(exc, timeouts):
        return TransientModelError(f"timed out: no response within {timeout_s:g} s")
    if isinstance(exc, transport):
        return TransientModelError("connection failed: no response (refused, reset or closed by the server)")
    return None


def refused_locally(exc: BaseException, base_url: str | None) -> bool:
    """Whether `exc` is a refused connection (anywhere in its chain) to a loopback address: nothing listens
    there, and unlike a remote server that may be restarting, no backoff brings it back (`ServerUnreachable`)."""
    import ipaddress
    from urllib.parse import urlparse

    host = urlparse(base_url).hostname if base_url else None
    try:
        loopback = host == "localhost" or (host is not None and ipaddress.ip_address(host).is_loopback)
    except ValueError:  # a host name other than localhost
        loopback = False
    node: BaseException | None = exc if loopback else None
    for _ in range(12):
        if node is None:
            return False
        if isinstance(node, ConnectionRefusedError):
            return True
        node = node.__cause__ or node.__context__
    return False


def decode_arguments(arguments: Any) -> Any:
    """Provider argument strings as a dict; undecodable or non-object JSON becomes {"_raw": text}
    (docs/protocol.md#rules)."""
    if isinstance(arguments, dict):
        return arguments
    if not isinstance(arguments, str):
        return {"_raw": str(arguments)}
    if not arguments.strip():
        return {}
    try:
        value = loads_like_json(arguments)
    except (json.JSONDecodeError, ValueError):
        return {"_raw": arguments}
    return value if isinstance(value, dict) else {"_raw": arguments}


# orjson reads an integer literal beyond 64 bits as a float, where json keeps it whole: text holding a run of 19
# digits goes to json
_LONG_DIGITS = re.compile(r"\d{19}")


def loads_like_json(text: str) -> Any:
    """`json.loads(text)`, value for value, by orjson where that is the same (several times faster: one call
    per tool call, on the engine's one thread); json reads what orjson refuses (NaN, a lone surrogate escape,
    an out-of-range float) and raises what both refuse."""
    if _LONG_DIGITS.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def read_usage(usage: Any) -> Usage:
    """The protocol's token buckets from litellm's OpenAI-shaped usage: non-cached prompt, completion, cache read,
    creation."""
    if usage is None:
        return Usage()
    get = (usage.get) if isinstance(usage, dict) else (lambda k: getattr(usage, k, None))
    prompt = int(get("prompt_tokens") or 0)
    completion = int(get("completion_tokens") or 0)
    details = get("prompt_tokens_details")
    cached = (
        getattr(details, "cached_tokens", None)
        if details is not None and not isinstance(details, dict)
        else (details or {}).get("cached_tokens")
    )
    cached = int(cached or get("cache_read_input_tokens") or get("prompt_cache_hit_tokens") or 0)
    creation = int(get("cache_creation_input_tokens") or 0)
    raw = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage) if isinstance(usage, dict) else None
    return Usage(
        prompt=max(0, prompt - cached - creation),
        completion=completion,
        cache_read=cached,
        cache_creation=creation,
        raw=_jsonable(raw),
    )


# orjson writes datetimes, dataclasses and subclasses of str, int, dict and list itself; passed through, they reach
# the fallback, where the standard library decides as before
_PLAIN_ONLY = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS


def _jsonable(obj: Any) -> Any:
    """`obj` itself when JSON carries it as it is (plain dicts, lists, strings, numbers: what a server's usage
    holds, checked by orjson in a microsecond), else a copy with what JSON cannot carry written as text."""
    try:
        orjson.dumps(obj, option=_PLAIN_ONLY)
        return obj
    except (orjson.JSONEncodeError, TypeError):
        pass
    try:
        json.dumps(obj)
        return obj
    except (TypeError, ValueError):
        return json.loads(json.dumps(obj, default=str))


def scrub(text: str, secret: str | None) -> str:
    """Remove the key from any text that may reach the store or a log."""
    if secret and secret != NO_KEY and len(secret) >= 4:
        text = text.replace(secret, "***")
    return text


# What litellm raises when no error status came back: a timeout, or a refused or dropped connection (the OpenAI
# route reports the SDK's connection error as an InternalServerError).
TRANSPORT_FAILURES = ("Timeout", "APIConnectionError", "InternalServerError", "ServiceUnavailableError")


def classify(exc: Exception, secret: str | None = None, wire: Wire | None = None) -> ModelError:
    """Map a failed call to what the episode must do, from the HTTP status the server sent.

    The status comes from our response hook (`wire`), else from a real response in the
    exception's chain. An error status decides alone: 408, 429 and 5xx are transient (with
    Retry-After), 401/403/404 are infrastructure, any other 4xx counts as a turn. Without one
    (no response, or the failure came after a 2xx status line), only transport failures —
    timeouts, refused or dropped connections — are transient.
    """
    litellm = litellm_module()
    message = scrub(f"{type(exc).__name__}: {exc}", secret)
    status, retry_after = (wire.status, wire.retry_after_s()) if wire is not None and wire.status else (None, None)
    if status is None:
        status, headers = status_in_chain(exc)
        retry_after = parse_retry_after(headers.get("retry-after")) if headers is not None else None
    if status is not None and status >= 400:
        return status_error(status, f"HTTP {status}: {message}", retry_after, wire.body if wire is not None else None)
    transport = tuple(getattr(litellm, name) for name in TRANSPORT_FAILURES)
    if isinstance(exc, (*transport, asyncio.TimeoutError, TimeoutError, ConnectionError)):
        return TransientModelError(message)
    if status is None and isinstance(
        exc, (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError)
    ):
        return InfrastructureError(message)
    return NonTransientModelError(message)
