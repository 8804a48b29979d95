"""AgentHop under Inspect AI (the `inspect` extra): the task run by Inspect against the local test server, compared
request by request with our own loop on the same item; its logs imported; our runs exported (docs/inspect.md)."""

from __future__ import annotations

import asyncio
import json

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval

from sandbox.agents.limits import RateLimiter
from sandbox.agents.llm import LLMAgent, LLMConfig
from sandbox.episode import Episode, RetryPolicy
from sandbox.prompts import build_prompt
from sandbox.records import Caps
from sandbox.runner import RunSpec
from tests.openai_server import FakeOpenAI, Reply, seed_of, text_reply, tool_reply, turn_of
from workbench.service import paths
from workbench.service.datasets import open_dataset

FAST = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0)
BUDGET = 3  # three one-point calls exhaust it: the exhausted nudge, then a rejection of a call past it
ABLATION = "no-search"  # search_papers is disabled: its call gets the disabled-tool rejection


def script(req: dict, n: int) -> Reply:
    """A model that meets every text the harness can send: results and footers, a disabled tool, an unknown tool,
    a tool error, the exhausted nudge, a rejection past the budget, the nudge after prose, then its answer."""
    seed = seed_of(req)
    turns = [
        lambda: tool_reply(("get_paper_info", {"paper_id": seed}), ("think", {"reasoning": "the seed first"})),
        lambda: tool_reply(("search_papers", {"query": "phase"}), content="Searching."),
        lambda: tool_reply(("fly_to_the_moon", {"x": 1}), ("read_section", {"paper_id": seed})),
        lambda: tool_reply(("get_references", {"paper_id": seed}), ("list_sections", {"paper_id": seed})),
        lambda: tool_reply(("get_paper_info", {"paper_id": seed})),
        lambda: text_reply("I think I know it now."),
        lambda: tool_reply(("submit_answer", {"answer": "B", "reasoning": "because"})),
    ]
    return turns[min(turn_of(req), len(turns) - 1)]()


def wire(request: dict) -> list[tuple]:
    """What a request says, as texts: each message's role, content, calls (name, arguments) and the call it answers.
    The two clients may spell an empty content as null or "", and Inspect's OpenAI provider names the system role
    `developer`, as OpenAI's newer models call it."""
    out = []
    for m in request["messages"]:
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        calls = [
            (c["function"]["name"], json.loads(c["function"]["arguments"] or "{}")) for c in m.get("tool_calls") or []
        ]
        role = "system" if m["role"] == "developer" else m["role"]
        out.append((role, content or "", calls, m.get("tool_call_id")))
    return out


def offered(request: dict) -> list[tuple]:
    """The tools a request offers: name, description and parameters' names and descriptions."""
    return [
        (
            t["function"]["name"],
            t["function"]["description"],
            {k: v.get("description") for k, v in t["function"]["parameters"]["properties"].items()},
            sorted(t["function"]["parameters"].get("required") or []),
        )
        for t in request.get("tools") or []
    ]


def our_loop(url: str, item_id: str):
    corpus, _ = open_dataset("builtin", paths.cache_dir())
    item = corpus.item(item_id)
    caps = RunSpec(
        name="x", dataset="builtin", agent="llm", caps=Caps(budget=BUDGET), ablation=ABLATION
    ).effective_caps()
    agent = LLMAgent(LLMConfig(model="openai/test-model", base_url=url, client="native"), RateLimiter(), None)

    async def play():
        try:
            return await Episode(corpus.view(item), agent, caps, build_prompt(item, caps, ABLATION), retry=FAST).run()
        finally:
            await agent.session.aclose()

    return asyncio.run(play())


def inspect_run(url: str, log_dir, monkeypatch, **task_args):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    logs = inspect_eval(
        "agenthop_workbench/agenthop",
        model="openai/test-model",
        model_base_url=url,
        model_args={"responses_api": False},  # the test server speaks chat completions, as our native client
        task_args=task_args,
        log_dir=str(log_dir),
        display="none",
        max_retries=0,
    )
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def test_under_inspect_the_model_reads_byte_for_byte_what_our_loop_sends(tmp_path, monkeypatch):
    with FakeOpenAI(script) as ours:
        corpus, _ = open_dataset("builtin", paths.cache_dir())
        item_id = corpus.items[0].id
        trajectory = our_loop(ours.url, item_id)
    with FakeOpenAI(script) as theirs:
        log = inspect_run(theirs.url, tmp_path, monkeypatch, limit=1, budget=BUDGET, ablation=ABLATION)
    assert trajectory.termination == "answer" and trajectory.answer == "B"
    assert len(theirs.requests) == len(ours.requests) == 7
    for mine, inspect_request in zip(ours.requests, theirs.requests):
        assert wire(inspect_request) == wire(mine)
        assert offered(inspect_request) == offered(mine)
    texts = "\n".join(m[1] for m in wire(ours.requests[-1]))
    for harness_text in ("is disabled", "Unknown tool", "Budget exhausted", "Turn: 6", "Please use the available"):
        assert harness_text in texts  # the script met each of the harness's texts
    sample = log.samples[0]
    ended = sample.metadata["agenthop"]
    for key in ("termination", "answer", "points_used", "turns", "tokens", "prompt_tokens", "completion_tokens"):
        assert ended[key] == getattr(trajectory, key), key
    score = sample.scores["agenthop_score"]
    assert score.value == ("C" if trajectory.correct else "I")
    assert score.metadata["points"] == BUDGET and score.metadata["turns"] == trajectory.turns
