"""`--prompts FILE.toml`: every text sent to an agent or a judge, replaced from a file, checked on load, recorded with
the run (its digest in the identity, its text stored once), printed back by `prompts show`; ours exported by
`prompts export` as a file that reproduces a default run's requests byte for byte.

The LLM runs go through the real CLI against the real local OpenAI-compatible server (tests/openai_server.py), with
both model clients."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.prompt_set import PromptsError, load_prompts, load_text, to_toml
from sandbox.prompts import DEFAULT_PROMPTS, TEXT_TOOLS_BLOCK, TOOLS_BLOCK, task_block
from sandbox.records import Caps
from storage import Store
from tests.cli_inprocess import batch
from tests.openai_server import FakeOpenAI, seed_of, text_reply, tool_reply, turn_of

SYSTEM = (
    "You are being evaluated. Points {budget}, turns {max_turns}, tokens {max_tokens:,}.\n"
    'TOOLS:\n{tools_block}\nTASK:\n{task_block}\nEnd of system text with "quotes" and {{braces}}.'
)
CUSTOM = (
    '# a researcher\'s own wording\nsystem = """\n' + SYSTEM.replace('"', '\\"') + '"""\n'
    'status_footer = "\\n[turn {turn}, {points_left} points left]"\n'
    'nudge = "Call a tool."\n'
)


def brain(req: dict, n: int):
    """Each episode: the seed's references, a reply with no tool call (the nudge), a read, then an answer."""
    t = turn_of(req)
    if t == 0:
        return tool_reply(("get_references", {"paper_id": seed_of(req)}))
    if t == 1:
        return text_reply("Let me think about it.")
    if t == 2:
        return tool_reply(("list_sections", {"paper_id": seed_of(req)}))
    return tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}))


def llm_run(capsys, url: str, db: Path, name: str, *extra: str):
    return batch(
        capsys,
        "run",
        "--agent",
        "llm",
        "--model",
        "openai/test-model",
        "--base-url",
        url,
        "--run",
        name,
        "--db",
        str(db),
        "--limit",
        "2",
        "--replicates",
        "2",
        "--workers",
        "2",
        "--quiet",
        "--format",
        "json",
        *extra,
    )


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "x")


@pytest.mark.parametrize("client", ["native", "litellm"])
def test_a_replaced_system_prompt_is_the_system_message_of_every_request_of_every_episode(
    capsys, tmp_path, key, client
):
    from sandbox.datasets import open_dataset
    from workbench.service import paths

    prompts_file = tmp_path / "mine.toml"
    prompts_file.write_text(CUSTOM)
    db = tmp_path / "s.sqlite"
    with FakeOpenAI(brain) as srv:
        done = llm_run(
            capsys, srv.url, db, "mine", "--client", client, "--prompts", str(prompts_file), "--replicates", "1"
        )
        assert done.returncode == 0, done.stderr
        corpus, _ = open_dataset("builtin", paths.cache_dir())
        items = {i.seed_paper_id: i for i in corpus.items[:2]}
        assert len(srv.requests) == 2 * 4 and {seed_of(r) for r in srv.requests} == set(items)  # 4 calls an item
        for request in srv.requests:
            item = items[seed_of(request)]
            expected = (
                f"You are being evaluated. Points 30, turns 20, tokens 200,000.\nTOOLS:\n{TOOLS_BLOCK}\n"
                f'TASK:\n{task_block(item)}\nEnd of system text with "quotes" and {{braces}}.'
            )
            assert request["messages"][0] == {"role": "system", "content": expected}
        last = srv.requests[-1]["messages"]
        nudges = [m["content"] for m in last if m["role"] == "user"][1:]
        assert nudges == ["Call a tool.\n[turn 2, 29 points left]"]
        first_result = next(m for m in last if m["role"] == "tool")
        assert first_result["content"].endswith("\n[turn 1, 29 points left]")
        sent = len(srv.requests)

        other = tmp_path / "other.toml"
        other.write_text(CUSTOM.replace("You are being evaluated", "You are tested"))
        refused = llm_run(capsys, srv.url, db, "mine", "--client", client, "--prompts", str(other), "--replicates", "1")
        assert refused.returncode == 2 and "prompts differs" in refused.stderr
        assert len(srv.requests) == sent
        again = llm_run(
            capsys, srv.url, db, "mine", "--client", client, "--prompts", str(prompts_file), "--replicates", "1"
        )
        assert again.returncode == 0 and len(srv.requests) == sent  # the same file resumes (nothing left to do)
    shown = batch(capsys, "prompts", "show", "mine", "--db", str(db))
    assert shown.returncode == 0
    assert shown.stdout == to_toml(load_prompts(prompts_file))
    assert load_text(shown.stdout).digest == load_prompts(prompts_file).digest
    assert load_text(shown.stdout).system == SYSTEM


