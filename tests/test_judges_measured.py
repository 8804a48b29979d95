"""Judges measured against the truth, asked several times (Table 6), and the study's own rules as options: majority
first-among-tied, one fixed pairwise order, the study's cost mode. Every number is recomputed here by brute force."""

import itertools
import json
import os
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.judges import judge_quality, spread, trial_agreement
from storage import Store
from tests.cli_inprocess import batch
from tests.openai_server import FakeOpenAI, Reply, completion, text_reply, tool_reply

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the measures, brute force


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from([True, False, None])), max_size=40))
def test_judge_quality_equals_counting_by_hand(pairs):
    correct = [c for c, _ in pairs]
    verdicts = [v for _, v in pairs]
    q = judge_quality(correct, verdicts)
    parsed = [(c, v) for c, v in pairs if v is not None]
    pos = [v for c, v in parsed if c]
    neg = [v for c, v in parsed if not c]
    accepted = [c for c, v in parsed if v]
    assert q["tpr"] == (sum(pos) / len(pos) if pos else None)
    assert q["fpr"] == (sum(neg) / len(neg) if neg else None)
    assert q["precision"] == (sum(accepted) / len(accepted) if accepted else None)
    assert q["accuracy"] == (sum(c == v for c, v in parsed) / len(parsed) if parsed else None)
    n_correct = sum(correct)
    assert q["self_choice"] == (sum(1 for c, v in pairs if c and v) / n_correct if n_correct else None)
    assert q["unparsed"] == sum(v is None for v in verdicts)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(2, 4).flatmap(
        lambda n: st.lists(
            st.lists(st.sampled_from([True, False, None]), min_size=n, max_size=n), min_size=2, max_size=4
        )
    )
)
def test_trial_agreement_by_hand(trials):
    a = trial_agreement(trials)
    columns = list(zip(*trials, strict=True))
    assert a["unanimous"] == pytest.approx(sum(len(set(c)) == 1 for c in columns) / len(columns))
    pair_shares = []
    for c in columns:
        pairs = [(c[i], c[j]) for i in range(len(c)) for j in range(i + 1, len(c))]
        pair_shares.append(sum(x == y for x, y in pairs) / len(pairs))
    assert a["pairwise"] == pytest.approx(sum(pair_shares) / len(pair_shares))


def test_spread_is_the_population_std_of_table_6():
    """The study's Table 6: self-judge pointwise 0.1795 / 0.1823 / 0.1705, std 0.0050."""
    s = spread([0.1795, 0.1823, 0.1705])
    assert s["std"] == pytest.approx(statistics.pstdev([0.1795, 0.1823, 0.1705]))
    assert round(s["std"], 4) == 0.0050 and s["mean"] == pytest.approx(0.17743, abs=1e-5)


# ---------------------------------------------------------------- offline: tie rule and the fixed order


