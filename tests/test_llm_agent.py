"""The LLM agent through litellm against a real OpenAI-compatible server on 127.0.0.1: calls, text mode, faults."""
import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from sandbox.agents.limits import RateLimiter
from sandbox.agents.llm import LLMAgent, LLMConfig
from sandbox.episode import Episode, RetryPolicy
from sandbox.prompts import build_prompt
from sandbox.records import Caps
from sandbox.runner import Runner, RunSpec
from storage import Store
from tests.conftest import G, S
from tests.openai_server import FakeOpenAI, Reply, error_reply, raw_reply, seed_of, text_reply, tool_reply, turn_of

FAST = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0)


def script(*replies):
    """A brain that plays `replies` in order, then submits."""
    def brain(req, n):
        return replies[n] if n < len(replies) else tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}))
    return brain


async def episode(corpus, brain, caps=Caps(), text_tools=False, sleeps=None, **cfg):
    item = corpus.item("st_0001")
    with FakeOpenAI(brain) as srv:
        config = LLMConfig(model="openai/test-model", base_url=srv.url, text_tools=text_tools, **cfg)
        agent = LLMAgent(config, RateLimiter(), None)

        async def sleep(s):
            if sleeps is not None:
                sleeps.append(s)

        ep = Episode(corpus.view(item), agent, caps, build_prompt(item, caps, text_tools=text_tools), retry=FAST,
                     sleep=sleep)
        traj = await ep.run()
    return traj, ep, srv


async def test_native_tool_calls_and_history(mini_corpus):
    traj, ep, srv = await episode(mini_corpus, script(
        tool_reply(("get_references", {"paper_id": S}), ("list_sections", {"paper_id": G}), prompt_tokens=1500),
        tool_reply(("read_section", {"paper_id": G, "section": "B"}))))
    assert traj.termination == "answer" and traj.correct and traj.points_used == 7
    first = srv.requests[0]
    assert [t["function"]["name"] for t in first["tools"]] == [
        "get_paper_info", "get_references", "search_papers", "list_sections", "read_section", "think", "submit_answer"]
    assert first["messages"][0]["role"] == "system" and "## Seed Paper" in first["messages"][0]["content"]
    second = srv.requests[1]["messages"]
    assert second[2]["role"] == "assistant" and len(second[2]["tool_calls"]) == 2
    assert [m["role"] for m in second[3:]] == ["tool", "tool"]
    assert second[3]["tool_call_id"] == "call_0"
    assert second[3]["content"].endswith("\nTurn: 1  |  Tokens used: 1,520  |  Budget used: 2")
    assert second[4]["content"].endswith("\nTurn: 1  |  Tokens used: 1,520  |  Budget used: 2")
    assert traj.prompt_tokens == 1500 + 100 + 100 and traj.completion_tokens == 60


async def test_cached_tokens_are_outside_the_cap(mini_corpus):
    traj, _, _ = await episode(mini_corpus, script(tool_reply(("think", {"reasoning": "x"}), prompt_tokens=1000,
                                                              cached=800)))
    assert traj.cache_read_tokens == 800 and traj.prompt_tokens == 200 + 100


async def test_text_tools_mode(mini_corpus):
    traj, ep, srv = await episode(mini_corpus, script(
        text_reply('<tool_call>{"name": "get_paper_info", "arguments": {"paper_id": "%s"}}</tool_call>' % S),
        text_reply('<tool_call>{"name": "submit_answer", "arguments": {"answer": "B", "reasoning": "r"}}</tool_call>')),
        text_tools=True)
    assert traj.termination == "answer" and traj.correct
    assert "tools" not in srv.requests[0]
    assert "## How to Call Tools" in srv.requests[0]["messages"][0]["content"]
    last = srv.requests[1]["messages"][-1]
    assert last["role"] == "user" and last["content"].startswith('<tool_result name="get_paper_info">\nTitle: Seed')


async def test_text_fallback_on_native_endpoint(mini_corpus):
    traj, ep, srv = await episode(mini_corpus, script(text_reply('I will submit.\nsubmit_answer(answer="B", reasoning="r")')))
    assert traj.termination == "answer" and traj.answer == "B" and traj.turns == 1


async def test_reasoning_is_merged_into_the_logged_text(mini_corpus):
    traj, ep, srv = await episode(mini_corpus, script(text_reply("Let me look.", reasoning="hmm [thinking]")))
    assert ep.steps[0].text == "[thinking] hmm [thinking]\n[answer] Let me look."
    assert srv.requests[1]["messages"][2].get("reasoning_content") == "hmm [thinking]"


async def test_malformed_arguments_are_charged_errors(mini_corpus):
    traj, ep, srv = await episode(mini_corpus, script(tool_reply(("read_section", '{"paper_id": "x", '))))
    tool = [s for s in ep.steps if s.kind == "tool"][0]
    assert tool.text == "Error calling read_section: Missing or invalid parameter — 'paper_id'" and tool.cost == 5
    assert traj.tool_errors == 1