@pytest.mark.parametrize(
    "ablation, extra",
    [("full", ()), ("closed-book", ("--text-tools",)), ("no-search", ()), ("gold-given", ("--text-tools",))],
)
def test_the_exported_defaults_reproduce_a_default_run_byte_for_byte(capsys, tmp_path, key, ablation, extra):
    exported = tmp_path / "ours.toml"
    assert batch(capsys, "prompts", "export", "--out", str(exported)).returncode == 0
    assert exported.read_bytes() == to_toml(load_prompts(exported)).encode()  # export → load → export: same bytes
    assert batch(capsys, "prompts", "export").stdout == exported.read_text()
    db = tmp_path / "s.sqlite"
    seen = []
    for name, flags in (("ours", ()), ("file", ("--prompts", str(exported)))):
        with FakeOpenAI(brain) as srv:
            run = llm_run(
                capsys, srv.url, db, name, "--ablation", ablation, "--budget", "2", "--workers", "1", *extra, *flags
            )
            assert run.returncode == 0, run.stderr
        seen.append([json.dumps(r, sort_keys=True) for r in srv.requests])
    assert seen[0] == seen[1] and len(seen[0]) >= 8
    store = Store(db, readonly=True)
    ours, file = store.run("ours"), store.run("file")
    assert ours["identity"] == file["identity"] and ours["prompt_hash"] == file["prompt_hash"]
    assert "prompts" not in ours["identity"]  # a run with our prompts has the identity it always had
    assert file["prompts"] == exported.read_text()


async def test_the_file_replaces_every_other_text_the_episode_sends(mini_corpus):
    """Continue, stop, exhausted nudge and status footer, as the agent receives them (a scripted agent records its
    messages): the token axis's EXTEND and STOP, then the points spent."""
    from sandbox.episode import Episode
    from sandbox.prompts import build_prompt
    from tests.conftest import G
    from tests.scripted import ScriptAgent, turn

    texts = load_text(
        'exhausted_nudge = "OUT OF POINTS"\nstatus_footer = " <{points_used}/{budget}>"\n'
        'continue = "KEEP GOING"\nstop = "STOP NOW"\n'
    )
    assert not texts.is_default
    item = mini_corpus.item("st_0001")
    submit = ("submit_answer", {"answer": "B", "reasoning": "r"})
    read = ("read_section", {"paper_id": G, "section": "B"})
    agent = ScriptAgent([turn(submit, tokens=500), turn(read, tokens=600), turn(read, tokens=1500), turn(submit)])
    caps = Caps(budget=10, max_tokens_total=10**9)
    ep = Episode(mini_corpus.view(item), agent, caps, build_prompt(item, caps, texts=texts), context_budget=1000)
    traj = await ep.run()
    assert traj.termination == "answer" and traj.continues == 1
    first_result = agent.seen[1][-1]
    assert first_result["role"] == "tool" and first_result["content"] == "KEEP GOING <0/10>"
    assert agent.seen[2][-1]["content"].endswith(" <5/10>")
    assert [m["content"] for m in agent.seen[3][-2:]] == [agent.seen[3][-2]["content"], "STOP NOW"]
    assert agent.seen[3][-2]["content"].endswith(" <10/10>")
    assert not any(m.get("content") == "OUT OF POINTS" for m in agent.seen[3])  # STOP comes first past the budget
    agent = ScriptAgent([turn(read), turn(read), turn(submit)])
    ep = Episode(mini_corpus.view(item), agent, caps, build_prompt(item, caps, texts=texts))
    await ep.run()
    assert agent.seen[2][-1] == {"role": "user", "content": "OUT OF POINTS"}


