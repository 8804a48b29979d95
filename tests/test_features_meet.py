"""Where the features of issues 22–27 meet: real model servers (ids, refusals), the sequential strategies, the prompts
file, the general-agent setting, the panel's tags. Each test is a path no single feature's tests walked."""

import json

from sandbox.agents.limits import RateLimiter
from sandbox.agents.llm import LLMAgent, LLMConfig
from sandbox.agents.registry import make_scripted
from sandbox.agents.textcalls import find_text_calls
from sandbox.episode import Episode, RetryPolicy
from sandbox.prompts import Prompts, build_prompt
from sandbox.records import Caps
from sandbox.strategies import Strategy
from storage import Store
from tests.cli_inprocess import batch
from tests.conftest import G
from tests.openai_server import FakeOpenAI, seed_of, text_reply, tool_reply, turn_of

FAST = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0)


async def summarize_on_the_server(corpus, brain):
    """One episode of the LLM agent (native client) under the summarize strategy against the local test server."""
    item = corpus.item("st_0001")
    with FakeOpenAI(brain) as srv:
        agent = LLMAgent(LLMConfig(model="openai/test-model", base_url=srv.url, client="native"), RateLimiter(), None)
        ep = Episode(
            corpus.view(item),
            agent,
            Caps(max_tokens_total=10**9),
            build_prompt(item, Caps()),
            retry=FAST,
            strategy=Strategy("summarize"),
            context_budget=10**6,
        )
        traj = await ep.run()
        await agent.session.aclose()
    return traj, ep, srv


def test_a_text_call_whose_argument_holds_an_escaped_quote_and_a_brace_is_read():
    """The bare-JSON scanner took `\\"` for the end of a string, so a `}` after it closed the call early and the call
    was lost (and a cut-off call's fragment was looked for with another scanner that read it right)."""
    text = json.dumps({"name": "search_papers", "arguments": {"query": 'the "}" token'}})
    assert [(c.name, c.args) for c in find_text_calls(text).calls] == [("search_papers", {"query": 'the "}" token'})]


async def test_call_ids_stay_unique_in_the_trajectory_across_a_summary(mini_corpus):
    """Issue 22's rule (ids unique within a trajectory) with issue 23's summarize strategy: the server numbers its calls
    `call_0` every turn; the agent renamed against the conversation only, which the summary replaces, so after it
    `call_0` came back and the stored trajectory held the same id twice."""

    def brain(req, n):
        last = req["messages"][-1]
        if last["role"] == "tool" and last["content"].startswith("Not yet: before you continue"):
            return text_reply("Summary: read G's sections; answer B.")
        t = turn_of(req)
        if any(m["role"] == "user" and m["content"].startswith("Summary of your work") for m in req["messages"]):
            return tool_reply(
                ("submit_answer", {"answer": "B", "reasoning": "r"}) if t else ("list_sections", {"paper_id": G})
            )
        return tool_reply(
            ("list_sections", {"paper_id": G}) if t == 0 else ("submit_answer", {"answer": "B", "reasoning": "r"})
        )

    traj, ep, srv = await summarize_on_the_server(mini_corpus, brain)
    assert srv.refusals == []
    assert [s.kind for s in ep.steps].count("history") >= 1 and traj.termination == "answer"
    ids = [s.tool_call_id for s in ep.steps if s.kind == "tool"]
    assert len(ids) >= 4 and len(ids) == len(set(ids)), ids
    assert ids[0] == "call_0"  # the first keeps the server's id: only a reuse is renamed


async def test_a_scripted_agent_writes_its_summary_when_the_prompts_file_words_the_request(mini_corpus):
    """Issue 23's scripted agents recognised the summarize request by our wording only: with a prompts file's
    `summarize` (issue 27) the heuristic answered it with a tool call, stored as an empty summary."""
    item = mini_corpus.item("st_0001")
    mine = Prompts(summarize="Summarize, please.")
    agent = make_scripted("heuristic", item, Caps(), 0, 0, 0)
    ep = Episode(
        mini_corpus.view(item), agent, Caps(), build_prompt(item, Caps(), texts=mine), strategy=Strategy("summarize")
    )
    await ep.run()
    summaries = [s for s in ep.steps if s.kind == "summary"]
    assert summaries and all(s.text and s.text.startswith("Tried:") and not s.tool_args for s in summaries)


