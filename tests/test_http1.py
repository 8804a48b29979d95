"""The lean HTTP/1.1 client of plain-http model servers, against real sockets on 127.0.0.1.

Each test starts a raw asyncio server that answers as a given server would (chunked, to the end of
the stream, closing idle connections, dropping mid-body, not HTTP at all), so what the client must
read is exactly what goes over the wire.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.agents import http1
from sandbox.agents.base import TransientModelError
from sandbox.agents.http1 import Http1Pool
from sandbox.agents.native import NativeClient, encode_body
from sandbox.agents.replies import lost_response
from tests.openai_server import FakeOpenAI, text_reply

Answer = Callable[[asyncio.StreamReader, asyncio.StreamWriter, dict], Awaitable[bool]]


async def read_request(reader: asyncio.StreamReader) -> dict | None:
    """One request off the wire: its head lines and body (None at the end of the stream)."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode().split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if line)
    body = await reader.readexactly(int(headers["content-length"]))
    return {"line": lines[0], "headers": headers, "body": body}


@asynccontextmanager
async def raw_server(answer: Answer):
    """A server on 127.0.0.1 that hands each request to `answer` (False: close the connection); it records
    every request and counts the connections it accepted."""
    seen: dict = {"requests": [], "connections": 0}

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen["connections"] += 1
        while (request := await read_request(reader)) is not None:
            seen["requests"].append(request)
            if not await answer(reader, writer, request):
                break
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1/chat/completions", seen
    finally:
        server.close()


def pool(url: str, timeout_s: float = 10.0) -> Http1Pool:
    return Http1Pool(url, {"authorization": "Bearer k", "content-type": "application/json"}, timeout_s)


async def test_a_chunked_reply_is_read_whole_and_the_connection_kept():
    async def chunked(reader, writer, request):
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        for part in (b'{"choices":', b"[1,2]", b"}"):
            writer.write(b"%x\r\n%s\r\n" % (len(part), part))
        writer.write(b"0\r\n\r\n")
        return True

    async with raw_server(chunked) as (url, seen):
        client = pool(url)
        replies = [await client.post(b'{"n":%d}' % i) for i in range(3)]
        await client.aclose()
    assert [json.loads(r.body) for r in replies] == [{"choices": [1, 2]}] * 3
    assert seen["connections"] == 1  # kept alive between calls
    first = seen["requests"][0]
    assert first["line"] == "POST /v1/chat/completions HTTP/1.1"
    assert first["headers"]["authorization"] == "Bearer k" and first["headers"]["host"] == url.split("/")[2]
    assert [r["body"] for r in seen["requests"]] == [b'{"n":0}', b'{"n":1}', b'{"n":2}']


async def test_a_connection_the_server_closed_while_idle_is_not_reused_and_no_call_is_sent_twice():
    async def once(reader, writer, request):  # answers, then closes without saying so
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
        await writer.drain()
        return False

    async with raw_server(once) as (url, seen):
        client = pool(url)
        first = await client.post(b"{}")
        while not client.idle()[-1].is_closing():  # the server's close reaches the idle connection
            await asyncio.sleep(0)
        second = await client.post(b"{}")
        await client.aclose()
    assert (first.status, second.status) == (200, 200)
    assert seen["connections"] == 2 and len(seen["requests"]) == 2


async def test_connection_close_and_a_body_to_the_end_of_the_stream():
    async def closing(reader, writer, request):
        writer.write(b"HTTP/1.0 201 Created\r\nretry-after: 3\r\n\r\nto the end")
        return False

    async with raw_server(closing) as (url, seen):
        client = pool(url)
        replies = [await client.post(b"{}") for _ in range(2)]
    assert [(r.status, r.body, r.headers["retry-after"]) for r in replies] == [(201, b"to the end", "3")] * 2
    assert seen["connections"] == 2  # HTTP/1.0 without keep-alive: one connection per call


