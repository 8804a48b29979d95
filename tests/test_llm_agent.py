"""The LLM agent through litellm against a real OpenAI-compatible server on 127.0.0.1: calls, text mode, faults."""

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys

import pytest

from sandbox.agents.limits import RateLimiter
from sandbox.agents.llm import LLMAgent, LLMConfig
from sandbox.episode import Episode, RetryPolicy
from sandbox.prompts import build_prompt, caps_for_ablation
from sandbox.records import Caps
from sandbox.runner import Runner, RunSpec
from storage import Store
from tests.cli_inprocess import batch
from tests.conftest import G, S
from tests.openai_server import FakeOpenAI, Reply, error_reply, raw_reply, seed_of, text_reply, tool_reply, turn_of

FAST = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0)
DEFAULT_CAPS = Caps()


def script(*replies):
    """A brain that plays `replies` in order, then submits."""

    def brain(req, n):
        return replies[n] if n < len(replies) else tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}))

    return brain


async def episode(corpus, brain, caps=DEFAULT_CAPS, text_tools=False, sleeps=None, ablation="full", **cfg):
    item = corpus.item("st_0001")
    caps = caps_for_ablation(caps, ablation)
    with FakeOpenAI(brain) as srv:
        config = LLMConfig(model="openai/test-model", base_url=srv.url, text_tools=text_tools, **cfg)
        agent = LLMAgent(config, RateLimiter(), None)

        async def sleep(s):
            if sleeps is not None:
                sleeps.append(s)

        ep = Episode(
            corpus.view(item),
            agent,
            caps,
            build_prompt(item, caps, ablation, text_tools=text_tools),
            retry=FAST,
            sleep=sleep,
        )
        traj = await ep.run()
    return traj, ep, srv


async def test_native_tool_calls_and_history(mini_corpus):
    traj, _ep, srv = await episode(
        mini_corpus,
        script(
            tool_reply(("get_references", {"paper_id": S}), ("list_sections", {"paper_id": G}), prompt_tokens=1500),
            tool_reply(("read_section", {"paper_id": G, "section": "B"})),
        ),
    )
    assert traj.termination == "answer" and traj.correct and traj.points_used == 7
    first = srv.requests[0]
    assert [t["function"]["name"] for t in first["tools"]] == [
        "get_paper_info",
        "get_references",
        "search_papers",
        "list_sections",
        "read_section",
        "think",
        "submit_answer",
    ]
    assert first["messages"][0]["role"] == "system" and "## Seed Paper" in first["messages"][0]["content"]
    second = srv.requests[1]["messages"]
    assert second[2]["role"] == "assistant" and len(second[2]["tool_calls"]) == 2
    assert [m["role"] for m in second[3:]] == ["tool", "tool"]
    assert second[3]["tool_call_id"] == "call_0"
    assert second[3]["content"].endswith("\nTurn: 1  |  Tokens used: 1,520  |  Budget used: 2")
    assert second[4]["content"].endswith("\nTurn: 1  |  Tokens used: 1,520  |  Budget used: 2")
    assert traj.prompt_tokens == 1500 + 100 + 100 and traj.completion_tokens == 60


async def test_cached_tokens_are_outside_the_cap(mini_corpus):
    traj, _, _ = await episode(
        mini_corpus, script(tool_reply(("think", {"reasoning": "x"}), prompt_tokens=1000, cached=800))
    )
    assert traj.cache_read_tokens == 800 and traj.prompt_tokens == 200 + 100


async def test_text_tools_mode(mini_corpus):
    traj, _ep, srv = await episode(
        mini_corpus,
        script(
            text_reply(f'<tool_call>{{"name": "get_paper_info", "arguments": {{"paper_id": "{S}"}}}}</tool_call>'),
            text_reply(
                '<tool_call>{"name": "submit_answer", "arguments": {"answer": "B", "reasoning": "r"}}</tool_call>'
            ),
        ),
        text_tools=True,
    )
    assert traj.termination == "answer" and traj.correct
    assert "tools" not in srv.requests[0]
    assert "## How to Call Tools" in srv.requests[0]["messages"][0]["content"]
    last = srv.requests[1]["messages"][-1]
    assert last["role"] == "user" and last["content"].startswith('<tool_result name="get_paper_info">\nTitle: Seed')


CLOSED_BOOK_LINES = (
    "Select exactly one option (A, B, C, or D) and submit using submit_answer.",
    "You MUST call submit_answer with your best guess.",
)


