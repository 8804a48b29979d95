"""Importing reference trajectory files by replay (docs/protocol.md#parity: ReplayAgent), resumable, checked against the log."""

from __future__ import annotations

import asyncio
import copy
import io
import json

import pytest

from sandbox.agents.base import NonTransientModelError
from sandbox.agents.replay import ReplayAgent, caps_from_logs
from sandbox.corpus import open_release
from sandbox.records import Caps
from sandbox.reference_log import ReferenceLog, ReferenceLogError, output_matches, truncate
from sandbox.runner import Runner, RunSpec
from storage import Store
from storage.errors import RunConflict
from storage.export import export_jsonl
from tests.conftest import G, S
from tests.interop_data import LONG, as_json, logs, result, trajectory, turn, write_experiment, write_interop_release
from workbench.service.reference_import import ReferenceImportError, import_reference
from workbench.service.summary import agenthop_summary, reference_record


@pytest.fixture
def interop_dir(tmp_path):
    return write_interop_release(tmp_path / "release")


@pytest.fixture
def interop_corpus(interop_dir, tmp_path):
    corpus, _ = open_release(interop_dir, tmp_path / "cache")
    yield corpus
    corpus.close()


@pytest.fixture
def imported(interop_corpus, tmp_path):
    """The five hand-written logs (plus noise files) imported into run 'ref'."""
    exp = write_experiment(tmp_path / "experiments" / "gpt-4.1", logs())
    store = Store(tmp_path / "store.sqlite")
    summary = import_reference(exp, interop_corpus, store, "ref")
    return store, summary, exp


def by_item(store, run="ref"):
    return {t["item_id"]: t for t in store.trajectories(store.run(run)["id"])}


# ---------------------------------------------------------------- log format


def test_truncation_rule():
    assert truncate("x" * 500) == "x" * 500
    assert truncate("x" * 501) == "x" * 500 + "..."
    full = "=== 3 Method ===\n\n" + LONG
    assert output_matches(full, truncate(full))
    assert not output_matches(full[:-1] + "!", truncate(full)[:-4] + "!...")
    assert not output_matches("x" * 500, "x" * 500 + "...")  # a truncated log needs a longer output
    assert output_matches("short...", "short...") and not output_matches("short", "short...")


def test_malformed_logs_are_refused_with_the_key():
    with pytest.raises(ReferenceLogError, match="turns"):
        ReferenceLog.from_json({"sample_id": "st_0001"})
    with pytest.raises(ReferenceLogError, match=r"turns\[0\].role"):
        ReferenceLog.from_json({"sample_id": "st_0001", "turns": [{"role": "user"}]})
    with pytest.raises(ReferenceLogError, match="cost"):
        ReferenceLog.from_json(
            {"sample_id": "x", "turns": [turn(0, [], [{"name": "think", "output": "", "cost": "1"}], 0, 0)]}
        )


def test_caps_are_inferred_from_the_logs():
    parsed = [ReferenceLog.from_json(t) for t in logs().values()]
    assert caps_from_logs(parsed) == Caps()
    disabled = trajectory(
        "st_0001",
        [
            turn(
                0,
                [("search_papers", {"query": "x"})],
                [
                    result(
                        "search_papers",
                        {"query": "x"},
                        "REJECTED: Tool 'search_papers' is disabled in this run. Use only the tools "
                        "listed in the system prompt.",
                        0,
                    )
                ],
                1,
                1,
            )
        ]
        + [turn(i, [], [], 1, 1, content="hm") for i in range(1, 10)],
        terminated_by="max_turns",
        answer="",
        predicted=-1,
        budget_used=0,
        wall=1.0,
    )
    caps = caps_from_logs([ReferenceLog.from_json(disabled)])
    assert caps.max_turns == 10 and caps.disabled_tools == ("search_papers",)


async def test_replay_agent_turns_errors_and_token_limit():
    log = ReferenceLog.from_json(logs()["mt_0002"])
    agent = ReplayAgent(log, Caps())
    first = await agent.act([], ())
    assert [c.name for c in first.tool_calls] == ["get_references", "read_section"]
    assert (first.usage.prompt, first.usage.completion) == (90000, 100)
    await agent.act([], ())
    last = await agent.act([], ())
    assert last.tool_calls == [] and agent.given == 200_150 and agent.unused == 0
    err = ReplayAgent(ReferenceLog.from_json(logs()["st_0002"]), Caps())
    with pytest.raises(NonTransientModelError, match="bad request"):
        await err.act([], ())


# ---------------------------------------------------------------- import


