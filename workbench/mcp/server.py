"""`serve-mcp`: the sandbox as an MCP server, so any MCP-capable agent is measured under the same ledger.

The server is a thin transport: the run, its episodes and every text a client reads are
`workbench.service.mcp_session`'s (the same `Runner` and `Episode` as every other agent, the
client's `tools/call` requests one turn each); this module carries them over MCP (stdio or
streamable HTTP) and refuses what is no call at all.

A run's agent is `mcp:<client name>`, the name the client gave in `initialize`. What an
MCP server cannot see is said in the report's legend (`mcp`): the client model's tokens
(unmeasured, never 0) and its own turns (a turn here is one tool call).

Bad input never reaches the ledger as anything but a call: an unknown tool name or wrong
arguments are executed calls with the protocol's texts (as for a model); arguments too
large to be a call, or a malformed request, are refused as JSON-RPC errors before the
episode sees them; concurrent calls are taken one at a time, in order.
"""

from __future__ import annotations

import json
import sys
import unicodedata
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from workbench.service.mcp_session import NEXT_ITEM, McpSession, Reply, tool_schemas

MAX_ARGUMENT_CHARS = 65_536  # a call's arguments as JSON; more is no call a protocol agent makes
MAX_NAME_CHARS = 128
MAX_CLIENT_CHARS = 64


def client_label(name: Any) -> str:
    """The client's name from `initialize`, as a run's agent carries it: printable, at most 64 characters."""
    text = "".join(c for c in str(name or "") if unicodedata.category(c)[0] not in ("C", "Z") or c == " ").strip()
    return text[:MAX_CLIENT_CHARS] or "unknown"


def _result(reply: Reply) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=t) for t in reply.texts], is_error=reply.error
    )


# ---------------------------------------------------------------- the MCP server


def tool_list(prompts: Any = None) -> list[types.Tool]:
    """The seven tools with the protocol's names, descriptions and argument schemas (descriptions as the run's
    prompts' `[tools]` table replaces them, if it does), then next_item."""
    return [
        types.Tool(name=s["name"], description=s["description"], input_schema=s["parameters"])
        for s in tool_schemas(prompts)
    ]


def build_server(session: McpSession) -> Server:
    tools = tool_list(session.base.prompt_set())

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        arguments = params.arguments or {}
        if not isinstance(name, str) or len(name) > MAX_NAME_CHARS:
            raise MCPError(types.INVALID_PARAMS, f"a tool name has at most {MAX_NAME_CHARS} characters")
        size = len(json.dumps(arguments, ensure_ascii=False, default=str))
        if size > MAX_ARGUMENT_CHARS:
            raise MCPError(
                types.INVALID_PARAMS,
                f"the arguments are {size:,} characters of JSON; a call takes at "
                f"most {MAX_ARGUMENT_CHARS:,} (nothing was charged)",
            )
        if name == NEXT_ITEM:
            return _result(await session.next_item(_client_of(ctx)))
        return _result(await session.call(name, arguments))

    return Server(
        "agenthop-workbench",
        version="0.1.0",
        instructions=(
            "AgentHop: multi-hop scientific questions answered by navigating a citation graph. "
            "Call next_item for a question, use the seven tools, end it with submit_answer."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _client_of(ctx: Any) -> str:
    params = getattr(getattr(ctx, "session", None), "client_params", None)
    info = getattr(params, "client_info", None)
    return client_label(getattr(info, "name", None))


async def serve_stdio(session: McpSession) -> None:
    """Serve one client over stdin/stdout until it disconnects."""
    from mcp.server.stdio import stdio_server

    server = build_server(session)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await session.close()


async def serve_http(session: McpSession, sock: Any, token: str | None = None) -> int | None:
    """Serve streamable HTTP on a bound socket until SIGINT or SIGTERM; the signal's number, if one stopped it.
    With a `token`, every request must carry it as `Authorization: Bearer …` (`workbench.mcp.auth`)."""
    import signal

    import uvicorn

    class _Server(uvicorn.Server):
        """uvicorn, but a signal only stops it: the run is closed here, then the command exits by the signal."""

        received: int | None = None

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.received = sig
            super().handle_exit(sig, frame)

        def capture_signals(self):
            from contextlib import contextmanager

            @contextmanager
            def captured():
                old = {s: signal.signal(s, self.handle_exit) for s in (signal.SIGINT, signal.SIGTERM)}
                try:
                    yield
                finally:
                    for s, handler in old.items():
                        signal.signal(s, handler)

            return captured()

    from workbench.mcp.auth import BearerGate, host_header_guard

    host, port = sock.getsockname()[:2]
    app: Any = build_server(session).streamable_http_app(host=host, transport_security=host_header_guard(host))
    if token is not None:
        app = BearerGate(app, token)
        sys.stderr.write(f"every request needs the bearer token from ${session.token_env}\n")
    server = _Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    sys.stderr.write(f"serving run '{session.base.name}' at http://{host}:{port}/mcp\n")
    sys.stderr.flush()
    try:
        await server.serve(sockets=[sock])
    finally:
        await session.close()
    return server.received
