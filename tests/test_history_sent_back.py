"""What a real model server sends, and what the history sent back to it holds, turn by turn.

The test server answers as real servers do — calls as JSON text, as fenced JSON, in `<tool_call>` tags,
as native `tool_calls` (with ids reused every turn, as some servers number them), and a reply cut off
by the completion limit in the middle of a call — and, being strict, refuses any history a provider
would refuse (a duplicate id, a call without its result, a call shown twice). Every later request is
checked against what the model said: each call once, in the client mode's own form, the prose kept.
"""

import json
from functools import partial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.agents.limits import RateLimiter
from sandbox.agents.llm import LLMAgent, LLMConfig
from sandbox.agents.textcalls import cut_off_call, find_text_calls, prose
from sandbox.episode import Episode, RetryPolicy
from sandbox.prompts import build_prompt
from sandbox.records import Caps
from tests.conftest import G, S
from tests.openai_server import FakeOpenAI, Reply, completion, history_problem, seed_of, text_reply, tool_reply, turn_of

FAST = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0)
INFO = {"name": "get_paper_info", "arguments": {"paper_id": S}}
SECTIONS = {"name": "list_sections", "arguments": {"paper_id": G}}
SUBMIT = {"name": "submit_answer", "arguments": {"answer": "B", "reasoning": "r"}}
CUT = f'<tool_call>{{"name": "read_section", "arguments": {{"paper_id": "{G}", "sec'


def cut_reply(text: str) -> Reply:
    return Reply(body=completion({"role": "assistant", "content": text}, finish_reason="length"))


# What the model says on each turn: (the reply, the prose a native-mode history keeps, the calls it makes)
TURNS = [
    (
        text_reply("I will look at the seed first.\n" + json.dumps(INFO)),
        "I will look at the seed first.",
        [("get_paper_info", {"paper_id": S})],
    ),
    (
        text_reply("Now its sections:\n```json\n" + json.dumps(SECTIONS) + "\n```\nThen I read."),
        "Now its sections:\n\nThen I read.",
        [("list_sections", {"paper_id": G})],
    ),
    (
        text_reply(
            "<tool_call>" + json.dumps(INFO) + "</tool_call>\n<tool_call>" + json.dumps(SECTIONS) + "</tool_call>"
        ),
        None,
        [("get_paper_info", {"paper_id": S}), ("list_sections", {"paper_id": G})],
    ),
    (
        tool_reply(("get_references", {"paper_id": S}), ("think", {"reasoning": "ok"}), content="Native now."),
        "Native now.",
        [("get_references", {"paper_id": S}), ("think", {"reasoning": "ok"})],
    ),
    (
        cut_reply("Reading one more.\n<tool_call>" + json.dumps(INFO) + "</tool_call>\n" + CUT),
        "Reading one more.",
        [("get_paper_info", {"paper_id": S})],
    ),
    (text_reply("<tool_call>" + json.dumps(SUBMIT) + "</tool_call>"), None, [("submit_answer", SUBMIT["arguments"])]),
]


def brain(req, n):
    return TURNS[turn_of(req)][0]


async def play(corpus, text_tools: bool, client: str):
    item = corpus.item("st_0001")
    with FakeOpenAI(brain) as srv:
        agent = LLMAgent(
            LLMConfig(model="openai/test-model", base_url=srv.url, text_tools=text_tools, client=client),
            RateLimiter(),
            None,
        )
        ep = Episode(
            corpus.view(item), agent, Caps(), build_prompt(item, Caps(), "full", text_tools=text_tools), retry=FAST
        )
        traj = await ep.run()
        await agent.session.aclose()
    assert srv.refusals == []
    return traj, ep, srv


def said(k: int) -> str | None:
    """The content the model sent on turn k (0-based)."""
    return TURNS[k][0].body["choices"][0]["message"]["content"]