def test_import_replays_each_log_with_full_outputs(imported):
    store, summary, _exp = imported
    assert summary.files == 7 and summary.imported == 5 and summary.already_done == 0
    assert [u["path"].endswith("broken.json") for u in summary.unreadable] == [True]
    assert [u["sample_id"] for u in summary.unknown_samples] == ["st_9999"]
    assert summary.model == "gpt-4.1" and summary.caps["budget"] == 30
    run = store.run("ref")
    assert run["agent"] == "replay" and run["model"] == "gpt-4.1" and run["status"] == "done"
    t = by_item(store)
    assert set(t) == {"st_0001", "st_0002", "st_0003", "mt_0001", "mt_0002"}
    assert (t["st_0001"]["termination"], t["st_0001"]["answer"], t["st_0001"]["correct"]) == ("answer", "A", 1)
    assert t["st_0001"]["points_used"] == 6 and t["st_0001"]["paper_recall"] == 1
    assert t["st_0001"]["section_recall"] == 1  # ours: the read's index is the direct label's section
    # the truncated read comes back in full
    steps = store.steps(t["st_0001"]["id"])
    read = next(s for s in steps if s["tool_name"] == "read_section")
    assert read["text"] == "=== 3 Method ===\n\n" + LONG and read["section_index"] == 1 and read["delivered"]


def test_error_record_plain_text_and_malformed_submit(imported):
    store, _, _ = imported
    b = by_item(store)["st_0002"]
    assert (b["termination"], b["answer"], b["predicted_index"], b["correct"]) == ("answer", "maybe", -1, 0)
    assert b["chosen_type"] == "no_answer" and b["api_errors"] == 1 and b["points_used"] == 11
    kinds = [s["kind"] for s in store.steps(b["id"])]
    assert kinds[0] == "error" and "nudge" in kinds  # the error consumed a turn; the plain text got the nudge
    assert b["turns"] == 5 and b["paper_recall"] == 0  # ours: a failed read delivers nothing (the reference counts it)


def test_rejections_budget_and_token_limit(imported):
    store, _, _ = imported
    t = by_item(store)
    c, d = t["mt_0001"], t["mt_0002"]
    assert c["termination"] == "budget" and c["points_used"] == 30
    statuses = [s["status"] for s in store.steps(c["id"]) if s["kind"] == "tool"]
    assert statuses[-2:] == ["rejected", "rejected"] and statuses.count("metadata_only") == 1
    # the final attempt's tokens, as a native run keeps them; the failed attempt's 1,000 + 10 are kept apart
    assert d["termination"] == "token_limit" and d["tokens"] == 200_150
    harness = [s for s in store.steps(d["id"]) if s["kind"] == "harness"]
    assert harness[0]["text"] == "[HARNESS] Token limit reached (200,150 > 200,000). Forcing termination."
    assert (d["attempt"], d["transient_retries"], d["wall_time_s"]) == (1, 2, 40.0)  # logged-only figures
    assert (d["prompt_tokens"], d["completion_tokens"]) == (199_900, 250)
    assert d["cost_usd"] == pytest.approx(199_900 * 2e-6 + 250 * 8e-6)
    samples = store.run("ref")["config"]["replay"]["samples"]
    assert samples["mt_0002"]["failed_attempts"] == {"prompt_tokens": 1_000, "completion_tokens": 10}
    assert "failed_attempts" not in samples["st_0001"]


def test_the_hand_written_logs_match_our_sandbox(imported):
    store, summary, _ = imported
    assert summary.checked == 5 and summary.outputs_compared == 21
    assert summary.output_mismatches == 0 and summary.field_mismatches == {}, summary.examples
    assert store.run("ref")["config"]["replay"]["samples"]["st_0001"] == {"outputs_compared": 3}


def test_a_wrong_logged_output_is_reported_not_fatal(interop_corpus, tmp_path):
    bad = logs()
    a = copy.deepcopy(bad["st_0001"])
    a["turns"][0]["tool_results"][1]["output"] = truncate("=== 3 Method ===\n\nThe method decomposes noise.")
    a["turns"][0]["tool_results"][0]["cost"] = 2
    a["budget_used"] = 7
    bad["st_0001"] = a
    exp = write_experiment(tmp_path / "bad", bad, extras=False)
    store = Store(tmp_path / "s.sqlite")
    summary = import_reference(exp, interop_corpus, store, "bad")
    assert summary.imported == 5
    assert summary.output_mismatches == 2 and summary.samples_with_output_mismatches == 1
    assert summary.field_mismatches == {"budget_used": 1}
    example = summary.examples[0]
    assert example["sample_id"] == "st_0001" and example["fields"] == {"budget_used": [7, 6]}
    assert example["outputs"][0]["problem"] == "cost"
    check = store.run("bad")["config"]["replay"]["samples"]["st_0001"]
    problems = [e["problem"] for e in check["examples"]]
    assert problems == ["cost", "output"] and check["examples"][1]["first_difference"] == 40
    assert by_item(store, "bad")["st_0001"]["points_used"] == 6  # our sandbox's figure is what the run keeps