async def test_a_gzip_body_is_decoded():
    data = gzip.compress(b'{"ok":true}')

    async def zipped(reader, writer, request):
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: %d\r\n\r\n%s" % (len(data), data))
        return True

    async with raw_server(zipped) as (url, _):
        assert (await pool(url).post(b"{}")).body == b'{"ok":true}'


@pytest.mark.parametrize(
    "wire, said",
    [
        (b'HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"half', "before the response ended"),
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not an HTTP/1.x response"),
        (b"", "before it answered"),
    ],
    ids=["dropped mid-body", "not HTTP", "closed without a word"],
)
async def test_no_usable_response_is_a_connection_error_the_episode_retries(wire, said):
    async def broken(reader, writer, request):
        writer.write(wire)
        return False

    async with raw_server(broken) as (url, seen):
        with pytest.raises(ConnectionError, match=said) as caught:
            await pool(url).post(b"{}")
    assert len(seen["requests"]) == 1
    lost = lost_response(caught.value, 10)
    assert isinstance(lost, TransientModelError) and "connection failed" in str(lost)


async def test_no_answer_within_the_timeout_is_a_timeout_the_episode_retries():
    async def silent(reader, writer, request):
        await asyncio.sleep(5)
        return False

    async with raw_server(silent) as (url, _):
        with pytest.raises(TimeoutError) as caught:
            await pool(url, timeout_s=0.2).post(b"{}")
    lost = lost_response(caught.value, 0.2)
    assert isinstance(lost, TransientModelError) and "timed out: no response within 0.2 s" in str(lost)


async def test_a_refused_connection_keeps_its_cause():
    async with raw_server(lambda *a: asyncio.sleep(0)) as (url, _):
        pass  # closed: nothing listens on that port any more
    with pytest.raises(ConnectionRefusedError):
        await pool(url).post(b"{}")


async def test_a_cancelled_call_closes_its_connection_rather_than_reusing_it():
    arrived = asyncio.Event()

    async def slow_then_quick(reader, writer, request):
        if len(seen["requests"]) == 1:
            arrived.set()
            await asyncio.sleep(0.3)  # still answering when the call is cancelled
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n%d" % (len(seen["requests"]) + 10))
        return True

    async with raw_server(slow_then_quick) as (url, seen):
        client = pool(url)
        call = asyncio.ensure_future(client.post(b"{}"))
        await arrived.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        reply = await client.post(
            b"{}"
        )  # on a new connection: the late answer to the first is never read as this one's
        await client.aclose()
    assert reply.body == b"12" and seen["connections"] == 2


def test_which_urls_the_lean_client_serves(monkeypatch):
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"):
        monkeypatch.delenv(var, raising=False)
    assert http1.serves("http://127.0.0.1:8000/v1/chat/completions")
    assert not http1.serves("https://api.openai.com/v1/chat/completions")  # TLS: httpx
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    assert not http1.serves("http://gpu-box:8000/v1/chat/completions")  # through the proxy: httpx
    monkeypatch.setenv("NO_PROXY", "gpu-box")
    assert http1.serves("http://gpu-box:8000/v1/chat/completions")


async def test_the_native_client_over_the_lean_pool_against_the_test_server():
    with FakeOpenAI(lambda req, n: text_reply(f"hi {n}")) as srv:
        client = NativeClient(srv.url, "sk-test", 10)
        assert isinstance(client.pool, Http1Pool)
        replies = [await client.post({"model": "m", "messages": [{"role": "user", "content": "é"}]}) for _ in range(2)]
        await client.aclose()
    assert [json.loads(r.body)["choices"][0]["message"]["content"] for r in replies] == ["hi 0", "hi 1"]
    assert srv.requests[0] == {"model": "m", "messages": [{"role": "user", "content": "é"}]}
    assert srv.headers[0]["authorization"] == "Bearer sk-test" and srv.paths == ["/v1/chat/completions"] * 2


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(), json_values, max_size=6))
def test_a_request_body_reads_back_as_the_same_json(body):
    assert json.loads(encode_body(body)) == body


