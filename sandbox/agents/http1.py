"""A lean HTTP/1.1 keep-alive client for model servers on plain `http://` (a local vLLM / sglang / llama.cpp).

At GPU-server speeds (answers in 50–200 ms, hundreds of calls in flight) the client's own CPU per call
decides the call rate. httpx costs ~1 ms of the event loop's one thread per call (anyio's stream layer,
h11's event machinery, httpcore's pool checking every idle connection with a socket poll); one POST over
asyncio's streams costs a tenth of that. This client does only what a chat-completions call needs: one
request written in one send (head and body), a response read by Content-Length, chunked transfer
encoding or end of stream, and the connection kept for the next call unless either side closes it.
TLS, proxies and HTTP/2 stay with httpx (`native.HttpxPool`): `NativeClient` picks this client only for
a plain-http URL that no proxy variable applies to.

Failures are raised as Python's own: `TimeoutError` when no complete response came within the timeout,
`ConnectionError` (refused, reset, closed mid-response, or a response that is not HTTP) when none came
back; `replies.lost_response` reads both as transient, as it reads httpx's.
"""

from __future__ import annotations

import asyncio
import urllib.request
import weakref
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_HEAD = 64 * 1024  # the status line and headers of one response


class ProtocolError(ConnectionError):
    """The server's answer is not an HTTP/1.x response we can read: no usable response came back."""


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # names lower-cased; a repeated header keeps its last value
    body: bytes


def serves(url: str) -> bool:
    """Whether this client can carry calls to `url`: plain http, and no proxy variable applies to its host."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return False
    proxies = urllib.request.getproxies_environment()
    if not (proxies.get("http") or proxies.get("all")):
        return True
    return bool(urllib.request.proxy_bypass(parts.hostname))  # NO_PROXY names it


class Http1Pool:
    """POSTs to one URL over keep-alive connections, per event loop (a connection belongs to its loop).

    Idle connections are reused last-in first-out (the warmest socket); there is no limit on how many
    are open (the run's limiter bounds the calls in flight). One the server closed while it was idle is
    known by its end of stream, which the event loop has read by then, and is dropped rather than reused
    (httpcore polls each socket for the same); a call is never sent twice.
    """

    def __init__(self, url: str, headers: dict[str, str], timeout_s: float):
        parts = urlsplit(url)
        assert parts.scheme == "http" and parts.hostname, url  # `serves` decides
        self.host = parts.hostname
        self.port = parts.port or 80
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        netloc = parts.netloc.rsplit("@", 1)[-1]
        lines = [f"POST {path} HTTP/1.1", f"host: {netloc}", *(f"{k}: {v}" for k, v in headers.items())]
        self._head = ("\r\n".join(lines) + "\r\ncontent-length: ").encode("latin-1")
        self.timeout_s = timeout_s
        self._idle: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[Connection]] = weakref.WeakKeyDictionary()
        self._last_loop: Callable[[], asyncio.AbstractEventLoop | None] = lambda: None  # a weak reference
        self._last_idle: list[Connection] = []

    def idle(self) -> list[Connection]:
        """This loop's idle connections (open, no call on them); the last loop's list is kept at hand (a weak
        dictionary's look-up builds a weak reference each time: twice per call)."""
        loop = asyncio.get_running_loop()
        if self._last_loop() is not loop:
            self._last_loop, self._last_idle = weakref.ref(loop), self._idle.setdefault(loop, [])
        return self._last_idle

    async def post(self, body: bytes) -> Response:
        """One call: the server's status, headers and body; raises `TimeoutError` or `ConnectionError` only."""
        request = b"".join((self._head, str(len(body)).encode(), b"\r\n\r\n", body))
        async with asyncio.timeout(self.timeout_s):
            idle = self.idle()
            while idle:
                conn = idle.pop()
                if not conn.is_closing():
                    return await self._exchange(conn, request)
            return await self._exchange(await self._connect(), request)

    async def _connect(self) -> Connection:
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port, limit=MAX_HEAD)
        except ConnectionError:
            raise
        except OSError as exc:  # unreachable host, unknown name: no response, as httpx's ConnectError says
            raise ConnectionError(f"cannot connect to {self.host}:{self.port}: {exc}") from exc
        return Connection(reader, writer)

    async def _exchange(self, conn: Connection, request: bytes) -> Response:
        """Write the request, read the response; the connection goes back to the idle list only when both
        sides mean to keep it and the response was read whole (a cancelled or failed call closes it)."""
        kept = False
        try:
            conn.writer.write(request)
            try:
                head = await read_head(conn.reader)
            except asyncio.IncompleteReadError as exc:
                raise ConnectionError("the server closed the connection before it answered") from exc
            try:
                response, keep = await read_body(conn.reader, *head)
            except asyncio.IncompleteReadError as exc:
                raise ConnectionError("the server closed the connection before the response ended") from exc
            if keep:
                self.idle().append(conn)
                kept = True
            return response
        finally:
            if not kept:
                conn.writer.close()

    async def aclose(self) -> None:
        """Close this loop's idle connections (the run is over); a later call opens new ones."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._last_loop = lambda: None
        for conn in self._idle.pop(loop, []):
            conn.writer.close()


@dataclass
class Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter

    def is_closing(self) -> bool:
        return self.writer.is_closing() or self.reader.at_eof()


async def read_head(reader: asyncio.StreamReader) -> tuple[str, int, dict[str, str]]:
    """The version, status and headers of the response (1xx interim responses skipped)."""
    while True:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError as exc:
            raise ProtocolError(f"response headers longer than {MAX_HEAD:,} bytes") from exc
        version, status, headers = parse_head(head)
        if status >= 200 or status == 101:
            return version, status, headers  # 1xx (100 Continue, 103 Early Hints) precede the real response


async def read_body(
    reader: asyncio.StreamReader, version: str, status: int, headers: dict[str, str]
) -> tuple[Response, bool]:
    """The response's body, and whether the connection may carry the next request."""
    connection = headers.get("connection", "").lower()
    keep = "close" not in connection and (version == "HTTP/1.1" or "keep-alive" in connection)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await read_chunked(reader)
    elif "content-length" in headers:
        try:
            length = int(headers["content-length"])
        except ValueError:
            raise ProtocolError(f"bad content-length: {headers['content-length']!r}") from None
        body = await reader.readexactly(length)
    elif status in (204, 304):
        body = b""
    else:  # the body runs to the end of the stream
        body, keep = await reader.read(), False
    encoding = headers.get("content-encoding", "identity").lower()
    if encoding in ("gzip", "deflate"):  # never asked for; decoded if a server sends it anyway
        try:
            body = zlib.decompress(body, 47)  # 32 + 15: a gzip or zlib header, detected
        except zlib.error as exc:
            raise ProtocolError(f"undecodable {encoding} body: {exc}") from None
    return Response(status, headers, body), keep


def parse_head(head: bytes) -> tuple[str, int, dict[str, str]]:
    """The version, status and headers (lower-cased names) of a response head ending in a blank line."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise ProtocolError(f"not an HTTP/1.x response: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, sep, value = line.partition(":")
            if not sep:
                raise ProtocolError(f"malformed response header: {line[:80]!r}")
            headers[name.strip().lower()] = value.strip()
    return parts[0], int(parts[1]), headers


async def read_chunked(reader: asyncio.StreamReader) -> bytes:
    """A body in chunked transfer encoding (trailers read and dropped)."""
    chunks: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        try:
            size = int(size_line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise ProtocolError(f"bad chunk size: {size_line[:40]!r}") from None
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)
