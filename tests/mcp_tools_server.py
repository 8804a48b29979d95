"""A small MCP server (stdio, the official SDK) whose tools an agent should ignore: the out-of-domain registry of
tests/test_extra_tools_mcp.py. `--die-after N` makes the process exit abruptly on its N+1-th tool call (a server
that dies mid-run)."""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

parser = argparse.ArgumentParser()
parser.add_argument("--die-after", type=int, default=None)
options = parser.parse_args()
server = MCPServer("distractions", log_level="ERROR")
calls = itertools.count()  # each next() is the number of tool calls before this one


def _count() -> None:
    if options.die_after is not None and next(calls) >= options.die_after:
        os._exit(3)  # no goodbye: the client sees its stream end


@server.tool(description="Convert a temperature from degrees Celsius to degrees Fahrenheit.")
def convert_temperature(celsius: float) -> str:
    _count()
    return f"{celsius * 9 / 5 + 32:.1f} °F"


@server.tool(description="Look up the status of a retail order by its number.")
def lookup_order(order_id: str) -> str:
    _count()
    return f"Order {len(order_id)}: shipped, arriving Tuesday."


@server.tool(description="Wait for a number of seconds, then answer (a slow tool).")
async def slow(seconds: float) -> str:
    _count()
    if seconds >= 2:  # the agents' placeholder (1.0) answers at once; the timeout test asks for more
        await asyncio.sleep(seconds)
    return "done"


@server.tool(description="A tool that always fails.")
def broken(reason: str) -> str:
    _count()
    raise ToolError("the backend is down")


if __name__ == "__main__":
    server.run("stdio")
