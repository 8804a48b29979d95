"""The sequential strategies (continue, summarize, verifier): the episode's rules, the CLI sweep and comparison
offline with the scripted agents, and the LLM path (agent and verifier) against the local test server."""

import asyncio
import json
import math
import os
import re
from pathlib import Path

import pytest

from sandbox.episode import Episode
from sandbox.prompts import (
    CONTINUE,
    REVISION_HEAD,
    SUMMARIZE_PROMPT,
    SUMMARY_HEAD,
    VERIFIER_PROMPT,
    build_prompt,
)
from sandbox.records import Caps
from sandbox.strategies import Assessment, EvidenceVerifier, Strategy
from storage import Store
from tests.cli_inprocess import batch
from tests.conftest import G
from tests.openai_server import FakeOpenAI, error_reply, text_reply, tool_reply
from tests.scripted import ScriptAgent, turn

SUBMIT = ("submit_answer", {"answer": "B", "reasoning": "r"})
READ = ("read_section", {"paper_id": G, "section": "B"})


def episode(mini_corpus, agent, strategy, context_budget=None, caps=None):
    item = mini_corpus.item("st_0001")
    return Episode(
        mini_corpus.view(item),
        agent,
        caps or Caps(max_tokens_total=10**9),
        build_prompt(item, Caps()),
        context_budget=context_budget,
        strategy=strategy,
    )


async def test_summarize_replaces_the_history_and_counts_the_summary_call(mini_corpus):
    agent = ScriptAgent(
        [
            turn(READ, tokens=400),
            turn(SUBMIT, tokens=600),
            turn(text="I read G §B; answer B.", tokens=700),
            turn(SUBMIT, tokens=1200),
        ]
    )
    ep = episode(mini_corpus, agent, Strategy("summarize"), context_budget=1000)
    traj = await ep.run()
    kinds = [s.kind for s in ep.steps]
    assert kinds.count("summary") == 1 and kinds.count("history") == 1
    summary = next(s for s in ep.steps if s.kind == "summary")
    assert summary.text == "I read G §B; answer B." and summary.usage["prompt"] == 700
    # the agent was asked to summarize by the refused submit's result ...
    asked = agent.seen[2]
    assert asked[-1]["role"] == "tool" and asked[-1]["content"].startswith(SUMMARIZE_PROMPT)
    # ... and afterwards saw only the system prompt, the task and the summary
    after = agent.seen[3]
    assert [m["role"] for m in after] == ["system", "user", "user"]
    assert after[2]["content"].startswith(f"{SUMMARY_HEAD}\nI read G §B; answer B.\n\n{CONTINUE}")
    assert after[:2] == agent.seen[0][:2]
    # the summary turn is charged like any turn: 400 + 600 + 700 + 1200 prompt tokens in the ledger; the last call,
    # over the budget, is answered (no STOP needed: a submit over the budget stands)
    assert traj.tokens == 2900 and traj.termination == "answer" and traj.correct
    history = next(s for s in ep.steps if s.kind == "history")
    assert "4 messages dropped" in history.text  # assistant+tool (read), assistant+tool (summary request)


class FailingVerifier:
    name = "broken"

    def __init__(self, how):
        self.how = how

    async def assess(self, item, steps, answer):
        if self.how == "raise":
            raise RuntimeError("boom")
        if self.how == "hang":
            await asyncio.sleep(3600)
        return Assessment("   ", prompt_tokens=5)


@pytest.mark.parametrize(
    "how, why", [("raise", "RuntimeError: boom"), ("hang", "no reply within 0.05 s"), ("empty", "an empty reply")]
)
async def test_a_failing_verifier_is_a_recorded_error_and_the_extension_falls_back_to_continue(mini_corpus, how, why):
    agent = ScriptAgent([turn(SUBMIT, tokens=100), turn(READ, tokens=200), turn(SUBMIT, tokens=1500)])
    ep = episode(mini_corpus, agent, Strategy("verifier", FailingVerifier(how), timeout_s=0.05), context_budget=1000)
    traj = await ep.run()
    errors = [s for s in ep.steps if s.kind == "error"]
    assert len(errors) == 1 and why in errors[0].text and errors[0].text.startswith("Verifier error (broken)")
    extended = next(s for s in ep.steps if s.status == "extended")
    assert extended.text == CONTINUE and ep.verifier_errors == 1
    assert traj.termination == "answer" and traj.error is None  # the episode itself went on and answered


