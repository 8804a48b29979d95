"""What a real model server sends, and what the history sent back to it holds, turn by turn.

The test server answers as real servers do — calls as JSON text, as fenced JSON, in `<tool_call>` tags,
as native `tool_calls` (with ids reused every turn, as some servers number them), and a reply cut off
by the completion limit in the middle of a call — and, being strict, refuses any history a provider
would refuse (a duplicate id, a call without its result, a call shown twice). Every later request is
checked against what the model said: each call once, in the client mode's own form, the prose kept.
"""
import json

import pytest

from sandbox.agents.limits import RateLimiter
from sandbox.agents.llm import LLMAgent, LLMConfig
from sandbox.agents.textcalls import cut_off_call, find_text_calls, prose
from sandbox.episode import Episode, RetryPolicy
from sandbox.prompts import build_prompt
from sandbox.records import Caps
from tests.conftest import G, S
from tests.openai_server import (FakeOpenAI, Reply, completion, history_problem, text_reply, tool_reply, turn_of)

FAST = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0)
INFO = {"name": "get_paper_info", "arguments": {"paper_id": S}}
SECTIONS = {"name": "list_sections", "arguments": {"paper_id": G}}
SUBMIT = {"name": "submit_answer", "arguments": {"answer": "B", "reasoning": "r"}}
CUT = '<tool_call>{"name": "read_section", "arguments": {"paper_id": "%s", "sec' % G


def cut_reply(text: str) -> Reply:
    return Reply(body=completion({"role": "assistant", "content": text}, finish_reason="length"))


# What the model says on each turn: (the reply, the prose a native-mode history keeps, the calls it makes)
TURNS = [
    (text_reply("I will look at the seed first.\n" + json.dumps(INFO)), "I will look at the seed first.",
     [("get_paper_info", {"paper_id": S})]),
    (text_reply("Now its sections:\n```json\n" + json.dumps(SECTIONS) + "\n```\nThen I read."),
     "Now its sections:\n\nThen I read.", [("list_sections", {"paper_id": G})]),
    (text_reply("<tool_call>" + json.dumps(INFO) + "</tool_call>\n<tool_call>" + json.dumps(SECTIONS) + "</tool_call>"),
     None, [("get_paper_info", {"paper_id": S}), ("list_sections", {"paper_id": G})]),
    (tool_reply(("get_references", {"paper_id": S}), ("think", {"reasoning": "ok"}), content="Native now."),
     "Native now.", [("get_references", {"paper_id": S}), ("think", {"reasoning": "ok"})]),
    (cut_reply("Reading one more.\n<tool_call>" + json.dumps(INFO) + "</tool_call>\n" + CUT), "Reading one more.",
     [("get_paper_info", {"paper_id": S})]),
    (text_reply("<tool_call>" + json.dumps(SUBMIT) + "</tool_call>"), None, [("submit_answer", SUBMIT["arguments"])]),
]


def brain(req, n):
    return TURNS[turn_of(req)][0]


async def play(corpus, text_tools: bool, client: str):
    item = corpus.item("st_0001")
    with FakeOpenAI(brain) as srv:
        agent = LLMAgent(LLMConfig(model="openai/test-model", base_url=srv.url, text_tools=text_tools, client=client),
                         RateLimiter(), None)
        ep = Episode(corpus.view(item), agent, Caps(), build_prompt(item, Caps(), "full", text_tools=text_tools),
                     retry=FAST)
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
            assert [(tc["function"]["name"], json.loads(tc["function"]["arguments"])) for tc in message["tool_calls"]] \
                == calls
            results = [m for m in request["messages"] if m["role"] == "tool" and m["tool_call_id"] in
                       {tc["id"] for tc in message["tool_calls"]}]
            assert len(results) == len(calls)
        text = json.dumps(request["messages"])
        assert "sec\\\"" not in text and CUT not in text  # the fragment is never sent back as text
    # the stored steps keep every reply verbatim, whatever the history sent back
    replies = [s.text for s in ep.steps if s.kind == "assistant"]
    assert replies == [said(k) for k in range(len(TURNS))]


@pytest.mark.parametrize("client", ["native", "litellm"])
async def test_text_mode_history_keeps_the_text_and_sends_results_as_text(mini_corpus, client):
    traj, ep, srv = await play(mini_corpus, text_tools=True, client=client)
    assert traj.termination == "answer" and traj.correct
    for n, request in enumerate(srv.requests):
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
    traj, ep, srv = await play(mini_corpus, text_tools=False, client="native")
    assistant = [s for s in ep.steps if s.kind == "assistant"]
    assert [s.finish_reason for s in assistant] == ["stop"] * 3 + ["tool_calls", "length", "stop"]
    cut = [s for s in ep.steps if s.kind == "cutoff"]
    assert [s.text for s in cut] == [f"cut off mid-call: {CUT}"] and cut[0].turn == 5
    assert traj.cut_off_turns == 1 and traj.lost_calls == 1


async def test_a_native_call_cut_off_mid_arguments_is_lost_not_run(mini_corpus):
    """A native call whose arguments the completion limit ended: not run with undecodable arguments, shown."""
    truncated = Reply(body=completion({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "think", "arguments": '{"reasoning": "a"}'}},
        {"id": "c2", "type": "function", "function": {"name": "read_section", "arguments": '{"paper_id": "x", "se'}}]},
        finish_reason="length"))

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


def test_the_strict_server_refuses_what_providers_refuse():
    call = {"id": "a", "type": "function", "function": {"name": "think", "arguments": "{}"}}
    base = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    ok = base + [{"role": "assistant", "content": None, "tool_calls": [call]},
                 {"role": "tool", "tool_call_id": "a", "content": "r"}]
    assert history_problem({"messages": ok}) is None
    assert "Duplicate value for 'tool_call_id' of a" in history_problem({"messages": ok + ok[2:]})
    assert "did not have response" in history_problem({"messages": ok[:3] + [{"role": "user", "content": "x"}]})
    assert "answers no open call" in history_problem({"messages": ok + [ok[3]]})
    twice = {"role": "assistant", "content": json.dumps({"name": "think", "arguments": {}}), "tool_calls": [call]}
    assert "calls twice" in history_problem({"messages": base + [twice, ok[3]]})


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
    assert cut_off_call('done {"name": "think", "arguments": {}}', find_text_calls('done {"name": "think", "arguments": {}}').spans) is None