@pytest.mark.parametrize(
    "text, line, words",
    [
        ('# header\nsytem = "x"\n', 2, ["unknown key 'sytem'"]),
        (
            'first_user = "ok"\nsystem = """\nBudget {budgt}\n{tools_block}{task_block}"""\n',
            3,
            ["key 'system'", "unknown placeholder {budgt}"],
        ),
        (
            'system = """\n{tools_block} and nothing else"""\n',
            1,
            ["key 'system'", "missing required placeholder {task_block}"],
        ),
        ('closed_book = "{tools_block}"\n', 1, ["key 'closed_book'", "missing required placeholder {task_block}"]),
        ('system = """\nunterminated\n', 2, ["not TOML"]),
        ("first_user = [\n", 1, ["not TOML"]),
        (
            '\n\nstop = "answer within {budget} points"\n',
            3,
            ["key 'stop'", "unknown placeholder {budget}", "takes: none"],
        ),
        ('status_footer = "{turn} {tokens:q}"\n', 1, ["key 'status_footer'", "placeholder {tokens:q}"]),
        ('nudge = "a { brace"\n', 1, ["key 'nudge'", "literal brace"]),
        ("first_user = 3\n", 1, ["key 'first_user' must be text", "an integer"]),
        ('system = "{0} {tools_block}{task_block}"\n', 1, ["unknown placeholder {0}"]),
        ('\n[tools]\nget_paper_info = "ok"\nfetch = "no"\n', 4, ["[tools]: unknown tool 'fetch'"]),
        ('tools = "x"\n', 1, ["'tools' must be a table"]),
        ('judge_pairwise_user = "{trajectory_1} only"\n', 1, ["missing required placeholder {trajectory_2}"]),
        ('system = "{tools_block!r}{task_block}"\n', 1, ["placeholder {tools_block!r}", "not allowed"]),
    ],
)
def test_a_malformed_prompts_file_is_exit_2_naming_line_key_and_placeholder_and_writes_nothing(
    capsys, tmp_path, text, line, words
):
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(PromptsError) as raised:
        load_prompts(bad)
    assert f"{bad}:{line}:" in str(raised.value) and "\n" not in str(raised.value)
    db = tmp_path / "s.sqlite"
    commands = [
        ["run", "--agent", "heuristic", "--limit", "2", "--run", "x"],
        ["scale", "sequential", "--axis", "points", "--grid", "5,10", "--run", "g", "--limit", "2"],
    ]
    for command in commands:
        done = batch(capsys, *command, "--db", str(db), "--prompts", str(bad))
        assert done.returncode == 2, done.stderr
        message = done.stderr.strip()
        assert message.count("\n") == 0 and f"{bad}:{line}:" in message, message
        assert all(w in message for w in words), message
    assert not db.exists() or Store(db, readonly=True).runs() == []


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters="{}", blacklist_categories=("Cs",)), max_size=80))
def test_any_text_round_trips_through_the_file(text):
    texts = replace(DEFAULT_PROMPTS, first_user=text, exhausted_nudge=text + '"', judge_pairwise='"""' + text)
    back = load_text(to_toml(texts))
    assert (back.first_user, back.exhausted_nudge, back.judge_pairwise) == (text, text + '"', '"""' + text)
    assert to_toml(back) == to_toml(texts) and back.digest == texts.digest