@pytest.mark.parametrize("client", ["native", "litellm"])
async def test_native_mode_history_shows_each_call_once_with_unique_ids(mini_corpus, client):
    traj, ep, srv = await play(mini_corpus, text_tools=False, client=client)
    assert traj.termination == "answer" and traj.correct and len(srv.requests) == len(TURNS)
    for n, request in enumerate(srv.requests):
        assistants = [m for m in request["messages"] if m["role"] == "assistant"]
        assert len(assistants) == n
        ids = [tc["id"] for m in assistants for tc in m["tool_calls"]]
        assert len(ids) == len(set(ids))  # unique within the trajectory (the native turn reuses call_0, call_1)
        for k, message in enumerate(assistants):
            _, kept, calls = TURNS[k]
            assert message.get("content") == kept  # the prose, without the call text (and without the cut-off call)
            assert [
                (tc["function"]["name"], json.loads(tc["function"]["arguments"])) for tc in message["tool_calls"]
            ] == calls
            results = [
                m
                for m in request["messages"]
                if m["role"] == "tool" and m["tool_call_id"] in {tc["id"] for tc in message["tool_calls"]}
            ]
            assert len(results) == len(calls)
        text = json.dumps(request["messages"])
        assert 'sec\\"' not in text and CUT not in text  # the fragment is never sent back as text
    # the stored steps keep every reply verbatim, whatever the history sent back
    replies = [s.text for s in ep.steps if s.kind == "assistant"]
    assert replies == [said(k) for k in range(len(TURNS))]


@pytest.mark.parametrize("client", ["native", "litellm"])
async def test_text_mode_history_keeps_the_text_and_sends_results_as_text(mini_corpus, client):
    traj, _ep, srv = await play(mini_corpus, text_tools=True, client=client)
    assert traj.termination == "answer" and traj.correct
    for _n, request in enumerate(srv.requests):
        messages = request["messages"]
        assert "tools" not in request and all(m["role"] != "tool" and "tool_calls" not in m for m in messages)
        assistants = [m for m in messages if m["role"] == "assistant"]
        for k, message in enumerate(assistants):
            if TURNS[k][0].body["choices"][0]["message"].get("tool_calls"):
                # calls the server sent as structured tool_calls are written back as the tags the prompt asks for
                assert message["content"].startswith("Native now.\n<tool_call>")
                assert [(c.name, c.args) for c in find_text_calls(message["content"]).calls] == TURNS[k][2]
            else:
                assert message["content"] == said(k)  # verbatim, the cut-off call included: it is what it said
            follow = messages[messages.index(message) + 1]
            assert follow["role"] == "user" and follow["content"].count("<tool_result") == len(TURNS[k][2])


async def test_a_cut_off_call_is_a_visible_counted_step(mini_corpus):
    traj, ep, _srv = await play(mini_corpus, text_tools=False, client="native")
    assistant = [s for s in ep.steps if s.kind == "assistant"]
    assert [s.finish_reason for s in assistant] == ["stop"] * 3 + ["tool_calls", "length", "stop"]
    cut = [s for s in ep.steps if s.kind == "cutoff"]
    assert [s.text for s in cut] == [f"cut off mid-call: {CUT}"] and cut[0].turn == 5
    assert traj.cut_off_turns == 1 and traj.lost_calls == 1


async def test_a_native_call_cut_off_mid_arguments_is_lost_not_run(mini_corpus):
    """A native call whose arguments the completion limit ended: not run with undecodable arguments, shown."""
    truncated = Reply(
        body=completion(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "think", "arguments": '{"reasoning": "a"}'}},
                    {
                        "id": "c2",
                        "type": "function",
                        "function": {"name": "read_section", "arguments": '{"paper_id": "x", "se'},
                    },
                ],
            },
            finish_reason="length",
        )
    )

    def brain2(req, n):
        return truncated if n == 0 else text_reply(json.dumps(SUBMIT))

    item = mini_corpus.item("st_0001")
    with FakeOpenAI(brain2) as srv:
        agent = LLMAgent(LLMConfig(model="openai/test-model", base_url=srv.url), RateLimiter(), None)
        ep = Episode(mini_corpus.view(item), agent, Caps(), build_prompt(item, Caps(), "full"), retry=FAST)
        traj = await ep.run()
    assert [s.tool_name for s in ep.steps if s.kind == "tool"] == ["think", "submit_answer"]
    assert [s.text for s in ep.steps if s.kind == "cutoff"] == ['cut off mid-call: read_section({"paper_id": "x", "se']
    assert [tc["id"] for tc in srv.requests[1]["messages"][2]["tool_calls"]] == ["c1"]
    assert traj.lost_calls == 1 and traj.cut_off_turns == 1