async def test_the_verifier_summary_is_the_revision_and_its_tokens_are_not_the_agents(mini_corpus):
    class Counting:
        name = "counting"

        async def assess(self, item, steps, answer):
            return Assessment(
                f"Tried {len(steps)} steps; answer {answer['answer']}.",
                prompt_tokens=900,
                completion_tokens=100,
                cost_usd=0.25,
            )

    agent = ScriptAgent([turn(SUBMIT, tokens=100), turn(SUBMIT, tokens=1500)])
    ep = episode(mini_corpus, agent, Strategy("verifier", Counting()), context_budget=1000)
    traj = await ep.run()
    verifier = next(s for s in ep.steps if s.kind == "verifier")
    assert verifier.usage["prompt"] == 900 and verifier.cost_usd == 0.25
    revision = agent.seen[1][-1]["content"]
    assert revision.startswith(f"{REVISION_HEAD}\nTried 1 steps; answer B.")  # the assistant turn so far
    assert traj.tokens == 1600 and traj.cost_usd is None  # the agent's own calls only


async def test_points_axis_extends_while_the_agent_works_and_accepts_a_declined_extension(mini_corpus):
    """With a strategy, a submit with points left is extended; a resubmit straight after (no work) stands."""
    agent = ScriptAgent([turn(SUBMIT), turn(READ), turn(SUBMIT), turn(SUBMIT)])
    ep = episode(mini_corpus, agent, Strategy("continue"), caps=Caps(budget=20))
    traj = await ep.run()
    assert traj.continues == 2 and traj.termination == "answer" and traj.turns == 4
    legacy = episode(mini_corpus, ScriptAgent([turn(SUBMIT)]), None, caps=Caps(budget=20))
    assert (await legacy.run()).continues == 0  # no strategy: the points axis is a cap only, as before


async def test_evidence_verifier_states_what_was_done_never_the_gold(mini_corpus):
    agent = ScriptAgent([turn(READ), turn(SUBMIT), turn(SUBMIT, tokens=2000)])
    ep = episode(mini_corpus, agent, Strategy("verifier", EvidenceVerifier()), context_budget=1000)
    await ep.run()
    text = next(s for s in ep.steps if s.kind == "verifier").text
    assert text == f"Tried: read_section ×1. Read: {G} §1. Current answer: B."


# ---------------------------------------------------------------- the CLI, offline


