"""`summary.json` as the reference evaluator computes it (docs/protocol.md#parity), checked against figures worked out by hand.

The five hand-written logs of tests/interop_data.py, imported by replay; each expected value
below is derived in the comment beside it from those logs, not from our code.
"""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

from sandbox.corpus import open_release
from sandbox.runner import Runner, RunSpec
from sandbox.sections import norm
from stats import reference_summary as rs
from storage import Store
from tests.interop_data import logs, write_experiment, write_interop_release
from workbench.service.reference_import import import_reference
from workbench.service.summary import SummaryError, agenthop_summary, sample_records


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("interop")
    release = write_interop_release(root / "release")
    corpus, _ = open_release(release, root / "cache")
    store = Store(root / "store.sqlite")
    exp = write_experiment(root / "experiments" / "gpt-4.1", logs())
    import_reference(exp, corpus, store, "ref")
    summary = agenthop_summary(store, "ref", corpus, release)
    yield corpus, store, summary, release
    corpus.close()


def bucket(n, correct):
    return {"n": n, "correct": correct, "accuracy": round(correct / n, 4)}


def test_top_level_and_fingerprint(world):
    _corpus, _store, s, release = world
    assert list(s) == [
        "fingerprint",
        "config",
        "total",
        "correct",
        "accuracy",
        "failure_attribution",
        "retrieval",
        "tools",
        "cost",
        "errors",
    ]
    assert (s["total"], s["correct"]) == (5, 1)  # only st_0001 answered right
    fp = s["fingerprint"]
    want_sha = hashlib.sha256((release / "qa/full.jsonl").read_bytes()).hexdigest()[:16]
    assert fp == {
        "schema_version": "agenthop-eval-v1",
        "model": "gpt-4.1",
        "backend": "openai",
        "strategy": "direct",
        "started_at": "",
        "completed_at": fp["completed_at"],
        "benchmark_sha256": want_sha,
    }
    assert s["config"]["budget"] == 30 and s["config"]["max_turns"] == 20 and s["config"]["max_total_tokens"] == 200_000
    assert "api_key" not in s["config"] and "base_url" not in s["config"]


def test_accuracy_buckets(world):
    acc = world[2]["accuracy"]
    assert acc["overall"] == 0.2  # 1 / 5
    assert acc["by_type"] == {"multi-target": bucket(2, 0), "single-target": bucket(3, 1)}
    assert acc["by_depth"] == {"d1": bucket(3, 1), "d2": bucket(2, 0)}  # d1: st_0001, st_0003, mt_0001
    assert acc["by_reasoning"] == {"GROUND": bucket(1, 0), "METHOD": bucket(2, 1), "RESULT": bucket(2, 0)}
    assert acc["by_venue"] == {
        "ACL": bucket(1, 0),
        "EMNLP": bucket(1, 0),
        "ICLR": bucket(2, 1),
        "NeurIPS": bucket(1, 0),
    }
    assert acc["by_consensus_tier"] == {"bronze": bucket(1, 0), "gold": bucket(2, 1), "silver": bucket(2, 0)}
    assert acc["by_filter_agreement"] == {"agree_2": bucket(2, 0), "agree_3": bucket(2, 1), "agree_None": bucket(1, 0)}
    assert acc["mt_d2_by_bridge_necessary"] == {"unlabeled": bucket(1, 0)}  # the loader never provides the field
    assert acc["conditional_on_termination"] == {
        "answer": bucket(3, 1),
        "budget": bucket(1, 0),
        "token_limit": bucket(1, 0),
    }
    assert acc["position_bias"] == {
        "predicted_distribution": {"A": 1, "B": 1, "C": 0, "D": 0},  # st_0001 → A, st_0003 → (b); "maybe" is invalid
        "correct_position_distribution": {"A": 2, "B": 1, "C": 1, "D": 1},
        "accuracy_when_correct_at": {"A": 0.5, "B": 0.0, "C": 0.0, "D": 0.0},
    }


def test_failure_attribution(world):
    # wrong: st_0002 malformed submit, mt_0001 budget, mt_0002 token limit → no_answer; st_0003 picked seed_only
    assert world[2]["failure_attribution"] == {
        "n_wrong": 4,
        "counts": {"no_answer": 3, "seed_only": 1},
        "rates": {"no_answer": 0.75, "seed_only": 0.25},
    }


