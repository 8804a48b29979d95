"""Parallel sampling: K replicates of a run, pass@k against the committing strategies (majority vote,
pointwise and pairwise judging) with the verification gap between them (`stats.parallel`), and beside them the
study's readings of the same samples (`readings`); the result is a `ParallelStudy` (`parallel_records`).
`strategies_at_k` serves a study imported from a scores file too (`imported`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stats import parallel as par
from stats.bootstrap import no_variation
from stats.judges import TrialAgreement, TrialSpread
from storage import Store
from storage.rows import LightTrajectoryRow, RunRow, StoredRun, TrajectoryRow
from workbench.service.records.parallel import ItemAgreement, JudgeTrials, ParallelReport, TrialRow
from workbench.service.reports import measures_tokens
from workbench.service.scaling.judging import (
    Judged,
    TrialJudge,
    judge_role,
    judge_run,
    judges_measured,
    stored_trials,
    subsets,
)
from workbench.service.scaling.parallel_records import (
    CostMode,
    Costs,
    Gap,
    KRow,
    MeanEstimate,
    ParallelStudy,
    Strategy,
    TieRule,
    Verdicts,
)
from workbench.service.scaling.readings import STUDY_NOTE, JudgeVerdicts, PerK, StudyInputs, study_rows
from workbench.service.scaling.sequential import ScalingInputError


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
) -> tuple[StoredRun, list[str], list[list[TrajectoryRow]], int]:
    """The run, its items with all K samples, per item those samples in replicate order, and how many items
    still miss a sample (an interrupted run): those are left out, and `parallel_report` says how many.
    """
    run = store.run(run_name)
    by_item: dict[str, dict[int, TrajectoryRow]] = {}
    for t in store.trajectories(run["id"]):
        by_item.setdefault(t["item_id"], {})[t["replicate"]] = t
    k = run["replicates"]
    items = [i for i, reps in by_item.items() if all(r in reps for r in range(k))]
    samples = [[by_item[i][r] for r in range(k)] for i in items]
    return run, items, samples, len(by_item) - len(items)


def vote_key(sample: LightTrajectoryRow) -> str | None:
    """What a sample votes for: its parsed letter (`predicted_index`), not the raw answer text, so "(b)",
    "B." and "b" are one vote for B; an unparsed or missing answer abstains."""
    index = sample.get("predicted_index")
    return "ABCD"[index] if isinstance(index, int) and 0 <= index < 4 else None


def _unknown_per_verdict() -> dict[Strategy, float | None]:
    return {"majority": None, "pointwise": None, "pairwise": None}


@dataclass
class Spend:
    """Sampling and judging totals, and the mean price and tokens of one stored verdict of each kind (None: unpriced
    or not measured, never 0); `judge_unrepriced`: verdicts kept at their stored cost under the study's rule. The
    defaults are a scores file's: it carries no prices or tokens."""

    sampling_usd: float | None = None
    sampling_tokens: float | None = None
    judge_usd: float | None = None
    judge_tokens: int | None = None
    verdict_usd: dict[Strategy, float | None] = field(default_factory=_unknown_per_verdict)
    verdict_tokens: dict[Strategy, float | None] = field(default_factory=_unknown_per_verdict)
    judge_unrepriced: int | None = None


@dataclass(frozen=True)
class SampleTable:
    """Per item, its K samples' correctness and (sampled runs) parsed answers with the gold letter: what every
    strategy at k is computed from."""

    items: list[str]
    correct: list[list[bool]]
    answers: list[list[str | None]] | None = None
    golds: list[str] | None = None