def test_a_continuation_level_drops_the_forced_final_call_when_the_prompts_file_words_stop(
    tmp_path, capsys, monkeypatch
):
    """The continuation protocol recognised the level below's STOP by our wording (`**CRITICAL`): with a prompts
    file's `stop` the forced final call (here a prose reply) was replayed into the next level as one of its turns."""
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    prompts = tmp_path / "p.toml"
    prompts.write_text('stop = "ANSWER NOW."\n')

    def brain(req, n):
        last = req["messages"][-1]
        if last["role"] == "user" and str(last["content"]).startswith("ANSWER NOW."):
            return text_reply("I cannot decide.")
        t = turn_of(req)
        return tool_reply(("get_references", {"paper_id": seed_of(req)}), prompt_tokens=3000 + 1000 * t)

    db = tmp_path / "s.sqlite"
    with FakeOpenAI(brain) as srv:
        proc = batch(
            capsys,
            "scale",
            "sequential",
            "--axis",
            "tokens",
            "--grid",
            "4k,6k",
            "--protocol",
            "continuation",
            "--agent",
            "llm",
            "--model",
            "openai/m",
            "--base-url",
            srv.url,
            "--limit",
            "2",
            "--run",
            "c",
            "--db",
            str(db),
            "--quiet",
            "--format",
            "json",
            "--boot",
            "200",
            "--prompts",
            str(prompts),
        )
    assert proc.returncode == 0, proc.stderr
    store = Store(db, readonly=True)
    low, high = store.runs_in_group("c")
    for run in (low, high):
        for t in store.trajectories(run["id"]):
            texts = [s["text"] for s in store.steps(t["id"]) if s["kind"] == "assistant"]
            assert texts.count("I cannot decide.") == 1 and texts[-1] == "I cannot decide.", (run["name"], texts)


