"""AgentHop under Inspect AI (the `inspect` extra): the task run by Inspect against the local test server, compared
request by request with our own loop on the same item; its logs imported; our runs exported (docs/inspect.md)."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log

from sandbox.agents.limits import RateLimiter
from sandbox.agents.llm import LLMAgent, LLMConfig
from sandbox.episode import Episode, RetryPolicy
from sandbox.extra_tools.setting import open_extra_tools, resolve
from sandbox.prompt_set import load_prompts
from sandbox.prompts import build_prompt
from sandbox.records import Caps
from sandbox.runner import RunSpec
from storage import Store
from tests.cli_inprocess import batch
from tests.openai_server import FakeOpenAI, Reply, seed_of, text_reply, tool_reply, turn_of
from workbench.service import paths
from workbench.service.datasets import open_dataset
from workbench.service.inspect.task import TaskOptionError

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


def our_loop(url: str, item_id: str, ablation: str = ABLATION, extra_tools: str | None = None, prompts=None):
    """Our own loop on the item: the native OpenAI client, the same caps, ablation, extra tools and prompts."""
    corpus, _ = open_dataset("builtin", paths.cache_dir())
    item = corpus.item(item_id)
    record = resolve(extra_tools, None, "full", 1, 0) if extra_tools else None
    spec = RunSpec(
        name="x", dataset="builtin", agent="llm", caps=Caps(budget=BUDGET), ablation=ablation, extra_tools=record
    )
    caps = spec.effective_caps()
    agent = LLMAgent(LLMConfig(model="openai/test-model", base_url=url, client="native"), RateLimiter(), None)

    async def play():
        try:
            async with open_extra_tools(record) as extra:
                prompt = build_prompt(item, caps, ablation, texts=prompts, extra_tools=extra)
                return await Episode(corpus.view(item), agent, caps, prompt, retry=FAST, extra_tools=extra).run()
        finally:
            await agent.session.aclose()

    return asyncio.run(play())


def inspect_run(url: str, log_dir, monkeypatch, model: str = "openai/test-model", **task_args):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    logs = inspect_eval(
        "agenthop_workbench/agenthop",
        model=model,
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
    for mine, inspect_request in zip(ours.requests, theirs.requests, strict=True):
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


@pytest.mark.parametrize(("ablation", "extra_tools"), [("closed-book", None), ("full", "builtin")])
def test_the_ablation_and_the_extra_tools_reach_the_model_as_in_our_loop(tmp_path, monkeypatch, ablation, extra_tools):
    """-T ablation and -T extra_tools: the same opening, tools offered, rejections and results as our loop's."""
    with FakeOpenAI(script) as ours:
        corpus, _ = open_dataset("builtin", paths.cache_dir())
        trajectory = our_loop(ours.url, corpus.items[0].id, ablation, extra_tools)
    task_args = {
        "limit": 1,
        "budget": BUDGET,
        "ablation": ablation,
        **({"extra_tools": extra_tools} if extra_tools else {}),
    }
    with FakeOpenAI(script) as theirs:
        log = inspect_run(theirs.url, tmp_path, monkeypatch, **task_args)
    assert len(theirs.requests) == len(ours.requests) > 1
    for mine, inspect_request in zip(ours.requests, theirs.requests, strict=True):
        assert wire(inspect_request) == wire(mine) and offered(inspect_request) == offered(mine)
    names = [tool[0] for tool in offered(theirs.requests[0])]
    assert names == ["submit_answer"] if ablation == "closed-book" else len(names) > 7  # the extras offered too
    assert log.samples[0].metadata["agenthop"]["termination"] == trajectory.termination


