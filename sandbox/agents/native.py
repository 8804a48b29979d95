"""The native client: OpenAI-compatible chat completions over our own connection pool per run.

litellm costs ~8 ms of CPU per call and ~190 MB to import; against a vLLM / sglang cluster
that makes the workbench, not the server, the bottleneck. For the routes whose request
litellm sends unchanged (`openai/…` models it does not transform, `hosted_vllm/…`,
`local/…`, any `--base-url`; see `providers.native_provider`) this client posts the very
same body itself over keep-alive connections per event loop and run: a plain-http server
(a local vLLM / sglang) through `http1.Http1Pool`, anything else through a few sharded
`httpx.AsyncClient`s (`HttpxPool`: TLS, proxies, HTTP/2 when `h2` is installed and the
server offers it); no pool limit (the run's own limiter bounds the calls in flight).
It returns the status, Retry-After and raw body; reading them into a turn or an error is
`replies.reply_outcome`'s job, shared with the
litellm path, so both clients classify and parse the same way.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from sandbox.agents import http1
from sandbox.agents.http1 import Http1Pool

if TYPE_CHECKING:
    import httpx  # imported by `HttpxPool` when a run needs it (~0.1 s of CPU that a plain-http run never pays)

OPENAI_DEFAULT_BASE = "https://api.openai.com/v1"


@dataclass(frozen=True)
class Reply:
    """What the server answered: status, Retry-After and the body as received."""

    status: int
    retry_after: str | None
    body: bytes


def base_url_for(provider: str, base_url: str | None) -> str | None:
    """Where litellm would send this provider's calls: the given base URL, else its environment variable.

    None: nowhere is known (a `hosted_vllm/…` model without `--base-url` or HOSTED_VLLM_API_BASE).
    """
    if base_url:
        return base_url
    if provider == "hosted_vllm":
        return os.environ.get("HOSTED_VLLM_API_BASE") or None
    return os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or OPENAI_DEFAULT_BASE


def http2_available() -> bool:
    """HTTP/2 only when `h2` is installed (it is not a dependency: plain keep-alive measured as fast here)."""
    return importlib.util.find_spec("h2") is not None


class NativeClient:
    """POSTs chat-completion bodies to one URL: over `http1.Http1Pool` for a plain-http server no proxy
    stands in front of (a local vLLM / sglang: where the client's CPU per call decides the call rate), over
    httpx (`HttpxPool`: TLS, proxies, HTTP/2) for everything else."""

    def __init__(self, base_url: str, api_key: str, timeout_s: float):
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.headers = {
            "authorization": f"Bearer {api_key}",
            "content-type": "application/json",
            "accept": "application/json",
        }
        self.pool: Http1Pool | HttpxPool = (
            Http1Pool(self.url, {**self.headers, "user-agent": USER_AGENT}, timeout_s)
            if http1.serves(self.url)
            else HttpxPool(self.url, self.headers, timeout_s)
        )

    async def post(self, body: dict[str, Any]) -> Reply:
        """One call; raises only transport errors (no response came back: see `replies.lost_response`)."""
        response = await self.pool.post(encode_body(body))
        return Reply(response.status, response.headers.get("retry-after"), response.body)

    async def aclose(self) -> None:
        """Close this loop's connections (the run is over); a later call opens new ones."""
        await self.pool.aclose()


USER_AGENT = "agenthop-workbench"


def encode_body(body: dict[str, Any]) -> bytes:
    """The request's JSON: compact UTF-8, as `json.dumps(ensure_ascii=False, separators=(",", ":"))` writes it.

    orjson writes the same values ~20× faster (8 µs instead of 190 µs for a 20 KB history; floats in their
    shortest form, as `repr` writes them, save an exponent's leading zero); what it refuses (a non-string key,
    an integer beyond 64 bits in the extras) goes through the standard library instead. A non-finite float,
    which JSON cannot carry, is written as null rather than as json's invalid `Infinity`.
    """
    try:
        return orjson.dumps(body)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


class HttpxPool:
    """POSTs to one URL through pooled httpx clients per event loop (connections belong to it).

    httpcore's pool does work proportional to its open connections on every request and
    response (it checks each one for expiry with a socket poll): at 64 calls in flight that cost
    ~8 ms of CPU per call, more than litellm's whole call. So the run's pool is sharded: a call
    goes to the least busy of a few `AsyncClient`s, each holding at most SHARD calls in flight
    (a new one is opened when all are full), which keeps the per-call cost flat at any concurrency.
    """

    def __init__(self, url: str, headers: dict[str, str], timeout_s: float):
        import httpx

        self.headers = headers
        self.timeout = httpx.Timeout(timeout_s)
        self._timeout = self.timeout.as_dict()
        self._url = httpx.URL(url)
        # HTTP/2 is offered only over TLS (ALPN); on a plain-http URL (a local vLLM / sglang server) asking for it
        # changes nothing but imports h2 (~50 ms before the first call).
        self._http2 = self._url.scheme == "https" and http2_available()
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Shard]] = weakref.WeakKeyDictionary()
        self._ssl: Any = None  # one TLS context for every shard (building one loads the CA bundle: tens of ms)

    def shard(self) -> Shard:
        """The least busy client of this loop's pool, or a new one when every client has SHARD calls in flight."""
        import httpx

        loop = asyncio.get_running_loop()
        shards = self._by_loop.setdefault(loop, [])
        best = min(shards, key=lambda s: s.in_flight, default=None)
        if best is None or best.in_flight >= SHARD:
            if self._ssl is None:
                self._ssl = httpx.create_ssl_context()
            client = httpx.AsyncClient(
                timeout=self.timeout,
                http2=self._http2,
                verify=self._ssl,
                limits=httpx.Limits(max_connections=None, max_keepalive_connections=None),
            )
            best = Shard(client, httpx.Headers({**client.headers, **self.headers}))
            shards.append(best)
        return best

    async def post(self, content: bytes) -> http1.Response:
        """One call; raises only httpx's transport errors (no response came back).

        The request is built here rather than by `AsyncClient.post`, whose merging of the client's
        URL, headers, cookies and timeout into every request cost ~0.15 ms of the engine's one
        thread per call; it is the same request (the client's default headers and our own, merged
        once per shard; the client's cookies when it has any; its timeout) sent by the same client.
        """
        import httpx

        shard = self.shard()
        request = httpx.Request(
            "POST",
            self._url,
            content=content,
            headers=shard.headers,
            cookies=shard.client.cookies or None,
            extensions={"timeout": self._timeout},
        )
        shard.in_flight += 1
        try:
            response = await shard.client.send(request)
        finally:
            shard.in_flight -= 1
        retry = response.headers.get("retry-after")
        return http1.Response(response.status_code, {"retry-after": retry} if retry else {}, response.content)

    async def aclose(self) -> None:
        """Close this loop's pool (the run is over); a later call opens a new one."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for shard in self._by_loop.pop(loop, []):
            await shard.client.aclose()


SHARD = 8  # calls in flight per AsyncClient; measured flat per-call cost up to 64 in flight


@dataclass
class Shard:
    client: httpx.AsyncClient
    headers: httpx.Headers  # the client's defaults with ours, merged once
    in_flight: int = 0
