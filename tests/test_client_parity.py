"""Parity of the two model clients: the same episodes through litellm and through the native client.

Each scenario runs twice, once per client, against its own real server (tests/openai_server.py on
127.0.0.1) with the same script, through the real runner into a real SQLite store. What must be
identical: every request body (byte for byte once keys are sorted) and its Authorization header,
every stored step (texts, tool calls, usage, ledger, statuses: the transcript), every trajectory
row and the `report --format json` output. Only what names the client (the run config's `clients`)
and clocks may differ. The faults are those the LLM tests cover: 429 with Retry-After, 5xx, dropped
connections, timeouts, bad JSON, replies without choices, empty replies, 4xx, text tools, parallel
calls, malformed arguments, reasoning, cached and reasoning tokens, the token cap.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from collections.abc import Callable
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.agents.limits import RateLimiter
from sandbox.agents.llm import LLMAgent, LLMConfig
from sandbox.episode import Episode, RetryPolicy
from sandbox.prompts import build_prompt
from sandbox.records import Caps
from sandbox.runner import Runner, RunSpec
from storage import Store
from tests.conftest import G, S
from tests.histories import CHANGES, grown
from tests.openai_server import (
    FakeOpenAI,
    Reply,
    completion,
    error_reply,
    raw_reply,
    seed_of,
    text_reply,
    tool_reply,
    turn_of,
)

CLIENTS = ("litellm", "native")
# No waiting between retries (Retry-After is checked separately, with the sleeps recorded rather than slept).
FAST = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0, retry_after_cap_s=0)
SUBMIT = tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}))
VOLATILE_STEP = ("id", "trajectory_id", "elapsed_s")
VOLATILE_TRAJECTORY = ("id", "run_id", "started_at", "finished_at", "duration_s", "wall_time_s", "elapsed_s")


def script(*replies: Reply) -> Callable[[dict, int], Reply]:
    """Plays `replies` in order (one item after another: the runner has one worker), then submits."""
    return lambda req, n: replies[n] if n < len(replies) else SUBMIT


def walk(req: dict, n: int) -> Reply:
    """A well-behaved model: references of the seed, two calls at once, then an answer."""
    t = turn_of(req)
    if t == 0:
        return tool_reply(
            ("get_references", {"paper_id": seed_of(req)}),
            ("list_sections", {"paper_id": G}),
            prompt_tokens=1500,
            cached=300,
        )
    if t == 1:
        return tool_reply(
            ("read_section", {"paper_id": G, "section": "B"}), ("think", {"reasoning": "ok"}), content="Reading."
        )
    return SUBMIT


def reasoning_reply(field_name: str) -> Reply:
    body = completion({"role": "assistant", "content": "Let me look.", field_name: "hmm [thinking]"})
    body["usage"] = {
        "prompt_tokens": 900,
        "completion_tokens": 60,
        "total_tokens": 960,
        "completion_tokens_details": {"reasoning_tokens": 40},
        "prompt_tokens_details": None,
    }
    return Reply(body=body)


def no_usage(text: str) -> Reply:
    body = completion({"role": "assistant", "content": text})
    del body["usage"]
    return Reply(body=body)


@dataclass
class Scenario:
    brain: Callable[[dict, int], Reply]
    caps: Caps = field(default_factory=Caps)
    options: dict[str, Any] = field(default_factory=dict)
    model: str = "openai/test-model"
    items: int = 2


SCENARIOS: dict[str, Scenario] = {
    "tool calls, parallel calls, cached tokens": Scenario(walk),
    "429 with Retry-After, 503, dropped connection": Scenario(
        script(
            error_reply(429, {"Retry-After": "7"}),
            error_reply(503, message="try later"),
            Reply(close=True),
            error_reply(502),
            error_reply(529),
        )
    ),
    "persistent 5xx": Scenario(lambda req, n: error_reply(500, message="boom"), items=1),
    "timeout": Scenario(
        script(Reply(body=completion({"role": "assistant", "content": "late"}), delay_s=2.0)),
        options={"timeout_s": 0.25},
    ),
    "bad JSON, empty body, no choices": Scenario(
        script(
            raw_reply("this is not json"),
            raw_reply("<html>bad gateway</html>"),
            raw_reply("{}"),
            raw_reply('{"id": "x", "object": "chat.completion", "choices": []}'),
            raw_reply("[1, 2]"),
        )
    ),
    "empty reply": Scenario(
        script(text_reply(""), text_reply(None), text_reply(""), text_reply(""), text_reply(""), text_reply(""))
    ),
    "4xx: bad request, unprocessable, auth": Scenario(
        script(
            error_reply(400, message="rate limit 500: Request too large"),
            error_reply(422, message="unprocessable"),
            error_reply(413),
            error_reply(401, message="bad key"),
        ),
        items=4,
    ),
    "text tools": Scenario(
        script(
            text_reply(f'<tool_call>{{"name": "get_paper_info", "arguments": {{"paper_id": "{S}"}}}}</tool_call>'),
            text_reply(f'```tool_code\nlist_sections(paper_id="{G}")\n```'),
            text_reply(
                '<tool_call>{"name": "submit_answer", "arguments": {"answer": "B", "reasoning": "r"}}</tool_call>'
            ),
        ),
        options={"text_tools": True},
    ),
    "text calls on a native endpoint": Scenario(
        script(
            text_reply(f'I will look.\nget_references(paper_id="{S}")'),
            text_reply('{"name": "submit_answer", "arguments": {"answer": "C", "reasoning": "r"}}'),
        )
    ),
    "malformed and unknown calls": Scenario(
        script(
            tool_reply(
                ("read_section", '{"paper_id": "x", '),
                ("keyword_search", {"query": "x"}),
                ("search_papers", {"query": 7}),
                ("think", ""),
            )
        )
    ),
    "reasoning content, reasoning tokens, no usage": Scenario(
        script(reasoning_reply("reasoning_content"), reasoning_reply("reasoning"), no_usage("plain"))
    ),
    "token cap": Scenario(
        script(
            tool_reply(("think", {"reasoning": "x"}), prompt_tokens=900),
            tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}), prompt_tokens=200),
        ),
        caps=Caps(max_tokens_total=1000),
    ),
    "budget exhausted": Scenario(
        script(
            tool_reply(*[("read_section", {"paper_id": G, "section": "A"})] * 5),
            tool_reply(("read_section", {"paper_id": G, "section": "A"})),
        ),
        caps=Caps(budget=25),
    ),
    "hosted_vllm with sampling settings": Scenario(
        walk,
        model="hosted_vllm/qwen/qwen3-32b",
        options={"temperature": 0.6, "top_p": 0.95, "top_k": 20, "max_tokens": 4096, "reasoning_effort": "low"},
    ),
    "OpenAI catalogue model": Scenario(
        walk,
        model="openai/gpt-4.1-mini",
        options={
            "temperature": 0.2,
            "reasoning_effort": "low",
            "pricing": [{"prefix": "gpt-4.1-mini", "input_per_m": 0.4, "output_per_m": 1.6, "cache_read_mult": 0.5}],
        },
    ),
}


def normal(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def run_once(corpus, tmp_path, name: str, scenario: Scenario, client: str) -> dict[str, Any]:
    """One scenario through one client: what the server received and what the store and report hold."""
    db = tmp_path / f"{client}.sqlite"
    store = Store(db)
    with FakeOpenAI(scenario.brain) as srv:
        spec = RunSpec(
            name="parity",
            dataset="t",
            agent="llm",
            model=scenario.model,
            workers=1,
            limit=scenario.items,
            caps=scenario.caps,
            retry=FAST,
            attempt_backoff_s=0,
            agent_options={"base_url": srv.url, "client": client, **scenario.options},
        )
        runner = Runner(spec, corpus, store)
        assert runner.client == client
        result = asyncio.run(runner.run())
    run = store.run("parity")
    trajectories = store.trajectories(run["id"], final_only=False)
    steps = [
        [{k: v for k, v in s.items() if k not in VOLATILE_STEP} for s in store.steps(t["id"])] for t in trajectories
    ]
    rows = [{k: v for k, v in t.items() if k not in VOLATILE_TRAJECTORY} for t in trajectories]
    out = io.StringIO()
    from workbench.cli import main

    with redirect_stdout(out):
        assert main(["--batch", "report", "parity", "--db", str(db), "--format", "json"]) == 0
    report = json.loads(out.getvalue())
    return {
        "requests": [normal(r) for r in srv.requests],
        "paths": srv.paths,
        "auth": [{k.lower(): v for k, v in h.items()}.get("authorization") for h in srv.headers],
        "steps": steps,
        "trajectories": rows,
        "report": report,
        "result": result,
        "config": run["config"],
    }


def without_client(report: Any) -> Any:
    """The report with what names the client (and clocks) taken out."""
    if isinstance(report, dict):
        return {
            k: without_client(v)
            for k, v in report.items()
            if k not in ("clients", "elapsed_s", "started_at", "finished_at", "created_at", "wall_s")
        }
    if isinstance(report, list):
        return [without_client(v) for v in report]
    return report


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_both_clients_send_and_record_the_same(demo_corpus, tmp_path, name):
    scenario = SCENARIOS[name]
    seen = {client: run_once(demo_corpus, tmp_path, name, scenario, client) for client in CLIENTS}
    lite, native = seen["litellm"], seen["native"]
    assert native["requests"] == lite["requests"] and len(lite["requests"]) > 0
    assert native["paths"] == lite["paths"] and native["auth"] == lite["auth"]
    assert native["steps"] == lite["steps"]
    assert native["trajectories"] == lite["trajectories"]
    assert without_client(native["report"]) == without_client(lite["report"])
    assert native["result"]["done"] == lite["result"]["done"] and native["result"]["status"] == lite["result"]["status"]
    assert lite["config"]["clients"] == ["litellm"] and native["config"]["clients"] == ["native"]


def test_the_scenarios_reach_every_fault(demo_corpus, tmp_path):
    """The parity above is only as good as its scenarios: each fault shows up in the transcripts as itself."""

    def texts(name):
        got = run_once(demo_corpus, tmp_path / name.replace(" ", "_"), name, SCENARIOS[name], "native")
        return [s["text"] or "" for steps in got["steps"] for s in steps], got

    (tmp_path / "x").mkdir()
    for name in SCENARIOS:
        (tmp_path / name.replace(" ", "_")).mkdir()
    retry, _ = texts("429 with Retry-After, 503, dropped connection")
    joined = "\n".join(retry)
    assert "HTTP 429: injected fault" in joined and "HTTP 503: try later" in joined
    assert "connection failed: no response" in joined and "HTTP 529" in joined
    timeout, _ = texts("timeout")
    assert any("timed out: no response within 0.25 s" in t for t in timeout)
    bad, got = texts("bad JSON, empty body, no choices")
    assert sum("unreadable response (HTTP 200): not JSON" in t for t in bad) == 2
    assert sum("without choices (HTTP 200)" in t for t in bad) == 3
    errors, got = texts("4xx: bad request, unprocessable, auth")
    assert any(t.startswith("API error: HTTP 400: rate limit 500") for t in errors)
    assert any("HTTP 401: bad key" in t for t in errors)
    assert [t["error_kind"] for t in got["trajectories"]].count("refused") == 3 and len(got["requests"]) >= 4
    _, got = texts("persistent 5xx")
    assert got["trajectories"][-1]["error_kind"] == "transient_exhausted" and len(got["requests"]) == 33
    _, got = texts("reasoning content, reasoning tokens, no usage")
    usages = [s["usage"] for s in got["steps"][0] if s["kind"] == "assistant"]
    assert usages[0]["raw"]["completion_tokens_details"] == {"reasoning_tokens": 40}
    assert usages[2]["raw"] == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    _, got = texts("hosted_vllm with sampling settings")
    first = json.loads(got["requests"][0])
    assert (first["top_k"], first["reasoning_effort"], first["model"]) == (20, "low", "qwen/qwen3-32b")
    _, got = texts("OpenAI catalogue model")
    first = json.loads(got["requests"][0])
    assert "reasoning_effort" not in first and first["temperature"] == 0.2  # litellm knows gpt-4.1 takes none
    assert got["trajectories"][0]["cost_usd"] > 0


@pytest.mark.parametrize("client", CLIENTS)
async def test_retry_after_is_honoured_by_both(mini_corpus, client):
    """The server's Retry-After (seconds and HTTP dates) sets the wait; recorded, not slept."""
    sleeps: list[float] = []

    async def sleep(s):
        sleeps.append(s)

    brain = script(error_reply(429, {"Retry-After": "7"}), error_reply(503, {"Retry-After": "0.5"}), error_reply(500))
    item = mini_corpus.item("st_0001")
    with FakeOpenAI(brain) as srv:
        agent = LLMAgent(LLMConfig(model="openai/test-model", base_url=srv.url, client=client), RateLimiter(), None)
        assert agent.session.client == client
        prompt = build_prompt(item, Caps(), "full")
        policy = RetryPolicy(transient_base_s=3, transient_cap_s=3, error_base_s=0, error_cap_s=0)
        traj = await Episode(mini_corpus.view(item), agent, Caps(), prompt, retry=policy, sleep=sleep).run()
        await agent.session.aclose()
    assert traj.termination == "answer" and traj.transient_retries == 3 and sleeps == [7.0, 0.5, 3.0]