async def test_closed_book_offers_only_submit_answer(mini_corpus):
    traj, ep, srv = await episode(
        mini_corpus, script(tool_reply(("think", {"reasoning": "hmm"}))), ablation="closed-book"
    )
    first = srv.requests[0]
    assert [t["function"]["name"] for t in first["tools"]] == ["submit_answer"]
    system = first["messages"][0]["content"]
    assert system.endswith("\n\n".join(CLOSED_BOOK_LINES)) and "own knowledge" in system
    assert "## Tools" not in system and "## Constraints" not in system and "## How to Call Tools" not in system
    assert first["messages"][1]["content"].startswith("Please answer the question based on your knowledge.")
    rejected = next(s for s in ep.steps if s.kind == "tool")
    assert rejected.status == "disabled" and rejected.cost == 0
    assert traj.termination == "answer" and traj.answer == "B"


async def test_closed_book_in_text_mode_says_how_to_submit(mini_corpus):
    traj, _ep, srv = await episode(
        mini_corpus,
        script(
            text_reply(
                '<tool_call>{"name": "submit_answer", "arguments": {"answer": "B", "reasoning": "r"}}</tool_call>'
            )
        ),
        text_tools=True,
        ablation="closed-book",
    )
    first = srv.requests[0]
    system = first["messages"][0]["content"]
    assert "tools" not in first and "## How to Call Tools" in system and "<tool_call>" in system
    assert system.endswith("\n\n".join(CLOSED_BOOK_LINES)) and "## Tools\n" not in system
    assert traj.termination == "answer" and traj.correct


async def test_text_fallback_on_native_endpoint(mini_corpus):
    traj, _ep, _srv = await episode(
        mini_corpus, script(text_reply('I will submit.\nsubmit_answer(answer="B", reasoning="r")'))
    )
    assert traj.termination == "answer" and traj.answer == "B" and traj.turns == 1


async def test_reasoning_is_merged_into_the_logged_text(mini_corpus):
    _traj, ep, srv = await episode(mini_corpus, script(text_reply("Let me look.", reasoning="hmm [thinking]")))
    assert ep.steps[0].text == "[thinking] hmm [thinking]\n[answer] Let me look."
    assert srv.requests[1]["messages"][2].get("reasoning_content") == "hmm [thinking]"


async def test_malformed_arguments_are_charged_errors(mini_corpus):
    traj, ep, _srv = await episode(mini_corpus, script(tool_reply(("read_section", '{"paper_id": "x", '))))
    tool = next(s for s in ep.steps if s.kind == "tool")
    assert tool.text == "Error calling read_section: Missing or invalid parameter — 'paper_id'" and tool.cost == 5
    assert traj.tool_errors == 1


async def test_unknown_tool_and_wrong_types(mini_corpus):
    _traj, ep, _ = await episode(
        mini_corpus, script(tool_reply(("keyword_search", {"query": "x"}), ("search_papers", {"query": 7})))
    )
    texts = [s.text for s in ep.steps if s.kind == "tool"][:2]
    assert texts[0] == "Unknown tool: keyword_search" and texts[1].startswith("Error calling search_papers:")


async def test_429_honours_retry_after_and_is_not_a_turn(mini_corpus):
    sleeps = []
    traj, ep, _srv = await episode(
        mini_corpus, script(error_reply(429, {"Retry-After": "7"}), error_reply(503), Reply(close=True)), sleeps=sleeps
    )
    assert traj.termination == "answer" and traj.turns == 1 and traj.transient_retries == 3
    assert sleeps[0] == 7.0
    assert [s.kind for s in ep.steps][:3] == ["retry", "retry", "retry"]


async def test_persistent_5xx_ends_as_error(mini_corpus):
    traj, _ep, srv = await episode(mini_corpus, lambda req, n: error_reply(500))
    assert traj.termination == "error" and traj.error_kind == "transient_exhausted" and len(srv.requests) == 11


async def test_unreadable_replies_consume_turns_then_error(mini_corpus):
    """A reply without choices may differ next time: it counts as a turn, and five in a row end the episode."""
    traj, _ep, srv = await episode(mini_corpus, lambda req, n: raw_reply('{"object": "chat.completion"}'))
    assert traj.termination == "error" and traj.error_kind == "api_errors" and traj.api_errors == 5
    assert traj.turns == 5 and len(srv.requests) == 5