def test_retrieval(world):
    r = world[2]["retrieval"]
    # reads: st_0001 1 (G1 "3 Method"); st_0002 2 (seed, failed G2 read); mt_0001 5 (4 on G1, 1 sibling; the
    # metadata-only paper has no arXiv id and the rejected read is not a read); mt_0002 2 (bridge, G2); st_0003 0
    assert r["total_read_calls"] == 10
    # any gold paper: all but st_0003 — the failed read of st_0002 counts, and both MT items read one of two golds
    assert r["paper_recall"] == 0.8
    # soft: st_0001 (first matching label is the supporting "Method"), mt_0001, mt_0002; hard: only the last two
    assert (r["section_recall_soft"], r["section_recall_hard"]) == (0.6, 0.4)
    assert (r["conversion_rate"], r["conversion_denominator"]) == (0.25, 4)
    assert r["min_navigation_rate"] == 0.4  # get_references in st_0002 and mt_0002
    assert r["wasted_read_rate"] == 0.2  # the seed read of st_0002 and the sibling read of mt_0001: 2 / 10
    assert r["navigation_patterns"] == {
        "st_d1": {
            "total": 2,
            "buckets": {
                "missed": {"n": 1, "share": 0.5, "correct": 0, "accuracy": 0.0},
                "reached_target": {"n": 1, "share": 0.5, "correct": 1, "accuracy": 1.0},
            },
        },
        "st_d2": {
            "total": 1,
            "buckets": {"target_only_skipped_bridge": {"n": 1, "share": 1.0, "correct": 0, "accuracy": 0.0}},
        },
        "mt_d1": {"total": 1, "buckets": {"reached_1_of_2": {"n": 1, "share": 1.0, "correct": 0, "accuracy": 0.0}}},
        "mt_d2": {
            "total": 1,
            "buckets": {"reached_1_of_2__via_bridge": {"n": 1, "share": 1.0, "correct": 0, "accuracy": 0.0}},
        },
    }


def test_tools(world):
    t = world[2]["tools"]
    assert t["usage_counts"] == {
        "frobnicate": 1,
        "get_paper_info": 2,
        "get_references": 2,
        "read_section": 12,
        "submit_answer": 3,
        "think": 1,
    }  # rejected and unknown calls included
    assert t["usage_per_sample_mean"]["read_section"] == 2.4 and t["usage_per_sample_mean"]["think"] == 0.2
    assert t["budget_spend_by_tool"] == {
        "frobnicate": 0,
        "get_paper_info": 1,
        "get_references": 2,
        "read_section": 55,
        "submit_answer": 0,
        "think": 0,
    }
    assert t["budget_share_by_tool"]["read_section"] == round(55 / 58, 4)
    assert t["budget_share_by_tool"]["get_paper_info"] == round(1 / 58, 4)
    assert t["rejection_rate"] == round(2 / 21, 4)  # 2 rejected of 21 results
    # total_turns 2, 5 (error record + 4 model turns), 3, 3 (token-limit note included), 2
    assert t["turn_stats"] == {"mean": 3.0, "p50": 3, "p90": 5, "p95": 5, "n": 5}
    assert t["terminated_by"] == {"answer": 3, "budget": 1, "token_limit": 1}