def test_majority_first_among_tied_and_one_fixed_pairwise_order(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    common = ("--k", "1,2,4", "--db", str(db), "--quiet", "--limit", "8", "--agent", "random", "--format", "json")
    first = batch(
        capsys, "scale", "parallel", *common, "--run", "p", "--seed", "3", "--tie-rule", "first", "--orders", "1"
    )
    assert first.returncode == 0, first.stderr
    rep = json.loads(first.stdout)
    assert rep["majority_rule"] == "first" and "earliest sample among the tied" in rep["tie_rule"]
    store = Store(db, readonly=True)
    run = store.run("p")
    rows = {}
    for t in store.trajectories(run["id"]):
        rows.setdefault(t["item_id"], {})[t["replicate"]] = t
    from sandbox.datasets import open_dataset

    corpus, _ = open_dataset("builtin", Path(os.environ["AGENTHOP_CACHE"]))
    try:
        golds = {i: "ABCD"[corpus.item(i).correct_index] for i in rows}
    finally:
        corpus.close()
    for row in rep["per_k"]:
        k, values = row["k"], []
        for item, reps in rows.items():
            letters = [
                "ABCD"[reps[r]["predicted_index"]] if 0 <= reps[r]["predicted_index"] < 4 else None for r in range(4)
            ]
            hits = []
            for subset in itertools.combinations(range(4), k):
                votes = Counter(letters[j] for j in subset if letters[j] is not None)
                if not votes:
                    hits.append(0.0)
                    continue
                top = max(votes.values())
                earliest = next(letters[j] for j in subset if letters[j] is not None and votes[letters[j]] == top)
                hits.append(float(earliest == golds[item]))
            values.append(sum(hits) / len(hits))
        assert row["majority"] == pytest.approx(sum(values) / len(values))
    # one fixed order: the leader is always the earlier sample, the challenger the next one
    pairs = store.conn.execute("SELECT sample_a, sample_b FROM judgments WHERE kind = 'pairwise'").fetchall()
    assert pairs and all(b > a for a, b in pairs)
    assert rep["pairwise_orders"] == 1


# ---------------------------------------------------------------- a model judge asked three times


def test_llm_judge_trials_report_agreement_and_the_gaps_spread(tmp_path):
    """Three trials of the run's own model as judge on the local server. Samples alternate a right and a wrong
    letter; the judge's pointwise verdict flips with a call counter, so trials disagree. Every measure is recomputed
    from the stored verdicts."""
    from tests.test_scaling import gold_ids

    cache = Path(os.environ["AGENTHOP_CACHE"])
    ids = gold_ids(cache, "B", 3)
    calls = {"judge": 0}

    def brain(req, n):
        if not req.get("tools"):
            calls["judge"] += 1
            if "<choice>" in req["messages"][-1]["content"]:
                return text_reply("<choice>2</choice>")
            verdict = "Correct" if calls["judge"] % 3 else "Wrong"
            return text_reply(f"<judgment>{verdict}</judgment>")
        return tool_reply(("submit_answer", {"answer": "B" if n % 2 else "C", "reasoning": "r"}))

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
                "1,2",
                "--agent",
                "llm",
                "--model",
                "openai/gpt-4.1-mini",
                "--base-url",
                srv.url,
                "--ids",
                ",".join(ids),
                "--run",
                "J",
                "--db",
                str(db),
                "--quiet",
                "--format",
                "json",
                "--judge",
                "same",
                "--judge-trials",
                "3",
                "--orders",
                "2",
            ],
            capture_output=True,
            text=True,
            env=dict(os.environ, OPENAI_API_KEY="sk-test"),
            cwd=ROOT,
        )
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    store = Store(db, readonly=True)
    run = store.run("J")
    samples = {}
    for t in store.trajectories(run["id"]):
        samples[(t["item_id"], t["replicate"])] = bool(t["correct"])
    name = "llm:openai/gpt-4.1-mini"
    names = [name, f"{name}#trial1", f"{name}#trial2"]
    verdicts = {}
    for judge in names:
        for item, a, v in store.conn.execute(
            "SELECT item_id, sample_a, verdict FROM judgments WHERE judge = ? AND kind = 'pointwise'", (judge,)
        ):
            verdicts[(judge, item, a)] = v
    keys = sorted(samples)
    # the judges measured: the self judge (trial 0), against the truth
    (measured,) = rep["judges"]
    assert measured["judge"] == name and measured["role"] == "self"
    tp = sum(samples[k] and verdicts[(name, *k)] == 1 for k in keys)
    fp = sum(not samples[k] and verdicts[(name, *k)] == 1 for k in keys)
    n_pos = sum(samples[k] for k in keys)
    assert measured["tpr"] == pytest.approx(tp / n_pos) and measured["fpr"] == pytest.approx(fp / (len(keys) - n_pos))
    assert measured["precision"] == pytest.approx(tp / (tp + fp))
    # agreement over the three trials
    unanimous = sum(len({verdicts[(j, *k)] for j in names}) == 1 for k in keys) / len(keys)
    trials = rep["judge_trials"]
    assert trials["trials"] == 3 and trials["agreement"]["unanimous"] == pytest.approx(unanimous) and unanimous < 1
    # pointwise committed accuracy per trial at each k, by brute force over the k-subsets, and its population std
    for row in trials["per_k"]:
        k = row["k"]
        per_trial = []
        for judge in names:
            per_item = []
            for item in ids:
                values = []
                for subset in itertools.combinations(range(2), k):
                    accepted = [j for j in subset if verdicts[(judge, item, j)] == 1]
                    values.append(sum(samples[(item, j)] for j in accepted) / len(accepted) if accepted else 0.0)
                per_item.append(sum(values) / len(values))
            per_trial.append(sum(per_item) / len(per_item))
        assert row["pointwise"]["values"] == pytest.approx(per_trial)
        assert row["pointwise"]["std"] == pytest.approx(statistics.pstdev(per_trial))
        oracle = next(r["pass_at_k"] for r in rep["per_k"] if r["k"] == k)
        assert row["gap_pointwise"]["values"] == pytest.approx([oracle - p for p in per_trial])
    # the study's self-choice beside the committed accuracy, at K: accepted correct / correct samples
    top = rep["per_k"][-1]
    assert top["self_choice"] == pytest.approx(tp / n_pos) and "pointwise" in top


# ---------------------------------------------------------------- the study's cost mode


def test_cost_mode_study_charges_cached_input_at_the_input_price(tmp_path):
    """gpt-4.1-mini: $0.40 / $1.60 per M, cache reads at half the input price. Each call: 100 prompt tokens of which
    60 cached, 20 completion. Cache-aware: 40·0.4 + 60·0.2 + 20·1.6 = 60 µ$; study: 100·0.4 + 20·1.6 = 72 µ$."""

    def brain(req, n):
        if not req.get("tools"):
            return text_reply("<judgment>Correct</judgment>")
        return Reply(
            body=completion(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {
                                "name": "submit_answer",
                                "arguments": json.dumps({"answer": "B", "reasoning": "r"}),
                            },
                        }
                    ],
                },
                prompt_tokens=100,
                completion_tokens=20,
                cached=60,
            )
        )

    db = tmp_path / "s.sqlite"
    out = {}
    with FakeOpenAI(brain) as srv:
        for mode in ("cache-aware", "study"):
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "workbench.cli",
                    "--batch",
                    "scale",
                    "parallel",
                    "--k",
                    "1,2",
                    "--agent",
                    "llm",
                    "--model",
                    "openai/gpt-4.1-mini",
                    "--base-url",
                    srv.url,
                    "--limit",
                    "2",
                    "--run",
                    "C",
                    "--db",
                    str(db),
                    "--quiet",
                    "--format",
                    "json",
                    "--judge",
                    "none",
                    "--cost-mode",
                    mode,
                ],
                capture_output=True,
                text=True,
                env=dict(os.environ, OPENAI_API_KEY="sk-test"),
                cwd=ROOT,
            )
            assert proc.returncode == 0, proc.stderr
            out[mode] = json.loads(proc.stdout)
    calls = 2 * 2  # 2 items × K = 2 samples, one call each
    assert out["cache-aware"]["sampling_cost_usd"] == pytest.approx(calls * 60e-6)
    assert out["study"]["sampling_cost_usd"] == pytest.approx(calls * 72e-6)
    assert out["study"]["cost_mode"] == "study"
