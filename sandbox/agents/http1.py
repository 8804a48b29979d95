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
from typing import Any
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
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopCalls] = weakref.WeakKeyDictionary()
        self._last_loop: Callable[[], asyncio.AbstractEventLoop | None] = lambda: None  # a weak reference
        self._last_calls = LoopCalls(timeout_s)

    def _calls(self) -> LoopCalls:
        """This loop's connections and calls; the last loop's are kept at hand (a weak dictionary's look-up
        builds a weak reference each time)."""
        loop = asyncio.get_running_loop()
        if self._last_loop() is not loop:
            calls = self._loops.get(loop)
            if calls is None:
                calls = self._loops[loop] = LoopCalls(self.timeout_s)
            self._last_loop, self._last_calls = weakref.ref(loop), calls
        return self._last_calls

    def idle(self) -> list[Connection]:
        """This loop's idle connections (open, no call on them)."""
        return self._calls().idle

    async def post(self, body: bytes) -> Response:
        """One call: the server's status, headers and body; raises `TimeoutError` or `ConnectionError` only."""
        request = b"".join((self._head, str(len(body)).encode(), b"\r\n\r\n", body))
        calls = self._calls()
        task = calls.deadlines.enter()
        try:
            idle = calls.idle
            while idle:
                conn = idle.pop()
                if not conn.is_closing():
                    return await self._exchange(conn, request, idle)
            return await self._exchange(await self._connect(), request, idle)
        except asyncio.CancelledError:
            if calls.deadlines.took_back(task):
                raise TimeoutError from None
            raise
        finally:
            calls.deadlines.leave(task)

    async def _connect(self) -> Connection:
        try:
            reader, writer = await asyncio.open_connection(self.host, self.port, limit=MAX_HEAD)
        except ConnectionError:
            raise
        except OSError as exc:  # unreachable host, unknown name: no response, as httpx's ConnectError says
            raise ConnectionError(f"cannot connect to {self.host}:{self.port}: {exc}") from exc
        return Connection(reader, writer)

    async def _exchange(self, conn: Connection, request: bytes, idle: list[Connection]) -> Response:
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
                idle.append(conn)
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
        calls = self._loops.pop(loop, None)
        for conn in calls.idle if calls is not None else []:
            conn.writer.close()


class LoopCalls:
    """One event loop's side of a pool: its idle connections and the deadlines of its calls in flight."""

    def __init__(self, timeout_s: float):
        self.idle: list[Connection] = []
        self.deadlines = Deadlines(timeout_s)


class Deadlines:
    """When each call in flight on one event loop must be answered by; a watchdog task, running while any call is
    in flight, cancels each late one, and its call raises `TimeoutError`.

    `asyncio.timeout` makes and cancels a timer (an entry of the loop's heap) and runs a small state
    machine per call: several microseconds of the loop's one thread, at thousands of calls per second. Here a
    call costs two dictionary operations; a late call is cancelled within `interval` of its deadline (a
    twentieth of the timeout, at most a second). As with `asyncio.timeout`, a cancellation from elsewhere
    stays a cancellation.
    """

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        self.interval = min(1.0, max(timeout_s / 20, 0.001))  # never a busy loop, whatever the timeout
        self.due: dict[asyncio.Task[Any], tuple[float, int]] = {}  # task -> (deadline, its cancellations before)
        self.late: set[asyncio.Task[Any]] = set()  # cancelled by the watchdog, not yet taken back
        self.watchdog: asyncio.Task[None] | None = None

    def enter(self) -> asyncio.Task[Any]:
        """The current task's call starts now."""
        task = asyncio.current_task()
        assert task is not None, "a call runs in a task"
        loop = task.get_loop()
        self.due[task] = (loop.time() + self.timeout_s, task.cancelling())
        if self.watchdog is None:
            self.watchdog = loop.create_task(self._watch(loop))
        return task

    def leave(self, task: asyncio.Task[Any]) -> None:
        """The call is over; with no call left in flight the watchdog stops (none outlives the loop's calls)."""
        self.due.pop(task, None)
        self.late.discard(task)
        if not self.due and self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None

    def took_back(self, task: asyncio.Task[Any]) -> bool:
        """Whether the call's cancellation was the watchdog's alone; if so it is taken back (`uncancel`)."""
        if task not in self.late:
            return False
        self.late.discard(task)
        return task.uncancel() <= self.due[task][1]

    async def _watch(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            while self.due:
                await asyncio.sleep(self.interval)
                now = loop.time()
                for task, (deadline, _) in list(self.due.items()):
                    if deadline <= now and task not in self.late:
                        self.late.add(task)
                        task.cancel()
        finally:
            if self.watchdog is asyncio.current_task():  # not a successor `enter` started after `leave` stopped this
                self.watchdog = None


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