def wilson(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval written out (independent of stats.wilson)."""
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@pytest.fixture(scope="module")
def three_strategies(tmp_path_factory, shared_cache):
    """All three strategies on a 5-level token grid with the heuristic agent, offline, one command."""
    import contextlib
    import io

    from workbench.cli import main

    db = tmp_path_factory.mktemp("strategies") / "s.sqlite"
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        mp.setenv("AGENTHOP_CACHE", str(shared_cache))  # module scope: the per-test isolation is not set up yet
        mp.setenv("AGENTHOP_CONFIG", str(db.parent / "config.toml"))
        mp.setenv("AGENTHOP_STATE", str(db.parent / "state.toml"))
        code = main(
            [
                "--batch",
                "scale",
                "sequential",
                "--axis",
                "tokens",
                "--grid",
                "2k,3k,4k,6k,8k",
                "--strategy",
                "continue,summarize,verifier",
                "--run",
                "S",
                "--db",
                str(db),
                "--limit",
                "4",
                "--quiet",
                "--format",
                "json",
                "--boot",
                "200",
            ]
        )
    assert code == 0, err.getvalue()
    return db, json.loads(out.getvalue())


def test_three_strategies_offline_each_a_group_with_its_plateau(three_strategies, capsys):
    db, out = three_strategies
    assert [s["strategy"] for s in out["studies"]] == ["continue", "summarize", "verifier:evidence"]
    assert [s["group"] for s in out["studies"]] == ["S.continue", "S.summarize", "S.verifier"]
    store = Store(db, readonly=True)
    for study in out["studies"]:
        assert study["budgets"] == ["2k", "3k", "4k", "6k", "8k"]
        alone = json.loads(
            batch(
                capsys,
                "scale",
                "plateau",
                "--group",
                study["group"],
                "--db",
                str(db),
                "--format",
                "json",
                "--boot",
                "200",
            ).stdout
        )
        assert alone["k_star"] == study["k_star"] and alone["strategy"] == study["strategy"]
        for level in study["levels"]:
            rows = store.trajectories(store.run(level["run"])["id"])
            correct = sum(bool(t["correct"]) for t in rows)
            assert level["n"] == len(rows) == 4 and level["accuracy"] == correct / 4
            assert level["accuracy_ci"] == pytest.approx(wilson(correct, 4))
            steps = [s for t in rows for s in store.steps(t["id"])]
            assert level["summaries"] == sum(s["kind"] == "summary" for s in steps)
            assert level["verifier_calls"] == sum(s["kind"] == "verifier" for s in steps)
    by = {s["strategy"]: s for s in out["studies"]}
    assert sum(lv["summaries"] for lv in by["summarize"]["levels"]) > 0
    assert sum(lv["verifier_calls"] for lv in by["verifier:evidence"]["levels"]) > 0
    assert all(lv["summaries"] == 0 for lv in by["continue"]["levels"])
    # the summary really replaced the history: a step marks it right after each summary turn
    run = store.run("S.summarize@8k")
    for t in store.trajectories(run["id"]):
        kinds = [s["kind"] for s in store.steps(t["id"])]
        assert all(kinds[i + 1] == "history" for i, k in enumerate(kinds) if k == "summary")


def test_rerun_resumes_per_level_and_the_strategy_is_the_groups_identity(three_strategies, capsys, tmp_path):
    db, _ = three_strategies
    copy = tmp_path / "s.sqlite"
    copy.write_bytes(Path(db).read_bytes())
    store = Store(copy, readonly=True)
    before = store.conn.execute("SELECT COUNT(*) FROM trajectories").fetchone()[0]
    store.close()
    again = batch(
        capsys,
        "scale",
        "sequential",
        "--axis",
        "tokens",
        "--grid",
        "2k,3k,4k,6k,8k",
        "--strategy",
        "summarize",
        "--run",
        "S.summarize",
        "--db",
        str(copy),
        "--limit",
        "4",
        "--quiet",
        "--format",
        "json",
        "--boot",
        "200",
    )
    assert again.returncode == 0, again.stderr
    store = Store(copy, readonly=True)
    assert store.conn.execute("SELECT COUNT(*) FROM trajectories").fetchone()[0] == before  # nothing redone
    wrong = batch(
        capsys,
        "scale",
        "sequential",
        "--axis",
        "tokens",
        "--grid",
        "2k,3k",
        "--strategy",
        "verifier",
        "--run",
        "S.summarize",
        "--db",
        str(copy),
        "--limit",
        "4",
        "--quiet",
    )
    assert wrong.returncode == 2
    assert "already holds the tokens axis (fresh, summarize strategy: 2k, 3k, 4k, 6k, 8k)" in wrong.stderr
    assert "a tokens-axis fresh, verifier:evidence strategy grid needs another --run name" in wrong.stderr


def test_strategies_command_table_csv_and_figure(three_strategies, capsys):
    db, out = three_strategies
    common = (
        "--group",
        "S.continue",
        "--group",
        "S.summarize",
        "--group",
        "S.verifier",
        "--db",
        str(db),
        "--boot",
        "200",
    )
    csv = batch(capsys, "scale", "strategies", *common, "--format", "csv")
    assert csv.returncode == 0, csv.stderr
    lines = csv.stdout.strip().splitlines()
    assert lines[0].startswith("group,strategy,budget,k_star,plateau_budget") and len(lines) == 1 + 15
    table = batch(capsys, "scale", "strategies", *common)
    assert "accuracy by tokens budget per strategy" in table.stdout
    for study in out["studies"]:
        assert f"{study['strategy']} ({study['group']}): k* = {study['k_star']}" in table.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (("--strategy", "memory"), "invalid strategy memory"),
        (("--strategy", "continue,continue"), "named twice"),
        (("--strategy", "continue", "--verifier", "evidence"), "--verifier is for --strategy verifier"),
        (("--strategy", "summarize", "--protocol", "continuation"), "the summarize strategy rewrites"),
    ],
)
def test_strategy_flags_refused_in_one_line(tmp_path, capsys, args, message):
    db = tmp_path / "s.sqlite"
    proc = batch(
        capsys,
        "scale",
        "sequential",
        "--axis",
        "tokens",
        "--grid",
        "2k,4k",
        "--run",
        "x",
        "--db",
        str(db),
        "--limit",
        "1",
        "--quiet",
        *args,
    )
    assert proc.returncode == 2 and message in proc.stderr
    assert not db.exists() or Store(db, readonly=True).runs() == []


# ---------------------------------------------------------------- the LLM path, verifier included


def test_llm_summarize_and_verifier_against_the_local_server(tmp_path, capsys, monkeypatch):
    """The agent and a model verifier on the local server: every agent call costs 100 + 20 tokens; a summary reply is
    text; the verifier answers its first call and fails (HTTP 400) on its second, which is a recorded error."""
    verifier_calls = []

    def brain(req, n):
        system = req["messages"][0]["content"]
        if system == VERIFIER_PROMPT:
            verifier_calls.append(req)
            if len(verifier_calls) % 2 == 0:
                return error_reply(400, message="verifier refused")
            return text_reply("It read nothing and answers B.", prompt_tokens=300, completion_tokens=50, cached=100)
        last = req["messages"][-1]
        if last["role"] == "tool" and last["content"].startswith(SUMMARIZE_PROMPT):
            return text_reply("Summary: nothing read yet; answer B.")
        # the context grows with the episode's turn (the footer's count), whatever the summary dropped
        turns = re.findall(r"Turn: (\d+)", str(last.get("content") or ""))
        return tool_reply(
            ("submit_answer", {"answer": "B", "reasoning": "r"}),
            prompt_tokens=1000 + 1000 * (int(turns[-1]) if turns else 0),
        )

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    db = tmp_path / "s.sqlite"
    with FakeOpenAI(brain) as srv:
        common = (
            "--agent",
            "llm",
            "--model",
            "openai/gpt-4.1-mini",
            "--base-url",
            srv.url,
            "--limit",
            "2",
            "--db",
            str(db),
            "--quiet",
            "--format",
            "json",
            "--boot",
            "200",
            "--axis",
            "tokens",
            "--grid",
            "2500,4500",
        )
        summ = batch(capsys, "scale", "sequential", *common, "--strategy", "summarize", "--run", "LS")
        ver = batch(
            capsys,
            "scale",
            "sequential",
            *common,
            "--strategy",
            "verifier",
            "--verifier",
            "openai/gpt-4.1-mini",
            "--verifier-base-url",
            srv.url,
            "--run",
            "LV",
        )
    assert summ.returncode == 0, summ.stderr
    assert ver.returncode == 0, ver.stderr
    store = Store(db, readonly=True)
    s_levels = json.loads(summ.stdout)["levels"]
    assert 0 < s_levels[0]["summaries"] < s_levels[1]["summaries"] and s_levels[0]["verifier_calls"] == 0
    for level in s_levels:
        steps = [s for t in store.trajectories(store.run(level["run"])["id"]) for s in store.steps(t["id"])]
        assert level["summaries"] == sum(s["kind"] == "summary" for s in steps)
        assert level["replacements"] == level["summaries"]
    steps = store.steps(store.trajectories(store.run("LS@4500")["id"])[0]["id"])
    summary = next(s for s in steps if s["kind"] == "summary")
    assert summary["text"] == "Summary: nothing read yet; answer B." and summary["usage"]["prompt"] > 0
    v_levels = json.loads(ver.stdout)["levels"]
    assert json.loads(ver.stdout)["strategy"] == "verifier:openai/gpt-4.1-mini"
    for level in v_levels:
        rows = store.trajectories(store.run(level["run"])["id"])
        steps = [s for t in rows for s in store.steps(t["id"])]
        verifier = [s for s in steps if s["kind"] == "verifier"]
        assert level["verifier_calls"] == len(verifier)
        # counted as the agent's calls are: non-cached input + output + cache writes (the 100 cached tokens apart)
        assert level["verifier_tokens"] == sum(
            s["usage"]["prompt"] + s["usage"]["completion"] + s["usage"]["cache_creation"] for s in verifier
        )
        assert level["verifier_tokens"] == 250 * len(verifier)
        assert all(
            (s["usage"]["prompt"], s["usage"]["completion"], s["usage"]["cache_read"]) == (200, 50, 100)
            for s in verifier
        )  # as the server said: 300 in, 100 of them cached
        # gpt-4.1-mini at $0.40 / $1.60 per M tokens, cache reads at half the input price: 200 + 100 × 0.5 in, 50 out
        assert level["verifier_cost_usd"] == pytest.approx(len(verifier) * (250 * 0.4 + 50 * 1.6) / 1e6)
        agent_usd = sum(t["cost_usd"] for t in rows)
        assert level["cost_usd_marginal"] == pytest.approx(agent_usd)  # the verifier's spend is not the agent's
        assert level["verifier_errors"] == sum(s["kind"] == "error" and "verifier refused" in s["text"] for s in steps)
    assert sum(lv["verifier_errors"] for lv in v_levels) >= 1 and sum(lv["verifier_calls"] for lv in v_levels) >= 1
    # the study's cost mode (App. C.1) reprices the verifier too: every input token at the input price
    study = batch(
        capsys,
        "scale",
        "plateau",
        "--group",
        "LV",
        "--db",
        str(db),
        "--format",
        "json",
        "--boot",
        "200",
        "--cost-mode",
        "study",
    )
    assert study.returncode == 0, study.stderr
    for level, cached in zip(json.loads(study.stdout)["levels"], v_levels, strict=True):
        calls = cached["verifier_calls"]
        assert level["verifier_cost_usd"] == pytest.approx(calls * (300 * 0.4 + 50 * 1.6) / 1e6)
        assert level["verifier_tokens"] == cached["verifier_tokens"]  # tokens do not depend on the price rule


@pytest.mark.parametrize("mode", ["cache-aware", "study"])
def test_a_model_verifier_is_priced_by_the_runs_recorded_pricing(tmp_path, capsys, monkeypatch, mode):
    """One price for every priced call: a config `[[pricing]]` row overriding gpt-4.1-mini ($2 / $8 per M, cache at
    the input price) prices the verifier's calls as the agent's, in either cost mode — by hand from the tokens the
    server reported (300 in, 100 of them cached, 50 out)."""
    Path(os.environ["AGENTHOP_CONFIG"]).write_text(
        '[[pricing]]\nprefix = "gpt-4.1-mini"\ninput_per_m = 2.0\noutput_per_m = 8.0\n'
    )

    def brain(req, n):
        if req["messages"][0]["content"] == VERIFIER_PROMPT:
            return text_reply("It read nothing and answers B.", prompt_tokens=300, completion_tokens=50, cached=100)
        turns = re.findall(r"Turn: (\d+)", str(req["messages"][-1].get("content") or ""))
        return tool_reply(
            ("submit_answer", {"answer": "B", "reasoning": "r"}),
            prompt_tokens=1000 + 1000 * (int(turns[-1]) if turns else 0),
        )

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    db = tmp_path / "s.sqlite"
    with FakeOpenAI(brain) as srv:
        ver = batch(
            capsys, "scale", "sequential", "--agent", "llm", "--model", "openai/gpt-4.1-mini", "--base-url", srv.url,
            "--limit", "2", "--db", str(db), "--quiet", "--format", "json", "--boot", "200", "--axis", "tokens",
            "--grid", "2500,4500", "--strategy", "verifier", "--verifier", "openai/gpt-4.1-mini",
            "--verifier-base-url", srv.url, "--run", "LV", "--cost-mode", mode,
        )  # fmt: skip
    assert ver.returncode == 0, ver.stderr
    levels = json.loads(ver.stdout)["levels"]
    assert sum(level["verifier_calls"] for level in levels) >= 1
    per_call = (300 * 2.0 + 50 * 8.0) / 1e6 if mode == "study" else (200 * 2.0 + 100 * 2.0 + 50 * 8.0) / 1e6
    for level in levels:
        assert level["verifier_cost_usd"] == pytest.approx(level["verifier_calls"] * per_call)


def test_the_stepper_shows_the_summary_turn_and_the_replacement(three_strategies):
    """The transcript (the stepper's entries) marks the summary turn, the replaced history and the verifier's steps."""
    from workbench.tui.widgets.transcript import build_entries, transcript_text

    db, _ = three_strategies
    store = Store(db, readonly=True)
    for run, marks in (
        ("S.summarize@8k", ("≡ summary", "⤺ history replaced by the summary")),
        ("S.verifier@8k", ("✓ verifier (not charged to the agent)",)),
    ):
        steps = [s for t in store.trajectories(store.run(run)["id"]) for s in store.steps(t["id"])]
        text = transcript_text(build_entries(steps))
        for mark in marks:
            assert text.count(mark) == sum(
                s["kind"] == kind
                for s in steps
                for kind in ("summary", "history", "verifier")
                if mark.startswith({"summary": "≡", "history": "⤺", "verifier": "✓"}[kind])
            )
            assert text.count(mark) > 0


def test_a_model_verifier_that_cannot_be_reached_is_refused_before_anything_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    db = tmp_path / "s.sqlite"
    proc = batch(
        capsys,
        "scale",
        "sequential",
        "--axis",
        "tokens",
        "--grid",
        "2k,4k",
        "--run",
        "x",
        "--db",
        str(db),
        "--limit",
        "1",
        "--quiet",
        "--strategy",
        "verifier",
        "--verifier",
        "openai/gpt-4.1-mini",
    )
    assert proc.returncode == 2 and proc.stderr.startswith("error: --verifier:") and len(proc.stderr.splitlines()) == 1
    assert not db.exists()


@pytest.mark.parametrize("axis, grid, caps", [("points", "6,12", ()), ("turns", "8,14", ("--budget", "12"))])
def test_strategies_on_the_points_and_turns_axes_are_deterministic(tmp_path, capsys, axis, grid, caps):
    """The scripted agent follows a strategy on every axis, and the same sweep twice gives the same trajectories."""
    kinds = []
    for copy in ("a", "b"):
        db = tmp_path / f"{copy}.sqlite"
        proc = batch(
            capsys,
            "scale",
            "sequential",
            "--axis",
            axis,
            "--grid",
            grid,
            "--strategy",
            "summarize,verifier",
            "--run",
            "D",
            "--db",
            str(db),
            "--limit",
            "3",
            "--quiet",
            "--format",
            "json",
            "--boot",
            "200",
            *caps,
        )
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert [s["strategy"] for s in out["studies"]] == ["summarize", "verifier:evidence"]
        store = Store(db, readonly=True)
        seen = []
        for study in out["studies"]:
            for level in study["levels"]:
                for t in store.trajectories(store.run(level["run"])["id"]):
                    seen.append(
                        (
                            level["run"],
                            t["item_id"],
                            t["answer"],
                            t["continues"],
                            tuple(s["kind"] for s in store.steps(t["id"])),
                        )
                    )
        kinds.append(seen)
        store.close()
    assert kinds[0] == kinds[1]
    assert any("summary" in k[-1] or "verifier" in k[-1] for k in kinds[0])  # the strategies did act


def test_every_report_of_a_level_shows_the_strategys_spend(three_strategies, capsys):
    """`scale plateau --group` (table) says what the verifier spent at each level, apart from the agent's."""
    db, out = three_strategies
    study = next(s for s in out["studies"] if s["group"] == "S.verifier")
    table = batch(capsys, "scale", "plateau", "--group", "S.verifier", "--db", str(db), "--boot", "200").stdout
    text = " ".join(table.split())
    assert "verifier:evidence strategy · the verifier's spend, not charged to the agent" in text
    for level in study["levels"]:
        assert (
            f"{level['budget']}: {level['verifier_calls']} calls, — tokens, —, 0 failed" in text
        )  # scripted: unmeasured
    summarize = batch(capsys, "scale", "plateau", "--group", "S.summarize", "--db", str(db), "--boot", "200").stdout
    assert "summarize strategy (summaries replace the history)" in " ".join(summarize.split())


async def test_a_prompts_file_words_the_summarize_request_and_the_continue_after_it(mini_corpus):
    """The strategies speak the run's prompts (`--prompts`): the summarize request, the line above the summary, the
    continue instruction after it and the status footer are the file's, not ours."""
    from sandbox.prompts import Prompts

    mine = Prompts(
        summarize="Summarize, please.",
        continue_="Go on.",
        status_footer="\n[{turn}|{points_used}]",
        summary_head="Your notes:",
    )
    item = mini_corpus.item("st_0001")
    agent = ScriptAgent(
        [turn(READ, tokens=400), turn(SUBMIT, tokens=600), turn(text="done: B", tokens=700), turn(SUBMIT, tokens=1200)]
    )
    ep = Episode(
        mini_corpus.view(item),
        agent,
        Caps(max_tokens_total=10**9),
        build_prompt(item, Caps(), texts=mine),
        context_budget=1000,
        strategy=Strategy("summarize"),
    )
    await ep.run()
    asked = agent.seen[2][-1]["content"]
    assert asked.startswith("Summarize, please.") and SUMMARIZE_PROMPT not in asked
    after = agent.seen[3][2]["content"]
    assert after.startswith("Your notes:\ndone: B\n\nGo on.\n[") and CONTINUE not in after and SUMMARY_HEAD not in after


def test_a_model_verifier_is_told_the_runs_verifier_prompt():
    """`Prompts.verifier` reaches the model verifier the runner makes (`make_verifier(instructions=…)`)."""
    from sandbox.strategies import LLMVerifier, make_verifier

    told = make_verifier("openai/some-model", base_url="http://127.0.0.1:9", instructions="Describe, never advise.")
    assert isinstance(told, LLMVerifier) and told.instructions == "Describe, never advise."
    assert make_verifier("openai/some-model", base_url="http://127.0.0.1:9").instructions == VERIFIER_PROMPT


async def test_a_prompts_file_words_the_revision_message_around_the_verifiers_summary(mini_corpus):
    """`revision_head` and `revision_tail` from a prompts file frame the verifier's summary the agent receives."""
    from sandbox.prompts import Prompts

    item = mini_corpus.item("st_0001")
    mine = Prompts(revision_head="A colleague's notes:", revision_tail="Decide again.")
    agent = ScriptAgent([turn(SUBMIT, tokens=100), turn(SUBMIT, tokens=1500)])
    ep = Episode(
        mini_corpus.view(item),
        agent,
        Caps(max_tokens_total=10**9),
        build_prompt(item, Caps(), texts=mine),
        context_budget=1000,
        strategy=Strategy("verifier", EvidenceVerifier()),
    )
    await ep.run()
    revision = agent.seen[1][-1]["content"]
    assert revision.startswith("A colleague's notes:\n") and "\n\nDecide again." in revision
    assert REVISION_HEAD not in revision


# ---------------------------------------------------------------- the comparison: which groups, over what


def test_strategies_by_the_run_name_finds_its_strategy_groups(three_strategies, capsys):
    """`scale strategies --group S` right after `scale sequential --run S --strategy A,B,C` reads S.A, S.B, S.C."""
    db, out = three_strategies
    by_name = batch(capsys, "scale", "strategies", "--group", "S", "--db", str(db), "--format", "json", "--boot", "200")
    assert by_name.returncode == 0, by_name.stderr
    got = json.loads(by_name.stdout)
    assert [s["group"] for s in got["studies"]] == ["S.continue", "S.summarize", "S.verifier"]
    assert [s["k_star"] for s in got["studies"]] == [s["k_star"] for s in out["studies"]]
    assert got["differences"] == []


def test_scripted_tokens_are_unmeasured_never_zero(three_strategies, capsys, tmp_path):
    """A scripted agent off the token axis (no estimate) and the scripted verifier call no model: tokens and cost are
    null in JSON, empty in CSV and `—` in the tables, never 0."""
    _, out = three_strategies
    verifier = next(s for s in out["studies"] if s["group"] == "S.verifier")
    assert all(level["verifier_tokens"] is None and level["verifier_cost_usd"] is None for level in verifier["levels"])
    db = tmp_path / "s.sqlite"
    common = ("--group", "P", "--db", str(db), "--boot", "200")
    run = batch(
        capsys,
        "scale",
        "sequential",
        "--axis",
        "points",
        "--grid",
        "10,20",
        "--strategy",
        "continue,verifier",
        "--limit",
        "3",
        "--run",
        "P",
        "--db",
        str(db),
        "--quiet",
        "--format",
        "json",
        "--boot",
        "200",
    )
    assert run.returncode == 0, run.stderr
    for study in json.loads(run.stdout)["studies"]:
        for level in study["levels"]:
            assert level["measured"] is False
            for key in ("tokens_marginal", "tokens_cumulative", "tokens_per_trajectory", "verifier_tokens"):
                assert level[key] is None, key
    csv = batch(capsys, "scale", "strategies", *common, "--format", "csv")
    header, *rows = [line.split(",") for line in csv.stdout.strip().splitlines()]
    for name in ("tokens_per_trajectory", "verifier_tokens", "cost_usd"):
        assert {row[header.index(name)] for row in rows} == {""}, name
    table = batch(capsys, "scale", "strategies", *common).stdout
    assert "tokens / trajectory" in table and "tokens / item" not in table  # a level's tokens ÷ its trajectories
    lines = [
        line for line in table.splitlines() if line.startswith("│ ") and ("continue" in line or "verifier" in line)
    ]
    assert len(lines) == 4
    for line in lines:
        tokens = line.split("│")[5].strip()  # strategy, budget, accuracy, k*, tokens / trajectory
        assert tokens == "—"
    assert "· — ·" in table and "· 0 ·" not in table  # the verifier's tokens
    plateau = batch(capsys, "scale", "plateau", "--group", "P.continue", "--db", str(db), "--format", "json")
    assert all(level["tokens_cumulative"] is None for level in json.loads(plateau.stdout)["levels"])


def test_groups_over_other_items_are_refused_and_other_grids_or_seeds_named(three_strategies, capsys, tmp_path):
    db, _ = three_strategies
    copy = tmp_path / "s.sqlite"
    copy.write_bytes(Path(db).read_bytes())
    common = ("scale", "sequential", "--axis", "tokens", "--db", str(copy), "--quiet", "--boot", "200")
    fewer = batch(capsys, *common, "--grid", "2k,3k", "--limit", "3", "--run", "FEW")
    assert fewer.returncode == 0, fewer.stderr
    refused = batch(capsys, "scale", "strategies", "--group", "S.continue", "--group", "FEW", "--db", str(copy))
    assert refused.returncode == 2
    assert "groups 'S.continue' (4 items) and 'FEW' (3 items) cover different items" in refused.stderr
    assert "1 only in 'S.continue', 0 only in 'FEW'" in refused.stderr
    other = batch(capsys, *common, "--grid", "2k,4k", "--limit", "4", "--seed", "7", "--run", "OTHER")
    assert other.returncode == 0, other.stderr
    store = Store(copy, readonly=True)
    assert {t["item_id"] for t in store.trajectories(store.run("OTHER@2k")["id"])} == {
        t["item_id"] for t in store.trajectories(store.run("S.continue@2k")["id"])
    }
    store.close()
    named = batch(
        capsys, "scale", "strategies", "--group", "S.continue", "--group", "OTHER", "--db", str(copy), "--boot", "200"
    )
    assert named.returncode == 0, named.stderr
    text = " ".join(named.stdout.split())
    assert "grids differ: S.continue 2k,3k,4k,6k,8k; OTHER 2k,4k" in text
    assert "seeds differ: S.continue 0; OTHER 7" in text


def test_a_levels_interval_with_replicates_is_clustered_by_item(tmp_path, capsys):
    """Five replicates of each item agree more than chance: the level's interval is Wilson's at the effective n
    (Kish's design effect, written out here from the stored trajectories), wider than the plain Wilson over all
    trajectories, and labelled so."""
    db = tmp_path / "s.sqlite"
    run = batch(
        capsys,
        "scale",
        "sequential",
        "--axis",
        "points",
        "--grid",
        "10,20",
        "--replicates",
        "5",
        "--limit",
        "12",
        "--run",
        "R",
        "--db",
        str(db),
        "--quiet",
        "--format",
        "json",
        "--boot",
        "200",
    )
    assert run.returncode == 0, run.stderr
    cmp = batch(capsys, "scale", "strategies", "--group", "R", "--db", str(db), "--format", "json", "--boot", "200")
    assert cmp.returncode == 0, cmp.stderr
    (study,) = json.loads(cmp.stdout)["studies"]
    store = Store(db, readonly=True)
    wider = 0
    for level in study["levels"]:
        rows = store.trajectories(store.run(level["run"])["id"])
        y: dict[str, int] = {}
        m: dict[str, int] = {}
        for t in rows:
            y[t["item_id"]] = y.get(t["item_id"], 0) + bool(t["correct"])
            m[t["item_id"]] = m.get(t["item_id"], 0) + 1
        n = sum(m.values())
        p = sum(y.values()) / n
        assert n == 60 and 0 < p < 1
        v = sum((y[i] - p * m[i]) ** 2 for i in m) / n**2
        deff = max(1.0, v / (p * (1 - p) / n))
        n_eff = n / deff
        z = 1.959963984540054
        centre = (p + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
        half = z / (1 + z * z / n_eff) * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff * n_eff))
        assert level["accuracy_ci"] == pytest.approx([centre - half, centre + half])
        assert level["accuracy_interval"]["n_eff"] == pytest.approx(n_eff)
        plain = wilson(sum(y.values()), n)
        wider += (centre + half) - (centre - half) > plain[1] - plain[0] + 1e-9
    assert wider == len(study["levels"])  # the replicates agree more than chance at every level
    table = batch(capsys, "scale", "strategies", "--group", "R", "--db", str(db), "--boot", "200").stdout
    assert "n_eff" in table and "clustered by item" in " ".join(table.split())


def test_the_typed_strategy_names_are_the_sandboxs_strategies_and_unknown_ones_are_named():
    from sandbox.strategies import STRATEGIES
    from workbench.service.scaling.sequential import ScalingInputError, axis_of
    from workbench.service.scaling.strategies import STRATEGY_NAMES, parse_strategies

    assert STRATEGY_NAMES == STRATEGIES
    assert parse_strategies(" verifier,continue ") == ["verifier", "continue"]
    with pytest.raises(ScalingInputError, match="strategy sumarize: choose from continue, summarize, verifier"):
        parse_strategies("continue,sumarize")
    assert axis_of("points") == "points"
    with pytest.raises(ScalingInputError, match="axis: choose from tokens, points, turns, not 'token'"):
        axis_of("token")