async def test_unknown_tool_and_wrong_types(mini_corpus):
    traj, ep, _ = await episode(mini_corpus, script(tool_reply(("keyword_search", {"query": "x"}),
                                                               ("search_papers", {"query": 7}))))
    texts = [s.text for s in ep.steps if s.kind == "tool"][:2]
    assert texts[0] == "Unknown tool: keyword_search" and texts[1].startswith("Error calling search_papers:")


async def test_429_honours_retry_after_and_is_not_a_turn(mini_corpus):
    sleeps = []
    traj, ep, srv = await episode(mini_corpus, script(error_reply(429, {"Retry-After": "7"}), error_reply(503),
                                                      Reply(close=True)), sleeps=sleeps)
    assert traj.termination == "answer" and traj.turns == 1 and traj.transient_retries == 3
    assert sleeps[0] == 7.0
    assert [s.kind for s in ep.steps][:3] == ["retry", "retry", "retry"]


async def test_persistent_5xx_ends_as_error(mini_corpus):
    traj, ep, srv = await episode(mini_corpus, lambda req, n: error_reply(500))
    assert traj.termination == "error" and traj.error_kind == "transient_exhausted" and len(srv.requests) == 11


async def test_bad_requests_consume_turns_then_error(mini_corpus):
    traj, ep, srv = await episode(mini_corpus, lambda req, n: error_reply(400, message="bad"))
    assert traj.termination == "error" and traj.error_kind == "api_errors" and traj.api_errors == 5
    assert traj.turns == 5 and len(srv.requests) == 5


async def test_auth_failure_is_infrastructure(mini_corpus):
    traj, _, _ = await episode(mini_corpus, lambda req, n: error_reply(401))
    assert traj.termination == "error" and traj.error_kind == "infra"


async def test_unreadable_and_empty_replies(mini_corpus):
    traj, _, _ = await episode(mini_corpus, script(raw_reply("this is not json"), raw_reply("{}")))
    assert traj.termination == "answer"  # both answered as errors of their turn, then the script submits
    traj, _, _ = await episode(mini_corpus, script(text_reply("")))
    assert traj.termination == "error" and traj.error_kind == "empty_response"


async def test_token_cap_discards_the_crossing_submit(mini_corpus):
    traj, ep, _ = await episode(mini_corpus, script(
        tool_reply(("think", {"reasoning": "x"}), prompt_tokens=900),
        tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}), prompt_tokens=200)),
        caps=Caps(max_tokens_total=1000))
    assert traj.termination == "token_limit" and not traj.correct and traj.answer is None


async def test_budget_rejections_through_the_model(mini_corpus):
    read = ("read_section", {"paper_id": G, "section": "A"})
    traj, ep, srv = await episode(mini_corpus, script(tool_reply(*[read] * 5), tool_reply(read, read)),
                                  caps=Caps(budget=25))
    assert traj.termination == "budget" and traj.points_used == 25
    assert srv.requests[1]["messages"][-1] == {"role": "user", "content":
                                               "Budget exhausted. You MUST call submit_answer now with your best guess."}


def test_sampling_presets_and_overrides():
    cfg = LLMConfig(model="together_ai/qwen/qwen3-32b")
    assert cfg.sampling() == {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "max_tokens": 16384}
    cfg = LLMConfig(model="openai/gpt-5.4", base_url="http://x", temperature=0.3)
    req = LLMAgent(cfg, RateLimiter(), None).request([{"role": "user", "content": "hi"}], ())
    assert "temperature" not in req and req["max_completion_tokens"] == 16384 and req["reasoning_effort"] == "medium"


def run_spec(url, name, **kw):
    return RunSpec(name=name, dataset="t", agent="llm", model="openai/test-model", workers=4, retry=FAST,
                   attempt_backoff_s=0, agent_options={"base_url": url}, **kw)


def test_sample_level_retry_keeps_every_attempt(demo_corpus, tmp_path):
    with FakeOpenAI(lambda req, n: error_reply(401)) as srv:
        store = Store(tmp_path / "s.sqlite")
        asyncio.run(Runner(run_spec(srv.url, "auth", limit=2), demo_corpus, store).run())
    run_id = store.run("auth")["id"]
    rows = store.trajectories(run_id, final_only=False)
    assert len(rows) == 6 and sorted(r["attempt"] for r in rows) == [0, 0, 1, 1, 2, 2]
    assert sum(r["final"] for r in rows) == 2 and all(r["termination"] == "error" for r in rows)


