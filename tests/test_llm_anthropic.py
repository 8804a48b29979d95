"""Claude models through litellm's Anthropic route, against a real Messages-API server on 127.0.0.1.

What matters is the request body litellm actually sends: extended thinking as the reference
sets it (docs/agents.md), signed thinking blocks replayed with their tool calls, prompt-cache
markers where the reference puts them, and top_k where each provider takes it.
"""

import pytest

from sandbox.agents.base import RefusedRequest
from sandbox.agents.limits import RateLimiter
from sandbox.agents.llm import ConfigError, LLMAgent, LLMConfig
from sandbox.episode import Episode, RetryPolicy
from sandbox.prompts import build_prompt
from sandbox.records import Caps
from tests.cli_inprocess import batch
from tests.conftest import G, S
from tests.openai_server import FakeOpenAI, anthropic_error, anthropic_reply, error_reply, tool_use

FAST = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0)
SUBMIT = anthropic_reply(tool_use("toolu_9", "submit_answer", {"answer": "B", "reasoning": "r"}))
EPHEMERAL = {"type": "ephemeral"}


def script(*replies):
    return lambda req, n: replies[n] if n < len(replies) else SUBMIT


async def claude(corpus, brain, model="anthropic/claude-haiku-4-5", **cfg):
    item = corpus.item("st_0001")
    caps = Caps()
    with FakeOpenAI(brain) as srv:
        agent = LLMAgent(
            LLMConfig(model=model, base_url=srv.root, api_key_env="TEST_ANTHROPIC_KEY", **cfg), RateLimiter(), None
        )
        ep = Episode(corpus.view(item), agent, caps, build_prompt(item, caps), retry=FAST, sleep=_no_sleep)
        traj = await ep.run()
    return traj, srv


async def _no_sleep(seconds):
    return None


THINKING_8192 = {"type": "enabled", "budget_tokens": 8192}


@pytest.mark.parametrize(
    "model",
    [
        "claude-sonnet-4-5",
        "claude-sonnet-4",
        "claude-opus-4",
        "claude-opus-4-1",
        "claude-opus-4-5",
        "claude-sonnet-4-6",
        "claude-opus-4-6",
    ],
)
async def test_default_thinking_presets_reach_the_server_as_the_reference_sends_them(mini_corpus, model, monkeypatch):
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test")
    traj, srv = await claude(mini_corpus, script(SUBMIT), model=f"anthropic/{model}")
    assert traj.termination == "answer" and len(srv.requests) == 1
    body = srv.requests[0]
    assert srv.paths[0] == "/v1/messages"
    assert body["thinking"] == THINKING_8192 and body["temperature"] == 1.0
    assert "top_p" not in body and "top_k" not in body and "output_config" not in body