@pytest.mark.parametrize("client", CLIENTS)
async def test_each_concurrent_call_sees_its_own_status(client):
    """Twenty calls in flight at once, half answered 400 'rate limit' and half 503: each is classified by its own."""
    from sandbox.agents.base import NonTransientModelError, TransientModelError

    def brain(req, n):
        mine = int(req["messages"][1]["content"])
        reply = error_reply(400, message="rate limit 500") if mine % 2 else error_reply(503, message="bad")
        reply.delay_s = 0.02 * (mine % 4)
        return reply

    with FakeOpenAI(brain) as srv:
        agent = LLMAgent(LLMConfig(model="openai/test-model", base_url=srv.url, client=client), RateLimiter(), None)

        async def one(i):
            try:
                await agent.act([{"role": "system", "content": "s"}, {"role": "user", "content": str(i)}], ())
            except Exception as exc:  # noqa: BLE001 - the classification is what is tested
                return i, type(exc), str(exc)

        outcomes = await asyncio.gather(*(one(i) for i in range(20)))
        await agent.session.aclose()
    assert all(issubclass(kind, NonTransientModelError if i % 2 else TransientModelError) for i, kind, _ in outcomes)
    assert not any(issubclass(kind, NonTransientModelError) for i, kind, _ in outcomes if i % 2 == 0)
    assert all(text == ("HTTP 400: rate limit 500" if i % 2 else "HTTP 503: bad") for i, _, text in outcomes)


