"""`--extra-tools mcp:COMMAND`: an MCP server's tools as the out-of-domain registry, through the official SDK's
client, against a real server process started by the tests (tests/mcp_tools_server.py), including one that dies
mid-run."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

from sandbox.extra_tools.mcp_registry import McpRegistry
from sandbox.records import TERMINATIONS, TOOL_NAMES
from storage import Store
from tests.cli_inprocess import batch

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")

SERVER = Path(__file__).with_name("mcp_tools_server.py")


@pytest.fixture(scope="module", autouse=True)
def _sdk_imported() -> None:
    """The SDK's stdio client takes sys.stderr at import as the server's error log: import it before capsys."""
    import mcp.client.stdio  # noqa: F401


def command(*extra: str) -> str:
    return " ".join([sys.executable, str(SERVER), *extra])


def test_calls_are_forwarded_with_a_timeout_and_failures_are_tool_errors():
    async def go():
        registry = McpRegistry(command(), timeout_s=1.0)
        tools = await registry.start()
        try:
            return (
                sorted(t.name for t in tools),
                await registry.call("convert_temperature", {"celsius": 100}),
                await registry.call("broken", {"reason": "x"}),
                await registry.call("slow", {"seconds": 5}),
                await registry.call("lookup_order", {"order_id": "W123"}),
            )
        finally:
            await registry.close()

    names, ok, broken, slow, after = asyncio.run(go())
    assert names == ["broken", "convert_temperature", "lookup_order", "slow"]
    assert (ok.text, ok.status) == ("212.0 °F", "ok")
    assert (
        broken.status == "error"
        and broken.text.startswith("Error calling broken: ")
        and "backend is down" in broken.text
    )
    assert slow.status == "error" and slow.text.startswith("Error calling slow: ")
    assert (after.text, after.status) == ("Order 4: shipped, arriving Tuesday.", "ok")  # the connection survives


def test_a_server_that_cannot_start_is_refused_with_exit_2(tmp_path, capsys):
    db = str(tmp_path / "r.db")
    out = batch(
        capsys,
        "run",
        "--run",
        "x",
        "--db",
        db,
        "--limit",
        "1",
        "--extra-tools",
        f"mcp:{sys.executable} -c 'import sys; sys.exit(1)'",
    )
    assert out.returncode == 2 and "the server could not be used" in out.stderr
    assert Store(db).runs() == []


def _run(capsys, db: str, name: str, cmd: str):
    out = batch(
        capsys,
        "run",
        "--data",
        "builtin",
        "--agent",
        "heuristic",
        "--run",
        name,
        "--db",
        db,
        "--limit",
        "4",
        "--workers",
        "1",
        "--quiet",
        "--format",
        "json",
        "--distractible",
        "0.5",
        "--extra-tools",
        f"mcp:{cmd}",
    )
    assert out.returncode == 0, out.stderr
    store = Store(db)
    run = store.run(name)
    return run, [(t, [s for s in store.steps(t["id"]) if s["kind"] == "tool"]) for t in store.trajectories(run["id"])]


def test_an_mcp_registry_end_to_end(tmp_path, capsys):
    run, trajectories = _run(capsys, str(tmp_path / "r.db"), "m", command())
    setting = run["config"]["extra_tools"]
    assert setting["source"] == "mcp" and sorted(setting["tools"]) == [
        "broken",
        "convert_temperature",
        "lookup_order",
        "slow",
    ]
    ood = [
        s for _, steps in trajectories for s in steps if s["tool_name"] not in TOOL_NAMES and s["status"] != "rejected"
    ]
    assert ood and run["status"] == "done"
    for s in ood:  # the server's own answers (placeholder arguments: "example", 1.0), or its tool error
        expected = {
            "convert_temperature": "33.8 °F",
            "lookup_order": "Order 7: shipped, arriving Tuesday.",
            "slow": "done",
        }.get(s["tool_name"])
        if expected:
            assert (s["text"], s["status"], s["cost"]) == (expected, "ok", 1)
        else:
            assert s["status"] == "error" and "backend is down" in s["text"]


def test_a_server_that_dies_mid_run_gives_tool_errors_and_every_episode_ends(tmp_path, capsys):
    run, trajectories = _run(capsys, str(tmp_path / "r.db"), "d", command("--die-after", "2"))
    assert run["status"] == "done" and len(trajectories) == 4
    ood = [
        s for _, steps in trajectories for s in steps if s["tool_name"] not in TOOL_NAMES and s["status"] != "rejected"
    ]
    assert len(ood) > 3
    answered = [s for s in ood if s["status"] == "ok" or "backend is down" in s["text"]]
    assert len(answered) == 2  # the two calls before it died
    gone = ood[2:]
    assert all(s["status"] == "error" and s["text"].startswith(f"Error calling {s['tool_name']}: ") for s in gone)
    assert all(("Connection closed" in s["text"] or "MCP server has stopped" in s["text"]) for s in gone)
    for t, _ in trajectories:
        assert t["termination"] in TERMINATIONS and t["termination"] != "error"


def test_extra_tools_timeout_bounds_each_mcp_call_and_is_not_identity(tmp_path, capsys):
    """`--extra-tools-timeout 0.2`: the server's `slow` tool (1 s with the placeholder argument) times out as a tool
    error the agent sees; the timeout is an execution option, absent from the run's identity; 0 is refused."""
    db = str(tmp_path / "r.db")
    bad = batch(
        capsys,
        "run",
        "--run",
        "x",
        "--db",
        db,
        "--limit",
        "1",
        "--extra-tools",
        f"mcp:{command()}",
        "--extra-tools-timeout",
        "0",
    )
    assert bad.returncode == 2 and "--extra-tools-timeout" in bad.stderr
    out = batch(
        capsys,
        "run",
        "--data",
        "builtin",
        "--agent",
        "heuristic",
        "--run",
        "t",
        "--db",
        db,
        "--limit",
        "4",
        "--workers",
        "1",
        "--quiet",
        "--format",
        "json",
        "--distractible",
        "0.5",
        "--extra-tools",
        f"mcp:{command()}",
        "--extra-tools-timeout",
        "0.2",
    )
    assert out.returncode == 0, out.stderr
    store = Store(db)
    run = store.run("t")
    assert "extra_tools_timeout_s" not in run["config"].get("agent_options", {})
    assert run["config"]["agent_options"] == {"distractible": 0.5}

    async def go():  # the run's own setting record, opened as the runner opens it with the run's timeout
        from sandbox.extra_tools.setting import open_extra_tools

        async with open_extra_tools(run["config"]["extra_tools"], 0.2) as extra:
            return await extra.caller("slow", {"seconds": 5})

    slow = asyncio.run(go())
    assert slow.status == "error" and slow.text.startswith("Error calling slow: ")


