"""A real HTTP server on 127.0.0.1 for tests and benchmarks: scripted replies, injected faults.

It speaks OpenAI's `/v1/chat/completions` and, when the brain answers with Anthropic-shaped
bodies, Anthropic's `/v1/messages` (point litellm's `anthropic/…` models at `root`).
`brain(request_json, n)` decides each reply; n counts requests so far. Replies are
built with `tool_reply`, `text_reply`, `error_reply`, `raw_reply`, `anthropic_reply` or
`anthropic_error`. Every request's body, headers and path are recorded.

The server is strict as real providers are (`strict`, on by default): a conversation whose history
a provider would refuse gets OpenAI's 400 `invalid_request_error` instead of the brain's reply, and
lands in `refusals` — a call id used twice, a tool result that answers no call of the assistant
message before it (or answers one twice), a call left without a result, or an assistant message
that shows a call twice (as structured `tool_calls` and again as call text in its content). So
every episode of the suite that talks to this server sends only histories a provider accepts.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    close: bool = False  # drop the connection without a response


def completion(
    message: dict[str, Any],
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    cached: int = 0,
    model: str = "fake",
    finish_reason: str | None = None,
) -> dict[str, Any]:
    """A chat completion; `finish_reason` "length" is a reply the completion limit cut off."""
    finish = finish_reason or ("tool_calls" if message.get("tool_calls") else "stop")
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    }


def tool_reply(*calls: tuple[str, Any], content: str | None = None, **usage) -> Reply:
    tool_calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
        }
        for i, (name, args) in enumerate(calls)
    ]
    return Reply(body=completion({"role": "assistant", "content": content, "tool_calls": tool_calls}, **usage))


def text_reply(text: str | None, reasoning: str | None = None, **usage) -> Reply:
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning:
        msg["reasoning_content"] = reasoning
    return Reply(body=completion(msg, **usage))


def error_reply(
    status: int,
    headers: dict[str, str] | None = None,
    message: str = "injected fault",
    kind: str = "test",
    code: Any = None,
) -> Reply:
    return Reply(
        status=status,
        body={"error": {"message": message, "type": kind, "code": status if code is None else code}},
        headers=headers or {},
    )


def raw_reply(text: str, status: int = 200) -> Reply:
    return Reply(status=status, body=text)


def anthropic_reply(
    *blocks: dict[str, Any],
    input_tokens: int = 100,
    output_tokens: int = 20,
    cache_read: int = 0,
    cache_creation: int = 0,
) -> Reply:
    """A Messages API reply; blocks are content blocks such as `thinking`, `text` and `tool_use`."""
    stop = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
    return Reply(
        body={
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": list(blocks),
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": cache_creation,
            },
        }
    )


def tool_use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def anthropic_error(
    status: int,
    message: str = "injected fault",
    kind: str = "invalid_request_error",
    headers: dict[str, str] | None = None,
) -> Reply:
    return Reply(
        status=status, body={"type": "error", "error": {"type": kind, "message": message}}, headers=headers or {}
    )


class FakeOpenAI:
    """Serves every POST from `brain` until stopped. Records every request body, header and path."""

    def __init__(
        self,
        brain: Callable[[dict[str, Any], int], Reply],
        latency_s: float = 0.0,
        strict: bool = True,
        port: int = 0,
    ):
        """`latency_s`: each reply leaves that long after its request line was read, as a model server's time to
        answer: this server's own work (reading headers and body, the brain, encoding the reply) falls inside it.
        Counted from the end of that work instead, a burst of 64 requests queued behind one another for the GIL
        added 2-5 ms to each call's latency on average, which a benchmark of the client then charged to the client.
        `port`: listen there (an endpoint that refused connections coming back); 0, any free one."""
        self.brain = brain
        self.latency_s = latency_s
        self.strict = strict
        self.refusals: list[str] = []  # why each refused request was refused (`history_problem`)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        # (request line read, reply written) per answered request, in time.monotonic(): a benchmark's call times
        self.timings: list[tuple[float, float]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: with Nagle's algorithm on, the body waits for the client's
            # delayed ACK of the headers (~40 ms per call), which is the test server's cost, not the client's.
            disable_nagle_algorithm = True

            def log_message(self, *args):  # quiet
                pass

            def parse_request(self) -> bool:
                self.arrived = time.monotonic()  # the request line has just been read: the latency counts from here
                return super().parse_request()

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    n = len(server.requests)
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    server.paths.append(self.path)
                problem = history_problem(body) if server.strict else None
                if problem is not None:
                    with server.lock:
                        server.refusals.append(problem)
                    reply = error_reply(400, message=problem, kind="invalid_request_error")
                else:
                    reply = server.brain(body, n)
                data = (reply.body if isinstance(reply.body, str) else json.dumps(reply.body)).encode()
                wait = max(0.0, server.latency_s - (time.monotonic() - self.arrived)) + reply.delay_s
                if wait:
                    time.sleep(wait)
                if reply.close:
                    self.close_connection = True
                    self.connection.close()
                    return
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
                with server.lock:
                    server.timings.append((self.arrived, time.monotonic()))

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # many workers connect at once; the default backlog of 5 drops connections

        self.httpd = Server(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        # `shutdown` waits for the serving loop to look at its flag, which it does once per poll interval: the
        # default half second made every `with FakeOpenAI(...)` block end up to 0.5 s after its last request.
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def root(self) -> str:
        """The bare address, as an Anthropic base URL is given (litellm appends /v1/messages)."""
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL."""
        return f"{self.root}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self.strict and self.refusals and exc[0] is None:
            raise AssertionError(f"the strict server refused {len(self.refusals)} request(s): {self.refusals[0]}")