@pytest.mark.parametrize("status", [400, 413, 422])
async def test_a_refused_request_ends_the_episode_at_once(mini_corpus, status):
    """The same request would be refused again: sent once, never re-sent, the episode ends `error` with the
    server's own message (and the runner does not retry the sample either: `refused` is not retryable)."""
    from sandbox.runner.runner import RETRYABLE

    traj, ep, srv = await episode(mini_corpus, lambda req, n: error_reply(status, message="bad field 'x'"))
    assert traj.termination == "error" and traj.error_kind == "refused" and traj.error_kind not in RETRYABLE
    assert len(srv.requests) == 1 and traj.api_errors == 1 and traj.transient_retries == 0
    assert traj.error == f"HTTP {status}: bad field 'x'"
    assert [s.kind for s in ep.steps] == ["error"] and "bad field 'x'" in ep.steps[0].text


LLAMA_CPP_OVERFLOW = {
    "code": 400,
    "message": "the request exceeds the available context size, try increasing it",
    "type": "exceed_context_size_error",
    "n_prompt_tokens": 4133,
    "n_ctx": 4096,
}


@pytest.mark.parametrize("client", ["native", "litellm"])
async def test_a_full_context_window_is_named_with_its_turn(mini_corpus, client):
    """llama.cpp's 400 on a conversation longer than its context: two turns go through, the third is refused once."""

    def brain(req, n):
        if turn_of(req) < 2:
            return tool_reply(("think", {"reasoning": "x" * 10}))
        return Reply(status=400, body={"error": LLAMA_CPP_OVERFLOW})

    traj, ep, srv = await episode(mini_corpus, brain, client=client)
    assert len(srv.requests) == 3 and traj.termination == "error" and traj.error_kind == "context_overflow"
    assert traj.error == (
        "context window full at turn 3: HTTP 400: the request exceeds the available context size, try increasing it"
    )
    assert (
        traj.api_errors == 1 and ep.steps[-1].kind == "error" and "context window full at turn 3" in ep.steps[-1].text
    )


@pytest.mark.parametrize(
    "body",
    [
        {
            "message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
            "type": "BadRequestError",
            "code": 400,
        },
        {"message": "too long", "type": "invalid_request_error", "code": "context_length_exceeded"},
    ],
)
async def test_overflow_is_recognised_by_code_or_by_vllm_words(mini_corpus, body):
    traj, _ep, _srv = await episode(mini_corpus, lambda req, n: Reply(status=400, body={"error": body}))
    assert traj.error_kind == "context_overflow" and traj.error.startswith("context window full at turn 1: HTTP 400")


async def test_a_400_coded_as_a_rate_limit_stays_transient(mini_corpus):
    traj, _ep, _srv = await episode(
        mini_corpus, script(error_reply(400, message="slow down", code="rate_limit_exceeded"))
    )
    assert traj.termination == "answer" and traj.transient_retries == 1 and traj.api_errors == 0


async def test_a_turn_cap_after_failed_turns_says_so(mini_corpus):
    """Unreadable replies until the turn cap: the trajectory ends at the cap, and says the last turns failed."""
    traj, ep, _srv = await episode(
        mini_corpus,
        script(tool_reply(("think", {"reasoning": "x"})), *[raw_reply('{"object": "x"}')] * 5),
        caps=Caps(max_turns=3),
    )
    assert traj.termination == "max_turns" and traj.error_kind == "api_errors_at_cap" and traj.api_errors == 2
    assert traj.error.startswith("the turn cap came after 2 failed model calls in a row")
    assert [s.kind for s in ep.steps[-2:]] == ["error", "error"]


LITELLM_TEXT_TRAPS = [
    "rate limit 500",
    "Request too large for model in organization",
    "A timeout occurred while validating the schema",
    "The server had an error processing your request. bad field",
    "Web server is returning an unknown error because your tool schema is invalid",
]


@pytest.mark.parametrize("message", LITELLM_TEXT_TRAPS)
async def test_a_400_is_not_transient_whatever_its_message_says(mini_corpus, message):
    """litellm turns these 400s into RateLimitError/Timeout/InternalServerError by their text; the status decides."""
    traj, _ep, srv = await episode(mini_corpus, lambda req, n: error_reply(400, message=message))
    assert traj.termination == "error" and traj.error_kind == "refused"
    assert traj.api_errors == 1 and traj.transient_retries == 0 and traj.turns == 1 and len(srv.requests) == 1


@pytest.mark.parametrize("status", [429, 500, 502, 503, 529])
async def test_genuine_rate_limits_and_server_errors_stay_transient(mini_corpus, status):
    traj, _ep, _srv = await episode(mini_corpus, script(error_reply(status, message="invalid request body")))
    assert traj.termination == "answer" and traj.transient_retries == 1 and traj.api_errors == 0 and traj.turns == 1