def test_close_lets_its_own_cancellation_through(monkeypatch):
    """A run cancelled while it waits for a slow server to leave (Ctrl-C, a run-wide limit) is cancelled: `close`
    swallows only the CancelledError it caused in the owner, never its own task's."""
    from sandbox.extra_tools import mcp_registry

    monkeypatch.setattr(mcp_registry, "CLOSE_TIMEOUT_S", 0)  # the owner's orderly exit is not waited for

    async def go() -> tuple[bool, bool]:
        registry = McpRegistry("unused")
        leaving = asyncio.Event()

        async def slow_to_leave() -> None:  # stands for the owner of a server whose exit takes a while
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                leaving.set()
                await asyncio.Event().wait()  # still leaving when the closing task is cancelled

        registry._owner = asyncio.create_task(slow_to_leave())
        closing = asyncio.create_task(registry.close())
        await leaving.wait()  # the owner is cancelled: `close` waits for it to end
        closing.cancel()
        try:
            await closing
        except asyncio.CancelledError:
            cancelled = True
        else:
            cancelled = False
        return cancelled, registry._owner.done()

    cancelled, owner_done = asyncio.run(go())
    assert cancelled
    assert owner_done


def test_close_ends_quietly_when_the_owner_is_cancelled(monkeypatch):
    """The owner's own CancelledError (close cancelled it) is the expected end of `close`, not an error."""
    from sandbox.extra_tools import mcp_registry

    monkeypatch.setattr(mcp_registry, "CLOSE_TIMEOUT_S", 0)

    async def go() -> bool:
        registry = McpRegistry("unused")
        registry._owner = asyncio.create_task(asyncio.Event().wait())
        await registry.close()
        return registry._owner.cancelled()

    assert asyncio.run(go())