def test_placeholders_fill_from_the_caps_and_the_default_opening_is_unchanged(demo_corpus):
    item = demo_corpus.items[0]
    texts = load_text('system = "{budget}/{max_turns}/{max_tokens:,}|{tools_block}|{task_block}"\n')
    opening = texts.opening(item, Caps(budget=7, max_turns=3, max_tokens_total=12345), "full", text_tools=True)
    assert opening.system == f"7/3/12,345|{TOOLS_BLOCK}\n\n{TEXT_TOOLS_BLOCK}|{task_block(item)}"
    no_search = texts.opening(item, Caps(disabled_tools=("search_papers",)), "no-search")
    assert "search_papers" not in no_search.system.split("|")[1]  # no_search left out follows the file's system


def test_report_compare_and_the_panel_say_when_runs_used_different_prompts(capsys, tmp_path):
    mine = tmp_path / "mine.toml"
    mine.write_text('first_user = "Begin with the seed paper."\n')
    db = str(tmp_path / "s.sqlite")
    for name, flags in (("ours", ()), ("mine", ("--prompts", str(mine))), ("ours2", ())):
        assert batch(capsys, "run", "--limit", "3", "--run", name, "--db", db, "--quiet", *flags).returncode == 0
    warning = "used different prompts"
    compared = batch(capsys, "compare", "ours", "mine", "--db", db, "--format", "json")
    [said] = [w for w in json.loads(compared.stdout)["warnings"] if warning in w]
    stored = Store(db, readonly=True)
    assert f"a prompts file {stored.run('mine')['prompt_hash'][:12]}: mine" in said
    assert f"ours {stored.run('ours')['prompt_hash'][:12]}: ours" in said and "may be the prompts'" in said
    assert warning in batch(capsys, "compare", "ours", "mine", "--db", db).stdout
    assert warning not in batch(capsys, "compare", "ours", "ours2", "--db", db).stdout
    panel = json.loads(batch(capsys, "report", "ours", "mine", "ours2", "--db", db, "--format", "json").stdout)
    assert any(warning in w and "ours, ours2" in w for w in panel["warnings"])
    legend = json.loads(batch(capsys, "report", "mine", "--db", db, "--format", "json").stdout)["legend"]
    assert "`prompts show mine` prints them" in legend["prompts"]
    assert "prompts" not in json.loads(batch(capsys, "report", "ours", "--db", db, "--format", "json").stdout)["legend"]
    assert batch(capsys, "prompts", "show", "ours", "--db", db).stdout == to_toml(DEFAULT_PROMPTS)


def test_a_run_stored_before_prompts_were_recorded_is_said_so(capsys, tmp_path):
    db = str(tmp_path / "s.sqlite")
    assert batch(capsys, "run", "--limit", "1", "--run", "old", "--db", db, "--quiet").returncode == 0
    with Store(db) as store:
        store.update_run(store.run("old")["id"], prompts_text=None)
    shown = batch(capsys, "prompts", "show", "old", "--db", db)
    assert shown.returncode == 0 and shown.stdout == ""
    assert "stored before runs recorded their prompts: it used the defaults of workbench 0.1.0" in shown.stderr
    assert batch(capsys, "prompts", "show", "nope", "--db", db).returncode == 2