async def parallel_study(
    store: Store,
    run_name: str,
    corpus,
    ks: list[int],
    judge=None,
    n_orders: int = 8,
    seed: int = 0,
    verdicts: Verdicts = "ask",
    tie_rule: TieRule = "split",
    judge_trials: int = 1,
    cost_mode: CostMode = "cache-aware",
    progress: Callable[[str, int, int], None] | None = None,
) -> ParallelStudy:
    """pass@k, majority vote, pointwise and pairwise selection, and the verification gap, per k, with intervals;
    beside them the study's readings of the same samples (`readings.study_rows`).

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
    ks, unavailable = _usable_ks(run_name, ks, big_k, items)
    table = _sample_table(items, samples, corpus)
    judged = None
    trials = None
    if judge is not None:
        ask = verdicts == "ask"
        judged = await judge_run(store, run["id"], items, samples, corpus, judge, ks, n_orders, seed, ask, progress)
        trial_options = (verdicts, judge_trials, progress)
        trials = await _trials_if_any(
            store, run, table, samples, corpus, (judge, judged), ks, n_orders, seed, trial_options
        )
    usable = judged if judged and not judged["missing"] else None
    spend = _spend(store, run, samples, judge, cost_mode)
    per_k = [strategies_at_k(table, k, big_k, usable, tie_rule, spend, seed) for k in ks]
    readings = _sampled_readings(table, run.get("model"), judge, usable, n_orders)
    return ParallelStudy(
        name=run_name,
        origin="sampled",
        k_max=big_k,
        items=len(items),
        per_k=per_k,
        study=study_rows(readings, ks, seed),
        study_note=_study_note(readings, usable is not None),
        tie_rule=tie_legend(tie_rule, n_orders),
        cost_rule=COST_RULE,
        items_incomplete=incomplete,
        measured=measures_tokens(run),
        ks_unavailable=unavailable,
        judge=judge.name if judge else None,
        verdicts=verdicts if judge else None,
        verdicts_missing=judged["missing"] if judged else None,
        majority_rule=tie_rule,
        pairwise_orders=n_orders,
        cost_mode=cost_mode,
        judges=judges_measured(store, run, items, samples),
        judge_trials=trials,
        costs=Costs(
            spend.sampling_usd, spend.sampling_tokens, spend.judge_usd, spend.judge_tokens, spend.judge_unrepriced
        ),
    )


def _usable_ks(run_name: str, asked: list[int], big_k: int, items: list[str]) -> tuple[list[int], list[int]]:
    """The asked k a run of K samples can show (1 ≤ k ≤ K) and the others, each sorted once; ScalingInputError when
    none can be shown, or no item has all K samples."""
    wanted = sorted(set(asked))
    ks = [k for k in wanted if 1 <= k <= big_k]
    if not items or not ks:
        raise ScalingInputError(f"run '{run_name}' has no item with {big_k} samples, or no k ≤ {big_k}")
    return ks, [k for k in wanted if k not in ks]


def _study_note(readings: StudyInputs, judged: bool) -> str:
    """The study's note; with a judge's verdicts, why the study's pairwise reading is absent when it is."""
    return STUDY_NOTE + ("" if readings.pairwise is not None or not judged else PAIRWISE_NEEDS_ONE_ORDER)


async def _trials_if_any(
    store: Store,
    run,
    table: SampleTable,
    samples,
    corpus,
    first: tuple[Any, Judged],
    ks: list[int],
    n_orders: int,
    seed: int,
    asked: tuple[Verdicts, int, Callable[[str, int, int], None] | None],
) -> JudgeTrials | None:
    """The judge's trials (`_trials`) when more than one was asked for (`judge_trials`) or recorded; else None.
    Trial 0 is the judge's own verdicts; trial t ≥ 1 is asked again (`TrialJudge`) when fewer than `judge_trials`
    trials, else read from the verdicts a trial already recorded (never asked again)."""
    verdicts, judge_trials, progress = asked
    judge, judged = first
    recorded = stored_trials(store, run["id"], judge.name)
    if max(judge_trials, recorded) <= 1:
        return None
    runs = [judged]
    for t in range(1, max(judge_trials, recorded)):
        ask = verdicts == "ask" and t < judge_trials
        trial = TrialJudge(judge, t)
        runs.append(
            await judge_run(store, run["id"], table.items, samples, corpus, trial, ks, n_orders, seed, ask, progress)
        )
    return _trials(runs, table.items, table.correct, ks, run["replicates"], seed)


async def parallel_report(
    store: Store, run_name: str, corpus, ks: list[int], judge=None, **options: Any
) -> ParallelReport:
    """`parallel_study`'s JSON (what `scale parallel --format json` prints and the views read)."""
    return (await parallel_study(store, run_name, corpus, ks, judge, **options)).to_json()


