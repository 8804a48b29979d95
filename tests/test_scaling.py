"""Test-time scaling end to end: the plateau from files and groups, EXTEND/STOP on the token axis, parallel sampling."""

import asyncio
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.episode import Episode
from sandbox.judges import LLMJudge, Sample, parse_choice, parse_judgment
from sandbox.prompts import CONTINUE, STOP_NOW, build_prompt
from sandbox.records import Caps
from stats import parallel as par
from stats.bootstrap import no_variation
from storage import Store
from tests.cli_inprocess import batch
from tests.conftest import G
from tests.histories import CHANGES, grown
from tests.openai_server import FakeOpenAI, text_reply
from tests.scripted import ScriptAgent, turn
from workbench.cli import main
from workbench.service import scaling
from workbench.views import figures
from workbench.views import scaling as scaling_views

FIXTURE = Path(__file__).resolve().parent / "data" / "general-agentbench-sequential.json"  # shared/data, copied


def test_plateau_on_the_general_agentbench_fixture(capsys):
    proc = batch(
        capsys,
        "scale",
        "plateau",
        "--scores",
        str(FIXTURE),
        "--study",
        "Gemini-2.5-Flash_search_distraction_all_sequential",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["k_star"] == 2 and out["plateau_budget"] == "64" and out["n"] == 199
    first = out["transitions"][0]
    assert first["d_bar"] == pytest.approx(0.0955, abs=1e-4) and first["c_k"] == pytest.approx(0.0396, abs=5e-4)
    fpc0 = json.loads(
        batch(
            capsys,
            "scale",
            "plateau",
            "--scores",
            str(FIXTURE),
            "--study",
            "Gemini-2.5-Flash_search_distraction_all_sequential",
            "--population",
            "199",
            "--format",
            "json",
        ).stdout
    )
    assert fpc0["k_star"] == 4 and fpc0["fpc_zero"]


def test_plateau_input_errors(tmp_path, capsys):
    bad = tmp_path / "s.csv"
    bad.write_text("item,budget,score\na,8k,1\nb,,0\n")
    proc = batch(capsys, "scale", "plateau", "--scores", str(bad))
    assert proc.returncode == 2 and "s.csv:3: field 'budget'" in proc.stderr
    nested = tmp_path / "n.json"
    nested.write_text(json.dumps({"x": {"8": {"a": 1}}, "y": {"8": {"a": 1}}}))
    proc = batch(capsys, "scale", "plateau", "--scores", str(nested))
    assert proc.returncode == 2 and "--study" in proc.stderr


def test_plateau_json_booleans_are_json_booleans(tmp_path, capsys):
    """A constant transition through the CLI: flags are true/false, never the strings "True"/"False"."""
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            {
                "8k": {f"i{i}": 0.2 for i in range(6)},
                "16k": {f"i{i}": 0.7 for i in range(6)},
                "32k": {f"i{i}": 0.7 for i in range(6)},
            }
        )
    )
    proc = batch(capsys, "scale", "plateau", "--scores", str(path), "--format", "json", "--boot", "200")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    up, flat = out["transitions"]
    assert up["degenerate_variance"] is True and flat["degenerate_variance"] is False
    assert out["degenerate_variance"] is True and out["censored"] is False and up["significant"] is True


def test_plateau_from_csv_rows(tmp_path, capsys):
    rows = ["item,budget,score"] + [
        f"i{i},{b},{int(b == '16k' or i % 2)}" for i in range(40) for b in ("8k", "16k", "32k")
    ]
    path = tmp_path / "s.csv"
    path.write_text("\n".join(rows))
    out = json.loads(batch(capsys, "scale", "plateau", "--scores", str(path), "--format", "json").stdout)
    assert out["budgets"] == ["8k", "16k", "32k"] and out["accuracy"] == [0.5, 1.0, 0.5]
    assert out["k_star"] == 2  # the 8k → 16k gain is certain; 16k → 32k declines


async def test_token_axis_extend_then_stop(mini_corpus):
    item = mini_corpus.item("st_0001")
    submit = ("submit_answer", {"answer": "B", "reasoning": "r"})
    agent = ScriptAgent(
        [
            turn(submit, tokens=500),
            turn(("read_section", {"paper_id": G, "section": "B"}), tokens=800),
            turn(("think", {"reasoning": "x"}), tokens=1500),
            turn(submit, tokens=1700),
        ]
    )
    ep = Episode(
        mini_corpus.view(item), agent, Caps(max_tokens_total=10**9), build_prompt(item, Caps()), context_budget=1000
    )
    traj = await ep.run()
    extended = [s for s in ep.steps if s.status == "extended"]
    assert len(extended) == 1 and extended[0].text == CONTINUE and traj.continues == 1
    assert any(s.text == STOP_NOW for s in ep.steps if s.kind == "nudge")
    assert traj.termination == "answer" and traj.correct and traj.points_used == 5


async def test_forced_final_call_without_submit_ends_as_token_limit(mini_corpus):
    item = mini_corpus.item("st_0001")
    agent = ScriptAgent(
        [turn(("think", {"reasoning": "x"}), tokens=2000), turn(("think", {"reasoning": "y"}), tokens=2100)]
    )
    ep = Episode(
        mini_corpus.view(item), agent, Caps(max_tokens_total=10**9), build_prompt(item, Caps()), context_budget=1000
    )
    traj = await ep.run()
    assert traj.termination == "token_limit" and traj.turns == 2