@pytest.mark.parametrize("text_tools", [False, True])
async def test_calls_sent_both_parsed_and_as_text_go_back_once(mini_corpus, text_tools):
    """A server that parses the calls out of the text but leaves the text in `content` too."""
    tagged = "Looking.\n<tool_call>" + json.dumps(INFO) + "</tool_call>"
    both = Reply(
        body=completion(
            {
                "role": "assistant",
                "content": tagged,
                "tool_calls": [
                    {
                        "id": "x1",
                        "type": "function",
                        "function": {"name": "get_paper_info", "arguments": json.dumps(INFO["arguments"])},
                    }
                ],
            }
        )
    )

    def brain2(req, n):
        return both if n == 0 else text_reply("<tool_call>" + json.dumps(SUBMIT) + "</tool_call>")

    item = mini_corpus.item("st_0001")
    with FakeOpenAI(brain2) as srv:
        agent = LLMAgent(
            LLMConfig(model="openai/test-model", base_url=srv.url, text_tools=text_tools), RateLimiter(), None
        )
        ep = Episode(
            mini_corpus.view(item), agent, Caps(), build_prompt(item, Caps(), "full", text_tools=text_tools), retry=FAST
        )
        traj = await ep.run()
    assert traj.termination == "answer" and srv.refusals == []
    sent = srv.requests[1]["messages"][2]
    assert sent["content"] == (tagged if text_tools else "Looking.")
    assert text_tools or [tc["id"] for tc in sent["tool_calls"]] == ["x1"]


def test_the_strict_server_refuses_what_providers_refuse():
    call = {"id": "a", "type": "function", "function": {"name": "think", "arguments": "{}"}}
    base = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    ok = [
        *base,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "a", "content": "r"},
    ]
    assert history_problem({"messages": ok}) is None
    assert "Duplicate value for 'tool_call_id' of a" in history_problem({"messages": ok + ok[2:]})
    assert "did not have response" in history_problem({"messages": [*ok[:3], {"role": "user", "content": "x"}]})
    assert "answers no open call" in history_problem({"messages": [*ok, ok[3]]})
    twice = {"role": "assistant", "content": json.dumps({"name": "think", "arguments": {}}), "tool_calls": [call]}
    assert "calls twice" in history_problem({"messages": [*base, twice, ok[3]]})


def test_cut_off_fragments_are_found_in_every_call_style():
    cases = {
        'ok\n<tool_call>{"name": "think", "arguments": {"reas': '<tool_call>{"name": "think", "arguments": {"reas',
        'ok\n```json\n{"name": "think", "argu': '```json\n{"name": "think", "argu',
        'ok {"name": "read_section", "arguments": {"paper_id": "x"': '{"name": "read_section", "arguments": {"paper_id": "x"',
        'ok\nread_section(paper_id="x", sec': 'read_section(paper_id="x", sec',
    }
    for text, fragment in cases.items():
        found = find_text_calls(text)
        assert found.calls == [] and cut_off_call(text, found.spans)[0] == fragment
        assert prose(text, [(cut_off_call(text, found.spans)[1], len(text))]) == "ok"
    assert cut_off_call("an unfinished thought {about things", []) is None
    assert (
        cut_off_call(
            'done {"name": "think", "arguments": {}}', find_text_calls('done {"name": "think", "arguments": {}}').spans
        )
        is None
    )


EARLY_CUTS = ['{"', '{"name', '{"name": "get_paper_info', 'Checking the seed.\n{"name": "get_pa', '{\n  "name" :']


@pytest.mark.parametrize("client", ["native", "litellm"])
@pytest.mark.parametrize("fragment", EARLY_CUTS)
async def test_a_call_cut_off_before_its_name_is_whole_is_counted_and_not_sent_back(mini_corpus, client, fragment):
    """What a real 0.5B model did at the completion limit: the reply ends inside the call's name (or before it)."""

    def brain2(req, n):
        return cut_reply(fragment) if n == 0 else text_reply(json.dumps(SUBMIT))

    item = mini_corpus.item("st_0001")
    with FakeOpenAI(brain2) as srv:
        agent = LLMAgent(LLMConfig(model="openai/test-model", base_url=srv.url, client=client), RateLimiter(), None)
        ep = Episode(mini_corpus.view(item), agent, Caps(), build_prompt(item, Caps(), "full"), retry=FAST)
        traj = await ep.run()
        await agent.session.aclose()
    assert srv.refusals == [] and traj.termination == "answer"
    call = fragment[fragment.index("{") :]
    assert [s.text for s in ep.steps if s.kind == "cutoff"] == [f"cut off mid-call: {call}"]
    assert traj.lost_calls == 1 and traj.cut_off_turns == 1
    sent = srv.requests[1]["messages"][2]
    assert sent["role"] == "assistant" and "tool_calls" not in sent
    assert sent["content"] == fragment[: fragment.index("{")].strip()  # the prose before it, or nothing
    assert all(call not in (m.get("content") or "") for m in srv.requests[1]["messages"][3:]), srv.requests[1]