def test_replay_past_the_log_ends_as_error_and_is_reported(interop_corpus, tmp_path):
    short = {
        "st_0003": trajectory(
            "st_0003",
            [turn(0, [("think", {"reasoning": "x"})], [result("think", {"reasoning": "x"}, "Noted.", 0)], 5, 5)],
            terminated_by="answer",
            answer="A",
            predicted=0,
            budget_used=0,
            wall=1.0,
        )
    }
    store = Store(tmp_path / "s.sqlite")
    summary = import_reference(write_experiment(tmp_path / "e", short, extras=False), interop_corpus, store, "short")
    t = by_item(store, "short")["st_0003"]
    assert t["termination"] == "error" and "replay log exhausted" in t["error"]
    assert summary.field_mismatches == {
        "calls_past_log": 1,
        "is_correct": 1,
        "predicted_answer": 1,
        "predicted_index": 1,
        "terminated_by": 1,
        "total_turns": 1,
    }


def test_import_resumes_and_refuses_another_source(imported, interop_corpus, tmp_path):
    store, _first, exp = imported
    again = import_reference(exp, interop_corpus, store, "ref")
    assert again.imported == 0 and again.already_done == 5 and again.checked == 5
    assert len(store.trajectories(store.run("ref")["id"], final_only=False)) == 5
    other = write_experiment(tmp_path / "other" / "gpt-4.1", logs(), extras=False)
    with pytest.raises(RunConflict):
        import_reference(other, interop_corpus, store, "ref")


def test_partial_import_then_the_rest(interop_corpus, tmp_path):
    all_logs = logs()
    exp = write_experiment(tmp_path / "exp", {k: all_logs[k] for k in ("st_0001", "mt_0001")}, extras=False)
    store = Store(tmp_path / "s.sqlite")
    assert import_reference(exp, interop_corpus, store, "p").imported == 2
    write_experiment(exp, all_logs, extras=False)
    later = import_reference(exp, interop_corpus, store, "p")
    assert (later.imported, later.already_done, later.checked, later.output_mismatches) == (3, 2, 5, 0)


