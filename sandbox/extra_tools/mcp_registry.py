"""An MCP server as an out-of-domain registry (`--extra-tools mcp:COMMAND`), through the official SDK's client.

The server is started once per run (stdio), its tools listed, and every call an agent makes to one of them is
forwarded for real, with a timeout. A run's episodes share the one connection from many asyncio tasks, while the
SDK's client must be entered and left in one task: so one owner task holds the connection and serves the calls
from a queue, one at a time. Whatever goes wrong — a timeout, an error result, a server that exits mid-run — is
the `Error calling …` text the agent sees as a tool error; nothing here raises into an episode.
"""

from __future__ import annotations

import asyncio
import shlex
from typing import Any

from sandbox.extra_tools.registry import ExtraTool, RegistryError
from sandbox.records import TOOL_NAMES
from sandbox.tools import ToolOutcome
from storage.json_types import JsonObject

TIMEOUT_S = 30.0  # a call's timeout
START_TIMEOUT_S = 60.0  # starting the server and listing its tools
CLOSE_TIMEOUT_S = 10.0  # the owner's orderly exit before it is cancelled


def _server(command: str) -> Any:
    from mcp import StdioServerParameters

    argv = shlex.split(command)
    if not argv:
        raise RegistryError("--extra-tools mcp: needs a command that starts the MCP server (mcp:COMMAND)")
    import os

    return StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))


def _text(result: Any) -> str:
    return "\n".join(getattr(block, "text", f"[{getattr(block, 'type', 'content')}]") for block in result.content)


class McpRegistry:
    """One MCP server for the duration of a run: `start` lists its tools, `call` forwards, `close` stops it."""

    def __init__(self, command: str, timeout_s: float = TIMEOUT_S):
        self.command = command
        self.timeout_s = timeout_s
        self._queue: asyncio.Queue[tuple[str, JsonObject, asyncio.Future[ToolOutcome]] | None] = asyncio.Queue()
        self._listed: asyncio.Future[list[ExtraTool]] | None = None
        self._owner: asyncio.Task | None = None
        self._gone: str | None = None  # why the connection is over (every later call says it)

    async def start(self) -> list[ExtraTool]:
        """Start the server and list its tools (RegistryError, exit 2, when it cannot be started or lists none)."""
        try:
            server = _server(self.command)
        except ImportError:
            raise RegistryError("--extra-tools mcp: needs the mcp SDK: pip install 'agenthop-workbench[mcp]'") from None
        self._listed = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._own(server))
        try:
            tools = await asyncio.wait_for(asyncio.shield(self._listed), START_TIMEOUT_S)
        # the owner hands over whatever stopped the listing (the SDK's errors, an OSError, a RegistryError)
        except Exception as exc:  # noqa: BLE001 — each becomes a RegistryError naming it
            await self.close()
            why = (
                "it did not list its tools in time"
                if isinstance(exc, asyncio.TimeoutError)
                else str(exc) or type(exc).__name__
            )
            raise RegistryError(f"--extra-tools mcp:{self.command}: the server could not be used: {why}") from None
        if not tools:
            await self.close()
            raise RegistryError(f"--extra-tools mcp:{self.command}: the server lists no tools")
        return tools

    async def _own(self, server: Any) -> None:
        import mcp_types as types
        from mcp import Client

        assert self._listed is not None
        try:
            async with Client(
                server,
                client_info=types.Implementation(name="agenthop-workbench", version="1"),
                read_timeout_seconds=self.timeout_s,
            ) as client:
                self._listed.set_result(await _listed_tools(client))
                while (job := await self._queue.get()) is not None:
                    await self._answer(client, *job)
        except BaseException as exc:  # the server exited, or the run is closing it
            self._gone = f"the MCP server has stopped ({_why(exc, self.timeout_s)})"
            if not self._listed.done():
                self._listed.set_exception(exc if isinstance(exc, Exception) else RuntimeError(self._gone))
            if not isinstance(exc, Exception):  # cancellation, KeyboardInterrupt, SystemExit go on
                raise
        finally:
            self._gone = self._gone or "the MCP server connection is closed"
            self._fail_queued(self._gone)

    def _fail_queued(self, why: str) -> None:
        """Answer every call still queued with the tool's error `why` (the server is gone)."""
        while not self._queue.empty():
            job = self._queue.get_nowait()
            if job is not None and not job[2].done():
                job[2].set_result(ToolOutcome(f"Error calling {job[0]}: {why}", "error"))

    async def _answer(self, client: Any, name: str, args: JsonObject, reply: asyncio.Future[ToolOutcome]) -> None:
        """Make one queued call and settle its reply (unless its caller gave up): the result, or the tool's error."""
        if reply.cancelled():
            return
        try:
            result = await client.call_tool(name, args, read_timeout_seconds=self.timeout_s)
        # a timeout, a protocol error, a dropped stream: this call fails with its reason, the next one tries
        except Exception as exc:  # noqa: BLE001 — the agent sees it as the tool's error
            if not reply.done():
                reply.set_result(ToolOutcome(f"Error calling {name}: {_why(exc, self.timeout_s)}", "error"))
            return
        if not reply.done():
            text = _text(result)
            reply.set_result(
                ToolOutcome(f"Error calling {name}: {text}", "error") if result.is_error else ToolOutcome(text)
            )

    async def call(self, name: str, args: Any) -> ToolOutcome:
        """Forward one call; its result text, or a tool error (timeout, error result, server gone)."""
        if self._gone is not None or self._owner is None or self._owner.done():
            return ToolOutcome(f"Error calling {name}: {self._gone or 'the MCP server is not running'}", "error")
        if not isinstance(args, dict):
            return ToolOutcome(
                f"Error calling {name}: Missing or invalid parameter — arguments must be an object", "error"
            )
        reply: asyncio.Future[ToolOutcome] = asyncio.get_running_loop().create_future()
        await self._queue.put((name, args, reply))
        try:
            # the owner times the call out itself; this bound covers the calls queued ahead of it
            return await asyncio.wait_for(asyncio.shield(reply), self.timeout_s * 4)
        except TimeoutError:
            reply.cancel()
            return ToolOutcome(
                f"Error calling {name}: no reply from the MCP server within {self.timeout_s * 4:.0f}s", "error"
            )

    async def close(self) -> None:
        """Stop the server (the owner task leaves the client, which ends the process)."""
        if self._owner is None or self._owner.done():
            return
        await self._queue.put(None)
        try:
            await asyncio.wait_for(asyncio.shield(self._owner), CLOSE_TIMEOUT_S)
        except TimeoutError:  # the owner records every failure of its own; only a slow exit lands here
            await self._cancel_owner()

    async def _cancel_owner(self) -> None:
        """Cancel the owner and wait for its end. The owner's CancelledError is that expected end; the closing
        task's own cancellation, KeyboardInterrupt and SystemExit pass through."""
        assert self._owner is not None
        self._owner.cancel()
        try:
            await self._owner
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise


def _why(exc: BaseException, timeout_s: float) -> str:
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return f"no reply within {timeout_s:.0f}s"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _listed_tools(client: Any) -> list[ExtraTool]:
    """The tools the server lists, as extra tools; a name of the protocol's seven is refused."""
    listed = await client.list_tools()
    tools = []
    for t in listed.tools:
        if t.name in TOOL_NAMES:
            raise RegistryError(f"its tool '{t.name}' has the name of one of the protocol's seven tools")
        tools.append(ExtraTool(t.name, t.description or "", dict(t.input_schema or {"type": "object"})))
    return tools