_WHOLE_CALL = json.dumps(INFO)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=1, max_value=len(_WHOLE_CALL) - 1), st.sampled_from(["", "ok ", "ok\n"]))
def test_every_cut_of_a_bare_json_call_is_a_cut_off_fragment(at, prose_before):
    """Wherever the limit cuts `{"name": "get_paper_info", "arguments": {…}}`, the rest is the call's fragment."""
    text = prose_before + _WHOLE_CALL[:at]
    found = find_text_calls(text)
    fragment = cut_off_call(text, found.spans)
    assert found.calls == [] and fragment == (_WHOLE_CALL[:at].strip(), len(prose_before))


@pytest.mark.parametrize(
    "text", ["an unfinished thought {about things", 'a set {"a", "b', '{"nam": "x', '{"name": "nope']
)
def test_braces_that_cannot_begin_a_call_are_not_cut_off_calls(text):
    assert cut_off_call(text, []) is None


# ---------------------------------------------------------------- the run, the store and what the front ends show


def first_seen(req, seen: dict) -> int:
    """The order in which this request's item was first seen by the server (0, 1, …)."""
    return seen.setdefault(seed_of(req), len(seen))


def overflowing(req, n, seen: dict):
    """Item by item: a turn cut off mid-call, then either an answer or (every other item) a full context window."""
    order = first_seen(req, seen)
    turn = turn_of(req)
    if turn == 0:
        return cut_reply('<tool_call>{"name": "think", "arguments": {"reasoning": "hm"}}</tool_call>\n' + CUT)
    if turn == 1 and order % 2 == 0:
        return Reply(
            status=400,
            body={
                "error": {
                    "message": "the request exceeds the available context size",
                    "type": "exceed_context_size_error",
                    "code": 400,
                }
            },
        )
    return text_reply(json.dumps(SUBMIT))


def stored_run(corpus, tmp_path, brain, name="real", cached=0):
    import asyncio

    from sandbox.runner import Runner, RunSpec
    from storage import Store

    store = Store(tmp_path / "s.sqlite")
    with FakeOpenAI(brain) as srv:
        spec = RunSpec(
            name=name,
            dataset="t",
            agent="llm",
            model="openai/test-model",
            workers=2,
            retry=FAST,
            attempt_backoff_s=0,
            agent_options={"base_url": srv.url},
            limit=6,
        )
        asyncio.run(Runner(spec, corpus, store).run())
    return store


def test_a_run_stores_finish_reasons_cut_offs_and_refusals_and_reports_them(demo_corpus, tmp_path):
    from storage.export import trajectory_lines
    from workbench.service import reports
    from workbench.tui.widgets.transcript import build_entries
    from workbench.views.report import detail_rows

    store = stored_run(demo_corpus, tmp_path, partial(overflowing, seen={}))
    run = store.run("real")
    rows = store.trajectories(run["id"], final_only=False)
    assert len(rows) == 6 and all(r["final"] for r in rows)  # a refused request is not retried as a sample either
    ended = [r for r in rows if r["termination"] == "error"]
    assert ended and all(
        r["error_kind"] == "context_overflow" and r["error"].startswith("context window full at turn 2") for r in ended
    )
    assert all(r["cut_off_turns"] == 1 and r["lost_calls"] == 1 and r["api_errors"] == (r in ended) for r in rows)
    steps = store.steps(rows[0]["id"])
    assert next(s["finish_reason"] for s in steps if s["kind"] == "assistant") == "length"
    assert [s["text"] for s in steps if s["kind"] == "cutoff"] == [f"cut off mid-call: {CUT}"]
    # exports carry both
    line = next(trajectory_lines(store, "real"))
    assert line["cut_off_turns"] == 1 and line["steps"][0]["finish_reason"] == "length"
    # the stepper marks the reply and shows the lost call
    entries = build_entries(steps)
    assert any("✂ cut off (length)" in e.plain_header for e in entries if e.kind == "assistant")
    assert any(e.plain_header == "✂ cut off" and CUT in e.body for e in entries)
    # the report counts it, and error rate and API error rate apart
    rep = reports.diagnostics(store, "real")
    assert rep["cut_off"] == {"turns": 6, "calls_lost": 6, "trajectories": 6}
    assert rep["counts"]["resource"]["error_rate"] == rep["counts"]["resource"]["api_error_rate"] == [len(ended), 6]
    cells = {(r[1]): r[4] for r in detail_rows(rep)}
    assert cells["replies cut off (finish_reason length)"] == "6 in 6 trajectories · 6 calls lost"
    assert cells["episodes with an API error"].endswith(f"({len(ended)}/6)")