def seed_of(request: dict[str, Any]) -> str:
    """The seed paper id from the system prompt (what a scripted brain keys on); OpenAI or Anthropic shape."""
    system = request.get("system") or request["messages"][0]["content"]
    if isinstance(system, list):
        system = "".join(block.get("text", "") for block in system)
    return system.split("- **ID**: ", 1)[1].split("\n", 1)[0].strip()


def turn_of(request: dict[str, Any]) -> int:
    """How many assistant turns the conversation already has."""
    return sum(1 for m in request["messages"] if m["role"] == "assistant")


def history_problem(request: dict[str, Any]) -> str | None:
    """Why a provider would refuse this request's history, or None: OpenAI's rules for tool calls (ids unique,
    every call answered once by the tool messages right after it, no result without its call), the same for
    Anthropic's `tool_use` / `tool_result` ids, and no call shown twice in one assistant message."""
    from sandbox.agents.textcalls import parse_text_calls

    messages = request.get("messages")
    if not isinstance(messages, list):
        return None
    seen: set[str] = set()
    open_calls: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            cid = m.get("tool_call_id")
            if cid not in open_calls:
                return (
                    f"Invalid parameter: messages[{i}]: a message with role 'tool' must be a response to a preceding "
                    f"message with 'tool_calls' (tool_call_id {cid!r} answers no open call)"
                )
            open_calls.discard(cid)
            continue
        if open_calls:
            return (
                f"An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: "
                f"{', '.join(sorted(open_calls))} (messages[{i}])"
            )
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        for block in blocks:  # Anthropic shape
            if isinstance(block, dict) and block.get("type") == "tool_use":
                if block.get("id") in seen:
                    return f"messages.{i}: `tool_use` ids must be unique (duplicate {block.get('id')!r})"
                if not re.fullmatch(r"[a-zA-Z0-9_-]+", str(block.get("id"))):
                    return f"messages.{i}.content.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"
                seen.add(block.get("id"))
        if role != "assistant" or not m.get("tool_calls"):
            continue
        for tc in m["tool_calls"]:
            cid = tc.get("id")
            if cid in seen:
                return f"Invalid parameter: Duplicate value for 'tool_call_id' of {cid} in message[{i}]"
            seen.add(cid)
            open_calls.add(cid)
        content = m.get("content")
        if isinstance(content, str) and parse_text_calls(content):
            return (
                f"messages[{i}]: the assistant message shows its calls twice: as 'tool_calls' and as call text "
                f"in its content"
            )
    return None