COST_RULE = (
    "at k: k/K of the sampling spend, plus the judge verdicts a strategy needs at k (pointwise: k "
    "per item; pairwise: k − 1 per item) at the mean stored price of one verdict; accuracy per $ "
    "and per million tokens divide by the mean spend per item"
)

PAIRWISE_NEEDS_ONE_ORDER = (
    "; the study's pairwise reading needs the bump along the samples' own order, asked under --orders 1"
)


def _sample_table(items: list[str], samples, corpus) -> SampleTable:
    return SampleTable(
        items,
        [[bool(t["correct"]) for t in rows] for rows in samples],
        [[vote_key(t) for t in rows] for rows in samples],
        ["ABCD"[corpus.item(i).correct_index] for i in items],
    )


def strategies_at_k(
    table: SampleTable,
    k: int,
    big_k: int,
    judged: Judged | None,
    tie_rule: TieRule,
    spend: Spend,
    seed: int,
) -> KRow:
    """Every strategy the inputs support at k, averaged over the k-subsets of the K samples (the subsets pass@k
    averages over), with intervals, gaps and costs. `judged` holds the pointwise verdicts and, for a run judged
    here, the pairwise tables and orders."""
    parts = subsets(big_k, k, seed)
    correct = table.correct
    per_item: dict[Strategy, np.ndarray] = {"pass_at_k": par.pass_at_k_items(correct, k)}
    if table.answers is not None and table.golds is not None:
        per_item["majority"] = _majority_items(table.answers, table.golds, parts, tie_rule)
    coverage = self_choice = None
    if judged is not None:
        verdicts_of = judged["pointwise"]
        per_item["pointwise"] = _over_parts(par.pointwise_selection, correct, verdicts_of, parts)
        tables = judged["tables"]
        if tables is not None:
            per_item["pairwise"] = _pairwise_items(correct, tables, judged["orders"], k, parts)
        coverage = float(np.mean(_over_parts(par.accepted_coverage, correct, verdicts_of, parts)))
        self_choice = _self_choice(correct, verdicts_of, parts)
    pass1 = par.pass_at_k_items(correct, 1)
    return _k_row(k, big_k, len(parts), per_item, pass1, spend, seed, coverage, self_choice)


def _pairwise_items(
    correct: list[list[bool]],
    tables: list[dict[tuple[int, int], bool]],
    orders: dict[tuple[int, int, tuple[int, ...]], list[list[int]]],
    k: int,
    parts: list[tuple[int, ...]],
) -> np.ndarray:
    """Pairwise selection per item at k, averaged over the k-subsets (each along the orders drawn for it)."""
    return np.array(
        [np.mean([_pairwise(correct[i], tables[i], orders[(i, k, b)], b) for b in parts]) for i in range(len(correct))]
    )


def _majority_items(answers, golds, parts, tie_rule: TieRule) -> np.ndarray:
    return np.array(
        [
            np.mean([_vote(par.majority_vote([answers[i][j] for j in b], golds[i]), tie_rule) for b in parts])
            for i in range(len(answers))
        ]
    )


def _over_parts(measure, correct, verdicts, parts) -> np.ndarray:
    """A per-subset pointwise measure (selection, coverage) per item, averaged over the k-subsets."""
    return np.array(
        [
            np.mean([measure([c[j] for j in b], [v[j] for j in b]) for b in parts])
            for c, v in zip(correct, verdicts, strict=True)
        ]
    )


def _sampled_readings(
    table: SampleTable, model: str | None, judge, judged: Judged | None, n_orders: int
) -> StudyInputs:
    """The study's readings of a run sampled here: scores are the samples' correctness; the report's judge (the
    study's Self-Choice when it is the run's own `model`); majority over the first k with ties to the earliest
    sample; bump sort along the samples' own order where the judge was asked those comparisons."""
    scores = [[float(c) for c in row] for row in table.correct]
    judges = []
    pairwise = None
    if judged is not None:
        judges = [JudgeVerdicts(judge.name, judged["pointwise"], judge_role(judge.name, model) == "self")]
        pairwise = _own_order_bumps(table.correct, judged["tables"]) if n_orders == 1 else None
    majority = None
    if table.answers is not None and table.golds is not None:
        majority = [
            [float(par.majority_vote(answers[:k], gold).earliest_correct) for k in range(1, len(answers) + 1)]
            for answers, gold in zip(table.answers, table.golds, strict=True)
        ]
    return StudyInputs(scores, table.correct, judges, majority, pairwise)