async def test_an_llm_judge_is_sent_the_file_s_judge_prompts(mini_corpus):
    from sandbox.judges import LLMJudge, Sample, task_text, trajectory_text

    item = mini_corpus.item("st_0001")
    leader = Sample(0, "B", 1, [], [{"kind": "tool", "tool": "think", "text": "a {brace} here"}])
    challenger = Sample(1, None, -1, [], [])
    reply = text_reply("<judgment>Correct</judgment> <choice>2</choice>")
    with FakeOpenAI(lambda req, n: reply) as srv:
        ours = LLMJudge("openai/test-model", base_url=srv.url, client="native")
        await ours.pointwise(item, leader)
        await ours.pairwise(item, leader, challenger)
        texts = load_text(
            'judge_pointwise = "Strict auditor."\njudge_pairwise = "Pick one."\n'
            'judge_pointwise_user = "{answer}|{task}|{trajectory}"\n'
            'judge_pairwise_user = "{answer_1} vs {answer_2}: {trajectory_1} / {trajectory_2}"\n'
        )
        judge = LLMJudge("openai/test-model", base_url=srv.url, client="native", prompts=texts)
        assert (await judge.pointwise(item, leader)).value is True
        assert (await judge.pairwise(item, leader, challenger)).value is True
    sent = [(r["messages"][0]["content"], r["messages"][1]["content"]) for r in srv.requests]
    # ours, as the judges always worded them
    assert sent[0][1] == (
        f"## Trajectory\n{trajectory_text(leader)}\n---\n## Task Description\n{task_text(item)}\n"
        "Submitted answer: B\n---\nJudge whether the final answer is correct. "
        "Put Correct or Wrong in <judgment></judgment> tags."
    )
    assert sent[1][1] == (
        f"## Task Description\n{task_text(item)}\n---\n## Agent 1 (answer B)\n"
        f"{trajectory_text(leader)}\n---\n## Agent 2 (answer None)\n{trajectory_text(challenger)}"
        "\n---\nWhich agent's final answer is better supported? Answer <choice>1</choice> or "
        "<choice>2</choice>."
    )
    assert sent[0][0].startswith("You are a rigorous Lead Researcher auditing")
    assert sent[2:] == [
        ("Strict auditor.", f"B|{task_text(item)}|{trajectory_text(leader)}"),
        ("Pick one.", f"B vs None: {trajectory_text(leader)} / {trajectory_text(challenger)}"),
    ]


@pytest.mark.parametrize("agent_name", ["heuristic", "oracle"])
async def test_a_scripted_agent_obeys_the_file_s_stop_instruction(mini_corpus, agent_name):
    """Past a token budget the episode sends the file's stop text; a scripted agent answers it (it would call another
    tool, and end as token_limit, if it only knew ours)."""
    from sandbox.agents.estimated import EstimatedUsage
    from sandbox.agents.registry import make_scripted
    from sandbox.episode import Episode
    from sandbox.prompts import build_prompt

    texts = load_text('stop = "Time is up: submit_answer now."\n')
    item = mini_corpus.item("st_0001")
    caps = Caps(max_tokens_total=10**9)
    agent = EstimatedUsage(make_scripted(agent_name, item, caps, 0, 0, 0))
    ep = Episode(mini_corpus.view(item), agent, caps, build_prompt(item, caps, texts=texts), context_budget=10)
    traj = await ep.run()
    assert [s.text for s in ep.steps if s.kind == "nudge"] == ["Time is up: submit_answer now."]
    assert traj.termination == "answer"


def test_the_prompts_file_is_stored_once_and_travels_with_a_merged_run(capsys, tmp_path):
    mine = tmp_path / "mine.toml"
    mine.write_text('first_user = "Begin."\n')
    src, dest = str(tmp_path / "src.sqlite"), str(tmp_path / "dest.sqlite")
    for name in ("a", "b"):
        assert (
            batch(
                capsys, "run", "--limit", "1", "--run", name, "--db", src, "--quiet", "--prompts", str(mine)
            ).returncode
            == 0
        )
    store = Store(src, readonly=True)
    file = to_toml(load_prompts(mine))
    assert store.conn.execute("SELECT COUNT(*) FROM texts WHERE body = ?", (file,)).fetchone()[0] == 1
    assert "prompts" not in store.runs()[0]  # a list of runs does not read the files
    assert batch(capsys, "merge", src, "--db", dest).returncode == 0
    assert batch(capsys, "prompts", "show", "a", "--db", dest).stdout == file