def test_sequential_points_grid_and_group_plateau(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    assert (
        main(
            [
                "--batch",
                "scale",
                "sequential",
                "--axis",
                "points",
                "--grid",
                "6,18,30",
                "--run",
                "g",
                "--db",
                str(db),
                "--quiet",
                "--limit",
                "24",
                "--format",
                "json",
                "--boot",
                "2000",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    store = Store(db, readonly=True)
    runs = store.runs_in_group("g")
    assert [r["name"] for r in runs] == ["g@6", "g@18", "g@30"]
    assert [r["caps"]["budget"] for r in runs] == [6, 18, 30]
    assert all(r["config"]["scaling"]["protocol"] == "fresh" for r in runs)
    acc = [sum(t["correct"] for t in store.trajectories(r["id"])) / 24 for r in runs]
    assert out["accuracy"] == pytest.approx(acc) and out["n"] == 24
    assert [lv["budget"] for lv in out["levels"]] == ["6", "18", "30"]


def test_parallel_report_consistent_with_stats(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    assert (
        main(
            [
                "--batch",
                "scale",
                "parallel",
                "--k",
                "1,2,4",
                "--run",
                "p",
                "--db",
                str(db),
                "--quiet",
                "--limit",
                "12",
                "--format",
                "json",
                "--orders",
                "3",
            ]
        )
        == 0
    )
    rep = json.loads(capsys.readouterr().out)
    store = Store(db, readonly=True)
    rows = store.trajectories(store.run("p")["id"])
    by_item = {}
    for t in rows:
        by_item.setdefault(t["item_id"], {})[t["replicate"]] = bool(t["correct"])
    correct = [[v[r] for r in range(4)] for v in by_item.values()]
    for row in rep["per_k"]:
        assert row["pass_at_k"] == pytest.approx(par.pass_at_k_items(correct, row["k"]).mean())
    k1 = rep["per_k"][0]
    assert k1["majority"] == pytest.approx(k1["pass_at_k"])
    n_point = store.conn.execute("SELECT COUNT(*) FROM judgments WHERE kind = 'pointwise'").fetchone()[0]
    assert n_point == 12 * 4
    # self-choice at k = 1 is correct ∧ accepted (General AgentBench's both_correct), not pass@1
    ids = {t["id"]: (t["item_id"], t["replicate"]) for t in rows}
    run_id = store.run("p")["id"]
    accepted = {
        (r[0], r[1]): bool(r[2])
        for r in store.conn.execute(
            "SELECT item_id, sample_a, verdict FROM judgments WHERE kind = 'pointwise' AND run_id = ?", (run_id,)
        )
    }
    both = [by_item[i][r] and accepted[(i, r)] for i, r in ids.values()]
    assert k1["pointwise"] == pytest.approx(sum(both) / len(both))
    assert k1["accepted_coverage"] == pytest.approx(k1["pointwise"])
    for row in rep["per_k"]:
        assert (
            row["pointwise"] <= row["accepted_coverage"] + 1e-12
            and row["accepted_coverage"] <= row["pass_at_k"] + 1e-12
        )
    # a second report reuses the stored verdicts
    assert (
        main(
            [
                "--batch",
                "scale",
                "parallel",
                "--k",
                "1,2,4",
                "--run",
                "p",
                "--db",
                str(db),
                "--quiet",
                "--limit",
                "12",
                "--format",
                "json",
                "--orders",
                "3",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["per_k"] == rep["per_k"]
    assert rep["items"] == 12 and rep["items_incomplete"] == 0
    # an item missing one of its K samples (an interrupted run) is left out and counted
    from sandbox.datasets import open_dataset

    store.close()
    store = Store(db)
    first = store.trajectories(store.run("p")["id"])[0]
    store.conn.execute("UPDATE trajectories SET final = 0 WHERE id = ?", (first["id"],))
    store.conn.commit()
    corpus, _ = open_dataset("builtin", Path(os.environ["AGENTHOP_CACHE"]))
    partial = asyncio.run(scaling.parallel_report(store, "p", corpus, [1, 2, 4]))
    assert partial["items"] == 11 and partial["items_incomplete"] == 1
    store.close()


def test_judge_parsers():
    assert parse_judgment("... <judgment> Correct </judgment>") is True
    assert parse_judgment("<judgment>wrong</judgment>") is False
    assert parse_judgment("It is Correct, not Wrong") is None  # no biased fallback
    assert parse_choice("<choice>2</choice>") is True and parse_choice("<choice>1</choice>") is False
    assert parse_choice("both") is None


def test_evidence_judge_rejects_a_sample_without_a_parsed_letter(mini_corpus):
    """A stored trajectory whose answer parsed to no letter (`predicted_index` NULL) has no option to support."""
    from sandbox.judges import EvidenceJudge

    item = mini_corpus.item("st_0001")
    unparsed = Sample(0, "no idea", None, ["text"], [])
    assert EvidenceJudge().support(item, unparsed) == 0.0
    assert asyncio.run(EvidenceJudge().pointwise(item, unparsed)).value is False


def test_llm_judge_through_the_local_server(mini_corpus):
    replies = [text_reply("Evidence checks out. <judgment>Correct</judgment>"), text_reply("<choice>2</choice>")]
    item = mini_corpus.item("st_0001")
    sample = Sample(0, "B", 1, ["text"], [{"kind": "tool", "tool": "read_section", "args": {}, "text": "[x] " * 300}])
    with FakeOpenAI(lambda req, n: replies[n]) as srv:
        judge = LLMJudge("openai/judge-model", base_url=srv.url)
        v1 = asyncio.run(judge.pointwise(item, sample))
        v2 = asyncio.run(judge.pairwise(item, sample, sample))
    assert v1.value is True and v2.value is True and v1.tokens == 120
    first = srv.requests[0]
    assert first["temperature"] == 0.0 and "<judgment>" in first["messages"][0]["content"]
    assert (
        "## Trajectory" in first["messages"][1]["content"] and "Submitted answer: B" in first["messages"][1]["content"]
    )


def test_continuation_replays_the_lower_level(tmp_path, capsys):
    """Each token level resumes from the one below: its first turns are the lower level's, minus the forced answer."""
    from tests.openai_server import seed_of, tool_reply, turn_of

    def brain(req, n):
        t = turn_of(req)
        if t == 0:
            return tool_reply(("get_references", {"paper_id": seed_of(req)}), prompt_tokens=3000)
        return tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}), prompt_tokens=3000 + 1000 * t)

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
            "500",
        )
        assert proc.returncode == 0, proc.stderr
        n_requests = len(srv.requests)
    store = Store(db, readonly=True)
    low, high = store.runs_in_group("c")
    assert high["config"]["scaling"]["continue_from"] == "c@4k"
    for t_low, t_high in zip(store.trajectories(low["id"]), store.trajectories(high["id"]), strict=True):
        s_low = [s for s in store.steps(t_low["id"]) if s["kind"] == "assistant"]
        s_high = [s for s in store.steps(t_high["id"]) if s["kind"] == "assistant"]
        assert [s["tool_args"] for s in s_high[: len(s_low) - 1]] == [s["tool_args"] for s in s_low[:-1]]
        assert len(s_high) > len(s_low) - 1
    # replayed turns never reach the model: the high level asked only for the turns after the prefix
    low_calls = sum(
        len([s for s in store.steps(t["id"]) if s["kind"] == "assistant"]) for t in store.trajectories(low["id"])
    )
    assert n_requests < 2 * low_calls + 2 * 4
    bad = batch(
        capsys,
        "scale",
        "sequential",
        "--axis",
        "points",
        "--grid",
        "6,12",
        "--protocol",
        "continuation",
        "--db",
        str(tmp_path / "x.sqlite"),
    )
    assert bad.returncode == 2 and "token axis" in bad.stderr and not (tmp_path / "x.sqlite").exists()


def test_replicates_with_a_population_use_the_two_stage_bootstrap(tmp_path, capsys):
    """T = 3 trials and N = n: the cluster bootstrap × FPC would make C_k = d̄ exactly (§6.1's pitfall)."""
    db = str(tmp_path / "s.sqlite")
    assert (
        main(
            [
                "--batch",
                "scale",
                "sequential",
                "--axis",
                "turns",
                "--grid",
                "12,20,30",
                "--run",
                "Tu",
                "--db",
                db,
                "--quiet",
                "--limit",
                "16",
                "--replicates",
                "3",
                "--format",
                "json",
                "--boot",
                "500",
            ]
        )
        == 0
    )
    seq = json.loads(capsys.readouterr().out)
    assert seq["n_trials"] == 3 and seq["two_stage"] is False  # no population: the cluster bootstrap is valid
    assert (
        main(
            [
                "--batch",
                "scale",
                "plateau",
                "--group",
                "Tu",
                "--population",
                "16",
                "--db",
                db,
                "--format",
                "json",
                "--boot",
                "500",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["two_stage"] is True and out["matched_trials"] is False and out["fpc"] == 0.0
    assert out["protocol"] == "fresh" and out["axis"] == "turns"
    assert any(t["sigma_boot"] > 0 and t["c_k"] < t["d_bar"] for t in out["transitions"])
    store = Store(db, readonly=True)
    budgets, _items, matrix = scaling.group_scores(scaling.sequential_group(store, "Tu"))
    from stats.plateau import plateau

    direct = plateau(matrix, budgets, population=16, n_boot=500, two_stage=True, matched_trials=False).to_dict()
    assert out["transitions"] == direct["transitions"]
    assert (
        main(
            [
                "--batch",
                "scale",
                "plateau",
                "--group",
                "Tu",
                "--population",
                "16",
                "--db",
                db,
                "--format",
                "json",
                "--boot",
                "500",
                "--two-stage",
                "off",
            ]
        )
        == 0
    )
    off = json.loads(capsys.readouterr().out)
    assert off["two_stage"] is False and all(t["c_k"] == t["d_bar"] for t in off["transitions"])


def test_a_group_never_mixes_axes_or_protocols(tmp_path, capsys):
    """`--axis tokens --run M` then `--axis points --run M` used to give one plateau over ['5','10','4k','8k']."""
    db = str(tmp_path / "s.sqlite")
    common = ["--run", "M", "--db", db, "--quiet", "--limit", "4", "--format", "json", "--boot", "200"]
    assert batch(capsys, "scale", "sequential", "--axis", "tokens", "--grid", "4k,8k", *common).returncode == 0
    proc = batch(capsys, "scale", "sequential", "--axis", "points", "--grid", "5,10", *common)
    assert proc.returncode == 2 and "group 'M' already holds the tokens axis (fresh: 4k, 8k)" in proc.stderr
    proc = batch(
        capsys, "scale", "sequential", "--axis", "tokens", "--grid", "4k,8k", "--protocol", "continuation", *common
    )
    assert proc.returncode == 2 and "continuation grid needs another --run name" in proc.stderr
    store = Store(db, readonly=True)
    assert [r["name"] for r in store.runs_in_group("M")] == ["M@4k", "M@8k"]  # nothing was added
    store.close()
    # a group mixed before this check existed is refused when read, not analysed as one grid
    from sandbox.runner import RunSpec

    writable = Store(db)
    spec = RunSpec(
        name="M@5",
        dataset="builtin",
        agent="heuristic",
        kind="sequential",
        group="M",
        scaling={"axis": "points", "budget": "5", "value": 5, "protocol": "fresh"},
    )
    writable.create_or_resume_run(
        "M@5",
        spec.identity("x"),
        {
            "kind": "sequential",
            "agent": "heuristic",
            "model": None,
            "dataset": "builtin",
            "dataset_fingerprint": "x",
            "ablation": "full",
            "seed": 0,
            "replicates": 1,
            "caps": {},
            "version": "t",
            "prompt_hash": None,
            "group_name": "M",
            "config": {"scaling": spec.scaling},
        },
    )
    writable.close()
    proc = batch(capsys, "scale", "plateau", "--group", "M", "--db", db)
    assert (
        proc.returncode == 2 and "mixes the tokens axis (fresh: 4k, 8k) and the points axis (fresh: 5)" in proc.stderr
    )


@pytest.mark.parametrize(
    "content,message",
    [
        ({"8k": [1, 2], "16k": {"a": 1}}, "budget '8k': expected an object {item: score}, got list"),
        ({"8k": {"a": {"x": 1}}, "16k": {"a": 1}}, "budget '8k', item 'a': expected a number in [0, 1], got dict"),
        (
            {"8k": {"a": [[1]]}, "16k": {"a": 1}},
            "budget '8k', item 'a', trial 0: expected a number in [0, 1], got list",
        ),
        ({"8k": {"a": True, "b": 0}, "16k": {"a": 1, "b": 1}}, "budget '8k', item 'a': True is a boolean, not a score"),
        ({"8k": {"a": 1.5}, "16k": {"a": 1}}, "budget '8k', item 'a': score 1.5 is outside [0, 1]"),
        ({"8k": {"a": "x"}, "16k": {"a": 1}}, "budget '8k', item 'a': 'x' is not a number"),
    ],
)
def test_malformed_json_scores_exit_2_naming_the_cell(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    proc = batch(capsys, "scale", "plateau", "--scores", str(path))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"error: {path}: ") and message in proc.stderr and "Traceback" not in proc.stderr


def test_malformed_csv_scores_exit_2_naming_line_and_field(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("item,budget,score\na,8k,1\na,16k,abc\n")
    proc = batch(capsys, "scale", "plateau", "--scores", str(path))
    assert proc.returncode == 2 and "bad.csv: line 3, field 'score': 'abc' is not a number" in proc.stderr
    path.write_text("item,budget\na,8k\n")
    proc = batch(capsys, "scale", "plateau", "--scores", str(path))
    assert proc.returncode == 2 and "no column 'score'" in proc.stderr
    path.write_text("item,budget,score\na,8k,1\na,8k,0\n")
    proc = batch(capsys, "scale", "plateau", "--scores", str(path))
    assert proc.returncode == 2 and "conflicting scores" in proc.stderr and "add a trial column" in proc.stderr


def test_scores_files_carry_missing_cells_and_trials(tmp_path, capsys):
    """An empty CSV score is missing (as JSON null); trials come as a JSON list or a CSV trial column."""
    rng = __import__("numpy").random.default_rng(7)
    trials = (rng.random((30, 3, 3)) < [[0.2], [0.5], [0.55]]).astype(int)
    as_json = {
        b: {f"i{i}": [int(v) for v in trials[i, k]] for i in range(30)} for k, b in enumerate(["8k", "16k", "32k"])
    }
    jpath = tmp_path / "t.json"
    jpath.write_text(json.dumps(as_json))
    lines = ["item,budget,score,trial"] + [
        f"i{i},{b},{trials[i, k, t]},{t}"
        for i in range(30)
        for k, b in enumerate(["8k", "16k", "32k"])
        for t in range(3)
    ]
    cpath = tmp_path / "t.csv"
    cpath.write_text("\n".join(lines))
    args = ("--format", "json", "--boot", "400", "--population", "30")
    from_json = json.loads(batch(capsys, "scale", "plateau", "--scores", str(jpath), *args).stdout)
    from_csv = json.loads(batch(capsys, "scale", "plateau", "--scores", str(cpath), *args).stdout)
    assert from_json == from_csv
    assert from_json["n_trials"] == 3 and from_json["two_stage"] is True and from_json["matched_trials"] is False
    from stats.plateau import plateau

    direct = plateau(
        trials.astype(float), ["8k", "16k", "32k"], population=30, n_boot=400, two_stage=True, matched_trials=False
    )
    assert from_json["transitions"] == direct.to_dict()["transitions"]
    matched = json.loads(batch(capsys, "scale", "plateau", "--scores", str(jpath), "--matched-trials", *args).stdout)
    assert matched["matched_trials"] is True
    assert (
        matched["transitions"]
        == plateau(trials.astype(float), ["8k", "16k", "32k"], population=30, n_boot=400, two_stage=True).to_dict()[
            "transitions"
        ]
    )
    missing = tmp_path / "m.csv"
    missing.write_text(
        "item,budget,score\n" + "\n".join(f"i{i},8k,{i % 2}\ni{i},16k,{'' if i == 0 else 1}" for i in range(10))
    )
    out = json.loads(
        batch(capsys, "scale", "plateau", "--scores", str(missing), "--format", "json", "--boot", "200").stdout
    )
    assert out["n"] == 9 and out["n_dropped"] == 1 and out["missing_per_budget"] == {"8k": 0, "16k": 1}


# ---------------------------------------------------------------- continuation and STOP with scripted agents


def conversation_ids(store, trajectory_id) -> list[str]:
    return [c["id"] for s in store.steps(trajectory_id) if s["kind"] == "assistant" for c in s["tool_args"] or []]


def test_continuation_of_the_heuristic_is_the_fresh_run(tmp_path, capsys):
    """A seeded heuristic continued from the level below plays exactly its fresh run at the higher budget.

    It used to meet the replayed prefix with its state at turn 1: it re-ran get_references and
    search_papers, reused call ids (`call_1` twice) and scored 0/0/1.7/51.7% against fresh 23/55/62/65%.
    """
    db = str(tmp_path / "s.sqlite")
    common = [
        "--axis",
        "tokens",
        "--grid",
        "2k,3k,4k",
        "--db",
        db,
        "--quiet",
        "--limit",
        "10",
        "--format",
        "json",
        "--boot",
        "200",
    ]
    assert main(["--batch", "scale", "sequential", "--run", "F", *common]) == 0
    fresh = json.loads(capsys.readouterr().out)
    assert main(["--batch", "scale", "sequential", "--run", "C", "--protocol", "continuation", *common]) == 0
    cont = json.loads(capsys.readouterr().out)
    assert cont["accuracy"] == fresh["accuracy"] and cont["protocol"] == "continuation"
    store = Store(db, readonly=True)
    for level in ("2k", "3k", "4k"):
        f_rows = sorted(store.trajectories(store.run(f"F@{level}")["id"]), key=lambda t: t["item_id"])
        c_rows = sorted(store.trajectories(store.run(f"C@{level}")["id"]), key=lambda t: t["item_id"])
        for f, c in zip(f_rows, c_rows, strict=True):
            assert (c["item_id"], c["tool_sequence"], c["answer"]) == (f["item_id"], f["tool_sequence"], f["answer"])
            ids = conversation_ids(store, c["id"])
            assert len(ids) == len(set(ids)), (level, c["item_id"], ids)
    # the higher levels really were continued: their first turns are replayed, not asked for again
    top = store.trajectories(store.run("C@4k")["id"])
    assert any(s["usage"]["raw"].get("prefix") for t in top for s in store.steps(t["id"]) if s["kind"] == "assistant")


async def test_a_scripted_agent_continuing_a_foreign_prefix_does_not_redo_it(mini_corpus):
    """A prefix the heuristic would not have played itself: it keeps what was done and numbers its ids after it."""
    import random

    from sandbox.agents.continuation import ContinuationAgent
    from sandbox.agents.heuristic import HeuristicAgent
    from sandbox.records import AssistantTurn, ToolCall
    from tests.conftest import S

    item = mini_corpus.item("st_0001")
    prefix = [
        AssistantTurn(None, [ToolCall("call_1", "search_papers", {"query": "frequency phase"})]),
        AssistantTurn(None, [ToolCall("call_2", "get_references", {"paper_id": S})]),
    ]
    agent = ContinuationAgent(HeuristicAgent(item, random.Random(0)), prefix)
    ep = Episode(mini_corpus.view(item), agent, Caps(), build_prompt(item, Caps()))
    traj = await ep.run()
    calls = [(s.tool_name, s.tool_args, s.tool_call_id) for s in ep.steps if s.kind == "tool"]
    assert calls[:2] == [
        ("search_papers", {"query": "frequency phase"}, "call_1"),
        ("get_references", {"paper_id": S}, "call_2"),
    ]
    live = calls[2:]
    assert ("get_references", {"paper_id": S}) not in [(n, a) for n, a, _ in live]
    assert [i for _, _, i in live] == [f"call_{n}" for n in range(3, 3 + len(live))]
    assert traj.termination == "answer"


def test_live_call_ids_never_collide_with_the_conversation():
    from sandbox.agents.continuation import unique_ids
    from sandbox.records import AssistantTurn, ToolCall

    messages = [
        {"role": "assistant", "tool_calls": [{"id": "call_0"}, {"id": "call_1"}]},
        {"role": "tool", "tool_call_id": "call_0"},
        {"role": "tool", "tool_call_id": "call_1"},
    ]
    raw = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_0", "type": "function"}, {"id": "x", "type": "function"}],
    }
    turn = unique_ids(
        AssistantTurn(None, [ToolCall("call_0", "think", {}), ToolCall("x", "think", {})], raw=raw), messages
    )
    assert [c.id for c in turn.tool_calls] == ["call_0-2", "x"]
    assert [c["id"] for c in turn.raw["tool_calls"]] == ["call_0-2", "x"]  # the model's own message agrees
    same = unique_ids(AssistantTurn(None, [ToolCall("a", "think", {}), ToolCall("a", "think", {})]), [])
    assert [c.id for c in same.tool_calls] == ["a", "a-2"]


_ID = st.sampled_from(["c0", "c1", "c2", None])
_MESSAGE = st.one_of(
    st.builds(lambda ids: {"role": "assistant", "tool_calls": [{"id": i} for i in ids]}, st.lists(_ID, max_size=2)),
    st.builds(lambda i: {"role": "tool", "tool_call_id": i}, _ID),
    st.just({"role": "user", "content": "u"}),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(CHANGES, st.lists(_MESSAGE, max_size=3)), max_size=8))
def test_the_ids_a_growing_conversation_holds_are_the_ids_of_reading_it_whole(steps):
    """`ConversationIds` reads each message once as an episode's history grows; whatever happens to the history
    (turns appended, the tail replaced in place by a summary, as `Episode` does), it holds what reading the
    whole history holds."""
    from sandbox.agents.continuation import ConversationIds, _ids_in

    held = ConversationIds()
    for messages in grown(steps):
        assert held(messages) == _ids_in(messages)


async def test_over_budget_turn_without_a_call_gets_stop_not_the_nudge(mini_corpus):
    item = mini_corpus.item("st_0001")
    agent = ScriptAgent(
        [turn(text="Let me think about it.", tokens=2000), turn(("submit_answer", {"answer": "B"}), tokens=2100)]
    )
    ep = Episode(
        mini_corpus.view(item), agent, Caps(max_tokens_total=10**9), build_prompt(item, Caps()), context_budget=1000
    )
    traj = await ep.run()
    assert [s.text for s in ep.steps if s.kind == "nudge"] == [STOP_NOW]  # docs/scaling.md: STOP with or without calls
    assert agent.seen[1][-1] == {"role": "user", "content": STOP_NOW}
    assert traj.termination == "answer" and traj.correct


@pytest.mark.parametrize("kind", ["heuristic", "random", "oracle"])
async def test_scripted_agents_answer_when_told_to_answer_now(mini_corpus, kind):
    """At a context budget below the prompt overhead every scripted agent is stopped after its first turn and
    must submit then (the heuristic used to keep calling tools and end `token_limit` with score 0)."""
    from sandbox.agents.estimated import EstimatedUsage
    from sandbox.agents.registry import make_scripted

    item = mini_corpus.item("st_0001")
    agent = EstimatedUsage(
        make_scripted(kind, item, Caps(), 0, replicate=1)
    )  # replicate 0's random agent guesses at once
    ep = Episode(
        mini_corpus.view(item), agent, Caps(max_tokens_total=10**9), build_prompt(item, Caps()), context_budget=100
    )
    traj = await ep.run()
    assert [s.text for s in ep.steps if s.kind == "nudge"] == [STOP_NOW]
    assert traj.termination == "answer" and traj.model_calls == 2


# ---------------------------------------------------------------- budget levels: reach, overhead, cost


def test_levels_report_stops_reach_and_degenerate_budgets(tmp_path, capsys):
    """1k sits below the prompt overhead (every item stopped after its first call); no item ever reaches 16k."""
    db = str(tmp_path / "s.sqlite")
    assert (
        main(
            [
                "--batch",
                "scale",
                "sequential",
                "--axis",
                "tokens",
                "--grid",
                "1k,2k,16k",
                "--run",
                "T",
                "--db",
                db,
                "--quiet",
                "--limit",
                "6",
                "--format",
                "json",
                "--boot",
                "200",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    low, mid, high = out["levels"]
    store = Store(db, readonly=True)
    for level in out["levels"]:
        rows = store.trajectories(store.run(level["run"])["id"])
        steps = [store.steps(t["id"]) for t in rows]
        contexts = [[s["usage"]["prompt"] for s in st if s["kind"] == "assistant"] for st in steps]
        assert level["n_stopped"] == sum(any(s["text"] == STOP_NOW for s in st) for st in steps)
        assert level["max_reached"] == max(max(c) for c in contexts)
        assert level["overhead_tokens"] == float(__import__("numpy").median([c[0] for c in contexts]))
        assert level["accuracy_per_million_tokens"] == pytest.approx(
            level["correct"] / (sum(t["tokens"] for t in rows) / 1e6)
        )  # fresh: the level's own tokens
    assert low["degenerate"] is True and low["n_stopped"] == 6 and low["overhead_tokens"] > 1000
    assert mid["degenerate"] is False and mid["never_reached"] is False
    assert high["never_reached"] is True and high["n_reached"] == 0 and high["max_reached"] < 16_000
    assert all(lv["n_stopped"] == 0 or lv["n_reached"] >= lv["n_stopped"] for lv in out["levels"])
    assert "at/below the prompt overhead: 1k" in scaling_views.flags(
        out
    ) and "never reached: 16k" in scaling_views.flags(out)
    assert main(["--batch", "scale", "plateau", "--group", "T", "--db", db, "--boot", "200"]) == 0
    table = " ".join(capsys.readouterr().out.split())  # rich may wrap the header line
    assert "never reached: 16k" in table and "≤ overhead" in table and "6 (6 STOP)" in table


def test_continuation_levels_report_marginal_and_chain_cost(tmp_path, capsys, monkeypatch):
    """Continuation: a level's tokens include its replayed prefix, its cost does not; the report shows both the
    level's own spend and the chain's (priced from our table: gpt-4.1-mini at $0.40 / $1.60 per M tokens)."""
    from tests.openai_server import tool_reply, turn_of

    def brain(req, n):  # context 3000, 4000, 5000, … tokens; 20 completion tokens per call; a wrong answer
        t = turn_of(req)
        if t == 0:
            return tool_reply(("think", {"reasoning": "r"}), prompt_tokens=3000)
        return tool_reply(("submit_answer", {"answer": "Z", "reasoning": "r"}), prompt_tokens=3000 + 1000 * t)

    db = tmp_path / "s.sqlite"
    with FakeOpenAI(brain) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
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
            "openai/gpt-4.1-mini",
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
        )
    assert proc.returncode == 0, proc.stderr
    low, high = json.loads(proc.stdout)["levels"]
    # 4k: calls at 3000, 4000 (EXTEND) and 5000 (over: the answer stands) → 12,060 tokens, $0.004896 per item
    assert (low["tokens_marginal"], low["tokens_cumulative"]) == (2 * 12_060, 2 * 12_060)
    assert low["cost_usd_marginal"] == pytest.approx(2 * 0.004896) == low["cost_usd_cumulative"]
    # 6k replays the first two calls (7,040 tokens, no new cost), then calls at 5000, 6000, 7000
    assert high["tokens_marginal"] == 2 * 18_060 and high["tokens_cumulative"] == 2 * (12_060 + 18_060)
    assert high["cost_usd_marginal"] == pytest.approx(2 * 0.007296)
    assert high["cost_usd_cumulative"] == pytest.approx(2 * (0.004896 + 0.007296))
    store = Store(db, readonly=True)
    rows = store.trajectories(store.run("c@6k")["id"])
    assert sum(t["tokens"] for t in rows) == 2 * (7_040 + 18_060)  # the trajectory's own count holds the prefix
    assert sum(t["cost_usd"] for t in rows) == pytest.approx(high["cost_usd_marginal"])
    for level in (low, high):  # accuracy 0 is a value, not "missing"
        assert level["accuracy"] == 0.0
        assert level["accuracy_per_usd"] == 0.0 and level["accuracy_per_million_tokens"] == 0.0


# ---------------------------------------------------------------- parallel: votes, gaps, cost, growing K


def gold_ids(cache, letter: str, n: int) -> list[str]:
    from sandbox.datasets import open_dataset

    corpus, _ = open_dataset("builtin", cache)
    try:
        return [i.id for i in corpus.items if "ABCD"[i.correct_index] == letter][:n]
    finally:
        corpus.close()


def llm_parallel_run(
    tmp_path, ids: list[str], ks: str = "1,2", judge: str = "same", judge_usage=None, extra: tuple[str, ...] = ()
):
    """A K-sample LLM run on the local server: every sample answers B in another spelling; the judge accepts
    everything and prefers the challenger (its replies report `judge_usage`: `completion`'s token keywords).
    gpt-4.1-mini is priced from our table ($0.40 / $1.60 per M)."""
    import os

    from tests.openai_server import tool_reply

    spellings = ["(b)", "B.", "b", "(B)"]

    def brain(req, n):
        if not req.get("tools"):  # a judge call
            return text_reply("<judgment>Correct</judgment> <choice>2</choice>", **(judge_usage or {}))
        return tool_reply(("submit_answer", {"answer": spellings[n % 4], "reasoning": "r"}))

    db = tmp_path / "s.sqlite"
    with FakeOpenAI(brain) as srv:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "workbench.cli",
                "--batch",
                "scale",
                "parallel",
                "--k",
                ks,
                "--agent",
                "llm",
                "--model",
                "openai/gpt-4.1-mini",
                "--base-url",
                srv.url,
                "--ids",
                ",".join(ids),
                "--run",
                "L",
                "--db",
                str(db),
                "--quiet",
                "--format",
                "json",
                "--judge",
                judge,
                "--orders",
                "2",
                *extra,
            ],
            capture_output=True,
            text=True,
            env=dict(os.environ, OPENAI_API_KEY="sk-test"),
            cwd=Path(__file__).resolve().parents[1],
        )
    return proc, db


def test_llm_parallel_votes_on_parsed_letters_and_prices_each_k(tmp_path):
    cache = Path(os.environ["AGENTHOP_CACHE"])
    ids = gold_ids(cache, "B", 2) + gold_ids(cache, "C", 1)
    proc, db = llm_parallel_run(tmp_path, ids)
    assert proc.returncode == 0, proc.stderr
    assert "priced at $0" not in proc.stderr and "LiteLLM" not in proc.stderr  # litellm's pricing noise is gone
    rep = json.loads(proc.stdout)
    k1, k2 = rep["per_k"]
    assert k1["pass_at_k"] == pytest.approx(2 / 3)
    assert k1["majority"] == k1["pass_at_k"]  # "(b)" and "B." vote B: at k = 1 the vote is the sample's answer
    assert k2["majority"] == pytest.approx(2 / 3)
    # every call: 100 prompt + 20 completion tokens = 120 tokens, $0.000072 at gpt-4.1-mini's prices
    call_usd, n = 0.000072, 3
    assert rep["sampling_cost_usd"] == pytest.approx(n * 2 * call_usd) and rep["sampling_tokens"] == n * 2 * 120
    for row in (k1, k2):
        k = row["k"]
        assert row["sampling_cost_usd"] == pytest.approx(n * k * call_usd)
        assert row["cost_usd_majority"] == pytest.approx(n * k * call_usd)
        assert row["cost_usd_pointwise"] == pytest.approx(n * k * call_usd + n * k * call_usd)
        assert row["cost_usd_pairwise"] == pytest.approx(n * k * call_usd + n * (k - 1) * call_usd)
        assert row["tokens_pointwise"] == pytest.approx(n * k * 120 + n * k * 120)
        for name in ("majority", "pointwise", "pairwise"):
            assert row[f"accuracy_per_usd_{name}"] == pytest.approx(row[name] / (row[f"cost_usd_{name}"] / n))
            assert row[f"accuracy_per_million_tokens_{name}"] == pytest.approx(
                row[name] / (row[f"tokens_{name}"] / n / 1e6)
            )
    store = Store(db, readonly=True)
    judged = store.conn.execute("SELECT SUM(cost_usd) FROM judgments").fetchone()[0]
    assert rep["judge_cost_usd"] == pytest.approx(judged)


def study_judge_usd(row) -> float:
    """The study's rule (App. C.1) by hand on one stored verdict: every input token at gpt-4.1-mini's input price
    ($0.40 per M), cached or not, the completion at its output price ($1.60 per M)."""
    tokens_in = row["prompt_tokens"] + row["cache_read_tokens"] + row["cache_creation_tokens"]
    return (tokens_in * 0.40 + row["completion_tokens"] * 1.60) / 1e6


def test_study_cost_mode_reprices_the_judges_verdicts_from_their_token_buckets(tmp_path):
    cache = Path(os.environ["AGENTHOP_CACHE"])
    ids = gold_ids(cache, "B", 2)
    # the judge's replies: 1,000 prompt tokens of which 800 were read from the provider's cache, 20 completion
    usage = {"prompt_tokens": 1000, "cached": 800, "completion_tokens": 20}
    proc, db = llm_parallel_run(tmp_path, ids, judge_usage=usage, extra=("--cost-mode", "study"))
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    store = Store(db, readonly=True)
    rows = [dict(r) for r in store.conn.execute("SELECT * FROM judgments")]
    assert rows and all(
        (r["prompt_tokens"], r["completion_tokens"], r["cache_read_tokens"], r["cache_creation_tokens"])
        == (200, 20, 800, 0)
        for r in rows
    )
    by_hand = sum(study_judge_usd(r) for r in rows)
    stored = sum(r["cost_usd"] for r in rows)
    assert stored < by_hand  # cache-aware: the cache reads at half price; the study charges them in full
    assert rep["cost_mode"] == "study" and rep["judge_verdicts_unrepriced"] == 0
    assert rep["judge_cost_usd"] == pytest.approx(by_hand)
    pointwise = [study_judge_usd(r) for r in rows if r["kind"] == "pointwise"]
    n, k2 = len(ids), rep["per_k"][1]
    verdict_usd = sum(pointwise) / len(pointwise)
    assert k2["cost_usd_pointwise"] == pytest.approx(k2["sampling_cost_usd"] + n * 2 * verdict_usd)
    store.close()


@pytest.mark.parametrize("mode", ["cache-aware", "study"])
def test_every_priced_call_of_a_run_is_priced_by_its_recorded_pricing(tmp_path, mode):
    """One price for every priced call: a config `[[pricing]]` row overriding gpt-4.1-mini ($2 / $8 per M instead of
    the table's $0.40 / $1.60) prices the samples and the self-judge's verdicts alike, under either cost mode —
    rebuilt here by hand from the stored token buckets."""
    Path(os.environ["AGENTHOP_CONFIG"]).write_text(
        '[[pricing]]\nprefix = "gpt-4.1-mini"\ninput_per_m = 2.0\noutput_per_m = 8.0\n'
    )
    cache = Path(os.environ["AGENTHOP_CACHE"])
    ids = gold_ids(cache, "B", 2)
    usage = {"prompt_tokens": 1000, "cached": 800, "completion_tokens": 20}
    proc, db = llm_parallel_run(tmp_path, ids, judge_usage=usage, extra=("--cost-mode", mode))
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    store = Store(db, readonly=True)
    run = store.run("L")
    assert run["config"]["pricing"][0]["input_per_m"] == 2.0  # recorded with the run

    def usd(prompt, completion, cache_read, cache_creation):
        if mode == "study":  # App. C.1: every input token at the input price
            return ((prompt + cache_read + cache_creation) * 2.0 + completion * 8.0) / 1e6
        return (prompt * 2.0 + cache_read * 2.0 + cache_creation * 2.0 + completion * 8.0) / 1e6  # multipliers 1

    verdicts = [dict(r) for r in store.conn.execute("SELECT * FROM judgments")]
    judged = sum(
        usd(r["prompt_tokens"], r["completion_tokens"], r["cache_read_tokens"], r["cache_creation_tokens"])
        for r in verdicts
    )
    sampled = sum(
        usd(t["prompt_tokens"], t["completion_tokens"], t["cache_read_tokens"], t["cache_creation_tokens"])
        for t in store.trajectories(run["id"], final_only=False)
    )
    assert verdicts and rep["judge_cost_usd"] == pytest.approx(judged, abs=1e-6)
    assert rep["sampling_cost_usd"] == pytest.approx(sampled, abs=1e-6)
    store.close()


def test_study_cost_mode_keeps_verdicts_stored_without_buckets_at_their_cost_and_counts_them(tmp_path):
    from sandbox.datasets import open_dataset
    from sandbox.judges import StoredJudge

    cache = Path(os.environ["AGENTHOP_CACHE"])
    ids = gold_ids(cache, "B", 2)
    usage = {"prompt_tokens": 1000, "cached": 800, "completion_tokens": 20}
    proc, db = llm_parallel_run(tmp_path, ids, judge_usage=usage)
    assert proc.returncode == 0, proc.stderr
    store = Store(db)
    first = store.conn.execute("SELECT MIN(id) FROM judgments WHERE kind = 'pointwise'").fetchone()[0]
    with store.transaction():  # one verdict as an older store holds it: no token buckets
        store.conn.execute(
            "UPDATE judgments SET prompt_tokens = NULL, completion_tokens = NULL, cache_read_tokens = NULL, "
            "cache_creation_tokens = NULL WHERE id = ?",
            (first,),
        )
    rows = [dict(r) for r in store.conn.execute("SELECT * FROM judgments")]
    corpus, _ = open_dataset("builtin", cache)
    try:
        judge = StoredJudge("llm:openai/gpt-4.1-mini")
        study = asyncio.run(
            scaling.parallel_study(store, "L", corpus, [1, 2], judge, n_orders=2, verdicts="stored", cost_mode="study")
        ).to_json()
        aware = asyncio.run(
            scaling.parallel_study(store, "L", corpus, [1, 2], judge, n_orders=2, verdicts="stored")
        ).to_json()
    finally:
        corpus.close()
        store.close()
    by_hand = sum(r["cost_usd"] if r["id"] == first else study_judge_usd(r) for r in rows)
    assert study["judge_verdicts_unrepriced"] == 1
    assert study["judge_cost_usd"] == pytest.approx(by_hand)
    assert aware["judge_verdicts_unrepriced"] is None
    assert aware["judge_cost_usd"] == pytest.approx(sum(r["cost_usd"] for r in rows))
    assert "1 judge verdict" in scaling_views.repricing_note(study)
    assert scaling_views.repricing_note(aware) == ""


def test_gap_intervals_relative_gap_and_efficiency_per_k(tmp_path, capsys):
    db = str(tmp_path / "s.sqlite")
    assert (
        main(
            [
                "--batch",
                "scale",
                "parallel",
                "--k",
                "1,2,4",
                "--run",
                "p",
                "--db",
                db,
                "--quiet",
                "--limit",
                "10",
                "--format",
                "json",
                "--orders",
                "2",
                "--judge",
                "none",
            ]
        )
        == 0
    )
    rep = json.loads(capsys.readouterr().out)
    store = Store(db, readonly=True)
    by_item = {}
    for t in store.trajectories(store.run("p")["id"]):
        by_item.setdefault(t["item_id"], {})[t["replicate"]] = t
    samples = [[v[r] for r in range(4)] for v in by_item.values()]
    from sandbox.datasets import open_dataset

    corpus, _ = open_dataset("builtin", Path(os.environ["AGENTHOP_CACHE"]))
    golds = ["ABCD"[corpus.item(i).correct_index] for i in by_item]
    corpus.close()
    correct = [[bool(t["correct"]) for t in rows] for rows in samples]
    pass1 = par.pass_at_k_items(correct, 1)
    for row in rep["per_k"]:
        k = row["k"]
        parts = list(itertools.combinations(range(4), k))
        vote = [
            sum(par.majority_vote([par_letter(rows[j]) for j in b], g).expected_correct for b in parts) / len(parts)
            for rows, g in zip(samples, golds, strict=True)
        ]
        gap = par.verification_gap(par.pass_at_k_items(correct, k), vote, pass1=pass1)
        assert row["gap_majority"] == pytest.approx(gap["gap"])
        assert row["gap_majority_ci"] == [gap["ci"]["gap"]["low"], gap["ci"]["gap"]["high"]]
        assert row["relative_gap_majority"] == gap["relative_gap"] and row["efficiency_majority"] == gap.get(
            "efficiency"
        )
    assert rep["per_k"][0]["efficiency_majority"] is None  # pass@1 = pass@1: undefined, not 0
    row = rep["per_k"][2]
    cells = scaling_views.parallel_cells(rep, row)
    ci = row["gap_majority_ci"]
    shown = "no variation" if no_variation(*ci) else f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
    assert cells[-1] == f"{100 * row['gap_majority']:+.1f}\n{shown}"
    costs = scaling_views.cost_cells(rep, row)
    assert costs[-1].startswith(f"rel {100 * row['relative_gap_majority']:.1f}% · eff ")


def test_k_not_dividing_k_uses_every_subset_as_pass_at_k(tmp_path, capsys):
    """K = 4, k = 3: disjoint blocks kept one block (samples 0-2) and dropped sample 3, so pass@3 (all four
    3-subsets) and the strategies at k = 3 were computed on different samples. Now every strategy is the mean
    over the same C(4, 3) = 4 subsets pass@k averages over, and pointwise selection is recomputable from them."""
    db = str(tmp_path / "s.sqlite")
    assert (
        main(
            [
                "--batch",
                "scale",
                "parallel",
                "--k",
                "1,3,4",
                "--run",
                "p",
                "--db",
                db,
                "--quiet",
                "--limit",
                "8",
                "--format",
                "json",
                "--orders",
                "2",
            ]
        )
        == 0
    )
    rep = json.loads(capsys.readouterr().out)
    assert rep["k_max"] == 4 and "k-subsets" in rep["tie_rule"]
    row3 = next(r for r in rep["per_k"] if r["k"] == 3)
    assert row3["blocks"] == row3["subsets"] == 4 and row3["subsets_all"] is True
    store = Store(db, readonly=True)
    run = store.run("p")
    by_item: dict = {}
    for t in store.trajectories(run["id"]):
        by_item.setdefault(t["item_id"], {})[t["replicate"]] = bool(t["correct"])
    accepted = {
        (r[0], r[1]): bool(r[2])
        for r in store.conn.execute(
            "SELECT item_id, sample_a, verdict FROM judgments WHERE kind = 'pointwise' AND run_id = ?", (run["id"],)
        )
    }
    parts = list(itertools.combinations(range(4), 3))
    expected = []
    for item, reps in by_item.items():
        per_subset = []
        for b in parts:
            pool = [reps[j] for j in b if accepted[(item, j)]]
            per_subset.append(sum(pool) / len(pool) if pool else 0.0)
        expected.append(sum(per_subset) / len(parts))
    assert row3["pointwise"] == pytest.approx(sum(expected) / len(expected))
    correct = [[reps[r] for r in range(4)] for reps in by_item.values()]
    assert row3["pass_at_k"] == pytest.approx(par.pass_at_k_items(correct, 3).mean())
    store.close()


def par_letter(t) -> str | None:
    return "ABCD"[t["predicted_index"]] if 0 <= t["predicted_index"] < 4 else None


def test_growing_k_on_an_existing_run_records_the_larger_k(tmp_path, capsys):
    """`--k 1,2,4` on a K = 2 run used to sample replicates 2 and 3 and still report K = 2 (k = 1, 2 only)."""
    db = str(tmp_path / "s.sqlite")
    common = ["--run", "P", "--db", db, "--quiet", "--limit", "3", "--format", "json", "--judge", "none"]
    assert main(["--batch", "scale", "parallel", "--k", "1,2", *common]) == 0
    capsys.readouterr()
    assert main(["--batch", "scale", "parallel", "--k", "1,2,4", *common]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["k_max"] == 4 and [r["k"] for r in rep["per_k"]] == [1, 2, 4] and rep["ks_unavailable"] == []
    store = Store(db, readonly=True)
    run = store.run("P")
    assert run["replicates"] == 4 and run["config"]["scaling"]["ks"] == [1, 2, 4]
    assert len(store.trajectories(run["id"])) == 3 * 4
    store.close()
    assert main(["--batch", "scale", "parallel", "--k", "1", *common]) == 0  # a smaller request reads the K = 4 run
    rep = json.loads(capsys.readouterr().out)
    assert rep["k_max"] == 4 and rep["per_k"][0]["blocks"] == 4
    assert Store(db, readonly=True).run("P")["config"]["scaling"]["ks"] == [1, 2, 4]


def test_parallel_csv_and_plateau_header(tmp_path, capsys):
    db = str(tmp_path / "s.sqlite")
    assert (
        main(
            [
                "--batch",
                "scale",
                "parallel",
                "--k",
                "1,2",
                "--run",
                "P",
                "--db",
                db,
                "--quiet",
                "--limit",
                "3",
                "--format",
                "csv",
                "--orders",
                "2",
            ]
        )
        == 0
    )
    import csv as csv_module

    rows = list(csv_module.DictReader(capsys.readouterr().out.splitlines()))
    assert [r["k"] for r in rows] == ["1", "2"]
    for column in (
        "pass_at_k_ci_low",
        "gap_pairwise_ci_high",
        "relative_gap_majority",
        "efficiency_pointwise",
        "cost_usd_pairwise",
        "accuracy_per_million_tokens_majority",
        "subsets",
        "accepted_coverage",
    ):
        assert column in rows[0]
    assert [r["subsets"] for r in rows] == ["2", "1"]  # K = 2: each sample alone, then both
    path = tmp_path / "s.json"
    y = {b: {f"i{i}": float(i < 30 + 10 * k) for i in range(60)} for k, b in enumerate(["8k", "16k", "32k"])}
    path.write_text(json.dumps(y))
    assert main(["--batch", "scale", "plateau", "--scores", str(path), "--boot", "300"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "k*_first = 3" in header


# ---------------------------------------------------------------- QA: a plateau needs two distinct budgets


@pytest.mark.parametrize("content", [{"8k": {"a": 1, "b": 0}}, {"8k": {"a": 1, "b": 0}, "8000": {"a": 1, "b": 0}}])
def test_a_plateau_over_one_distinct_budget_is_refused(tmp_path, capsys, content):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(content))
    proc = batch(capsys, "scale", "plateau", "--scores", str(path))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"error: {path}: need at least two distinct budgets")


def test_a_duplicate_budget_with_two_scores_names_the_file(tmp_path, capsys):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"8k": {"a": 1, "b": 0}, "8000": {"a": 0, "b": 0}, "16k": {"a": 1, "b": 1}}))
    proc = batch(capsys, "scale", "plateau", "--scores", str(path))
    assert (
        proc.returncode == 2 and proc.stderr == f"error: {path}: budget '8000' appears twice with conflicting scores\n"
    )


@pytest.mark.parametrize(
    "grid,message",
    [
        ("10,10", "names the budget 10 twice"),
        ("8k,8000", "names the budget 8k twice"),
        ("10", "at least two distinct budgets"),
    ],
)
def test_a_grid_that_repeats_a_budget_is_refused_before_any_run(tmp_path, capsys, grid, message):
    db = tmp_path / "s.sqlite"
    proc = batch(capsys, "scale", "sequential", "--axis", "tokens", "--grid", grid, "--limit", "2", "--db", str(db))
    assert proc.returncode == 2 and message in proc.stderr and not db.exists()


@pytest.mark.parametrize(
    "args,message",
    [
        (("--axis", "points", "--grid", "5,10", "--budget", "25"), "--budget conflicts with --axis points"),
        (("--axis", "turns", "--grid", "5,10", "--max-turns", "8"), "--max-turns conflicts with --axis turns"),
        (
            ("--axis", "tokens", "--grid", "8k,16k", "--max-tokens-total", "9000"),
            "--max-tokens-total conflicts with --axis tokens",
        ),
        (("--axis", "points", "--grid", "8k,16k"), "'8k' is not a whole number of points"),
        (("--axis", "turns", "--grid", "5,7.5"), "'7.5' is not a whole number of turns"),
    ],
)
def test_sequential_refuses_a_flag_the_grid_would_override_and_k_outside_tokens(tmp_path, capsys, args, message):
    db = tmp_path / "s.sqlite"
    proc = batch(capsys, "scale", "sequential", *args, "--limit", "2", "--db", str(db))
    assert proc.returncode == 2 and message in proc.stderr and not db.exists()


def test_sequential_points_keeps_the_other_caps_given(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    proc = batch(
        capsys,
        "scale",
        "sequential",
        "--axis",
        "points",
        "--grid",
        "5,10",
        "--max-turns",
        "7",
        "--limit",
        "2",
        "--run",
        "g",
        "--quiet",
        "--boot",
        "50",
        "--db",
        str(db),
    )
    assert proc.returncode == 0, proc.stderr
    store = Store(db, readonly=True)
    caps = {r["name"]: r["caps"] for r in store.runs()}
    assert caps["g@5"]["budget"] == 5 and caps["g@10"]["budget"] == 10
    assert caps["g@5"]["max_turns"] == 7 and caps["g@5"]["max_tokens_total"] == 200_000


@pytest.mark.parametrize("width", [60, 78, 100])
@pytest.mark.parametrize("unit", ["", "k"])
def test_every_plateau_bar_keeps_its_label(width, unit):
    """plotext drops a tick label that would overlap: each bar's label must be drawn, whatever the count."""
    for n in range(1, 13):
        for amp in (0.1, 0.433, 12.5):
            labels = [f"{(i + 1) * 16}{unit}" for i in range(n + 1)]
            ts = [
                {
                    "from": labels[i],
                    "to": labels[i + 1],
                    "significant": i % 2 == 0,
                    "tested": True,
                    "c_k": amp if i % 2 == 0 else -amp,
                }
                for i in range(n)
            ]
            result = {
                "budgets": labels,
                "accuracy": [0.2 + 0.01 * i for i in range(n + 1)],
                "transitions": ts,
                "k_star": 2,
                "plateau_budget": labels[1],
            }
            axis = figures.plateau_figure(result, width, 22, None).rstrip().splitlines()[-1]
            rest = axis
            for tick in figures.bar_ticks(ts, width):  # every label, whole and in order
                assert f" {tick} " in f" {rest} ", (n, amp, tick, axis)
                rest = rest[rest.index(tick) + len(tick) :]
    assert figures.bar_ticks(ts[:2], 78) == [f"16{unit}→32{unit} gain", f"32{unit}→48{unit} no gain"]


@pytest.mark.parametrize(
    "name,content,args,message",
    [
        ("n.json", '{"8k": {"a": 1, "b": NaN}, "16k": {"a": 1, "b": 1}}', (), "'8k' → 'b': NaN is not a score"),
        (
            "i.json",
            '{"8k": {"a": [1, Infinity]}, "16k": {"a": 1}}',
            (),
            "'8k' → 'a' → trial 1: Infinity is not a score",
        ),
        ("x.csv", "item,budget,score\na,8,1\nb,8,0\na,16,1\nb,16,1\n", ("--study", "X"), "--study is for a JSON file"),
        ("o.json", '{"8": {"a": 1, "b": 0}, "16": {"a": 1, "b": 1}}', ("--study", "X"), "holds one study"),
    ],
)
def test_scores_file_nits_are_refused(tmp_path, capsys, name, content, args, message):
    path = tmp_path / name
    path.write_text(content)
    proc = batch(capsys, "scale", "plateau", "--scores", str(path), *args)
    assert proc.returncode == 2 and message in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("boot", ["0", "1"])
def test_boot_has_one_bound(tmp_path, capsys, boot):
    proc = batch(capsys, "scale", "plateau", "--scores", "x.json", "--boot", boot)  # argparse exits: code 2
    assert proc.returncode == 2 and "--boot: must be at least 2" in proc.stderr


def test_a_parallel_interval_that_cannot_vary_says_so_instead_of_printing_a_point(tmp_path, capsys):
    """At k = 1 majority is pass@1 on every item, so its gap is 0 in every resample: "no variation", never [0, 0]."""
    db = tmp_path / "s.sqlite"
    argv = [
        "--batch",
        "scale",
        "parallel",
        "--k",
        "1,2",
        "--run",
        "p",
        "--db",
        str(db),
        "--quiet",
        "--limit",
        "6",
        "--agent",
        "random",
        "--seed",
        "3",
        "--judge",
        "none",
    ]
    assert main([*argv, "--format", "json"]) == 0
    k1 = json.loads(capsys.readouterr().out)["per_k"][0]
    assert k1["gap_majority"] == 0 and k1["gap_majority_ci_no_variation"] is True
    assert k1["pass_at_k_ci_no_variation"] is False
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "no variation" in table and "[0.0, 0.0]" not in table


def test_a_sequential_sweep_stops_at_the_first_level_cut_short(tmp_path, capsys):
    """A level stopped early (here: nothing listens at the model's address) ends the sweep: the next level of a
    continuation sweep would start that level's unfinished items afresh and store them as final, and a rerun could
    never redo them. Rerunning the command resumes the level, then runs the rest."""
    from tests.test_local_model import closed_port

    db = tmp_path / "s.sqlite"
    url = f"http://127.0.0.1:{closed_port()}/v1"
    rc = main(
        [
            "--batch",
            "scale",
            "sequential",
            "--axis",
            "tokens",
            "--grid",
            "2000,4000,8000",
            "--protocol",
            "continuation",
            "--agent",
            "llm",
            "--model",
            "openai/m",
            "--base-url",
            url,
            "--client",
            "native",
            "--run",
            "g",
            "--limit",
            "2",
            "--db",
            str(db),
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 3  # ExitCode.INCOMPLETE
    assert "the sweep stopped at g@2000: not run yet: g@4000, g@8000; run the same command again to continue" in err
    with Store(db, readonly=True) as store:
        assert [(r["name"], r["status"]) for r in store.runs_in_group("g")] == [("g@2000", "interrupted")]


TALL = "Qwen3-235B_mcpbench_distraction_all_sequential"  # close accuracies: its figure grew to ~75 rows


def _figure_rows(out: str) -> int:
    return len(out[out.index("accuracy by budget") :].rstrip("\n").splitlines())


def test_a_piped_plateau_plot_is_about_twenty_rows(capsys):
    """`scale plateau` drew its figure 70-75 rows tall whatever the terminal, and when piped."""
    proc = batch(capsys, "scale", "plateau", "--scores", str(FIXTURE), "--study", TALL)
    assert proc.returncode == 0, proc.stderr
    assert _figure_rows(proc.stdout) <= 22


def test_a_plateau_plot_fits_the_terminal(capsys, monkeypatch):
    monkeypatch.setenv("LINES", "40")
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr("workbench.cli.render.output.on_terminal", lambda: True)
    proc = batch(capsys, "scale", "plateau", "--scores", str(FIXTURE), "--study", TALL)
    assert proc.returncode == 0, proc.stderr
    assert _figure_rows(proc.stdout) <= 38


def test_the_figures_keep_to_the_rows_they_are_given():
    from workbench.views import figures

    close = [0.50 + 0.001 * i for i in range(8)] + [0.9]
    report = {
        "per_k": [{"k": k, "pass_at_k": a + 0.05, "majority": a} for k, a in zip(range(1, 10), close, strict=True)],
        "judge": None,
    }
    for rows in (16, 20, 30):  # two panels of four rows of frame and labels each, and their values
        assert len(figures.parallel_figure(report, 78, rows, None, max_rows=rows).splitlines()) <= rows
        result = {
            "budgets": [str(b) for b in range(1, 10)],
            "accuracy": close,
            "k_star": 2,
            "plateau_budget": "2",
            "transitions": [
                {"from": str(b), "to": str(b + 1), "significant": False, "tested": True, "c_k": -0.001 * b}
                for b in range(1, 9)
            ],
        }
        assert len(figures.plateau_figure(result, 78, rows, None, max_rows=rows).splitlines()) <= rows


@pytest.mark.parametrize(
    "content,said",
    [
        ('{"a": 1}', "'a' is neither a budget"),
        ('{"s": {"8": {"x": 1}}, "t": 3}', "'t' is neither a budget"),
    ],
)
def test_a_scores_file_of_no_budgets_says_what_is_wrong_with_it(tmp_path, capsys, content, said):
    """`{"a": 1}` was said to hold "several studies"."""
    path = tmp_path / "x.json"
    path.write_text(content)
    proc = batch(capsys, "scale", "plateau", "--scores", str(path))
    assert proc.returncode == 2 and "several studies" not in proc.stderr
    assert str(path) in proc.stderr and said in proc.stderr, proc.stderr


@pytest.mark.parametrize("grid", ["-10,20", "10,-20", "-8k,16k"])
def test_a_grid_that_starts_with_a_minus_is_read_as_a_grid_and_its_negative_budget_refused(tmp_path, capsys, grid):
    """argparse read `--grid -10,20` as a flag ("expected one argument")."""
    db = tmp_path / "s.sqlite"
    axis = "tokens" if "k" in grid else "points"
    proc = batch(capsys, "scale", "sequential", "--axis", axis, "--grid", grid, "--run", "g", "--db", str(db))
    negative = next(label for label in grid.split(",") if label.startswith("-"))
    assert proc.returncode == 2 and "expected one argument" not in proc.stderr
    assert f"--grid: {negative!r} is negative" in proc.stderr, proc.stderr
    assert not db.exists()


def test_k_is_read_by_one_rule_for_the_cli_and_the_study_form(tmp_path, capsys):
    """`--k` and the Scaling screen's study form read sample counts with `scaling.parse_ks`: sorted, each once, only
    positive whole numbers (a bad one is exit 2 in one line, nothing written)."""
    from workbench.cli import main
    from workbench.service.scaling import ScalingInputError, parse_ks

    assert parse_ks("4, 1,2,2") == [1, 2, 4]
    for bad in ("0,1", "x", " , "):
        with pytest.raises(ScalingInputError):
            parse_ks(bad)
    db = tmp_path / "s.sqlite"
    assert main(["--batch", "scale", "parallel", "--k", "0,2", "--run", "p", "--db", str(db)]) == 2
    assert "k needs positive sample counts" in capsys.readouterr().err and not db.exists()