def _own_order_bumps(correct: list[list[bool]], tables) -> list[PerK | None] | None:
    """Per item, bump sort on the first k samples in their own order at each k; None when some comparison on that
    path was never asked (every item must be known for the reading to stand)."""
    out: list[PerK | None] = []
    for row, pairs in zip(correct, tables, strict=True):
        big_k = len(row)
        matrix = [[pairs.get((a, b)) for b in range(big_k)] for a in range(big_k)]
        values = [par.bump_first_k(row, matrix, k) for k in range(1, big_k + 1)]
        if any(v is None for v in values):
            return None
        out.append(values)
    return out


def tie_legend(tie_rule: TieRule, n_orders: int) -> str:
    """How the strategies at k were read: the subsets, the majority's ties, pairwise orders (random orders only
    when there are several; one order is the samples' own, the study's)."""
    legend = TIE_RULE if tie_rule == "split" else TIE_RULE_FIRST
    own = "one fixed order, the samples' own (the study's)"
    return legend if n_orders > 1 else legend.replace("random orders", own)


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
    for c_row, v_row in zip(correct, pointwise, strict=True):
        for b in parts:
            for j in b:
                if c_row[j]:
                    den += 1
                    num += bool(v_row[j])
    return num / den if den else None


def _judged_means(
    judged: Judged, correct: list[list[bool]], ks: list[int], big_k: int, seed: int
) -> dict[int, dict[str, float]]:
    """Pointwise and pairwise committed accuracy and their gaps to pass@k at each k, for one trial's verdicts (asked
    here: a scores file's verdicts have no pairwise tables)."""
    tables = judged["tables"]
    if tables is None:
        raise ValueError("a judge's trials are read from the store, with their pairwise verdicts")
    out = {}
    for k in ks:
        parts = subsets(big_k, k, seed)
        pointwise = float(
            np.mean(
                [
                    np.mean([par.pointwise_selection([c[j] for j in b], [v[j] for j in b]) for b in parts])
                    for c, v in zip(correct, judged["pointwise"], strict=True)
                ]
            )
        )
        pairwise = float(np.mean(_pairwise_items(correct, tables, judged["orders"], k, parts)))
        oracle = float(np.mean(par.pass_at_k_items(correct, k)))
        out[k] = {
            "pointwise": pointwise,
            "pairwise": pairwise,
            "gap_pointwise": oracle - pointwise,
            "gap_pairwise": oracle - pairwise,
        }
    return out


def _trials(runs: list[Judged], items: list[str], correct, ks: list[int], big_k: int, seed: int) -> JudgeTrials:
    """N trials of one judge: the pointwise verdicts' agreement (over all samples and per item) and, per k, each
    strategy's accuracy and gap in every trial with their spread (`stats.judges.spread`)."""
    missing = sum(r["missing"] for r in runs)
    agreement, per_item = _agreements(runs, items)
    out = JudgeTrials(trials=len(runs), verdicts_missing=missing, agreement=agreement, per_item=per_item, per_k=None)
    if not missing:
        means = [_judged_means(r, correct, ks, big_k, seed) for r in runs]
        out["per_k"] = [_trial_row(k, [m[k] for m in means]) for k in ks]
    return out


def _agreements(runs: list[Judged], items: list[str]) -> tuple[TrialAgreement, list[ItemAgreement]]:
    """The trials' pointwise verdicts' agreement over all samples, and item by item."""
    from stats.judges import trial_agreement

    flat = [[v for row in r["pointwise"] for v in row] for r in runs]
    per_item = [
        ItemAgreement(item=item, **trial_agreement([r["pointwise"][i] for r in runs])) for i, item in enumerate(items)
    ]
    return trial_agreement(flat), per_item