async def test_statuses_are_attributed_to_their_own_call_under_concurrency():
    """Twenty calls in flight at once, half answered 400 'rate limit' and half 503: each sees its own status."""
    from sandbox.agents.base import NonTransientModelError, TransientModelError

    def brain(req, n):
        mine = req["messages"][1]["content"]
        reply = error_reply(400, message="rate limit 500") if int(mine) % 2 else error_reply(503, message="bad")
        reply.delay_s = 0.05 * (int(mine) % 4)
        return reply

    with FakeOpenAI(brain) as srv:
        agent = LLMAgent(LLMConfig(model="openai/test-model", base_url=srv.url), RateLimiter(), None)

        async def one(i):
            try:
                await agent.act([{"role": "system", "content": "s"}, {"role": "user", "content": str(i)}], ())
            except Exception as exc:  # noqa: BLE001 - the classification is what is tested
                return i, type(exc)

        outcomes = await asyncio.gather(*(one(i) for i in range(20)))
    assert all(issubclass(kind, NonTransientModelError if i % 2 else TransientModelError) for i, kind in outcomes)
    assert not any(issubclass(kind, NonTransientModelError) for i, kind in outcomes if i % 2 == 0)


def test_retry_after_in_seconds_or_as_an_http_date():
    from sandbox.agents.wire import parse_retry_after

    assert parse_retry_after("7") == 7.0 and parse_retry_after("0.5") == 0.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: retry now
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


async def test_a_persistent_422_is_sent_once_and_reads_clearly(mini_corpus):
    traj, _ep, srv = await episode(mini_corpus, lambda req, n: error_reply(422, message="unprocessable"))
    assert traj.termination == "error" and traj.error_kind == "refused" and len(srv.requests) == 1
    assert "422" in traj.error or "Unprocessable" in traj.error
    assert "AttributeError" not in traj.error


async def test_a_response_without_choices_is_a_clear_api_error(mini_corpus):
    traj, ep, _srv = await episode(
        mini_corpus, script(raw_reply('{"id": "x", "object": "chat.completion", "choices": []}'))
    )
    assert traj.termination == "answer" and traj.api_errors == 1
    error = next(s.text for s in ep.steps if s.kind == "error")
    assert "AttributeError" not in error and "IndexError" not in error


async def test_auth_failure_is_infrastructure(mini_corpus):
    traj, _, _ = await episode(mini_corpus, lambda req, n: error_reply(401))
    assert traj.termination == "error" and traj.error_kind == "infra"


async def test_unreadable_and_empty_replies(mini_corpus):
    traj, _, _ = await episode(mini_corpus, script(raw_reply("this is not json"), raw_reply("{}")))
    assert traj.termination == "answer"  # both answered as errors of their turn, then the script submits
    traj, _, _ = await episode(mini_corpus, script(text_reply("")))
    assert traj.termination == "error" and traj.error_kind == "empty_response"


async def test_an_empty_reply_keeps_the_finish_reason_the_server_gave(mini_corpus):
    """The server said `stop` for an empty reply: the step that stands for it (the harness's note) stores `stop`,
    as every other reply's step stores what the server said."""
    traj, ep, _ = await episode(mini_corpus, script(text_reply("")))
    (note,) = [s for s in ep.steps if s.kind == "harness"]
    assert traj.error_kind == "empty_response" and note.text.startswith("[HARNESS] Empty response")
    assert note.finish_reason == "stop"


async def test_token_cap_discards_the_crossing_submit(mini_corpus):
    traj, _ep, _ = await episode(
        mini_corpus,
        script(
            tool_reply(("think", {"reasoning": "x"}), prompt_tokens=900),
            tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}), prompt_tokens=200),
        ),
        caps=Caps(max_tokens_total=1000),
    )
    assert traj.termination == "token_limit" and not traj.correct and traj.answer is None


async def test_budget_rejections_through_the_model(mini_corpus):
    read = ("read_section", {"paper_id": G, "section": "A"})
    traj, _ep, srv = await episode(
        mini_corpus, script(tool_reply(*[read] * 5), tool_reply(read, read)), caps=Caps(budget=25)
    )
    assert traj.termination == "budget" and traj.points_used == 25
    assert srv.requests[1]["messages"][-1] == {
        "role": "user",
        "content": "Budget exhausted. You MUST call submit_answer now with your best guess.",
    }