def test_a_number_json_cannot_carry_is_null_rather_than_invalid_json():
    assert json.loads(encode_body({"temperature": float("inf")})) == {"temperature": None}


def test_what_orjson_refuses_is_written_by_the_standard_library():
    assert encode_body({"extra": {1: 2**70}}) == json.dumps({"extra": {1: 2**70}}, separators=(",", ":")).encode()


def test_one_pool_serves_calls_from_one_event_loop_after_another():
    """A connection belongs to the loop that opened it: a pool used by a second run's loop opens its own and
    never hands it one the first loop left open (its reader waits on the first loop)."""

    async def call(url: str, client: Http1Pool) -> tuple[int, int]:
        response = await client.post(b"{}")
        return response.status, len(client.idle())

    async def one_run(client: Http1Pool | None, close: bool) -> tuple[Http1Pool, list[tuple[int, int]], int]:
        async def ok(reader, writer, request) -> bool:
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
            return True

        async with raw_server(ok) as (url, seen):
            client = client or pool(url)
            client.host, client.port = "127.0.0.1", int(url.split(":")[2].split("/")[0])
            got = [await call(url, client), await call(url, client)]
            if close:
                await client.aclose()
            return client, got, seen["connections"]

    client, first, connections = asyncio.run(one_run(None, close=False))  # its connection left open in the pool
    assert first == [(200, 1), (200, 1)] and connections == 1  # the second call reused the first's connection
    _, second, connections = asyncio.run(one_run(client, close=True))
    assert second == [(200, 1), (200, 1)] and connections == 1  # a connection of its own loop, kept for its calls


async def test_only_the_late_call_times_out_and_no_watchdog_outlives_the_calls():
    """Calls in flight together: the one its server holds past the timeout raises TimeoutError (within a
    twentieth of the timeout of its deadline), the quick ones answer; once none is in flight, no task of the
    pool's is left running."""
    loop = asyncio.get_running_loop()

    async def slow_for_one(reader, writer, request):
        if request["body"] == b"slow":
            await asyncio.sleep(2)
            return False
        await asyncio.sleep(0.05)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
        return True

    async with raw_server(slow_for_one) as (url, _):
        client = pool(url, timeout_s=0.4)

        async def timed(body: bytes) -> tuple[str, float]:
            started = loop.time()
            try:
                await client.post(body)
                return "answered", loop.time() - started
            except TimeoutError:
                return "timed out", loop.time() - started

        got = await asyncio.gather(timed(b"slow"), timed(b"quick"), timed(b"quick"))
        assert [kind for kind, _ in got] == ["timed out", "answered", "answered"]
        assert 0.4 <= got[0][1] <= 0.4 + 0.4 / 20 + 0.1  # the watchdog's interval, and a scheduling margin
        assert not asyncio.current_task().cancelling()  # the watchdog's cancellations were all taken back
        await asyncio.sleep(0)
        assert [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and "_watch" in repr(t)] == []
        await client.aclose()


@pytest.mark.parametrize("outside", [False, True])
async def test_a_cancellation_from_outside_is_never_taken_for_a_timeout(outside):
    """What `post` does with a call's deadlines: a call the watchdog alone cancelled raises TimeoutError; one that
    was cancelled from elsewhere too (Ctrl-C, a run-wide limit) stays cancelled."""
    deadlines = http1.Deadlines(timeout_s=10)
    never: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def call() -> None:
        task = deadlines.enter()
        try:
            await never
        except asyncio.CancelledError:
            if deadlines.took_back(task):
                raise TimeoutError from None
            raise
        finally:
            deadlines.leave(task)

    task = asyncio.create_task(call())
    await asyncio.sleep(0)  # the call is in flight
    deadlines.late.add(task)  # what the watchdog does at its deadline
    task.cancel()
    if outside:
        task.cancel()
    with pytest.raises(asyncio.CancelledError if outside else TimeoutError):
        await task
    assert deadlines.due == {} and deadlines.watchdog is None