def test_native_sampling_decisions_match_litellm_over_its_catalogue():
    """For every model the native client takes, the parameters it keeps are the ones litellm keeps; every
    OpenAI catalogue model it does not know to be plain goes to litellm (so a new catalogue entry cannot slip
    through as an unknown model with a different body)."""
    from sandbox.agents import providers
    from sandbox.agents.llm import litellm_module

    litellm = litellm_module()
    sampling = {"temperature": 0.5, "top_p": 0.9, "top_k": 7, "max_tokens": 1000, "reasoning_effort": "low"}
    names = [
        *sorted(litellm.open_ai_chat_completion_models),
        "test-model",
        "qwen/qwen3-32b",
        "gpt-oss-120b",
        "meta-llama/Llama-3.3-70B-Instruct",
        "smollm2",
    ]
    taken = 0
    for name in names:
        for prefix in ("openai/", "hosted_vllm/"):
            model = prefix + name
            route = providers.native_provider(model)
            if route is None:
                assert prefix == "openai/" and name in litellm.open_ai_chat_completion_models, model
                continue
            taken += 1
            assert route == providers.provider_of(model, "http://127.0.0.1:9/v1"), model
            native = providers.request_params(route, model, sampling, providers.native_supported(route, model))
            lite = providers.request_params(route, model, sampling, providers.supported_params(model, route))
            assert native == lite, model
    assert taken > 40


