"""serve-mcp driven by the official SDK's own client, over stdio and over streamable HTTP.

The heuristic navigator is played from the client side (it sees only what the MCP results show it) and must
leave the same transcript, ledger and report as the same agent run in-process on the same items.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from sandbox.agents.registry import make_scripted
from sandbox.datasets import open_dataset
from sandbox.prompts import TOOL_SCHEMAS
from sandbox.records import Caps
from storage import Store
from workbench.cli import main
from workbench.service import paths

if TYPE_CHECKING:
    from mcp import Client, StdioServerParameters

# The SDK is imported by the tests that use it, not here: every test process collects this module, and importing
# the SDK costs about a second, paid only by the process that runs these tests.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")


@pytest.fixture(scope="module", autouse=True)
def _sdk_imported() -> None:
    """The SDK is imported before any test of the module swaps sys.stderr for `capsys`: its stdio client takes
    sys.stderr at import as the server's error log, which must be a real file."""
    import mcp.client.stdio  # noqa: F401


ROOT = Path(__file__).resolve().parents[1]
TIMING = {"wall_time", "wall_time_s", "elapsed_s", "started_at", "finished_at", "completed_at"}
ENDED = "The episode on item"


def serve_args(db: Path, run: str = "m", *extra: str) -> list[str]:
    return ["-m", "workbench.cli", "--batch", "serve-mcp", "--run", run, "--db", str(db), *extra]


def stdio(db: Path, run: str = "m", *extra: str) -> StdioServerParameters:
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable, args=serve_args(db, run, *extra), env=dict(os.environ), cwd=str(ROOT)
    )


def client(server, name: str = "heuristic") -> Client:
    import mcp_types as types
    from mcp import Client

    return Client(server, client_info=types.Implementation(name=name, version="1"), read_timeout_seconds=60)


def texts(result) -> list[str]:
    return [b.text for b in result.content]


async def play_heuristic(c: Client, items: int | None = None) -> int:
    """The heuristic navigator as an MCP client: next_item, then its calls one by one until its episode ends."""
    corpus, _ = open_dataset("builtin", paths.cache_dir())
    played = 0
    while items is None or played < items:
        opened = texts(await c.call_tool("next_item", {}))
        if not opened[0].startswith("Item: "):
            assert opened[0].startswith("Every item of run")
            break
        header = dict(line.split(": ", 1) for line in opened[0].splitlines())
        item = corpus.item(header["Item"])
        agent = make_scripted("heuristic", item, Caps(), 0, int(header["Replicate"]), 0)
        messages = [{"role": "system", "content": opened[1]}, {"role": "user", "content": opened[2]}]
        while True:
            call = (await agent.act(messages, tuple(TOOL_SCHEMAS))).tool_calls[0]
            shown = texts(await c.call_tool(call.name, call.args))
            if shown[-1].startswith(ENDED):
                break
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": json.dumps(call.args)},
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": shown[0]})
            messages += [{"role": "user", "content": t} for t in shown[1:]]
        played += 1
    return played


def transcript(db: Path, run: str) -> list:
    """Every trajectory of a run and every step, in store order, timing and ids aside."""
    store = Store(db, readonly=True)
    try:
        out = []
        for t in store.trajectories(store.run(run)["id"], final_only=False):
            steps = [{k: v for k, v in s.items() if k not in TIMING | {"trajectory_id"}} for s in store.steps(t["id"])]
            out.append(({k: v for k, v in t.items() if k not in TIMING | {"id", "run_id"}}, steps))
        return out
    finally:
        store.close()