def test_user_errors(interop_corpus, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    with pytest.raises(ReferenceImportError, match="not a directory"):
        import_reference(tmp_path / "nope", interop_corpus, store, "x")
    parent = write_experiment(tmp_path / "experiments" / "gpt-4.1", logs(), extras=False).parent
    with pytest.raises(ReferenceImportError, match=r"model directories: gpt-4\.1"):
        import_reference(parent, interop_corpus, store, "x")
    assert import_reference(parent, interop_corpus, store, "x", model="gpt-4.1").imported == 5
    mixed = logs()
    mixed["st_0001"]["model"] = "claude-sonnet-4-5"
    with pytest.raises(ReferenceImportError, match="several models"):
        import_reference(write_experiment(tmp_path / "mixed", mixed, extras=False), interop_corpus, store, "y")
    only_unknown = write_experiment(tmp_path / "unk", {}, extras=True)
    with pytest.raises(ReferenceImportError, match="nothing to import"):
        import_reference(only_unknown, interop_corpus, store, "z")
    assert issubclass(ReferenceImportError, ValueError)


def test_export_jsonl_carries_full_steps(imported, tmp_path):
    store, _, _ = imported
    out = tmp_path / "out.jsonl"
    assert export_jsonl(store, "ref", out) == 5
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    a = next(x for x in lines if x["item_id"] == "st_0001")
    assert a["run"]["name"] == "ref" and a["termination"] == "answer"
    assert any(s["text"] == "=== 3 Method ===\n\n" + LONG for s in a["steps"])
    assert "text_hash" not in a["steps"][0]
    buf = io.StringIO()
    assert export_jsonl(store, "ref", buf) == 5 and buf.getvalue() == out.read_text()


# ---------------------------------------------------------------- round trip on the mini and demo corpora


def test_mini_depth2_item_roundtrip(mini_corpus, tmp_path):
    """A hand-written depth-2 log on the conftest release: a metadata-only read, the roman alias quirk, a submit."""
    roman = "f" * 40
    log = trajectory(
        "st_0001",
        [
            turn(
                0,
                [
                    ("get_references", {"paper_id": S}),
                    ("read_section", {"paper_id": "d" * 40, "section": "A"}),
                    ("read_section", {"paper_id": roman, "section": "I"}),
                ],
                [
                    result(
                        "get_references",
                        {"paper_id": S},
                        f"References for paper '{S}' (3 papers):\n\n"
                        f"  [1] {'b' * 40}\n      Title: Bridge Paper\n      Authors: Ada Lovelace and Alan Turing (2022)\n"
                        f"      Full text: Available\n"
                        f"  [2] {'d' * 40}\n      Title: A Non-arXiv Workshop Paper\n      Authors: Unknown (None)\n"
                        f"      Full text: Not available\n"
                        f"  [3] {roman}\n      Title: Roman Paper\n      Authors: Unknown (2018)\n      Full text: Available",
                        1,
                    ),
                    result(
                        "read_section",
                        {"paper_id": "d" * 40, "section": "A"},
                        f"Full text not available for paper '{'d' * 40}'.",
                        5,
                    ),
                    result("read_section", {"paper_id": roman, "section": "I"}, "=== IV Method ===\n\nroman method", 5),
                ],
                100,
                10,
            ),
            turn(
                1,
                [
                    ("read_section", {"paper_id": G, "section": "B"}),
                    ("submit_answer", {"answer": "B", "reasoning": "r"}),
                ],
                [
                    result(
                        "read_section",
                        {"paper_id": G, "section": "B"},
                        "=== 3 Method ===\n\nOverview.\n3.2 Frequency-Domain"
                        " Decomposition\nWe decompose because it preserves phase.",
                        5,
                    ),
                    result("submit_answer", {"answer": "B", "reasoning": "r"}, "Answer submitted: B", 0),
                ],
                100,
                10,
            ),
        ],
        terminated_by="answer",
        answer="B",
        predicted=1,
        budget_used=16,
        wall=3.0,
    )
    log["correct_index"], log["depth"], log["is_correct"] = 1, 2, True
    store = Store(tmp_path / "s.sqlite")
    summary = import_reference(
        write_experiment(tmp_path / "m", {"st_0001": log}, extras=False), mini_corpus, store, "m"
    )
    assert summary.output_mismatches == 0 and summary.field_mismatches == {}, summary.examples
    t = by_item(store, "m")["st_0001"]
    assert t["correct"] == 1 and t["paper_recall"] == 1 and t["section_recall"] == 1
    # the direct label names a subsection rolled into "3 Method": ours resolves it, the reference's matcher cannot
    ref = agenthop_summary(store, "m", mini_corpus)["retrieval"]
    assert (ref["paper_recall"], ref["section_recall_soft"], ref["total_read_calls"]) == (1.0, 0.0, 2)


def test_oracle_run_exported_and_replayed_back(demo_corpus, tmp_path):
    """Our own run, written as reference files (with its 500-char logs) and imported: every output and field agrees."""
    store = Store(tmp_path / "s.sqlite")
    asyncio.run(Runner(RunSpec(name="o", dataset="demo", agent="oracle", workers=2), demo_corpus, store).run())
    exp = tmp_path / "exp" / "oracle"
    exp.mkdir(parents=True)
    for t in store.trajectories(store.run("o")["id"]):
        rec = reference_record(t, store.steps(t["id"]))
        rec.update(model="oracle", budget_total=30)
        (exp / f"{t['item_id']}.json").write_text(json.dumps(as_json(rec)))
    summary = import_reference(exp, demo_corpus, store, "back")
    assert summary.imported == 60 and summary.output_mismatches == 0 and summary.field_mismatches == {}
    assert summary.outputs_compared == sum(t["tool_calls"] for t in store.trajectories(store.run("o")["id"]))
    back = by_item(store, "back")
    assert all(t["correct"] and t["termination"] == "answer" for t in back.values())


def test_disabled_tools_are_reproduced(interop_corpus, tmp_path):
    log = trajectory(
        "st_0003",
        [
            turn(
                0,
                [("search_papers", {"query": "gold"})],
                [
                    result(
                        "search_papers",
                        {"query": "gold"},
                        "REJECTED: Tool 'search_papers' is disabled in this run. Use only the tools listed in the system prompt.",
                        0,
                    )
                ],
                5,
                5,
            ),
            turn(
                1,
                [("submit_answer", {"answer": "A", "reasoning": "r"})],
                [result("submit_answer", {"answer": "A", "reasoning": "r"}, "Answer submitted: A", 0)],
                5,
                5,
            ),
        ],
        terminated_by="answer",
        answer="A",
        predicted=0,
        budget_used=0,
        wall=1.0,
    )
    store = Store(tmp_path / "s.sqlite")
    summary = import_reference(
        write_experiment(tmp_path / "d", {"st_0003": log}, extras=False), interop_corpus, store, "d"
    )
    assert summary.caps["disabled_tools"] == ["search_papers"]
    assert summary.output_mismatches == 0 and summary.field_mismatches == {}
    assert [s["status"] for s in store.steps(by_item(store, "d")["st_0003"]["id"]) if s["kind"] == "tool"] == [
        "disabled",
        "ok",
    ]


def test_transient_abandon_and_five_api_errors(interop_corpus, tmp_path):
    abandoned = trajectory(
        "st_0003",
        [turn(0, [], [], 0, 0, role="error", content="Abandoned after 11 transient retries: 503 Service Unavailable")],
        terminated_by="error",
        answer="",
        predicted=-1,
        budget_used=0,
        wall=1.0,
        transient=11,
    )
    errors = trajectory(
        "st_0001",
        [turn(i, [], [], 0, 0, role="error", content="Error code: 400") for i in range(5)],
        terminated_by="error",
        answer="",
        predicted=-1,
        budget_used=0,
        wall=1.0,
        api_errors=5,
    )
    store = Store(tmp_path / "s.sqlite")
    exp = write_experiment(tmp_path / "e", {"st_0003": abandoned, "st_0001": errors}, extras=False)
    summary = import_reference(exp, interop_corpus, store, "err")
    assert summary.field_mismatches == {} and summary.output_mismatches == 0
    t = by_item(store, "err")
    assert (t["st_0003"]["termination"], t["st_0003"]["error_kind"]) == ("error", "transient_exhausted")
    steps = store.steps(t["st_0003"]["id"])
    assert [s["kind"] for s in steps] == ["retry"] * 10 + ["error"]
    assert steps[-1]["text"] == abandoned["turns"][0]["content"]
    assert (t["st_0001"]["termination"], t["st_0001"]["error_kind"], t["st_0001"]["api_errors"]) == (
        "error",
        "api_errors",
        5,
    )
    with pytest.raises(Exception, match="not a patchable"):
        store.update_trajectory(t["st_0001"]["id"], status="running")


def test_summary_backend_and_strategy_follow_the_run(interop_corpus, tmp_path):
    """§3.2 routing from the model name (claude-* → anthropic), the strategy from the directory's suffix."""
    from workbench.service.summary import routed_backend, strategy_of

    claude = {sid: {**t, "model": "claude-sonnet-4-5"} for sid, t in logs().items()}
    exp = write_experiment(tmp_path / "experiments" / "claude-sonnet-4-5_react", claude, extras=False)
    store = Store(tmp_path / "s.sqlite")
    import_reference(exp, interop_corpus, store, "claude")
    s = agenthop_summary(store, "claude", interop_corpus)
    assert (s["fingerprint"]["backend"], s["fingerprint"]["strategy"]) == ("anthropic", "react")
    assert (s["config"]["backend"], s["config"]["strategy"]) == ("anthropic", "react")
    assert "workbench_warnings" not in s  # a clean import keeps exactly the reference's keys
    assert [
        routed_backend(m)
        for m in (
            "gpt-4.1",
            "gpt-5.1-mini",
            "GPT-5-codex",
            "gemini-2.5-flash",
            "gemini-1.5-pro",
            "anthropic/claude-opus-4-1",
            "deepseek-chat",
            "moonshotai/Kimi-K2.5",
            "Qwen/Qwen3-32B",
            "gpt-5",
        )
    ] == ["openai", "responses", "responses", "google", "openai", "anthropic", "openai", "openai", "openai", "openai"]
    assert strategy_of({"agent": "llm", "ablation": "closed-book"}) == "noretrieval"
    assert strategy_of({"agent": "llm", "ablation": "full"}) == "direct"
    assert strategy_of({"agent": "llm", "ablation": "full", "config": {"agent_options": {"base_url": "x"}}}) == "direct"


def test_export_of_a_mismatched_import_warns(interop_corpus, tmp_path):
    bad = logs()
    bad["st_0001"] = copy.deepcopy(bad["st_0001"])
    bad["st_0001"]["budget_used"] = 7  # our replay charges 6
    exp = write_experiment(tmp_path / "bad", bad, extras=False)
    store = Store(tmp_path / "s.sqlite")
    import_reference(exp, interop_corpus, store, "bad")
    s = agenthop_summary(store, "bad", interop_corpus)
    assert (
        len(s["workbench_warnings"]) == 1
        and "1 imported trajectories did not replay as logged (st_0001)" in s["workbench_warnings"][0]
    )
