"""A real HTTP server on 127.0.0.1 for tests and benchmarks: scripted replies, injected faults.

It speaks OpenAI's `/v1/chat/completions` and, when the brain answers with Anthropic-shaped
bodies, Anthropic's `/v1/messages` (point litellm's `anthropic/…` models at `root`).
`brain(request_json, n)` decides each reply; n counts requests so far. Replies are
built with `tool_reply`, `text_reply`, `error_reply`, `raw_reply`, `anthropic_reply` or
`anthropic_error`. Every request's body, headers and path are recorded.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    close: bool = False  # drop the connection without a response


def completion(message: dict[str, Any], prompt_tokens: int = 100, completion_tokens: int = 20, cached: int = 0,
               model: str = "fake") -> dict[str, Any]:
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000, "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens,
                      "prompt_tokens_details": {"cached_tokens": cached}}}


def tool_reply(*calls: tuple[str, Any], content: str | None = None, **usage) -> Reply:
    tool_calls = [{"id": f"call_{i}", "type": "function",
                   "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                  for i, (name, args) in enumerate(calls)]
    return Reply(body=completion({"role": "assistant", "content": content, "tool_calls": tool_calls}, **usage))


def text_reply(text: str | None, reasoning: str | None = None, **usage) -> Reply:
    msg: dict[str, Any] = {"role": "assistant", "content": text}
    if reasoning:
        msg["reasoning_content"] = reasoning
    return Reply(body=completion(msg, **usage))


def error_reply(status: int, headers: dict[str, str] | None = None, message: str = "injected fault") -> Reply:
    return Reply(status=status, body={"error": {"message": message, "type": "test", "code": status}},
                 headers=headers or {})


def raw_reply(text: str, status: int = 200) -> Reply:
    return Reply(status=status, body=text)


def anthropic_reply(*blocks: dict[str, Any], input_tokens: int = 100, output_tokens: int = 20,
                    cache_read: int = 0, cache_creation: int = 0) -> Reply:
    """A Messages API reply; blocks are content blocks such as `thinking`, `text` and `tool_use`."""
    stop = "tool_use" if any(b.get("type") == "tool_use" for b in blocks) else "end_turn"
    return Reply(body={"id": "msg_test", "type": "message", "role": "assistant", "model": "claude-test",
                       "content": list(blocks), "stop_reason": stop, "stop_sequence": None,
                       "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                                 "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_creation}})


def tool_use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def anthropic_error(status: int, message: str = "injected fault", kind: str = "invalid_request_error",
                    headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, body={"type": "error", "error": {"type": kind, "message": message}},
                 headers=headers or {})


class FakeOpenAI:
    """Serves every POST from `brain` until stopped. Records every request body, header and path."""

    def __init__(self, brain: Callable[[dict[str, Any], int], Reply], latency_s: float = 0.0):
        """`latency_s`: each reply leaves that long after its request line was read, as a model server's time to
        answer: this server's own work (reading headers and body, the brain, encoding the reply) falls inside it.
        Counted from the end of that work instead, a burst of 64 requests queued behind one another for the GIL
        added 2-5 ms to each call's latency on average, which a benchmark of the client then charged to the client."""
        self.brain = brain
        self.latency_s = latency_s
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

        self.httpd = Server(("127.0.0.1", 0), Handler)
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

    def __enter__(self) -> "FakeOpenAI":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def seed_of(request: dict[str, Any]) -> str:
    """The seed paper id from the system prompt (what a scripted brain keys on); OpenAI or Anthropic shape."""
    system = request.get("system") or request["messages"][0]["content"]
    if isinstance(system, list):
        system = "".join(block.get("text", "") for block in system)
    return system.split("- **ID**: ", 1)[1].split("\n", 1)[0].strip()


def turn_of(request: dict[str, Any]) -> int:
    """How many assistant turns the conversation already has."""
    return sum(1 for m in request["messages"] if m["role"] == "assistant")