def test_sampling_presets_and_overrides():
    cfg = LLMConfig(model="together_ai/qwen/qwen3-32b")
    assert cfg.sampling() == {"temperature": 0.7, "top_p": 0.8, "top_k": 20, "max_tokens": 16384}
    cfg = LLMConfig(model="openai/gpt-5.4", base_url="http://x", temperature=0.3)
    req = LLMAgent(cfg, RateLimiter(), None).request([{"role": "user", "content": "hi"}], ())
    assert "temperature" not in req and req["max_completion_tokens"] == 16384 and req["reasoning_effort"] == "medium"


def run_spec(url, name, **kw):
    return RunSpec(
        name=name,
        dataset="t",
        agent="llm",
        model="openai/test-model",
        workers=4,
        retry=FAST,
        attempt_backoff_s=0,
        agent_options={"base_url": url},
        **kw,
    )


def test_sample_level_retry_keeps_every_attempt(demo_corpus, tmp_path):
    with FakeOpenAI(lambda req, n: error_reply(401)) as srv:
        store = Store(tmp_path / "s.sqlite")
        asyncio.run(Runner(run_spec(srv.url, "auth", limit=2), demo_corpus, store).run())
    run_id = store.run("auth")["id"]
    rows = store.trajectories(run_id, final_only=False)
    assert len(rows) == 6 and sorted(r["attempt"] for r in rows) == [0, 0, 1, 1, 2, 2]
    assert sum(r["final"] for r in rows) == 2 and all(r["termination"] == "error" for r in rows)


def test_fault_stream_leaves_every_trajectory_defined(demo_corpus, tmp_path):
    faults = [
        error_reply(429, {"Retry-After": "0"}),
        error_reply(500),
        Reply(close=True),
        error_reply(400),
        raw_reply("garbage"),
        text_reply(""),
        text_reply("no tools here"),
    ]

    def brain(req, n):
        if n % 3 == 0:
            return faults[(n // 3) % len(faults)]
        t = turn_of(req)
        return (
            tool_reply(("get_references", {"paper_id": seed_of(req)}))
            if t == 0
            else tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}))
        )

    with FakeOpenAI(brain) as srv:
        store = Store(tmp_path / "s.sqlite")
        asyncio.run(Runner(run_spec(srv.url, "faults", limit=30), demo_corpus, store).run())
    rows = store.trajectories(store.run("faults")["id"])
    assert len(rows) == 30 and len({r["item_id"] for r in rows}) == 30
    assert {r["termination"] for r in rows} <= {"answer", "error", "max_turns"}
    assert store.conn.execute("SELECT COUNT(*) FROM trajectories WHERE status != 'done'").fetchone()[0] == 0


def thinking_slowly(req, n):
    return Reply(body=tool_reply(("think", {"reasoning": "x"}), prompt_tokens=5000).body, delay_s=0.02)


def test_run_token_limit_cancels_episodes_in_flight_and_holds_across_resumes(demo_corpus, tmp_path):
    """Each call costs 5,020 tokens; the limit counts every stored attempt, finished or not, across sessions."""
    store = Store(tmp_path / "s.sqlite")
    capped = dict(limit=10, caps=Caps(max_turns=3))
    with FakeOpenAI(thinking_slowly) as srv:
        result = asyncio.run(
            Runner(run_spec(srv.url, "cap", max_run_tokens=30_000, **capped), demo_corpus, store).run()
        )
        assert result["status"] == "interrupted" and "run token limit" in result["stop_reason"]
        run_id = store.run("cap")["id"]
        tokens, _ = store.spent(run_id)
        assert 30_000 < tokens <= 30_000 + 5_020  # nothing is spent after the call that crossed it
        assert store.conn.execute("SELECT COUNT(*) FROM trajectories WHERE status != 'done'").fetchone()[0] > 0
    with FakeOpenAI(thinking_slowly) as moved:  # a new port: the base URL is how the model is reached, not the run
        again = asyncio.run(
            Runner(run_spec(moved.url, "cap", max_run_tokens=30_000, **capped), demo_corpus, store).run()
        )
        # a resume does not spend the limit again: this server, which only the resume talks to, got no call (the
        # first server may still be reading a call the first session cancelled as it stopped)
        assert again["status"] == "interrupted" and moved.requests == []
        more = asyncio.run(
            Runner(run_spec(moved.url, "cap", max_run_tokens=60_000, **capped), demo_corpus, store).run()
        )
        assert more["status"] == "interrupted" and 60_000 < store.spent(run_id)[0] <= 60_000 + 5_020
        done = asyncio.run(Runner(run_spec(moved.url, "cap", **capped), demo_corpus, store).run())
    assert done["status"] == "done" and done["done"] == 10
    assert store.conn.execute("SELECT COUNT(*) FROM trajectories WHERE status != 'done'").fetchone()[0] == 0
    assert store.run("cap")["config"]["base_urls"] == [srv.url, moved.url]