def test_cost_and_errors(world):
    c = world[2]["cost"]
    assert (c["pricing_found"], c["provider"], c["input_per_m"], c["output_per_m"]) == (True, "OpenAI", 2.0, 8.0)
    regular = 2500 + 5400 + 2700 + (199_900 + 1000) + 1100  # mt_0002 adds its failed attempt's 1000
    completion = 70 + 120 + 120 + (250 + 10) + 20
    assert c["tokens"] == {
        "regular_input": regular,
        "cache_read": 400,
        "cache_creation": 50,
        "completion": completion,
        "total_input": regular + 450,
    }
    assert c["per_sample_mean_tokens"] == {
        "regular_input": round(regular / 5, 1),
        "cache_read": 80.0,
        "cache_creation": 10.0,
        "completion": round(completion / 5, 1),
    }
    assert c["cache_hit_rate"] == round(400 / (regular + 450), 4)
    assert c["cost_usd"]["total_usd"] == round(regular * 2e-6 + 400 * 1e-6 + 50 * 2e-6 + completion * 8e-6, 6)
    assert c["wall_time"] == {
        "mean": 21.5,
        "p50": 20.0,
        "p90": 40.0,
        "p95": 40.0,
        "n": 5,
        "total_minutes": round(107.5 / 60, 2),
    }
    profile = c["trajectory_profile"]
    assert [p["n_samples"] for p in profile] == [5, 5, 3, 1, 1]
    assert profile[0] == {
        "turn": 0,
        "n_samples": 5,
        "mean_prompt_tokens": (1000 + 0 + 800 + 90000 + 500) / 5,
        "mean_completion_tokens": 40.0,
    }
    assert profile[2]["mean_prompt_tokens"] == round((1300 + 1000 + 9900) / 3, 1)
    assert world[2]["errors"] == {
        "api_error_total": 1,
        "transient_retry_total": 2,
        "tool_call_error_total": 1,
        "samples_with_transient_retries": ["mt_0002"],
        "retry_count_histogram": {"0": 4, "1": 1},
        "retried_then_succeeded": ["mt_0002"],
        "retried_then_failed": [],
    }


def test_store_summary_equals_the_summary_of_the_raw_files(world):
    """The same formulas over the logged files themselves: the store round trip changes nothing."""
    corpus, _store, s, _ = world
    raw = [json.loads(json.dumps(t)) for t in logs().values()]
    direct = rs.summary(
        raw,
        sample_records(corpus, {t["sample_id"] for t in raw}),
        norm=norm,
        fingerprint=s["fingerprint"],
        config=s["config"],
        pricing={k: s["cost"][k] for k in rs.PRICE_KEYS},
        cost_fn=lambda tokens: s["cost"]["cost_usd"],
    )
    for key in s:
        assert direct[key] == s[key], key


def test_pure_helpers():
    assert rs.pct(1, 3) == 0.3333 and rs.pct(5, 0) == 0.0
    assert rs.spread([4, 1, 3, 2]) == {"mean": 2.5, "p50": 3, "p90": 4, "p95": 4, "n": 4}  # upper median
    assert rs.sections_match("3.2 Frequency-Domain Decomposition", "Frequency Domain Decomposition", norm)
    assert rs.sections_match("3.1 Method Details", "Method Details (cont)", norm)  # normalised substring
    assert rs.sections_match("training objective design", "the objective for training", norm)  # 2/3 ≥ 0.6 of words
    assert not rs.sections_match("training objective design", "objective schedule", norm)  # 1/3 < 0.6
    assert not rs.sections_match("3 Method", "3.2 Frequency-Domain Decomposition", norm)
    assert not rs.sections_match("", "Method", norm)
    assert rs.read_section_name("=== 3 Method ===\n\ntext", {"section": "B"}) == "3 Method"
    assert rs.read_section_name("Section 'x' not found", {"section": "x"}) == "x"
    assert rs.summary([], {}, norm=norm, fingerprint={}, config={}) == {
        "schema_version": "agenthop-eval-v1",
        "empty": True,
    }


def test_a_summary_needs_the_runs_dataset(world, demo_corpus):
    _corpus, store, _s, _ = world
    with pytest.raises(SummaryError):
        agenthop_summary(store, "ref", demo_corpus)
    assert issubclass(SummaryError, ValueError)


def test_oracle_on_the_demo_corpus(demo_corpus, demo_dir, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    asyncio.run(Runner(RunSpec(name="o", dataset=str(demo_dir), agent="oracle", workers=2), demo_corpus, store).run())
    s = agenthop_summary(store, "o", demo_corpus, demo_dir)
    assert s["total"] == 60 and s["accuracy"]["overall"] == 1.0
    assert s["retrieval"]["paper_recall"] == 1.0 and s["retrieval"]["conversion_rate"] == 1.0
    assert s["failure_attribution"]["n_wrong"] == 0 and s["tools"]["rejection_rate"] == 0.0
    assert s["cost"]["pricing_found"] is False and s["cost"]["cost_usd"] is None
    assert s["fingerprint"]["model"] == "oracle" and len(s["fingerprint"]["benchmark_sha256"]) == 16
    assert s["fingerprint"]["backend"] == "none" and s["config"]["backend"] == "none"  # it called no model
    assert json.loads(json.dumps(s)) == s  # plain JSON