def report(db: Path, run: str, capsys) -> dict:
    capsys.readouterr()
    assert main(["--batch", "report", run, "--db", str(db), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    return without(rep, TIMING | {"run", "agent"})


def without(obj, keys):
    if isinstance(obj, dict):
        return {k: without(v, keys) for k, v in obj.items() if k not in keys}
    if isinstance(obj, list):
        return [without(v, keys) for v in obj]
    return obj


def run_async(coro):
    return asyncio.run(coro)


# ---------------------------------------------------------------- stdio


def test_heuristic_through_mcp_equals_heuristic_in_process(tmp_path, capsys):
    db = tmp_path / "s.db"
    assert (
        main(["--batch", "run", "--agent", "heuristic", "--workers", "1", "--run", "ref", "--db", str(db), "--quiet"])
        == 0
    )  # the whole built-in benchmark

    async def session():
        async with client(stdio(db, "m")) as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            assert list(listed) == [s["name"] for s in TOOL_SCHEMAS] + ["next_item"]
            for s in TOOL_SCHEMAS:
                assert listed[s["name"]].description == s["description"]
                assert listed[s["name"]].input_schema == s["parameters"]
            return await play_heuristic(c)

    assert run_async(session()) == 60
    assert transcript(db, "m") == transcript(db, "ref")
    assert report(db, "m", capsys) == report(db, "ref", capsys)
    store = Store(db, readonly=True)
    run = store.run("m")
    assert (run["agent"], run["status"], run["planned"]) == ("mcp:heuristic", "done", 60)
    capsys.readouterr()
    assert main(["--batch", "compare", "ref", "m", "--db", str(db), "--format", "json"]) == 0


def test_control_texts_protocol_texts_and_the_token_legend(tmp_path, capsys):
    db = tmp_path / "s.db"

    async def session():
        async with client(stdio(db, "m", "--limit", "1", "--budget", "7")) as c:
            none = await c.call_tool("think", {"reasoning": "before any item"})
            assert none.is_error and texts(none) == ["No item is open: call next_item to receive a question."]
            opened = texts(await c.call_tool("next_item", {}))
            assert opened[0].splitlines()[0] == "Item: st_0001" and "## Answer Options" in opened[1]
            assert "**Budget**: 7 points" in opened[1] and opened[2].startswith("Please solve the question")
            again = await c.call_tool("next_item", {})
            assert again.is_error and "still open" in texts(again)[0]
            assert texts(await c.call_tool("nope", {"x": 1})) == [
                "Unknown tool: nope\nTurn: 1  |  Tokens used: not measured  |  Budget used: 0"
            ]
            bad = texts(await c.call_tool("get_paper_info", {"paper": 3}))[0]
            assert bad.startswith("Error calling get_paper_info: Missing or invalid parameter — ")  # charged
            assert bad.endswith("Turn: 2  |  Tokens used: not measured  |  Budget used: 1")  # not a count of 0
            read = texts(await c.call_tool("read_section", {"paper_id": "x", "section": "A"}))
            assert read[0].endswith("Budget used: 6") and read[1:] == []
            navigate = texts(await c.call_tool("get_references", {"paper_id": "x"}))
            assert navigate[0].endswith("Budget used: 7")
            assert navigate[1] == "Budget exhausted. You MUST call submit_answer now with your best guess."
            first = texts(await c.call_tool("read_section", {"paper_id": "x", "section": "A"}))
            assert first[0].startswith("REJECTED: Insufficient budget (0 remaining, read_section costs 5).")
            second = texts(await c.call_tool("get_references", {"paper_id": "x"}))
            assert second[0].startswith("REJECTED: Insufficient budget") and second[-1].startswith(ENDED)
            assert "(budget)" in second[-1]
            after = await c.call_tool("submit_answer", {"answer": "A", "reasoning": "late"})
            assert after.is_error and texts(after) == [
                "The episode on item st_0001 has ended (budget). Call next_item for the next question."
            ]
            done = texts(await c.call_tool("next_item", {}))
            assert done == ["Every item of run 'm' is finished (1 of 1): nothing is left to play."]

    run_async(session())
    capsys.readouterr()
    assert main(["--batch", "report", "m", "--db", str(db), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["terminations"]["budget"] == 1 and rep["axes"]["resource"]["avg_tokens"] is None
    assert rep["counts"]["resource"]["avg_tokens"] == [0, 0]  # unmeasured, not 0
    assert "unmeasured" in rep["legend"]["mcp"] and "one tool call" in rep["legend"]["mcp"]


def test_bad_input_is_refused_or_answered_never_a_crash(tmp_path):
    import mcp_types as types
    from mcp.shared.exceptions import MCPError

    db = tmp_path / "s.db"

    async def session():
        async with client(stdio(db, "m", "--limit", "1", "--max-turns", "40")) as c:
            await c.call_tool("next_item", {})
            with pytest.raises(MCPError) as huge:
                await c.call_tool("think", {"reasoning": "x" * 200_000})
            assert huge.value.code == types.INVALID_PARAMS and "nothing was charged" in huge.value.message
            with pytest.raises(MCPError):
                await c.call_tool("x" * 1000, {})
            flood = await asyncio.gather(*(c.call_tool("think", {"reasoning": str(i)}) for i in range(60)))
            shown = [texts(r) for r in flood]
            assert sum(1 for t in shown if t[0].startswith("Thought recorded") or "Turn: " in t[0]) >= 39
            assert shown[-1][-1].startswith(ENDED) or any(t[-1].startswith(ENDED) for t in shown)

    run_async(session())
    store = Store(db, readonly=True)
    (t,) = store.trajectories(store.run("m")["id"])
    assert t["termination"] == "max_turns" and t["turns"] == 40 and t["tool_calls"] == 40
    idx = [s["idx"] for s in store.steps(t["id"])]
    assert idx == list(range(len(idx)))


def test_a_restarted_server_resumes_and_another_client_is_refused(tmp_path, capsys):
    db = tmp_path / "s.db"

    async def first():
        async with client(stdio(db, "m", "--limit", "3")) as c:
            assert await play_heuristic(c, items=1) == 1
            await c.call_tool("next_item", {})  # the second item is left midway
            await c.call_tool("think", {"reasoning": "leaving"})

    async def second():
        async with client(stdio(db, "m", "--limit", "3")) as c:
            return await play_heuristic(c)

    async def stranger():
        async with client(stdio(db, "m", "--limit", "3"), name="other") as c:
            return texts(await c.call_tool("next_item", {}))

    run_async(first())
    store = Store(db, readonly=True)
    assert store.run("m")["status"] == "interrupted" and len(store.trajectories(store.run("m")["id"])) == 1
    refused = run_async(stranger())
    assert refused[0].startswith("The run cannot start:") and "agent differs" in refused[0]
    assert run_async(second()) == 2
    assert (
        main(
            [
                "--batch",
                "run",
                "--agent",
                "heuristic",
                "--limit",
                "3",
                "--workers",
                "1",
                "--run",
                "ref",
                "--db",
                str(db),
                "--quiet",
            ]
        )
        == 0
    )
    assert transcript(db, "m") == transcript(db, "ref")


def test_without_the_sdk_the_command_says_what_to_install(tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a))
    assert main(["--batch", "serve-mcp", "--run", "m", "--db", str(tmp_path / "s.db")]) == 2
    assert "pip install 'agenthop-workbench[mcp]'" in capsys.readouterr().err and not (tmp_path / "s.db").exists()


# ---------------------------------------------------------------- streamable HTTP


def start_http(db: Path, run: str = "m", *extra: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, *serve_args(db, run, "--transport", "http", "--port", "0", *extra)],
        cwd=ROOT,
        env=dict(os.environ),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    for line in proc.stderr:
        if line.startswith("serving run"):
            return proc, line.rsplit(" ", 1)[1].strip()
    raise AssertionError(f"the server did not start (exit {proc.wait()})")


def test_http_plays_a_run_and_a_second_server_is_refused(tmp_path, capsys):
    db = tmp_path / "s.db"
    proc, url = start_http(db, "m", "--limit", "4")
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        assert main(["--batch", "serve-mcp", "--run", "m", "--db", str(db), "--transport", "http", "--port", "0"]) == 2
        assert "in progress in another process" in capsys.readouterr().err

        async def session():
            async with client(url) as c:
                return await play_heuristic(c)

        assert run_async(session()) == 4
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    assert code == 128 + signal.SIGTERM
    assert (
        main(
            [
                "--batch",
                "run",
                "--agent",
                "heuristic",
                "--limit",
                "4",
                "--workers",
                "1",
                "--run",
                "ref",
                "--db",
                str(db),
                "--quiet",
            ]
        )
        == 0
    )
    assert transcript(db, "m") == transcript(db, "ref")
    assert report(db, "m", capsys) == report(db, "ref", capsys)
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT agent, status FROM runs WHERE name = 'm'").fetchone() == ("mcp:heuristic", "done")
    conn.close()


def test_a_served_run_sends_the_prompts_file_s_texts(tmp_path):
    """`serve-mcp --prompts`: next_item's task is the file's system prompt and first message, every result carries
    the file's footer (the one that ends the item too), the tool list the `[tools]` table's description; the run
    records the file."""
    from sandbox.prompt_set import load_prompts, to_toml

    prompts = tmp_path / "mine.toml"
    prompts.write_text(
        'system = "MINE {task_block} {tools_block}"\nfirst_user = "Go."\n'
        'status_footer = " [{points_left} left]"\n[tools]\nthink = "Scratchpad."\n'
    )
    db = tmp_path / "s.db"

    async def session():
        async with client(stdio(db, "m", "--limit", "1", "--prompts", str(prompts))) as c:
            listed = {t.name: t.description for t in (await c.list_tools()).tools}
            assert listed["think"] == "Scratchpad." and listed["read_section"] == TOOL_SCHEMAS[4]["description"]
            opened = texts(await c.call_tool("next_item", {}))
            assert opened[1].startswith("MINE ## Seed Paper") and opened[2] == "Go."
            seed = opened[1].split("- **ID**: ", 1)[1].split("\n", 1)[0]
            looked = texts(await c.call_tool("get_paper_info", {"paper_id": seed}))
            assert looked[0].endswith(" [29 left]")
            ended = texts(await c.call_tool("submit_answer", {"answer": "A", "reasoning": "r"}))
            assert ended[0].endswith(" [29 left]") and ended[-1].startswith(ENDED)

    run_async(session())
    assert Store(db, readonly=True).run("m")["prompts"] == to_toml(load_prompts(prompts))


def test_serve_mcp_checks_the_prompts_file_before_serving(capsys, tmp_path):
    from tests.cli_inprocess import batch

    bad = tmp_path / "bad.toml"
    bad.write_text('stop = "{max_turns}"\n')
    db = tmp_path / "s.sqlite"
    done = batch(capsys, "serve-mcp", "--run", "m", "--db", str(db), "--prompts", str(bad))
    assert done.returncode == 2 and f"{bad}:1:" in done.stderr and "{max_turns}" in done.stderr
    assert not db.exists() or Store(db, readonly=True).runs() == []


def test_the_mcp_tool_list_takes_descriptions_only_from_an_explicit_tools_table(tmp_path):
    from sandbox.prompt_set import load_text
    from sandbox.prompts import DEFAULT_PROMPTS
    from workbench.mcp.server import tool_list

    mine = load_text('[tools]\nthink = "Think out loud (free)."\n')
    described = {t.name: t.description for t in tool_list(mine)}
    assert described["think"] == "Think out loud (free)."
    assert described["read_section"] == {t.name: t.description for t in tool_list()}["read_section"]
    assert mine.digest != DEFAULT_PROMPTS.digest