def report(capsys, run: str) -> dict:
    result = batch(capsys, "report", run, "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    data.pop("run")
    return data


@pytest.fixture
def heuristic_run(capsys) -> str:
    result = batch(capsys, "run", "--agent", "heuristic", "--limit", "6", "--replicates", "2", "--run", "h", "--quiet")
    assert result.returncode == 0, result.stderr
    return "h"


def test_a_heuristic_run_exported_is_read_by_inspect_one_sample_per_trajectory(capsys, tmp_path, heuristic_run):
    out = tmp_path / "h.eval"
    result = batch(capsys, "export", heuristic_run, "--format", "inspect", "--out", str(out))
    assert result.returncode == 0, result.stderr
    log = read_eval_log(str(out))
    store = Store(str(paths.store_path()))
    trajectories = store.trajectories(store.run(heuristic_run)["id"])
    assert len(log.samples) == len(trajectories) == 12
    assert {(s.id, s.epoch) for s in log.samples} == {(t["item_id"], t["replicate"] + 1) for t in trajectories}
    scored = [s.scores["agenthop_score"] for s in log.samples]
    assert sum(s.value == "C" for s in scored) == sum(t["correct"] for t in trajectories) > 0
    by_key = {(t["item_id"], t["replicate"] + 1): t for t in trajectories}
    for sample, score in zip(log.samples, scored, strict=True):
        t = by_key[(sample.id, sample.epoch)]
        assert score.metadata["termination"] == t["termination"] and score.metadata["points"] == t["points_used"]
        assert score.metadata["paper_recall"] == bool(t["paper_recall"])
        # the axes by hand from the stored trajectory: conversion counted only with paper recall, calls per calling turn
        assert score.metadata["conversion"] == (bool(t["correct"]) if t["paper_recall"] else None)
        assert score.metadata["calls_per_turn"] == t["tool_calls"] / t["turns_with_calls"]
        tools = [m for m in sample.messages if m.role == "tool"]
        assert len(tools) == t["tool_calls"]  # every call's result, rejected calls included
    assert log.eval.task == "agenthop_workbench/agenthop" and log.results.scores[0].metrics["accuracy"].value == (
        sum(t["correct"] for t in trajectories) / 12
    )


def test_a_scripted_runs_unmeasured_tokens_are_exported_as_null_not_0(capsys, tmp_path, heuristic_run):
    """The heuristic calls no model: its tokens are not measured, "—" in every report, so null in the log (issue 44,
    item 10: the score's metadata said `tokens: 0`)."""
    out = tmp_path / "h.json"
    assert batch(capsys, "export", heuristic_run, "--format", "inspect", "--out", str(out)).returncode == 0
    for sample in read_eval_log(str(out)).samples:
        score = sample.scores["agenthop_score"].metadata
        assert (score["tokens"], score["prompt_tokens"], score["completion_tokens"]) == (None, None, None)
        record = sample.metadata["agenthop"]
        assert all(record[k] is None for k in ("tokens", "prompt_tokens", "completion_tokens", "cache_read_tokens"))
        assert score["turns"] == record["turns"] > 0  # what was measured stays


def test_export_then_import_gives_the_same_report(capsys, tmp_path, heuristic_run):
    out = tmp_path / "h.eval"
    assert batch(capsys, "export", heuristic_run, "--format", "inspect", "--out", str(out)).returncode == 0
    result = batch(capsys, "import-inspect", str(out), "--run", "back", "--format", "json", "--quiet")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["checked"] == 12 and summary["tool_result_mismatches"] == 0 and summary["field_mismatches"] == {}
    assert summary["tool_results_compared"] > 12
    assert report(capsys, "back") == report(capsys, heuristic_run)


def test_a_priced_model_run_exported_and_imported_gives_the_same_report_cost_included(capsys, tmp_path, monkeypatch):
    """The round trip of a model's run, not only a scripted one: tokens as measured and the cost the model's price
    gives them (each turn priced from its logged usage, as our loop prices it), so the two reports are equal."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAI(script) as srv:
        ran = batch(
            capsys, "run", "--agent", "llm", "--model", "openai/gpt-4.1-mini", "--base-url", srv.url, "--limit", "3",
            "--run", "m", "--quiet",
        )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    out = tmp_path / "m.eval"
    assert batch(capsys, "export", "m", "--format", "inspect", "--out", str(out)).returncode == 0
    assert batch(capsys, "import-inspect", str(out), "--run", "back", "--quiet").returncode == 0
    original, back = report(capsys, "m"), report(capsys, "back")
    assert original["priced"] and original["cost_usd"] > 0
    assert back == original


def test_an_exported_run_s_family_and_tier_come_back_with_it(capsys, tmp_path, heuristic_run):
    """A run's tags (`runs tag`, `run --family/--tier`) cross the round trip, as `merge` and the JSONL export carry
    them: the panel groups the imported run where the run was; a flag on the import still wins."""
    tagged = batch(capsys, "runs", "tag", heuristic_run, "--family", "Qwen", "--tier", "compute-efficient")
    assert tagged.returncode == 0, tagged.stderr
    out = tmp_path / "h.eval"
    assert batch(capsys, "export", heuristic_run, "--format", "inspect", "--out", str(out)).returncode == 0
    assert batch(capsys, "import-inspect", str(out), "--run", "back", "--quiet").returncode == 0
    again = batch(capsys, "import-inspect", str(out), "--run", "back2", "--tier", "open-frontier", "--quiet")
    assert again.returncode == 0, again.stderr
    store = Store(str(paths.store_path()))
    assert (store.run("back")["family"], store.run("back")["tier"]) == ("Qwen", "compute-efficient")
    assert (store.run("back2")["family"], store.run("back2")["tier"]) == ("Qwen", "open-frontier")


def test_a_log_of_the_task_run_under_inspect_imports_as_a_run(capsys, tmp_path, monkeypatch):
    with FakeOpenAI(script) as srv:
        log = inspect_run(
            srv.url,
            tmp_path / "logs",
            monkeypatch,
            model="openai/gpt-4.1-mini",
            limit=1,
            budget=BUDGET,
            ablation=ABLATION,
        )
    ended = log.samples[0].metadata["agenthop"]
    result = batch(capsys, "import-inspect", log.location, "--run", "from-inspect", "--format", "json", "--quiet")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["model"] == "openai/gpt-4.1-mini" and summary["caps"]["budget"] == BUDGET
    assert summary["field_mismatches"] == {} and summary["tool_result_mismatches"] == 0
    store = Store(str(paths.store_path()))
    run = store.run("from-inspect")
    (t,) = store.trajectories(run["id"])
    for key in ("termination", "answer", "points_used", "turns", "tokens", "prompt_tokens", "completion_tokens"):
        assert t[key] == ended[key], key
    steps = store.steps(t["id"])
    assert sum(s["kind"] == "assistant" for s in steps) == 7  # every model reply a step
    assert (run["family"], run["tier"], run["ablation"]) == ("GPT", "closed-frontier", ABLATION)  # from the model


def test_a_log_of_another_task_is_refused_naming_it(capsys, tmp_path):
    other = Task(dataset=[Sample(input="2 + 2?", target="4")], name="arithmetic")
    (log,) = inspect_eval(other, model="mockllm/model", log_dir=str(tmp_path), display="none")
    result = batch(capsys, "import-inspect", log.location, "--run", "nope")
    assert result.returncode == 2
    assert "arithmetic" in result.stderr and log.location in result.stderr
    assert not paths.store_path().exists()  # refused before the store was made


def test_the_task_runs_offline_with_mockllm_and_its_log_imports(capsys, tmp_path):
    """The issue's first check: Inspect's mock model, three items, a log written, a run of three trajectories."""
    (log,) = inspect_eval(
        "agenthop_workbench/agenthop",
        model="mockllm/model",
        task_args={"limit": 3},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success" and len(log.samples) == 3
    for sample in log.samples:  # the mock answers in prose every turn: nudged to the turn cap, its tokens counted
        assert sample.metadata["agenthop"]["termination"] == "max_turns" and sample.metadata["agenthop"]["tokens"] > 0
    result = batch(capsys, "import-inspect", log.location, "--run", "mock", "--format", "json", "--quiet")
    assert result.returncode == 0, result.stderr
    store = Store(str(paths.store_path()))
    trajectories = store.trajectories(store.run("mock")["id"])
    assert len(trajectories) == 3
    assert {t["item_id"]: t["tokens"] for t in trajectories} == {
        s.id: s.metadata["agenthop"]["tokens"] for s in log.samples
    }  # each turn replayed with the tokens the mock's usage gave it


def test_without_the_extra_the_commands_say_how_to_install_it(capsys, tmp_path, monkeypatch, heuristic_run):
    for module in ("workbench.service.inspect.log_import", "workbench.service.inspect.log_export"):
        monkeypatch.setitem(sys.modules, module, None)  # as if inspect-ai were not installed: the import fails
    for args in (
        ("import-inspect", str(tmp_path / "x.eval"), "--run", "x"),
        ("export", heuristic_run, "--format", "inspect", "--out", str(tmp_path / "h.eval")),
    ):
        result = batch(capsys, *args)
        assert result.returncode == 2 and "pip install 'agenthop-workbench[inspect]'" in result.stderr
    assert not (tmp_path / "h.eval").exists()


def test_a_prompts_file_reaches_the_model_as_in_our_loop_and_its_log_replays_with_it(capsys, tmp_path, monkeypatch):
    """-T prompts=FILE.toml: its texts are what the model reads, as our loop sends them under --prompts; an import
    replays the log with the same file (without it, or with another, the log is refused, naming it)."""
    path = tmp_path / "prompts.toml"
    path.write_text('nudge = "Use a tool, or submit."\nexhausted_nudge = "No points left: submit now."\n')
    with FakeOpenAI(script) as ours:
        corpus, _ = open_dataset("builtin", paths.cache_dir())
        our_loop(ours.url, corpus.items[0].id, prompts=load_prompts(path))
    with FakeOpenAI(script) as theirs:
        log = inspect_run(
            theirs.url, tmp_path / "logs", monkeypatch, limit=1, budget=BUDGET, ablation=ABLATION, prompts=str(path)
        )
    for mine, inspect_request in zip(ours.requests, theirs.requests, strict=True):
        assert wire(inspect_request) == wire(mine)
    texts = "\n".join(m[1] for m in wire(theirs.requests[-1]))
    assert "Use a tool, or submit." in texts and "No points left: submit now." in texts
    result = batch(capsys, "import-inspect", log.location, "--run", "p")
    assert result.returncode == 2 and "--prompts" in result.stderr and log.location in result.stderr
    other = tmp_path / "other.toml"
    other.write_text('nudge = "Something else."\n')
    result = batch(capsys, "import-inspect", log.location, "--run", "p", "--prompts", str(other))
    assert result.returncode == 2 and log.location in result.stderr
    assert not paths.store_path().exists()
    result = batch(capsys, "import-inspect", log.location, "--run", "p", "--prompts", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["tool_result_mismatches"] == 0 and summary["field_mismatches"] == {} and summary["checked"] == 1


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [("ablation", "open-book", "choose from full"), ("budget", -1, "at least 0"), ("max_turns", "many", "at least 1")],
)
def test_a_task_option_out_of_range_is_named_and_nothing_runs(tmp_path, option, value, words):
    with pytest.raises(TaskOptionError, match=f"-T {option}={value}: .*{words}"):
        inspect_eval(
            "agenthop_workbench/agenthop",
            model="mockllm/model",
            task_args={option: value},
            log_dir=str(tmp_path),
            display="none",
        )
    assert not list(tmp_path.iterdir())  # no log


def text_and_cut_script(req: dict, n: int) -> Reply:
    """A model that writes its calls as text (a `<tool_call>` block, a bare JSON call), is cut off by the completion
    limit in the middle of a call, then submits natively: what a small local model does."""
    from tests.openai_server import completion

    seed = seed_of(req)
    turns = [
        lambda: text_reply(
            f'I will look. <tool_call>{{"name": "get_paper_info", "arguments": {{"paper_id": "{seed}"}}}}</tool_call>'
        ),
        lambda: Reply(
            body=completion(
                {"role": "assistant", "content": 'Now the sections. {"name": "list_sections", "arguments": {"pa'},
                finish_reason="length",
            )
        ),
        lambda: text_reply(f'{{"name": "list_sections", "arguments": {{"paper_id": "{seed}"}}}}'),
        lambda: tool_reply(("submit_answer", {"answer": "C", "reasoning": "read"})),
    ]
    return turns[min(turn_of(req), len(turns) - 1)]()


def native_cut_script(req: dict, n: int) -> Reply:
    """A native call whose arguments the completion limit cut off mid-way, then a submit."""
    from tests.openai_server import completion

    if turn_of(req) == 0:
        call = {
            "id": "call_0",
            "type": "function",
            "function": {"name": "get_paper_info", "arguments": '{"paper_id": "a'},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return Reply(body=completion(message, finish_reason="length"))
    return tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}))


def overflow_script(req: dict, n: int) -> Reply:
    """One call, then the server refuses the request: the context window is full (OpenAI's code)."""
    from tests.openai_server import error_reply

    if turn_of(req) == 0:
        return tool_reply(("get_paper_info", {"paper_id": seed_of(req)}))
    return error_reply(
        400,
        message="This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.",
        kind="invalid_request_error",
        code="context_length_exceeded",
    )


ENDING = ("termination", "error_kind", "tool_calls", "turns_with_calls", "cut_off_turns", "lost_calls", "turns")


@pytest.mark.parametrize(
    "brain",
    [text_and_cut_script, native_cut_script, overflow_script],
    ids=["text-calls-and-cut-off", "native-call-cut-off", "overflow"],
)
def test_under_inspect_text_calls_cut_offs_and_an_overflow_end_as_in_our_loop(tmp_path, monkeypatch, brain):
    """Calls written as text are run (not nudged as prose), a reply cut off mid-call is counted and never sent back,
    and a full context window ends the episode as `error` / `context_overflow`: under Inspect as in our loop, request
    by request and in the trajectory each records."""
    with FakeOpenAI(brain) as ours:
        corpus, _ = open_dataset("builtin", paths.cache_dir())
        trajectory = our_loop(ours.url, corpus.items[0].id, ablation="full")
    with FakeOpenAI(brain) as theirs:
        log = inspect_run(theirs.url, tmp_path, monkeypatch, limit=1, budget=BUDGET, ablation="full")
    assert len(theirs.requests) == len(ours.requests) > 1
    for mine, inspect_request in zip(ours.requests, theirs.requests, strict=True):
        assert wire(inspect_request) == wire(mine)
    ended = log.samples[0].metadata["agenthop"]
    assert {k: ended[k] for k in ENDING} == {k: getattr(trajectory, k) for k in ENDING}
    if brain is text_and_cut_script:
        assert (trajectory.tool_calls, trajectory.cut_off_turns, trajectory.lost_calls) == (3, 1, 1)
        assert trajectory.termination == "answer"
    elif brain is native_cut_script:
        assert (trajectory.tool_calls, trajectory.cut_off_turns, trajectory.lost_calls) == (1, 1, 1)
    else:
        assert (trajectory.termination, trajectory.error_kind) == ("error", "context_overflow")


def normalised(request: dict) -> dict:
    """A request body without what Inspect's OpenAI-compatible provider (`openai-api/…`, the route to a local server)
    adds and cannot be told to leave out, each checked here: `tool_choice: "auto"` (sent whenever tools are) and a
    `strict` flag on every tool (`-M strict_tools=false` sends `false`); and an empty assistant content spelled ""."""
    body = json.loads(json.dumps(request))
    if "tool_choice" in body:
        assert body.pop("tool_choice") == "auto"
    for tool in body.get("tools") or []:
        if "strict" in tool["function"]:
            assert tool["function"].pop("strict") is True
    for m in body["messages"]:
        if m["role"] == "assistant" and not m.get("content"):
            m.pop("content", None)
        for c in m.get("tool_calls") or []:
            c.setdefault("type", "function")
    return body


def test_inspect_sends_our_schemas_and_limit_and_differs_only_in_tool_choice_and_strict(tmp_path, monkeypatch):
    """Through Inspect's OpenAI-compatible route (`openai-api/local/…`, as to a llama.cpp server): the protocol's
    schemas as ours are sent (no `additionalProperties: false`), our completion limit (`max_tokens`), the same
    messages — every request body equal to ours but for the two fields `normalised` takes out: `tool_choice: "auto"`
    (OpenAI's default when tools are given) and `strict: true` on each tool, which Inspect's provider always sends
    (docs/inspect.md says so)."""
    monkeypatch.setenv("LOCAL_API_KEY", "test-key")
    with FakeOpenAI(script) as ours:
        corpus, _ = open_dataset("builtin", paths.cache_dir())
        our_loop(ours.url, corpus.items[0].id)
    with FakeOpenAI(script) as theirs:
        logs = inspect_eval(
            "agenthop_workbench/agenthop",
            model="openai-api/local/test-model",
            model_base_url=theirs.url,
            task_args={"limit": 1, "budget": BUDGET, "ablation": ABLATION},
            log_dir=str(tmp_path),
            display="none",
            max_retries=0,
        )
        assert logs[0].status == "success", logs[0].error
    assert len(theirs.requests) == len(ours.requests) == 7
    for mine, inspect_request in zip(ours.requests, theirs.requests, strict=True):
        assert "tool_choice" not in mine and inspect_request["tool_choice"] == "auto"
        assert all(t["function"]["strict"] is True for t in inspect_request["tools"])
        assert not any("additionalProperties" in t["function"]["parameters"] for t in inspect_request["tools"])
        assert not any("strict" in t["function"] for t in mine["tools"])
        assert normalised(inspect_request) == normalised(mine)


def two_item_brain(first_seed: str):
    """The first item's episode writes calls as text and is cut off mid-call; any other's meets a full context
    window after one call."""

    def brain(req: dict, n: int) -> Reply:
        return (text_and_cut_script if seed_of(req) == first_seed else overflow_script)(req, n)

    return brain


def assistant_facts(run: str) -> list[list[tuple]]:
    """Per trajectory (in item order), each model reply's step: its finish reason and usage (raw usage included)."""
    store = Store(str(paths.store_path()))
    out = []
    for t in sorted(store.trajectories(store.run(run)["id"]), key=lambda t: t["item_id"]):
        steps = store.steps(t["id"])
        out.append(
            [(s["finish_reason"], json.dumps(s["usage"], sort_keys=True)) for s in steps if s["kind"] == "assistant"]
        )
    return out


@pytest.fixture
def cut_and_overflow_run(capsys, monkeypatch) -> str:
    """An LLM run of two items on the local server: one with text calls and a reply cut off mid-call, one ended by
    a full context window."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    corpus, _ = open_dataset("builtin", paths.cache_dir())
    with FakeOpenAI(two_item_brain(corpus.items[0].seed_paper_id)) as srv:
        ran = batch(
            capsys, "run", "--agent", "llm", "--model", "openai/test-model", "--base-url", srv.url, "--limit", "2",
            "--run", "m", "--quiet",
        )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    return "m"


def test_export_then_import_keeps_cut_offs_overflows_finish_reasons_and_raw_usage(
    capsys, tmp_path, cut_and_overflow_run
):
    """The round trip of a model's run with a cut-off and a context overflow: the same `report --format json` (cut
    offs, error kinds, terminations included), each reply's finish reason and raw usage, and no field mismatch."""
    original = report(capsys, cut_and_overflow_run)
    assert original["cut_off"] == {"turns": 1, "calls_lost": 1, "trajectories": 1}
    assert original["error_kinds"] == {"context_overflow": 1} and original["terminations"]["error"] == 1
    out = tmp_path / "m.eval"
    assert batch(capsys, "export", cut_and_overflow_run, "--format", "inspect", "--out", str(out)).returncode == 0
    result = batch(capsys, "import-inspect", str(out), "--run", "back", "--format", "json", "--quiet")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["checked"] == 2 and summary["field_mismatches"] == {} and summary["tool_result_mismatches"] == 0
    assert report(capsys, "back") == original
    assert assistant_facts("back") == assistant_facts(cut_and_overflow_run)


def test_a_log_of_the_task_with_cut_offs_and_an_overflow_imports_as_our_run_ran(
    capsys, tmp_path, monkeypatch, cut_and_overflow_run
):
    """The same two items under Inspect, its log imported: the endings, error kinds, cut-offs, lost calls and calls of
    each trajectory are our own run's, and the import says so (no field mismatch, the cut-off counts checked)."""
    corpus, _ = open_dataset("builtin", paths.cache_dir())
    with FakeOpenAI(two_item_brain(corpus.items[0].seed_paper_id)) as srv:
        log = inspect_run(srv.url, tmp_path / "logs", monkeypatch, limit=2, budget=30, ablation="full")
    result = batch(capsys, "import-inspect", log.location, "--run", "from-inspect", "--format", "json", "--quiet")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["checked"] == 2 and summary["field_mismatches"] == {}
    store = Store(str(paths.store_path()))
    keys = ("item_id", "termination", "error_kind", "cut_off_turns", "lost_calls", "tool_calls", "turns", "tokens")

    def endings(run: str) -> list[tuple]:
        rows = store.trajectories(store.run(run)["id"])
        return sorted(tuple(t[k] for k in keys) for t in rows)

    assert endings("from-inspect") == endings(cut_and_overflow_run)
    ours, theirs = report(capsys, cut_and_overflow_run), report(capsys, "from-inspect")
    for key in ("cut_off", "error_kinds", "terminations", "accuracy"):
        assert theirs[key] == ours[key], key


def test_an_import_names_the_cut_off_counts_it_did_not_reproduce(capsys, tmp_path, cut_and_overflow_run):
    """A log whose record says more cut-off turns than its replies show is reported (field `cut_off_turns`), never
    imported as if it matched."""
    from inspect_ai.log import write_eval_log

    out = tmp_path / "m.eval"
    assert batch(capsys, "export", cut_and_overflow_run, "--format", "inspect", "--out", str(out)).returncode == 0
    log = read_eval_log(str(out))
    for sample in log.samples:
        sample.metadata["agenthop"]["cut_off_turns"] = 3
    write_eval_log(log, str(out))
    result = batch(capsys, "import-inspect", str(out), "--run", "edited", "--format", "json", "--quiet")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["field_mismatches"].get("cut_off_turns") == 2