def test_a_run_resumes_through_the_other_client(demo_corpus, tmp_path):
    """The client is how calls are sent, not what is asked: a run started through one resumes through the
    other (the outputs are identical, above), and the config lists both."""
    store = Store(tmp_path / "s.sqlite")
    with FakeOpenAI(walk) as srv:
        for client, limit in (("litellm", 2), ("native", 4)):
            spec = RunSpec(
                name="r",
                dataset="t",
                agent="llm",
                model="openai/test-model",
                workers=2,
                limit=limit,
                retry=FAST,
                attempt_backoff_s=0,
                agent_options={"base_url": srv.url, "client": client},
            )
            result = asyncio.run(Runner(spec, demo_corpus, store).run())
            assert result["status"] == "done" and result["done"] == limit
    assert store.run("r")["config"]["clients"] == ["litellm", "native"]


def test_a_native_run_never_imports_litellm(tmp_path):
    """The whole point: an OpenAI-compatible run does not pay litellm's import (~190 MB, seconds)."""
    import subprocess

    code = (
        "import sys, json\n"
        "from tests.openai_server import FakeOpenAI, tool_reply\n"
        "from workbench.cli import main\n"
        "srv = FakeOpenAI(lambda r, n: tool_reply(('submit_answer', {'answer': 'A', 'reasoning': 'r'}))).__enter__()\n"
        f"rc = main(['--batch', 'run', '--agent', 'llm', '--model', 'openai/m', '--base-url', srv.url, '--limit', '2',"
        f" '--db', {str(tmp_path / 's.sqlite')!r}, '--quiet'])\n"
        "print(rc, 'litellm' in sys.modules, 'openai' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.stdout.split()[-3:] == ["0", "False", "False"], proc.stderr


def test_client_flag_is_checked_before_the_run(tmp_path, capsys):
    from workbench.cli import main

    db = tmp_path / "s.sqlite"
    rc = main(
        [
            "--batch",
            "run",
            "--agent",
            "llm",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--client",
            "native",
            "--base-url",
            "http://127.0.0.1:9",
            "--db",
            str(db),
        ]
    )
    assert rc == 2 and "--client native serves OpenAI-compatible" in capsys.readouterr().err and not db.exists()
    rc = main(["--batch", "run", "--agent", "oracle", "--client", "native", "--db", str(db)])
    assert rc == 2 and "--client applies to --agent llm only" in capsys.readouterr().err


@pytest.mark.parametrize("reply", ["Evidence checks out. <judgment>Correct</judgment>", "<judgment>Wrong</judgment>"])
def test_the_llm_judge_asks_and_reads_the_same_through_both(mini_corpus, reply):
    """Self-choice judging (`scale parallel --judge same`) goes through the run's client too: same request, verdict,
    tokens and cost."""
    from sandbox.judges import LLMJudge, Sample

    item = mini_corpus.item("st_0001")
    sample = Sample(0, "B", 1, ["text"], [{"kind": "tool", "tool": "read_section", "args": {}, "text": "[x] " * 300}])
    seen = {}
    for client in CLIENTS:
        with FakeOpenAI(lambda req, n: text_reply(reply, prompt_tokens=700, cached=100)) as srv:
            judge = LLMJudge("openai/gpt-4.1-mini", base_url=srv.url, client=client)
            assert (judge.native is not None) == (client == "native")
            verdict = asyncio.run(judge.pointwise(item, sample))
        seen[client] = ([normal(r) for r in srv.requests], verdict.value, verdict.tokens, verdict.cost_usd)
    assert seen["native"] == seen["litellm"] and seen["native"][3] > 0


async def test_the_httpx_pool_is_sharded_so_its_cost_stays_flat():
    """httpcore's pool checks every open connection on every call; the native client's httpx pool (https, proxies)
    keeps at most SHARD calls in flight per AsyncClient, opening another when all are busy, and closes them all at
    the end of the run."""
    import threading

    from sandbox.agents.native import SHARD, HttpxPool

    arrived, go = threading.Semaphore(0), threading.Event()

    def brain(req, n):
        arrived.release()
        go.wait(60)
        return text_reply("ok")

    with FakeOpenAI(brain) as srv:
        client = HttpxPool(srv.url + "/chat/completions", {"authorization": "Bearer k"}, 60)
        calls = [asyncio.ensure_future(client.post(b'{"model":"m","messages":[]}')) for _ in range(3 * SHARD)]
        for _ in range(3 * SHARD):  # every call is at the server, so all are in flight at once
            await asyncio.to_thread(arrived.acquire)
        shards = client._by_loop[asyncio.get_running_loop()]
        assert [s.in_flight for s in shards] == [SHARD] * 3
        go.set()
        replies = await asyncio.gather(*calls)
        assert {r.status for r in replies} == {200} and [s.in_flight for s in shards] == [0] * 3
        await client.aclose()
    assert all(s.client.is_closed for s in shards)


_WIRE_MESSAGE = st.one_of(
    st.builds(
        lambda content, ids: {"role": "assistant", "content": content, "tool_calls": [{"id": i} for i in ids]},
        st.one_of(st.none(), st.text(max_size=3)),
        st.lists(st.sampled_from(["a", "b"]), max_size=2),
    ),
    st.builds(lambda name: {"role": "tool", "tool_call_id": "a", "name": name, "content": "r"}, st.text(max_size=3)),
    st.just({"role": "user", "content": "u"}),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(CHANGES, st.lists(_WIRE_MESSAGE, max_size=3)), max_size=8))
def test_a_history_converted_once_per_message_is_the_history_converted_whole(steps):
    """The LLM agent sends each message as converted once per episode (`providers.ConvertedOnce`); through turns
    appended and a tail replaced in place (a summary), what it sends is what converting the whole history gives."""
    from sandbox.agents import providers
    from sandbox.agents.llm import bare_message

    bare, wire = providers.ConvertedOnce(bare_message), providers.ConvertedOnce(providers.wire_message)
    for messages in grown(steps):
        sent = wire(bare(messages))
        assert sent == [providers.wire_message(bare_message(m)) for m in messages]
        assert all(None not in m.values() and "name" not in m for m in sent if m.get("role") != "user")