def _trial_row(k: int, trials: list[dict[str, float]]) -> TrialRow:
    """One k over the judge's trials: each judged strategy's accuracy and gap, spread over the trials."""

    def over_trials(name: str) -> TrialSpread:
        from stats.judges import spread

        return spread([t[name] for t in trials])

    return TrialRow(
        k=k,
        pointwise=over_trials("pointwise"),
        pairwise=over_trials("pairwise"),
        gap_pointwise=over_trials("gap_pointwise"),
        gap_pairwise=over_trials("gap_pairwise"),
    )


def _k_row(
    k: int,
    big_k: int,
    n_subsets: int,
    per_item: dict[Strategy, np.ndarray],
    pass1: np.ndarray,
    spend: Spend,
    seed: int,
    coverage: float | None = None,
    self_choice: float | None = None,
) -> KRow:
    """One k: each strategy with its interval, its gap to pass@k with the paired interval, the relative gap and
    the selection efficiency (one joint draw, `stats.parallel.verification_gaps`), and what committing at k
    costs."""
    oracle = per_item["pass_at_k"]
    chosen: dict[Strategy, np.ndarray] = {name: v for name, v in per_item.items() if name != "pass_at_k"}
    values = {name: MeanEstimate(float(np.mean(v))) for name, v in per_item.items()}
    estimates: dict[Strategy, par.GapEstimate] = {}
    if len(pass1) >= 2:
        top, estimates = par.verification_gaps(oracle, chosen, pass1=pass1, seed=seed)
        values["pass_at_k"] = _estimate(top)
        values.update({name: _estimate(e.selected) for name, e in estimates.items()})
    sampling_usd, sampling_tokens = (
        _k_of_big_k(spend.sampling_usd, k, big_k),
        _k_of_big_k(spend.sampling_tokens, k, big_k),
    )
    gaps = {
        name: _gap(
            oracle,
            v,
            estimates.get(name),
            _commit_cost(name, k, len(pass1), float(np.mean(v)), spend, sampling_usd, sampling_tokens),
        )
        for name, v in chosen.items()
    }
    return KRow(
        k,
        len(pass1),
        n_subsets,
        n_subsets == math.comb(big_k, k),
        sampling_usd,
        sampling_tokens,
        values,
        gaps,
        coverage,
        self_choice,
    )


def _k_of_big_k(total: float | None, k: int, big_k: int) -> float | None:
    """What sampling k of the K samples spent: k/K of the total (None: unknown)."""
    return None if total is None else total * k / big_k


def _gap(
    oracle: np.ndarray,
    chosen: np.ndarray,
    estimate: par.GapEstimate | None,
    costs: tuple[float | None, float | None, float | None, float | None],
) -> Gap:
    """pass@k − a strategy, with its paired interval, relative gap and efficiency where they were estimated (two
    items or more), and what committing to it costs (`_commit_cost`)."""
    gap = float(np.mean(oracle) - np.mean(chosen))
    if estimate is None:
        return Gap(gap, None, False, None, None, *costs)
    ci = (estimate.gap.low, estimate.gap.high)
    return Gap(gap, ci, no_variation(*ci), estimate.relative_gap, estimate.efficiency, *costs)


def _estimate(interval) -> MeanEstimate:
    return MeanEstimate(interval.estimate, (interval.low, interval.high), interval.no_variation)


def _commit_cost(
    name: Strategy,
    k: int,
    n: int,
    mean: float,
    spend: Spend,
    sampling_usd: float | None,
    sampling_tokens: float | None,
) -> tuple[float | None, float | None, float | None, float | None]:
    """What committing to a strategy at k costs: dollars and tokens (None when unknown or not measured, never 0),
    and accuracy per dollar and per million tokens (per mean spend per item)."""
    verdicts = {"majority": 0, "pointwise": k, "pairwise": k - 1}[name] * n
    price = spend.verdict_usd[name]
    usd = None if sampling_usd is None or price is None else sampling_usd + price * verdicts  # unknown stays unknown
    tokens = None if sampling_tokens is None else sampling_tokens + (spend.verdict_tokens[name] or 0) * verdicts
    return usd, tokens, mean / (usd / n) if usd else None, mean / (tokens / n / 1e6) if tokens else None


