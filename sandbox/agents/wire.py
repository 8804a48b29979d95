"""What the provider answered over HTTP on each model call: the status and Retry-After, straight off the wire.

litellm maps provider errors to its exception classes partly by message text (a 400 whose
message says "rate limit", "Request too large" or "A timeout occurred" becomes a
RateLimitError or a Timeout), and the real status is not on the exception it raises. So
every call goes out through an httpx client of ours whose response hook writes the status
and Retry-After into a record held in a context variable set around that one call: each
episode's task sees only its own responses, however many run at once. The agent
classifies on that record; exception types decide only when no response came back
(timeouts, refused or dropped connections).

One client per event loop and run (connections belong to the loop that opened them),
built like litellm's own (its aiohttp transport), and reused by every call of the run.
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import os
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

# Providers whose litellm handler takes an `AsyncHTTPHandler` as `client` (and ignores any other type).
HTTPX_PROVIDERS = frozenset(
    {
        "anthropic",
        "gemini",
        "vertex_ai",
        "vertex_ai_beta",
        "deepseek",
        "together_ai",
        "hosted_vllm",
        "xai",
        "openrouter",
    }
)
# Providers litellm sends through the OpenAI SDK, which takes an `AsyncOpenAI` as `client`.
OPENAI_SDK_PROVIDERS = frozenset({"openai", "custom_openai"})


@dataclass
class Wire:
    """The last HTTP response of one model call (None: no response came back)."""

    status: int | None = None
    retry_after: str | None = None
    response: Any = None

    @property
    def body(self) -> bytes | None:
        """The body as received, if it was read (always for an error status); None otherwise."""
        try:
            return None if self.response is None else self.response.content
        # ResponseNotRead, httpx's or the OpenAI SDK's httpx2's: the failure came before the body was read
        except Exception:  # noqa: BLE001 — two unrelated ResponseNotRead classes
            return None

    def retry_after_s(self) -> float | None:
        return parse_retry_after(self.retry_after)


_CALL: contextvars.ContextVar[Wire | None] = contextvars.ContextVar("agenthop_wire", default=None)


async def _on_response(response: Any) -> None:
    """httpx response hook: note what the server answered for the call in progress, so a failure is classified
    from what the server sent, as the native client does, not from litellm's exception. An error's body is
    read here (httpx keeps it for litellm); a success's is whatever litellm read of it (`Wire.body`)."""
    wire = _CALL.get()
    if wire is not None:
        wire.status = response.status_code
        wire.retry_after = response.headers.get("retry-after")
        wire.response = response
        if response.status_code >= 400:
            await response.aread()


@contextmanager
def recording() -> Iterator[Wire]:
    """Around one model call: the record its responses are written to."""
    wire = Wire()
    token = _CALL.set(wire)
    try:
        yield wire
    finally:
        _CALL.reset(token)
        wire.response = None  # tasks litellm started during the call keep a copy of the context, and so the wire:
        # it must not keep the response (and its body) alive after the call


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After value (delta-seconds or an HTTP date)."""
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time()) if when else None


def status_in_chain(exc: BaseException) -> tuple[int | None, Any]:
    """The status and headers of a real HTTP response in the exception's chain, for providers we cannot hook.

    litellm raises its mapped exception from inside the handler of the original one, so the
    httpx.HTTPStatusError the transport raised is in `__cause__`/`__context__`; its response
    is what the server sent (the mapped exception's own `response` may be synthetic).
    """
    import httpx

    seen = 0
    node: BaseException | None = exc
    while node is not None and seen < 12:
        if isinstance(node, httpx.HTTPStatusError):
            return node.response.status_code, node.response.headers
        node = node.__cause__ or node.__context__
        seen += 1
    return None, None


class Clients:
    """The hooked client a run's calls go out through, one per event loop."""

    def __init__(self, provider: str, api_key: str, api_base: str | None, timeout_s: float):
        self.provider = provider
        self.api_key = api_key
        self.api_base = api_base
        self.timeout_s = timeout_s
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def client(self) -> Any:
        """What to pass as litellm's `client=` for this loop (None: let litellm use its own)."""
        loop = asyncio.get_running_loop()
        if loop not in self._by_loop:
            self._by_loop[loop] = self._build()
        return self._by_loop[loop]

    def _build(self) -> Any:
        if self.provider not in HTTPX_PROVIDERS and self.provider not in OPENAI_SDK_PROVIDERS:
            return None
        from litellm.llms.custom_httpx.http_handler import AsyncHTTPHandler

        handler = AsyncHTTPHandler(timeout=self.timeout_s, event_hooks={"response": [_on_response]})
        if self.provider in HTTPX_PROVIDERS:
            return handler
        import openai

        base = self.api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or None
        return openai.AsyncOpenAI(
            api_key=self.api_key,
            base_url=base,
            # the SDK annotates httpx2's client; it drives litellm's httpx client by the same interface (the
            # client-parity tests run this route)
            http_client=handler.client,
            max_retries=0,
            timeout=self.timeout_s,
        )