def test_run_cost_limit_stops_at_the_crossing_call(demo_corpus, tmp_path):
    pricing = [{"prefix": "test-model", "input_per_m": 1000.0, "output_per_m": 1000.0}]  # $5.02 per call
    store = Store(tmp_path / "s.sqlite")
    with FakeOpenAI(thinking_slowly) as srv:
        spec = run_spec(srv.url, "usd", limit=10, caps=Caps(max_turns=3), max_run_cost=12.0)
        spec.agent_options["pricing"] = pricing
        result = asyncio.run(Runner(spec, demo_corpus, store).run())
    assert result["status"] == "interrupted" and "run cost limit" in result["stop_reason"]
    assert 12.0 < store.spent(store.run("usd")["id"])[1] <= 12.0 + 5.02 + 1e-9


def test_the_limit_keeps_counting_the_calls_of_discarded_episodes(demo_corpus, tmp_path):
    """Episodes cut short by a limit are discarded on resume; what their calls cost stays counted after that
    resume too (it used to be forgotten by the second resume, letting a run spend past its limit)."""
    store = Store(tmp_path / "s.sqlite")
    capped = dict(limit=10, caps=Caps(max_turns=3))
    with FakeOpenAI(thinking_slowly) as srv:
        asyncio.run(Runner(run_spec(srv.url, "cap", max_run_tokens=30_000, **capped), demo_corpus, store).run())
        run_id = store.run("cap")["id"]
        spent = store.spent(run_id)
        for _ in range(2):  # the first resume discards the cut-short episodes, the second must still count them
            again = asyncio.run(
                Runner(run_spec(srv.url, "cap", max_run_tokens=30_000, **capped), demo_corpus, store).run()
            )
            assert again["limit"] == "tokens" and store.spent(run_id) == spent
        assert store.conn.execute("SELECT COUNT(*) FROM trajectories WHERE status != 'done'").fetchone()[0] == 0
        assert store.run("cap")["config"]["discarded"]["tokens"] > 0


def test_cli_run_stopped_by_a_limit_is_incomplete_exit_3_and_says_which_flag_to_raise(tmp_path):
    """In a fresh process: the last line of stderr is the run's own (litellm's state left by other tests in this
    process may print after it)."""
    db = tmp_path / "s.sqlite"
    with FakeOpenAI(thinking_slowly) as srv:
        cmd = [
            sys.executable,
            "-m",
            "workbench.cli",
            "--batch",
            "run",
            "--agent",
            "llm",
            "--model",
            "openai/test-model",
            "--base-url",
            srv.url,
            "--limit",
            "10",
            "--max-turns",
            "3",
            "--workers",
            "4",
            "--max-run-tokens",
            "30000",
            "--run",
            "lim",
            "--db",
            str(db),
            "--format",
            "json",
        ]
        env = dict(os.environ, OPENAI_API_KEY="x")
        first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert first.returncode == 3, first.stderr
        line = first.stderr.splitlines()[-1]
        spent = Store(db, readonly=True).spent(Store(db, readonly=True).run("lim")["id"])[0]
        done = json.loads(first.stdout)["n"]
        assert line == (
            f"stopped early: run token limit reached ({spent:,} tokens spent by every model call of the "
            "run, retried attempts and episodes cut short included; the limit is 30,000); the run is "
            f"incomplete ({done} of 10): raise --max-run-tokens and run the command again to continue"
        )
        sent = len(srv.requests)
        again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode == 3 and "raise --max-run-tokens" in again.stderr and len(srv.requests) == sent
        raised = subprocess.run(
            [*cmd, "--max-run-tokens", "10000000"], env=env, capture_output=True, text=True, timeout=300
        )  # the last --max-run-tokens counts
        assert raised.returncode == 0, raised.stderr
        assert json.loads(raised.stdout)["n"] == 10 and [r["name"] for r in Store(db, readonly=True).runs()] == ["lim"]


def test_a_cost_limit_needs_prices(demo_corpus, tmp_path, capsys):
    from sandbox.agents.llm import ConfigError

    with pytest.raises(ConfigError, match="needs prices"):
        Runner(run_spec("http://127.0.0.1:9/v1", "x", max_run_cost=1.0), demo_corpus, Store(tmp_path / "s.sqlite"))
    proc = batch(
        capsys,
        "run",
        "--agent",
        "llm",
        "--model",
        "openai/test-model",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--max-run-cost",
        "1",
        "--db",
        str(tmp_path / "c.sqlite"),
    )
    assert proc.returncode == 2 and "needs prices" in proc.stderr and "[[pricing]]" in proc.stderr
    assert not (tmp_path / "c.sqlite").exists()