def _spend(store: Store, run: RunRow, samples, judge, cost_mode: str = "cache-aware") -> Spend:
    """Sampling and judging totals, and the mean price and tokens of one stored verdict of each kind.

    An offline judge (no model) costs nothing; an unpriced model's verdicts leave the cost unknown (None).
    The sampling cost follows `cost_mode` (`costs.trajectory_cost`); so does a model judge's verdict: as recorded
    (cache-aware), or under `study` repriced from its stored token buckets (`study_judge_rows`), a verdict stored
    without them kept at its stored cost and counted in `judge_unrepriced`.
    """
    from workbench.service.scaling.costs import run_price, study_judge_rows

    out = Spend(
        sampling_usd=_sampling_usd(run, samples, cost_mode),
        # a scripted agent calls no model: its tokens are not measured (None), never 0 (`measures_tokens`)
        sampling_tokens=sum(t["tokens"] or 0 for rows in samples for t in rows) if measures_tokens(run) else None,
        verdict_usd={"majority": 0.0, "pointwise": None, "pairwise": None},
        verdict_tokens={"majority": 0, "pointwise": None, "pairwise": None},
    )
    if judge is not None:
        model = judge.name.startswith("llm:")
        rows = store.judgment_costs(run["id"], judge.name)
        if cost_mode == "study" and model:
            verdicts = store.judgment_usage(run["id"], judge.name)
            price = run_price(run, judge.name.removeprefix("llm:"))
            rows, out.judge_unrepriced = study_judge_rows(price, rows, verdicts)
        _judging_spend(out, rows, model=model)
    return out


def _sampling_usd(run: RunRow, samples, cost_mode: str) -> float | None:
    """The samples' cost under `cost_mode` (`costs.trajectory_cost`), None when none of them was priced."""
    from workbench.service.scaling.costs import trajectory_cost

    prices = [trajectory_cost(run, t, cost_mode) for rows in samples for t in rows]
    costs = [c for c in prices if c is not None]
    return sum(costs) if costs else None


def _judging_spend(out: Spend, rows, model: bool) -> None:
    """The judge's totals and the mean price and tokens of one verdict of each kind, into `out`: an offline judge's
    verdicts add nothing to a strategy's spend and its totals are not measured (None); a model's unpriced verdicts
    leave the cost unknown (None)."""
    if model:
        out.judge_tokens = int(sum(sum_tokens or 0 for *_, sum_tokens in rows))
        _model_verdict_prices(out, rows)
        return
    # an offline judge (the evidence judge) calls no model: a strategy's spend adds nothing for its verdicts, and its
    # own tokens and cost are not measured (None in the JSON, never 0)
    out.verdict_usd["pointwise"] = out.verdict_usd["pairwise"] = 0.0
    out.verdict_tokens["pointwise"] = out.verdict_tokens["pairwise"] = 0
    out.judge_usd = out.judge_tokens = None


def _model_verdict_prices(out: Spend, rows) -> None:
    """A model judge's mean price and tokens of one verdict of each kind, and its total cost (None: none priced)."""
    for kind, mean_usd, n_priced, mean_tokens, _sum_usd, _sum_tokens in rows:
        out.verdict_usd[kind] = mean_usd if n_priced else None
        out.verdict_tokens[kind] = mean_tokens or 0
    priced = any(n_priced for _kind, _mean, n_priced, *_ in rows)
    out.judge_usd = sum((sum_usd or 0.0 for *_, sum_usd, _tokens in rows), 0.0) if priced else None


def _pairwise(
    correct: list[bool], pairs: dict[tuple[int, int], bool], orders: list[list[int]], block: tuple[int, ...]
) -> float:
    """`stats.parallel.pairwise_selection` on one k-subset, its sample indices made local."""
    local = {g: n for n, g in enumerate(block)}
    table = [[pairs.get((a, b)) for b in block] for a in block]
    return par.pairwise_selection([correct[j] for j in block], table, [[local[g] for g in o] for o in orders])
