"""Resolving a run's general-agent setting: at launch (what to record) and at run time (what episodes call).

`resolve` reads the registry once when a run is launched and returns the record the run keeps (and a resume
compares). `open_extra_tools` rebuilds the tools from that record when the runner starts — the built-in tools by
name, a file's from the file, an MCP server's by starting it again — and refuses a registry whose tools changed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sandbox.extra_tools.registry import (
    ExtraTool,
    ExtraTools,
    RegistryError,
    SettingRecord,
    builtin_registry,
    load_file,
    local_caller,
    parse_source,
    setting_record,
)


def registry_tools(source: str) -> list[ExtraTool]:
    """Every tool of a builtin or file registry; an MCP server's, started and stopped (from sync code only)."""
    kind, where = parse_source(source)
    if kind == "builtin":
        return builtin_registry()
    if kind == "file":
        return load_file(where)
    if where not in _LISTED:  # a launch form validating on each keystroke, `scale tools` resolving each level
        _LISTED[where] = _run_sync(_list_mcp(where))
    return list(_LISTED[where])


_LISTED: dict[str, list[ExtraTool]] = {}  # an MCP command's tools, listed once per process (the run checks them again)


async def _list_mcp(command: str) -> list[ExtraTool]:
    from sandbox.extra_tools.mcp_registry import McpRegistry

    registry = McpRegistry(command)
    try:
        return await registry.start()
    finally:
        await registry.close()


def _run_sync(coro: Any) -> Any:
    """Run a coroutine from sync code, in a thread of its own when an event loop already runs here (the TUI)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def resolve(source: str, count: int | None, detail: str, cost: int, seed: int) -> SettingRecord | None:
    """The record of a setting (RegistryError, exit 2, for any problem); None for count 0 (the plain run)."""
    if count == 0:
        return None
    return setting_record(source, registry_tools(source), count, detail, cost, seed)


def _digest(tools: list[ExtraTool]) -> str:
    return hashlib.sha256(
        json.dumps([[t.schema("full"), t.canned] for t in tools], sort_keys=True).encode()
    ).hexdigest()


def _chosen(record: SettingRecord, tools: list[ExtraTool]) -> list[ExtraTool]:
    by_name = {t.name: t for t in tools}
    missing = [n for n in record["tools"] if n not in by_name]
    if missing:
        raise RegistryError(f"the run's extra tools changed since it was started: '{missing[0]}' is no longer listed")
    chosen = [by_name[n] for n in record["tools"]]
    if _digest(chosen) != record["digest"]:
        raise RegistryError("the run's extra tools changed since it was started (their schemas or results differ)")
    return chosen


@asynccontextmanager
async def open_extra_tools(
    record: SettingRecord | None, timeout_s: float | None = None
) -> AsyncIterator[ExtraTools | None]:
    """The setting's tools for the duration of a run (an MCP server runs until the block ends); `timeout_s` bounds
    each forwarded MCP call (execution, not identity: a resume may change it)."""
    if record is None:
        yield None
        return
    kind = record["source"]
    if kind != "mcp":
        tools = _chosen(record, builtin_registry() if kind == "builtin" else load_file(record["where"]))
        yield ExtraTools(record, tools, local_caller(tools))
        return
    from sandbox.extra_tools.mcp_registry import McpRegistry

    registry = McpRegistry(record["where"], timeout_s) if timeout_s else McpRegistry(record["where"])
    try:
        tools = _chosen(record, await registry.start())
        yield ExtraTools(record, tools, registry.call)
    finally:
        await registry.close()