def test_fault_stream_leaves_every_trajectory_defined(demo_corpus, tmp_path):
    faults = [error_reply(429, {"Retry-After": "0"}), error_reply(500), Reply(close=True), error_reply(400),
              raw_reply("garbage"), text_reply(""), text_reply("no tools here")]

    def brain(req, n):
        if n % 3 == 0:
            return faults[(n // 3) % len(faults)]
        t = turn_of(req)
        return tool_reply(("get_references", {"paper_id": seed_of(req)})) if t == 0 else tool_reply(
            ("submit_answer", {"answer": "A", "reasoning": "r"}))

    with FakeOpenAI(brain) as srv:
        store = Store(tmp_path / "s.sqlite")
        asyncio.run(Runner(run_spec(srv.url, "faults", limit=30), demo_corpus, store).run())
    rows = store.trajectories(store.run("faults")["id"])
    assert len(rows) == 30 and len({r["item_id"] for r in rows}) == 30
    assert {r["termination"] for r in rows} <= {"answer", "error", "max_turns"}
    assert store.conn.execute("SELECT COUNT(*) FROM trajectories WHERE status != 'done'").fetchone()[0] == 0


def test_run_token_limit_stops_cleanly(demo_corpus, tmp_path):
    brain = lambda req, n: tool_reply(("think", {"reasoning": "x"}), prompt_tokens=5000)  # noqa: E731
    with FakeOpenAI(brain) as srv:
        store = Store(tmp_path / "s.sqlite")
        result = asyncio.run(Runner(run_spec(srv.url, "cap", limit=40, max_run_tokens=60_000,
                                             caps=Caps(max_turns=3)), demo_corpus, store).run())
    assert result["status"] == "interrupted" and "run token limit" in result["stop_reason"]
    assert 4 <= result["done"] < 40  # episodes in flight finish, no new ones start
    assert store.run("cap")["status"] == "interrupted"


def test_cli_llm_run_keeps_the_key_out_of_store_and_output(tmp_path):
    secret = "sk-test-SECRET-0123456789abcdef"
    brain = lambda req, n: tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}))  # noqa: E731
    db = tmp_path / "s.sqlite"
    with FakeOpenAI(brain) as srv:
        env = dict(os.environ, MY_KEY=secret)
        proc = subprocess.run([sys.executable, "-m", "workbench.cli", "--batch", "run", "--agent", "llm", "--model",
                               "openai/test-model", "--base-url", srv.url, "--api-key-env", "MY_KEY", "--limit", "3",
                               "--run", "llm1", "--db", str(db), "--format", "json"], env=env, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr
        auth = {k.lower(): v for k, v in srv.headers[0].items()}["authorization"]
        assert auth == f"Bearer {secret}"  # the key did reach the provider
        export = subprocess.run([sys.executable, "-m", "workbench.cli", "--batch", "report", "llm1", "--db", str(db),
                                 "--format", "json"], env=env, capture_output=True, text=True)
    report = json.loads(proc.stdout)
    assert report["n"] == 3 and report["model"] == "openai/test-model"
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite*"))
    for text in (proc.stdout, proc.stderr, export.stdout, export.stderr):
        assert secret not in text
    assert secret.encode() not in blob
    assert b"MY_KEY" in blob  # the variable's name is recorded, so a resume knows where to look


def test_missing_key_is_a_usage_error(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    proc = subprocess.run([sys.executable, "-m", "workbench.cli", "--batch", "run", "--agent", "llm", "--model",
                           "openai/gpt-4.1", "--db", str(tmp_path / "s.sqlite")], env=env, capture_output=True, text=True)
    assert proc.returncode == 2 and "OPENAI_API_KEY" in proc.stderr and not (tmp_path / "s.sqlite").exists()


def test_dry_run_prices_known_models_and_says_unpriced(tmp_path):
    base = [sys.executable, "-m", "workbench.cli", "--batch", "run", "--agent", "llm", "--dry-run", "--limit", "10",
            "--db", str(tmp_path / "s.sqlite"), "--format", "json"]
    known = json.loads(subprocess.run(base + ["--model", "openai/gpt-4.1"], capture_output=True, text=True).stdout)
    assert known["episodes"] == 10 and known["cost_usd"] == pytest.approx(10 * (85500 * 2 + 4500 * 8) / 1e6, rel=1e-3)
    unknown = json.loads(subprocess.run(base + ["--model", "hosted_vllm/my-model"], capture_output=True, text=True).stdout)
    assert unknown["cost_usd"] is None and unknown["price"] is None
    assert not (tmp_path / "s.sqlite").exists()


def test_ctrl_c_stops_within_seconds_and_resumes(tmp_path):
    slow = lambda req, n: Reply(body=tool_reply(("think", {"reasoning": "x"})).body, delay_s=30)  # noqa: E731
    db = tmp_path / "s.sqlite"
    with FakeOpenAI(slow) as srv:
        proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", "--batch", "run", "--agent", "llm", "--model",
                                 "openai/m", "--base-url", srv.url, "--limit", "4", "--run", "c", "--db", str(db),
                                 "--quiet"], stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(srv.requests) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=20)[1]
        stopped_in = time.monotonic() - t0
    assert proc.returncode == 130 and "resume" in err and stopped_in < 10
    store = Store(db)
    assert store.run("c")["status"] == "interrupted"
    assert store.conn.execute("SELECT COUNT(*) FROM trajectories WHERE status = 'done'").fetchone()[0] == 0