def test_cli_llm_run_keeps_the_key_out_of_store_and_output(tmp_path, capfd, monkeypatch):
    """The key reaches the provider and no output, file descriptor level included (capfd), nor the store."""
    secret = "sk-test-SECRET-0123456789abcdef"
    brain = lambda req, n: tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}))  # noqa: E731
    db = tmp_path / "s.sqlite"
    with FakeOpenAI(brain) as srv:
        monkeypatch.setenv("MY_KEY", secret)
        proc = batch(
            capfd,
            "run",
            "--agent",
            "llm",
            "--model",
            "openai/test-model",
            "--base-url",
            srv.url,
            "--api-key-env",
            "MY_KEY",
            "--limit",
            "3",
            "--run",
            "llm1",
            "--db",
            str(db),
            "--format",
            "json",
        )
        assert proc.returncode == 0, proc.stderr
        auth = {k.lower(): v for k, v in srv.headers[0].items()}["authorization"]
        assert auth == f"Bearer {secret}"  # the key did reach the provider
        export = batch(capfd, "report", "llm1", "--db", str(db), "--format", "json")
    report = json.loads(proc.stdout)
    assert report["n"] == 3 and report["model"] == "openai/test-model"
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("s.sqlite*") if p.is_file())  # not the run locks
    for text in (proc.stdout, proc.stderr, export.stdout, export.stderr):
        assert secret not in text
    assert secret.encode() not in blob
    assert b"MY_KEY" in blob  # the variable's name is recorded, so a resume knows where to look


def test_quiet_cli_run_leaves_stderr_empty_and_reports_unpriced(tmp_path, monkeypatch):
    """No litellm warnings under --quiet; an LLM run without prices says `unpriced` in the report and the runs list."""
    from sandbox.agents.llm import litellm_module

    litellm_module()
    assert logging.getLogger("LiteLLM").getEffectiveLevel() >= logging.ERROR
    brain = lambda req, n: tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}), model="gpt-4.1")  # noqa: E731
    db = str(tmp_path / "s.sqlite")
    monkeypatch.setenv("COLUMNS", "200")
    with FakeOpenAI(brain) as srv:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "workbench.cli",
                "--batch",
                "run",
                "--agent",
                "llm",
                "--model",
                "openai/test-model",
                "--base-url",
                srv.url,
                "--limit",
                "3",
                "--run",
                "u",
                "--db",
                db,
                "--quiet",
            ],
            capture_output=True,
            text=True,
        )
    dataset_import = ("imported dataset:", "warning: ", "note: the built-in benchmark copies")  # its first use here
    assert proc.returncode == 0 and [ln for ln in proc.stderr.splitlines() if not ln.startswith(dataset_import)] == []
    assert "cost unpriced" in proc.stdout
    runs = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "--batch", "runs", "--db", db], capture_output=True, text=True
    )
    assert "unpriced" in runs.stdout


def test_dry_run_table_lists_the_items(tmp_path, capsys):
    proc = batch(
        capsys,
        "run",
        "--agent",
        "llm",
        "--dry-run",
        "--model",
        "openai/gpt-4.1",
        "--limit",
        "14",
        "--db",
        str(tmp_path / "s.sqlite"),
    )
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("items: "))
    assert proc.returncode == 0 and line.count("_0") == 12 and line.endswith("… (2 more)")


def test_missing_key_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    proc = batch(capsys, "run", "--agent", "llm", "--model", "openai/gpt-4.1", "--db", str(tmp_path / "s.sqlite"))
    assert proc.returncode == 2 and "OPENAI_API_KEY" in proc.stderr and not (tmp_path / "s.sqlite").exists()


def test_dry_run_prices_known_models_and_says_unpriced(tmp_path, capsys):
    base = [
        "run",
        "--agent",
        "llm",
        "--dry-run",
        "--limit",
        "10",
        "--db",
        str(tmp_path / "s.sqlite"),
        "--format",
        "json",
    ]
    known = json.loads(batch(capsys, *base, "--model", "openai/gpt-4.1").stdout)
    assert known["episodes"] == 10 and known["cost_usd"] == pytest.approx(10 * (85500 * 2 + 4500 * 8) / 1e6, rel=1e-3)
    unknown = json.loads(batch(capsys, *base, "--model", "hosted_vllm/my-model").stdout)
    assert unknown["cost_usd"] is None and unknown["price"] is None
    assert not (tmp_path / "s.sqlite").exists()