def test_an_answered_episode_with_an_api_error_counts_apart_from_error_endings(demo_corpus, tmp_path):
    """One unreadable reply, then an answer: no error ending, but an episode that met an API error."""
    from workbench.service import reports
    from workbench.views.panel import panel_stat_lines

    seen: dict = {}
    asked: set = set()

    def brain(req, n):
        order = first_seen(req, seen)
        if order % 3 == 0 and order not in asked:  # every third item: its first call gets a reply without choices
            asked.add(order)
            return Reply(body={"object": "chat.completion", "choices": []})
        return text_reply(json.dumps(SUBMIT))

    store = stored_run(demo_corpus, tmp_path, brain)
    rep = reports.run_report(store, "real")
    met = rep["counts"]["resource"]["api_error_rate"]
    assert rep["counts"]["resource"]["error_rate"][0] == 0 and met == [2, 6]
    panel = reports.panel_report(store, ["real"])
    assert any(
        line.startswith(f"real: 0 of 6 ended in error (0.0%) · {met[0]} of 6 met an API error")
        for line in panel_stat_lines(panel)
    )
    rows = {r["axis"]: r for r in reports.compare_report(store, "real", "real", n_boot=200)["rows"]}
    assert rows["API err"]["a"] == rows["API err"]["b"] == 2 / 6 and "Err" not in rows  # shown when any has one


def cached_brain(cached):
    def brain(req, n):
        return Reply(
            body=completion({"role": "assistant", "content": json.dumps(SUBMIT)}, prompt_tokens=1000, cached=cached)
        )

    return brain


def test_tokens_incl_cache_reads_and_a_cache_gap_warning(demo_corpus, tmp_path):
    """Two runs of the same prompts: one server cache held 800 of 1,000 prompt tokens, the other nothing. The
    protocol's counts differ (220 against 1,020); prompt tokens incl. cache reads do not; compare says why."""
    import asyncio

    from sandbox.runner import Runner, RunSpec
    from storage import Store
    from workbench.service import reports

    store = Store(tmp_path / "s.sqlite")
    for name, cached in (("warm", 800), ("cold", 0)):
        with FakeOpenAI(cached_brain(cached)) as srv:
            spec = RunSpec(
                name=name,
                dataset="t",
                agent="llm",
                model="openai/test-model",
                workers=2,
                retry=FAST,
                attempt_backoff_s=0,
                agent_options={"base_url": srv.url},
                limit=4,
            )
            asyncio.run(Runner(spec, demo_corpus, store).run())
    warm, cold = reports.run_report(store, "warm"), reports.run_report(store, "cold")
    assert warm["axes"]["resource"]["avg_tokens"] == 200 + 20 and cold["axes"]["resource"]["avg_tokens"] == 1020
    assert warm["axes"]["resource"]["avg_prompt_tokens"] == cold["axes"]["resource"]["avg_prompt_tokens"] == 1000
    assert warm["axes"]["resource"]["cache_hit_rate"] == 0.8 and cold["axes"]["resource"]["cache_hit_rate"] == 0
    cmp = reports.compare_report(store, "warm", "cold", n_boot=200)
    assert any("cache-hit rates differ (80% against 0%" in w for w in cmp["warnings"])
    assert cmp["tokens"]["a"] == {"protocol": 220, "prompt_incl_cache": 1000, "cache_hit_rate": 0.8}
    assert not any(w for w in reports.compare_report(store, "warm", "warm", n_boot=200)["warnings"] if "cache" in w)
    from workbench.views.compare import token_line

    assert token_line(cmp) == (
        "tokens per trajectory, the protocol's count (prompt incl. cache reads; cache hit): "
        "A 220 (1,000; 80.0%) · B 1,020 (1,000; 0.0%)"
    )