@pytest.mark.parametrize("effort,budget", [("low", 4096), ("medium", 8192), ("high", 16384), ("12000", 12000)])
async def test_reasoning_effort_becomes_a_thinking_budget(mini_corpus, monkeypatch, effort, budget):
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test")
    _traj, srv = await claude(
        mini_corpus, script(SUBMIT), reasoning_effort=effort, max_tokens=32000, temperature=0.2, top_p=0.5, top_k=7
    )
    body = srv.requests[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": budget} and body["max_tokens"] == 32000
    assert body["temperature"] == 1.0 and "top_p" not in body and "top_k" not in body


def test_a_thinking_budget_at_or_over_max_tokens_is_refused_before_the_run(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with pytest.raises(ConfigError, match="below --max-tokens"):
        LLMConfig(model="anthropic/claude-sonnet-4-5", reasoning_effort="high").check()  # 16384 == default max
    with pytest.raises(ConfigError, match="low, medium, high or a number"):
        LLMConfig(model="anthropic/claude-sonnet-4-5", reasoning_effort="minimal").check()


def test_cli_refuses_a_thinking_budget_the_api_would_refuse(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    proc = batch(
        capsys,
        "run",
        "--agent",
        "llm",
        "--model",
        "anthropic/claude-sonnet-4-5",
        "--reasoning-effort",
        "high",
        "--db",
        str(tmp_path / "s.sqlite"),
    )
    assert proc.returncode == 2 and "raise --max-tokens" in proc.stderr and not (tmp_path / "s.sqlite").exists()


async def test_without_thinking_sampling_and_top_k_go_as_anthropic_parameters(mini_corpus, monkeypatch):
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test")
    _traj, srv = await claude(mini_corpus, script(SUBMIT), temperature=0.5, top_k=10)
    body = srv.requests[0]
    assert body["top_k"] == 10 and body["temperature"] == 0.5
    assert "thinking" not in body and "extra_body" not in body


async def test_thinking_blocks_are_replayed_with_their_tool_calls(mini_corpus, monkeypatch):
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test")
    thinking = {"type": "thinking", "thinking": "I should look at the references.", "signature": "SIG-abc123"}
    traj, srv = await claude(
        mini_corpus,
        script(anthropic_reply(thinking, tool_use("toolu_1", "get_references", {"paper_id": S}))),
        model="anthropic/claude-sonnet-4-5",
    )
    assert traj.termination == "answer"
    assistant = srv.requests[1]["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"] == [
        thinking,
        {"type": "tool_use", "id": "toolu_1", "name": "get_references", "input": {"paper_id": S}},
    ]


async def test_prompt_cache_markers_follow_the_reference(mini_corpus, monkeypatch):
    """System + last tool always; one tool-result marker, on the last result of the latest read_section turn."""
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test")
    read = lambda i, sec: tool_use(f"toolu_r{i}", "read_section", {"paper_id": G, "section": sec})  # noqa: E731
    think = lambda i: tool_use(f"toolu_t{i}", "think", {"reasoning": "x"})  # noqa: E731
    traj, srv = await claude(
        mini_corpus,
        script(
            anthropic_reply(
                tool_use("toolu_a", "get_references", {"paper_id": S}),
                tool_use("toolu_b", "list_sections", {"paper_id": G}),
            ),
            anthropic_reply(read(1, "A"), think(1)),
            anthropic_reply(think(2)),
            anthropic_reply(read(2, "B"), think(3)),
        ),
    )
    assert traj.termination == "answer" and len(srv.requests) == 5
    for body in srv.requests:
        assert body["system"][0]["cache_control"] == EPHEMERAL
        assert [t.get("cache_control") for t in body["tools"]] == [None] * 6 + [EPHEMERAL]

    def marked(body):
        return [
            block["tool_use_id"]
            for m in body["messages"]
            if isinstance(m["content"], list)
            for block in m["content"]
            if block.get("type") == "tool_result" and block.get("cache_control")
        ]

    assert [marked(b) for b in srv.requests] == [[], [], ["toolu_t1"], ["toolu_t1"], ["toolu_t3"]]


async def test_no_cache_markers_for_other_providers(mini_corpus):
    from tests.openai_server import tool_reply

    item = mini_corpus.item("st_0001")
    with FakeOpenAI(lambda req, n: tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}))) as srv:
        agent = LLMAgent(LLMConfig(model="openai/test-model", base_url=srv.url), RateLimiter(), None)
        await Episode(mini_corpus.view(item), agent, Caps(), build_prompt(item, Caps()), retry=FAST).run()
    assert "cache_control" not in str(srv.requests[0])


async def test_cached_prompt_tokens_are_counted_as_the_reference(mini_corpus, monkeypatch):
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test")
    traj, _ = await claude(
        mini_corpus,
        script(
            anthropic_reply(
                tool_use("toolu_1", "think", {"reasoning": "x"}),
                input_tokens=300,
                output_tokens=40,
                cache_read=5000,
                cache_creation=1200,
            )
        ),
    )
    # turn 1: 300 fresh + 1200 written + 40 out; turn 2 (SUBMIT): 100 + 20
    assert (traj.prompt_tokens, traj.cache_read_tokens, traj.cache_creation_tokens) == (400, 5000, 1200)
    assert traj.tokens == 300 + 40 + 1200 + 100 + 20


async def test_anthropic_errors_are_classified_by_status(mini_corpus, monkeypatch):
    monkeypatch.setenv("TEST_ANTHROPIC_KEY", "sk-ant-test")
    traj, _srv = await claude(
        mini_corpus,
        script(
            anthropic_error(529, "Overloaded", "overloaded_error"),
            anthropic_error(429, "slow down", "rate_limit_error", {"retry-after": "0"}),
            anthropic_error(400, "rate limit 500: Request too large", "invalid_request_error"),
        ),
    )
    assert traj.termination == "error" and traj.error_kind == "refused" and traj.transient_retries == 2
    assert traj.api_errors == 1 and traj.error == "HTTP 400: rate limit 500: Request too large"


@pytest.mark.parametrize(
    "model,expected",
    [
        ("openai/test-model", lambda body: body["top_k"] == 10 and "extra_body" not in body),
        ("hosted_vllm/test-model", lambda body: body["top_k"] == 10 and "extra_body" not in body),
        ("gemini/gemini-2.5-flash", lambda body: body["generationConfig"]["top_k"] == 10 and "top_k" not in body),
    ],
)
async def test_top_k_goes_where_each_provider_reads_it(model, expected):
    with FakeOpenAI(lambda req, n: error_reply(400)) as srv:
        agent = LLMAgent(
            LLMConfig(model=model, base_url=srv.url, api_key_env="NO_SUCH_KEY_VAR", top_k=10), RateLimiter(), None
        )
        with pytest.raises(RefusedRequest):  # the server answers 400: the request itself is refused
            await agent.act([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}], ())
    assert expected(srv.requests[0]), srv.requests[0]