def test_a_text_tools_model_in_the_general_setting_with_a_prompts_file_calls_an_extra_tool(
    tmp_path, capsys, monkeypatch
):
    """Issue 25's extra tools with issue 22's text calls and issue 27's system template: the custom system prompt
    lists the extras (its `{tools_block}`), and a call to one written as text is read and answered. The text parser
    knew the protocol's seven names only, so the call was prose: nudged, never run, never counted out of domain."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    prompts = tmp_path / "p.toml"
    prompts.write_text('system = """\nMINE\n{tools_block}\n---\n{task_block}"""\n')

    def brain(req, n):
        if turn_of(req) == 0:
            return text_reply(
                '<tool_call>{"name": "get_current_weather", "arguments": {"location": "Lisbon"}}</tool_call>'
            )
        return text_reply(
            '<tool_call>{"name": "submit_answer", "arguments": {"answer": "A", "reasoning": "r"}}</tool_call>'
        )

    db = str(tmp_path / "s.sqlite")
    with FakeOpenAI(brain) as srv:
        out = batch(
            capsys,
            "run",
            "--agent",
            "llm",
            "--model",
            "openai/test-model",
            "--base-url",
            srv.url,
            "--ids",
            "st_0001",
            "--run",
            "l",
            "--db",
            db,
            "--quiet",
            "--format",
            "json",
            "--extra-tools",
            "builtin",
            "--extra-tools-count",
            "50",
            "--text-tools",
            "--prompts",
            str(prompts),
        )
        assert out.returncode == 0, out.stderr
        first = srv.requests[0]
    system = first["messages"][0]["content"]
    assert system.startswith("MINE\n") and "- **get_current_weather**(location, units=…)" in system
    store = Store(db)
    run = store.run("l")
    steps = store.steps(store.trajectories(run["id"])[0]["id"])
    tools = [s for s in steps if s["kind"] == "tool"]
    assert [(s["tool_name"], s["status"]) for s in tools] == [("get_current_weather", "ok"), ("submit_answer", "ok")]
    assert not any(s["kind"] == "nudge" for s in steps)


def test_the_panel_of_runs_in_the_general_setting_in_the_cli_and_the_panel_screen(tmp_path, capsys):
    """Issue 25 wrapped `panel_report` (adding the registry-size table) without issue 24's `cache_dir`: `report
    --panel` was an internal error (TypeError), and the Panel screen's `panel_at` called the unwrapped report, so
    the screen never had the registry table the CLI shows."""
    from workbench.service.reports.general import panel_at

    db = str(tmp_path / "s.sqlite")
    for name, extra in (("p0", ()), ("p8", ("--extra-tools", "builtin", "--extra-tools-count", "8"))):
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
            "6",
            "--quiet",
            "--format",
            "json",
            "--distractible",
            "0.6",
            *extra,
        )
        assert out.returncode == 0, out.stderr
    cli = batch(capsys, "report", "p0", "p8", "--panel", "--db", db, "--format", "json")
    assert cli.returncode == 0, cli.stderr
    screen = panel_at(tmp_path / "s.sqlite", ["p0", "p8"])
    assert json.loads(cli.stdout)["registry"]["rows"] == json.loads(json.dumps(screen["registry"]["rows"]))


async def test_the_reference_summary_counts_a_summary_turn_as_a_turn(mini_corpus):
    """The summarize strategy's summary reply is a model call charged like any turn (issue 23), but the reference
    summary export knew only `assistant` steps as turns: its total_turns and turn tokens left the summary out."""
    from dataclasses import asdict

    from tests.scripted import ScriptAgent, turn
    from workbench.service.summary import turn_records

    read, submit = (
        ("read_section", {"paper_id": G, "section": "B"}),
        ("submit_answer", {"answer": "B", "reasoning": "r"}),
    )
    agent = ScriptAgent(
        [
            turn(read, tokens=400),
            turn(submit, tokens=600),
            turn(text="I read G §B.", tokens=700),
            turn(submit, tokens=1200),
        ]
    )
    item = mini_corpus.item("st_0001")
    ep = Episode(
        mini_corpus.view(item),
        agent,
        Caps(max_tokens_total=10**9),
        build_prompt(item, Caps()),
        context_budget=1000,
        strategy=Strategy("summarize"),
    )
    traj = await ep.run()
    records = turn_records([asdict(s) for s in ep.steps])
    assert len(records) == traj.turns == traj.model_calls == 4
    assert sum(r["prompt_tokens"] for r in records) == traj.prompt_tokens
    assert records[2]["content"] == "I read G §B." and records[2]["tool_calls"] == []


async def test_a_summary_reply_cut_off_by_the_completion_limit_is_stored_counted_and_shown(mini_corpus):
    """Issue 22 stores every reply's finish_reason and counts cut-off replies; issue 23's summary turn is a reply, but
    its step was stored without finish_reason and never counted, so the stepper could not mark it."""
    from tests.openai_server import Reply, completion
    from workbench.tui.widgets.transcript import build_entries, transcript_text

    def brain(req, n):
        last = req["messages"][-1]
        if last["role"] == "tool" and last["content"].startswith("Not yet: before you continue"):
            return Reply(
                body=completion({"role": "assistant", "content": "Summary: I read G and"}, finish_reason="length")
            )
        return tool_reply(
            ("submit_answer", {"answer": "B", "reasoning": "r"}) if turn_of(req) else ("list_sections", {"paper_id": G})
        )

    traj, ep, _srv = await summarize_on_the_server(mini_corpus, brain)
    summaries = [s for s in ep.steps if s.kind == "summary"]
    assert summaries and all(s.finish_reason == "length" for s in summaries)
    assert traj.cut_off_turns == len(summaries)
    text = transcript_text(build_entries([s.__dict__ for s in ep.steps]))
    assert text.count("≡ summary [cut off: length]") == len(summaries)


def test_the_jsonl_export_carries_prompts_setting_strategy_and_new_step_fields(tmp_path, capsys):
    """A run with every new option (prompts file, extra tools, a strategy, family and tier) exported as JSON Lines:
    the run header says which prompts (their hash), which setting and which strategy; the steps carry finish_reason
    and the strategy's own steps. The header had the family and tier only: two exports of runs with other prompts,
    tools or strategies read the same."""
    from storage.export import trajectory_lines

    prompts = tmp_path / "p.toml"
    prompts.write_text('nudge = "Call one."\n')
    db = str(tmp_path / "s.sqlite")
    out = batch(
        capsys,
        "scale",
        "sequential",
        "--axis",
        "points",
        "--grid",
        "6,12",
        "--strategy",
        "summarize",
        "--run",
        "S",
        "--db",
        db,
        "--limit",
        "3",
        "--quiet",
        "--data",
        "builtin",
        "--agent",
        "heuristic",
        "--prompts",
        str(prompts),
        "--extra-tools",
        "builtin",
        "--extra-tools-count",
        "4",
        "--family",
        "Qwen",
        "--tier",
        "compute-efficient",
    )
    assert out.returncode == 0, out.stderr
    store = Store(db, readonly=True)
    run = store.run("S@12")
    lines = list(trajectory_lines(store, "S@12"))
    header = lines[0]["run"]
    assert header["prompt_hash"] == run["prompt_hash"] and (header["family"], header["tier"]) == (
        "Qwen",
        "compute-efficient",
    )
    assert header["extra_tools"] == run["config"]["extra_tools"] and header["scaling"]["strategy"] == "summarize"
    steps = [s for line in lines for s in line["steps"]]
    assert all("finish_reason" in s for s in steps) and {"summary", "history"} <= {s["kind"] for s in steps}
    assert all("cut_off_turns" in line and "lost_calls" in line for line in lines)


def test_a_study_launched_from_the_tui_tells_its_judge_the_runs_judge_prompts(monkeypatch):
    """Issue 23's TUI-launched parallel study made its model judge with a copy of `make_judge` that predates issue
    27's prompts, so the judge was sent our prompts whatever the launch form's prompts file said (the CLI's `scale
    parallel` sent the file's). One judge factory now; its refusals stay one-line input errors."""
    from types import SimpleNamespace

    import pytest

    from workbench.service.scaling.sequential import ScalingInputError
    from workbench.service.scaling.studies import judge_of

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    mine = Prompts(judge_pointwise="Judge it my way. <judgment>Correct</judgment> or <judgment>Wrong</judgment>.")
    spec = SimpleNamespace(model="openai/gpt-4.1-mini", agent_options={}, prompts=mine)
    assert judge_of("openai/gpt-4.1-mini", spec).prompts is mine
    assert judge_of("same", spec).prompts is mine
    with pytest.raises(ScalingInputError, match="judge 'same' needs an LLM run"):
        judge_of("same", SimpleNamespace(model=None, agent_options={}, prompts=None))


async def test_the_reference_summary_leaves_a_failed_verifier_out_of_the_agents_turns(mini_corpus):
    """A failed verifier (issue 23) is an `error` step, emitted while the agent's submit is being answered: the
    reference summary export took it for an error turn of the agent's, so total_turns counted it and the extended
    submit's result was filed under it instead of the assistant turn that made the call."""
    from dataclasses import asdict

    from tests.scripted import ScriptAgent, turn
    from workbench.service.summary import turn_records

    class Broken:
        name = "broken"

        async def assess(self, item, steps, answer):
            raise RuntimeError("boom")

    read, submit = (
        ("read_section", {"paper_id": G, "section": "B"}),
        ("submit_answer", {"answer": "B", "reasoning": "r"}),
    )
    agent = ScriptAgent([turn(submit, tokens=100), turn(read, tokens=200), turn(submit, tokens=1500)])
    item = mini_corpus.item("st_0001")
    ep = Episode(
        mini_corpus.view(item),
        agent,
        Caps(max_tokens_total=10**9),
        build_prompt(item, Caps()),
        context_budget=1000,
        strategy=Strategy("verifier", Broken()),
    )
    traj = await ep.run()
    assert any(s.kind == "error" for s in ep.steps) and traj.termination == "answer"
    records = turn_records([asdict(s) for s in ep.steps])
    assert len(records) == traj.turns == 3 and all(r["role"] == "assistant" for r in records)
    assert [[res["name"] for res in r["tool_results"]] for r in records] == [
        ["submit_answer"],
        ["read_section"],
        ["submit_answer"],
    ]
