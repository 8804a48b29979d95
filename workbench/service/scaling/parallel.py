"""Parallel sampling: K replicates of a run, pass@k against the committing strategies (majority vote,
pointwise and pairwise judging) with the verification gap between them (`stats.parallel`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from stats import parallel as par
from stats.bootstrap import no_variation
from storage import Store
from workbench.service.scaling.judging import TrialJudge, judge_run, judges_measured, stored_trials, subsets
from workbench.service.scaling.sequential import ScalingInputError, measures_tokens


def parse_ks(text: str) -> list[int]:
    """The sample counts of a parallel study (`--k 1,2,4,8`, the study form's k), sorted, each once; ScalingInputError
    (exit 2) for anything but positive whole numbers."""
    try:
        ks = sorted({int(k) for k in text.split(",") if k.strip()})
    except ValueError:
        raise ScalingInputError(f"k must be whole numbers, got {text!r}") from None
    if not ks or ks[0] < 1:
        raise ScalingInputError("k needs positive sample counts")
    return ks


def parallel_samples(
    store: Store, run_name: str, corpus
) -> tuple[dict[str, Any], list[str], list[list[dict[str, Any]]], int]:
    """The run, its items with all K samples, per item those samples in replicate order, and how many items
    still miss a sample (an interrupted run): those are left out, and `parallel_report` says how many.
    """
    run = store.run(run_name)
    by_item: dict[str, dict[int, dict[str, Any]]] = {}
    for t in store.trajectories(run["id"]):
        by_item.setdefault(t["item_id"], {})[t["replicate"]] = t
    k = run["replicates"]
    items = [i for i, reps in by_item.items() if all(r in reps for r in range(k))]
    samples = [[by_item[i][r] for r in range(k)] for i in items]
    return run, items, samples, len(by_item) - len(items)


def vote_key(sample: dict[str, Any]) -> str | None:
    """What a sample votes for: its parsed letter (`predicted_index`), not the raw answer text, so "(b)",
    "B." and "b" are one vote for B; an unparsed or missing answer abstains."""
    index = sample.get("predicted_index")
    return "ABCD"[index] if isinstance(index, int) and 0 <= index < 4 else None


async def parallel_report(
    store: Store,
    run_name: str,
    corpus,
    ks: list[int],
    judge=None,
    n_orders: int = 8,
    seed: int = 0,
    verdicts: str = "ask",
    tie_rule: str = "split",
    judge_trials: int = 1,
    cost_mode: str = "cache-aware",
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """pass@k, majority vote, pointwise and pairwise selection, and the verification gap, per k, with intervals.

    `verdicts="ask"` asks the judge for any verdict not yet stored; `"stored"` never calls it (the
    TUI must not spend money implicitly) and reports the judged strategies only when every verdict
    they need is stored, saying how many are missing otherwise. `tie_rule` "first" is the study's
    majority rule (the earliest sample's answer among the tied modes) in place of the even split;
    `judge_trials` N > 1 asks the judge N times (`TrialJudge`) and reports their agreement and the
    spread of the gap over trials (the study's Table 6). Every judge with stored verdicts on the run is
    measured against the truth (`judges`). Trials recorded beyond `judge_trials` are read from the store (never
    asked for), so extending K keeps the trial section. `progress` is `judging.judge_run`'s.
    """
    if tie_rule not in TIE_RULES:
        raise ScalingInputError(f"tie rule {tie_rule!r}: choose {' or '.join(TIE_RULES)}")
    run, items, samples, incomplete = parallel_samples(store, run_name, corpus)
    big_k = run["replicates"]
    wanted = sorted(set(ks))
    ks = [k for k in wanted if 1 <= k <= big_k]
    if not items or not ks:
        raise ScalingInputError(f"run '{run_name}' has no item with {big_k} samples, or no k ≤ {big_k}")
    correct = [[bool(t["correct"]) for t in rows] for rows in samples]
    answers = [[vote_key(t) for t in rows] for rows in samples]
    golds = ["ABCD"[corpus.item(i).correct_index] for i in items]
    judged = None
    missing = 0
    if judge is not None:
        judged = await judge_run(
            store, run, items, samples, corpus, judge, ks, n_orders, seed, ask=verdicts == "ask", progress=progress
        )
        missing = judged["missing"]
    pass1 = par.pass_at_k_items(correct, 1)
    spend = _spend(store, run, samples, judge, cost_mode)
    per_k = []
    for k in ks:
        parts = subsets(big_k, k, seed)
        oracle = par.pass_at_k_items(correct, k)
        per_item = {
            "pass_at_k": oracle,
            "majority": np.array(
                [
                    np.mean([_vote(par.majority_vote([answers[i][j] for j in b], golds[i]), tie_rule) for b in parts])
                    for i in range(len(items))
                ]
            ),
        }
        coverage = None
        if judged and not missing:
            verdicts_of = judged["pointwise"]
            per_item["pointwise"] = np.array(
                [
                    np.mean(
                        [
                            par.pointwise_selection([correct[i][j] for j in b], [verdicts_of[i][j] for j in b])
                            for b in parts
                        ]
                    )
                    for i in range(len(items))
                ]
            )
            per_item["pairwise"] = np.array(
                [
                    np.mean([_pairwise(correct[i], judged["tables"][i], judged["orders"][(i, k, b)], b) for b in parts])
                    for i in range(len(items))
                ]
            )
            coverage = float(
                np.mean(
                    [
                        np.mean(
                            [
                                par.accepted_coverage([correct[i][j] for j in b], [verdicts_of[i][j] for j in b])
                                for b in parts
                            ]
                        )
                        for i in range(len(items))
                    ]
                )
            )
        row = _k_row(k, big_k, len(parts), per_item, pass1, spend, seed)
        row["subsets"], row["subsets_all"] = len(parts), len(parts) == math.comb(big_k, k)
        if coverage is not None and judged is not None:
            row["accepted_coverage"] = coverage  # the study's `self_choice_best@k`: not a selection (§3.4)
            row["self_choice"] = _self_choice(correct, judged["pointwise"], parts)
        per_k.append(row)
    trials = None
    recorded = stored_trials(store, run, judge.name) if judge is not None else 1
    if judge is not None and judged is not None and max(judge_trials, recorded) > 1:
        runs = [judged]
        for t in range(1, max(judge_trials, recorded)):
            ask = verdicts == "ask" and t < judge_trials  # a recorded trial not asked for now: its stored verdicts
            runs.append(
                await judge_run(
                    store, run, items, samples, corpus, TrialJudge(judge, t), ks, n_orders, seed, ask, progress
                )
            )
        trials = _trials(runs, items, correct, ks, big_k, seed)
    return {
        "run": run_name,
        "k_max": big_k,
        "items": len(items),
        "items_incomplete": incomplete,
        "measured": measures_tokens(run),
        "ks_unavailable": [k for k in wanted if k not in ks],
        "judge": judge.name if judge else None,
        "verdicts": verdicts if judge else None,
        "verdicts_missing": missing if judge else None,
        "tie_rule": TIE_RULE if tie_rule == "split" else TIE_RULE_FIRST,
        "majority_rule": tie_rule,
        "pairwise_orders": n_orders,
        "cost_mode": cost_mode,
        "judges": judges_measured(store, run, items, samples),
        "judge_trials": trials,
        "per_k": per_k,
        "sampling_cost_usd": spend["sampling_usd"],
        "sampling_tokens": spend["sampling_tokens"],
        "judge_cost_usd": spend["judge_usd"],
        "judge_tokens": spend["judge_tokens"],
        "cost_rule": "at k: k/K of the sampling spend, plus the judge verdicts a strategy needs at k (pointwise: k "
        "per item; pairwise: k − 1 per item) at the mean stored price of one verdict; accuracy per $ "
        "and per million tokens divide by the mean spend per item",
    }


TIE_RULE = (
    "at k: the mean over the k-subsets of the K samples, as pass@k (all C(K, k) up to 256, else 256 seeded); "
    "majority: parsed letters, ties split evenly; pointwise self-choice (General AgentBench): a random accepted "
    "sample, none accepted = no answer, so k = 1 is P(correct ∧ accepted), not pass@1 (accepted_coverage: the "
    "study's self_choice_best@k, not a selection); pairwise: leader kept on ties and unparsed verdicts, random "
    "orders"
)


TIE_RULES = ("split", "first")
TIE_RULE_FIRST = TIE_RULE.replace(
    "majority: parsed letters, ties split evenly",
    "majority: parsed letters, ties to the earliest sample among the tied (the study's rule)",
)


def _vote(vote: par.Vote, tie_rule: str) -> float:
    """A vote's correctness under the tie rule: the even split's expectation, or the earliest tied sample's answer."""
    return vote.expected_correct if tie_rule == "split" else float(vote.earliest_correct)


def _self_choice(correct: list[list[bool]], pointwise: list[list[bool | None]], parts) -> float | None:
    """The study's main-text self-choice at k: over the k-subsets, accepted correct samples / correct samples (its
    `self_choice_score@k`, a recall; not a selection), as `stats.judges.judge_quality`'s `self_choice` at k = K."""
    num = den = 0
    for c_row, v_row in zip(correct, pointwise):
        for b in parts:
            for j in b:
                if c_row[j]:
                    den += 1
                    num += bool(v_row[j])
    return num / den if den else None


def _judged_means(
    judged: dict[str, Any], correct: list[list[bool]], ks: list[int], big_k: int, seed: int
) -> dict[int, dict[str, float]]:
    """Pointwise and pairwise committed accuracy and their gaps to pass@k at each k, for one trial's verdicts."""
    out = {}
    for k in ks:
        parts = subsets(big_k, k, seed)
        pointwise = float(
            np.mean(
                [
                    np.mean([par.pointwise_selection([c[j] for j in b], [v[j] for j in b]) for b in parts])
                    for c, v in zip(correct, judged["pointwise"])
                ]
            )
        )
        pairwise = float(
            np.mean(
                [
                    np.mean([_pairwise(correct[i], judged["tables"][i], judged["orders"][(i, k, b)], b) for b in parts])
                    for i in range(len(correct))
                ]
            )
        )
        oracle = float(np.mean(par.pass_at_k_items(correct, k)))
        out[k] = {
            "pointwise": pointwise,
            "pairwise": pairwise,
            "gap_pointwise": oracle - pointwise,
            "gap_pairwise": oracle - pairwise,
        }
    return out


def _trials(
    runs: list[dict[str, Any]], items: list[str], correct, ks: list[int], big_k: int, seed: int
) -> dict[str, Any]:
    """N trials of one judge: the pointwise verdicts' agreement (over all samples and per item) and, per k, each
    strategy's accuracy and gap in every trial with their spread (`stats.judges.spread`)."""
    from stats.judges import spread, trial_agreement

    missing = sum(r["missing"] for r in runs)
    flat = [[v for row in r["pointwise"] for v in row] for r in runs]
    out: dict[str, Any] = {
        "trials": len(runs),
        "verdicts_missing": missing,
        "agreement": trial_agreement(flat),
        "per_item": [
            {"item": item, **trial_agreement([r["pointwise"][i] for r in runs])} for i, item in enumerate(items)
        ],
    }
    if missing:
        out["per_k"] = None
        return out
    means = [_judged_means(r, correct, ks, big_k, seed) for r in runs]
    out["per_k"] = [
        {
            "k": k,
            **{
                name: spread([m[k][name] for m in means])
                for name in ("pointwise", "pairwise", "gap_pointwise", "gap_pairwise")
            },
        }
        for k in ks
    ]
    return out


def _k_row(
    k: int,
    big_k: int,
    n_subsets: int,
    per_item: dict[str, np.ndarray],
    pass1: np.ndarray,
    spend: dict[str, Any],
    seed: int,
) -> dict[str, Any]:
    """One k: each strategy with its interval, its gap to pass@k with the paired interval, the relative gap and
    the selection efficiency, and what committing at k costs."""
    n = len(pass1)
    cis = par.strategies_ci(per_item, seed=seed) if n >= 2 else {}
    row: dict[str, Any] = {"k": k, "n": n, "blocks": n_subsets}  # `blocks` kept for JSON readers: the k-subsets
    for name, values in per_item.items():
        row[name] = float(np.mean(values))
        if name in cis:
            row[f"{name}_ci"] = [cis[name].low, cis[name].high]
            row[f"{name}_ci_no_variation"] = cis[name].no_variation
    sampling_usd = None if spend["sampling_usd"] is None else spend["sampling_usd"] * k / big_k
    sampling_tokens = spend["sampling_tokens"] * k / big_k
    row["sampling_cost_usd"], row["sampling_tokens"] = sampling_usd, sampling_tokens
    for name, values in per_item.items():
        if name == "pass_at_k":
            continue
        gap = par.verification_gap(per_item["pass_at_k"], values, pass1=pass1, seed=seed) if n >= 2 else None
        row[f"gap_{name}"] = float(np.mean(per_item["pass_at_k"]) - np.mean(values))
        row[f"gap_{name}_ci"] = [gap["ci"]["gap"]["low"], gap["ci"]["gap"]["high"]] if gap else None
        row[f"gap_{name}_ci_no_variation"] = bool(gap) and no_variation(*row[f"gap_{name}_ci"])
        row[f"relative_gap_{name}"] = gap["relative_gap"] if gap else None
        row[f"efficiency_{name}"] = gap.get("efficiency") if gap else None
        verdicts = {"majority": 0, "pointwise": k, "pairwise": k - 1}[name] * n
        price = spend["verdict_usd"][name]
        usd = (
            None if sampling_usd is None or price is None else sampling_usd + price * verdicts
        )  # unknown stays unknown
        tokens = sampling_tokens + (spend["verdict_tokens"][name] or 0) * verdicts
        row[f"cost_usd_{name}"], row[f"tokens_{name}"] = usd, tokens
        row[f"accuracy_per_usd_{name}"] = row[name] / (usd / n) if usd else None
        row[f"accuracy_per_million_tokens_{name}"] = row[name] / (tokens / n / 1e6) if tokens else None
    return row


def _spend(store: Store, run: dict[str, Any], samples, judge, cost_mode: str = "cache-aware") -> dict[str, Any]:
    """Sampling and judging totals, and the mean price and tokens of one stored verdict of each kind.

    An offline judge (no model) costs nothing; an unpriced model's verdicts leave the cost unknown (None).
    The sampling cost follows `cost_mode` (`costs.trajectory_cost`); a verdict's is as recorded.
    """
    from workbench.service.scaling.costs import trajectory_cost

    priced = [trajectory_cost(run, t, cost_mode) for rows in samples for t in rows]
    costs = [c for c in priced if c is not None]
    out: dict[str, Any] = {
        "sampling_usd": sum(costs) if costs else None,
        "sampling_tokens": sum(t["tokens"] or 0 for rows in samples for t in rows),
        "judge_usd": None,
        "judge_tokens": None,
        "verdict_usd": {"majority": 0.0, "pointwise": None, "pairwise": None},
        "verdict_tokens": {"majority": 0, "pointwise": None, "pairwise": None},
    }
    if judge is None:
        return out
    model = judge.name.startswith("llm:")
    rows = store.judgment_costs(run["id"], judge.name)
    usd_total = tokens_total = 0.0
    any_priced = False
    for kind, mean_usd, n_priced, mean_tokens, sum_usd, sum_tokens in rows:
        out["verdict_usd"][kind] = (mean_usd if n_priced else None) if model else 0.0
        out["verdict_tokens"][kind] = mean_tokens or 0
        usd_total += sum_usd or 0.0
        tokens_total += sum_tokens or 0
        any_priced = any_priced or bool(n_priced)
    for kind in ("pointwise", "pairwise"):
        if not model:
            out["verdict_usd"][kind] = 0.0
            out["verdict_tokens"][kind] = 0
    out["judge_usd"] = (usd_total if any_priced else None) if model else 0.0
    out["judge_tokens"] = int(tokens_total)
    return out


def _pairwise(
    correct: list[bool], pairs: dict[tuple[int, int], bool], orders: list[list[int]], block: tuple[int, ...]
) -> float:
    """`stats.parallel.pairwise_selection` on one k-subset, its sample indices made local."""
    local = {g: n for n, g in enumerate(block)}
    table = [[pairs.get((a, b)) for b in block] for a in block]
    return par.pairwise_selection([correct[j] for j in block], table, [[local[g] for g in o] for o in orders])