def test_ctrl_c_stops_without_waiting_for_the_calls_in_flight_and_resumes(tmp_path):
    """The server answers no call until the process has exited: it can only exit if Ctrl-C abandons the four
    calls in flight. (It measured the exit against a 30 s reply with a wall clock, and slept until four calls
    had arrived, going on regardless after 60 s.)"""
    import threading

    arrived, answer = threading.Event(), threading.Event()

    def never_before_exit(req, n):
        if n == 3:
            arrived.set()  # all four workers are waiting on a reply
        answer.wait()
        return tool_reply(("think", {"reasoning": "x"}))

    db = tmp_path / "s.sqlite"
    with FakeOpenAI(never_before_exit) as srv:
        try:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "workbench.cli",
                    "--batch",
                    "run",
                    "--agent",
                    "llm",
                    "--model",
                    "openai/m",
                    "--base-url",
                    srv.url,
                    "--limit",
                    "4",
                    "--workers",
                    "4",
                    "--run",
                    "c",
                    "--db",
                    str(db),
                    "--quiet",
                ],
                stderr=subprocess.PIPE,
                text=True,
            )
            assert arrived.wait(300), "four calls never arrived"  # a hang guard, not a timing assumption
            proc.send_signal(signal.SIGINT)
            err = proc.communicate(timeout=300)[1]  # a hang guard: no reply comes before the process exits
        finally:
            answer.set()
    assert proc.returncode == 130 and "resume" in err
    store = Store(db)
    assert store.run("c")["status"] == "interrupted"
    assert store.conn.execute("SELECT COUNT(*) FROM trajectories WHERE status = 'done'").fetchone()[0] == 0


def test_progress_says_when_it_retries(demo_corpus, tmp_path):
    """A server answering 200 with a non-JSON body used to leave the run silent through minutes of backoff."""
    import io

    from workbench.cli.progress import Progress

    def brain(req, n):
        if n < 2:
            return raw_reply("<html>not json</html>")
        return tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}))

    out = io.StringIO()
    with FakeOpenAI(brain) as srv:
        asyncio.run(
            Runner(
                run_spec(srv.url, "r", limit=1),
                demo_corpus,
                Store(tmp_path / "s.sqlite"),
                on_event=Progress("r", stream=out).update,
            ).run()
        )
    item = demo_corpus.items[0].id
    retries = [line for line in out.getvalue().splitlines() if line.startswith("retrying")]
    assert [line.split(":")[0] for line in retries] == [f"retrying {item} r0"] * 2
    assert [line.split(": ", 1)[1].split("):")[0] for line in retries] == [
        "Transient error (retry 1 of 10 in 0.0s",
        "Transient error (retry 2 of 10 in 0.0s",
    ]

    out = io.StringIO()
    with FakeOpenAI(lambda req, n: error_reply(401)) as srv:
        asyncio.run(
            Runner(
                run_spec(srv.url, "auth", limit=1),
                demo_corpus,
                Store(tmp_path / "a.sqlite"),
                on_event=Progress("auth", stream=out).update,
            ).run()
        )
    retries = [line for line in out.getvalue().splitlines() if line.startswith("retrying")]
    assert [line.split(" after ")[0] for line in retries] == [
        f"retrying {item} r0: attempt 2 of 3 in 0.0s",
        f"retrying {item} r0: attempt 3 of 3 in 0.0s",
    ]
    assert all(" after infra: " in line for line in retries)


async def test_a_submit_without_an_answer_ends_as_the_reference_harness_ends_it(mini_corpus):
    """The reference harness (§3.10) processes a `submit_answer` whose handler errored: its result is the generic
    error (a tool error), and the run still ends `answer` with `predicted_answer = ""`, index −1, counted wrong and
    attributed `no_answer` (Table 15 counts it NA under `answer`: a voluntary submit with no letter)."""
    traj, ep, srv = await episode(mini_corpus, script(tool_reply(("submit_answer", {"reasoning": "no letter"}))))
    (result,) = [s for s in ep.steps if s.kind == "tool"]
    assert result.text == "Error calling submit_answer: Missing or invalid parameter — 'answer'"
    assert result.status == "error" and result.cost == 0
    assert (traj.termination, traj.answer, traj.predicted_index, traj.correct) == ("answer", "", -1, False)
    assert traj.tool_errors == 1 and traj.chosen_type == "no_answer" and traj.reasoning == "no letter"
    assert len(srv.requests) == 1  # ended at once: the error is not sent back for another try
