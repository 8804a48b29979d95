"""Parallel scaling: K samples per item, what an oracle could reach and what a strategy commits to.

The scaling study's parallel side (docs/scaling.md#parallel-scaling). An *oracle* number (pass@k) asks whether
some sample among k is right; a *committed* number asks whether the single answer a strategy picks is right.
The verification gap is their difference. Every per-item quantity below is an *expected* correctness in [0, 1]
(exact expectations over random subsets, tie-breaks or orders, never a Monte-Carlo estimate), so
item means and bootstrap intervals over items (`stats.bootstrap`) apply to all of them alike.

Strategies implemented, each with its rule stated where it is defined:

* majority vote over letter answers (random tie-break expectation and "earliest sample" rule);
* pointwise self-choice from per-sample judge verdicts (commits to an accepted sample, or to nothing);
* pairwise king-of-the-hill ("bump sort") from a comparator table, averaged over orders;
* any externally chosen index per item (`committed_accuracy`);
* the study's own readings of its tables (GA-Bench Tables 15-18), which select nothing but the first k samples:
  best of the first k (`best_of_first_k`), a judge's `best_at_k` and `retain_at_k`, bump sort in the samples' own
  order (`bump_first_k`).

At k < K every strategy is averaged over the k-subsets of the K samples (`k_subsets`), the very
subsets the unbiased pass@k averages over, so a strategy and its oracle are compared on the same
samples whatever k (disjoint blocks would drop samples when k does not divide K).
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict, TypeVar

import numpy as np

from stats.bootstrap import Interval, bootstrap_mean_ci, bootstrap_means, percentile_interval
from stats.ratio import Pair, Ratio

Values = Sequence[float] | np.ndarray
"""Per-item values of a metric: a list or a numpy vector."""
Name = TypeVar("Name", bound=str)

MAX_EXHAUSTIVE_ORDERS = 8  # K! orders are enumerated up to K = 8 (40,320)
MAX_SUBSETS = 256  # every k-subset of K is enumerated while C(K, k) ≤ 256 (K ≤ 10 always)

# ---------------------------------------------------------------------------------------------
# oracle: pass@k and expected max


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from c correct among n samples: 1 − C(n−c, k)/C(n, k).

    The probability that a uniformly random k-subset of the n samples holds at least one correct
    one; unlike "any correct among the first k" it uses all n samples and ignores their order.
    """
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def expected_max_at_k(scores: Sequence[float], k: int) -> float:
    """Expected max score over a uniformly random k-subset: Σ_j s_(j)·C(j−1, k−1)/C(n, k).

    s_(1) ≤ … ≤ s_(n) are the sorted scores; s_(j) is the max of exactly C(j−1, k−1) subsets.
    The continuous analogue of pass@k (it equals pass@k on 0/1 scores).
    """
    s = np.sort(np.asarray(scores, dtype=np.float64))
    n = s.size
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    weights = np.array([math.comb(j - 1, k - 1) for j in range(1, n + 1)], dtype=np.float64)
    return float(weights @ s / math.comb(n, k))


def pass_at_k_items(correct: Sequence[Sequence[Any]], k: int) -> np.ndarray:
    """pass@k per item from each item's 0/1 sample outcomes (items may have different n ≥ k)."""
    return np.array([pass_at_k(len(row), int(np.sum(np.asarray(row, dtype=bool))), k) for row in correct])


def expected_max_items(scores: Sequence[Sequence[float]], k: int) -> np.ndarray:
    """Expected max@k per item from each item's continuous sample scores."""
    return np.array([expected_max_at_k(row, k) for row in scores])


# ---------------------------------------------------------------------------------------------
# majority vote


_EDGES = re.compile(r"^[\s(\[{\"'.,:;!?*]+|[\s)\]}\"'.,:;!?*]+$")


def normalize_letter(answer: Any) -> str | None:
    """Default answer key: case, surrounding whitespace, brackets and punctuation dropped, inner whitespace
    collapsed (§3.3), so "(b)", "B." and " b " are one vote for "B"; None or blank is an abstention."""
    if answer is None:
        return None
    text = " ".join(_EDGES.sub("", str(answer)).split()).upper()
    return text or None


class VoteRecord(TypedDict):
    modes: list[str]
    votes: int
    expected_correct: float
    earliest: str | None
    earliest_correct: bool


class VoteAccuracy(TypedDict):
    """Majority-vote accuracy over items under both tie rules, and per item."""

    expected: Pair
    earliest: Pair
    n_ties: int
    n_all_abstained: int
    per_item_expected: list[float]
    per_item_earliest: list[float]


class VerificationGap(TypedDict):
    """pass@k against the committed selection on the same items, with paired intervals (§3.7)."""

    n: int
    pass_at_k: float
    selected: float
    gap: float
    relative_gap: float | None
    ci: dict[str, dict[str, float | int | bool]]
    pass_at_1: NotRequired[float]
    efficiency: NotRequired[float | None]


@dataclass(frozen=True)
class Vote:
    """One item's vote: the tied modes, and the two tie rules' outcomes."""

    modes: tuple[str, ...]
    votes: int
    expected_correct: float
    earliest: str | None
    earliest_correct: bool

    def to_dict(self) -> VoteRecord:
        return VoteRecord(
            modes=list(self.modes),
            votes=self.votes,
            expected_correct=self.expected_correct,
            earliest=self.earliest,
            earliest_correct=self.earliest_correct,
        )


def majority_vote(answers: Sequence[Any], gold: Any, normalize: Callable[[Any], str | None] = normalize_letter) -> Vote:
    """Plurality vote over one item's sample answers.

    Abstentions (None, blank, or whatever `normalize` maps to None) never win unless every sample
    abstained, in which case the vote is an abstention and counts as wrong. Among tied modes:
    `expected_correct` = share of tied modes equal to `gold` (uniformly random tie-break, exact);
    `earliest` = the answer of the earliest sample whose answer is one of the tied modes.
    """
    keys = [normalize(a) for a in answers]
    target = normalize(gold)
    counts = Counter(k for k in keys if k is not None)
    if not counts:
        return Vote((), 0, 0.0, None, False)
    top = max(counts.values())
    modes = [k for k in counts if counts[k] == top]
    earliest = next(k for k in keys if k in modes)
    return Vote(tuple(sorted(modes)), top, sum(m == target for m in modes) / len(modes), earliest, earliest == target)


def majority_vote_accuracy(
    answers: Sequence[Sequence[Any]], golds: Sequence[Any], normalize: Callable[[Any], str | None] = normalize_letter
) -> VoteAccuracy:
    """Majority-vote accuracy over items under both tie rules, each as [num, den]."""
    if len(answers) != len(golds):
        raise ValueError("one gold answer per item")
    votes = [majority_vote(a, g, normalize) for a, g in zip(answers, golds, strict=True)]
    return VoteAccuracy(
        expected=Ratio(sum(v.expected_correct for v in votes), len(votes)).as_list(),
        earliest=Ratio(sum(v.earliest_correct for v in votes), len(votes)).as_list(),
        n_ties=sum(len(v.modes) > 1 for v in votes),
        n_all_abstained=sum(not v.modes for v in votes),
        per_item_expected=[v.expected_correct for v in votes],
        per_item_earliest=[float(v.earliest_correct) for v in votes],
    )


# ---------------------------------------------------------------------------------------------
# committed selections


def committed_accuracy(correct: Sequence[Sequence[Any]], chosen: Sequence[int | None]) -> Ratio:
    """Accuracy of a strategy that commits to sample `chosen[i]` on item i.

    None or a negative index means the strategy committed to nothing: the item counts as wrong,
    as a non-submission does.
    """
    if len(correct) != len(chosen):
        raise ValueError("one chosen index per item")
    hits = 0
    for row, idx in zip(correct, chosen, strict=True):
        if idx is None or idx < 0:
            continue
        if idx >= len(row):
            raise ValueError(f"chosen index {idx} out of range for {len(row)} samples")
        hits += bool(row[idx])
    return Ratio(hits, len(correct))


def pointwise_selection(correct: Sequence[Any], accepted: Sequence[bool | None]) -> float:
    """Expected correctness of pointwise self-choice on one item (General AgentBench, test-time-scaling §3.4).

    Each sample's answer is accepted or not by the judge (for self-choice, the agent's own model);
    the strategy commits to a sample uniformly at random among the accepted ones, and when the judge
    accepted none it commits to nothing: the item counts as wrong, as a non-submission does. So a
    sample counts only when it is correct *and* accepted (the study's `both_correct`): at K = 1 the
    value is P(correct ∧ accepted), not pass@1, by construction. An unparsed verdict (None) is not
    an acceptance. Returns the exact expectation.
    """
    c = np.asarray(correct, dtype=bool)
    if len(accepted) != c.size or c.size == 0:
        raise ValueError("one verdict per sample, at least one sample")
    acc = np.array([v is not None and bool(v) for v in accepted], dtype=bool)
    return float(c[acc].mean()) if acc.any() else 0.0


def accepted_coverage(correct: Sequence[Any], accepted: Sequence[bool | None]) -> float:
    """The reference's "self-choice best@k": 1 iff some accepted sample is correct.

    Not a selection (it ignores false acceptances); reported only to reconcile with the repo. It
    equals `pointwise_selection` at K = 1 (both are correct ∧ accepted) and is never below it.
    """
    c = np.asarray(correct, dtype=bool)
    acc = np.array([v is not None and bool(v) for v in accepted], dtype=bool)
    return float((c & acc).any())


def k_subsets(big_k: int, k: int, limit: int = MAX_SUBSETS, seed: int = 0) -> list[tuple[int, ...]]:
    """The k-subsets of K samples a strategy at k is averaged over: the same subsets unbiased pass@k averages over.

    Every one of the C(K, k) subsets (in lexicographic order) while there are at most `limit`, so a
    strategy's value at k is its exact expectation over a uniformly random k-subset, as pass@k is;
    beyond that, `limit` distinct subsets drawn uniformly at random with `seed` (an unbiased
    estimate of the same expectation). k = K is the one subset of all samples, k = 1 every sample.
    """
    if not 1 <= k <= big_k:
        raise ValueError(f"need 1 <= k <= K, got k={k}, K={big_k}")
    if math.comb(big_k, k) <= limit:
        return list(itertools.combinations(range(big_k), k))
    rng = np.random.default_rng(np.random.SeedSequence([seed, big_k, k]))
    chosen: set[tuple[int, ...]] = set()
    while len(chosen) < limit:
        chosen.add(tuple(sorted(rng.choice(big_k, size=k, replace=False).tolist())))
    return sorted(chosen)


def pointwise_items(correct: Sequence[Sequence[Any]], accepted: Sequence[Sequence[bool | None]]) -> np.ndarray:
    """`pointwise_selection` for every item."""
    return np.array([pointwise_selection(c, a) for c, a in zip(correct, accepted, strict=True)])


def king_of_the_hill(order: Sequence[int], challenger_wins: np.ndarray) -> int:
    """The final leader when samples are compared in `order`.

    The first sample leads; each next sample challenges the leader (leader in slot 1, challenger in
    slot 2) and takes over only if `challenger_wins[leader, challenger]` is true: a tie or an
    unparsed verdict keeps the leader, as the reference does.
    """
    leader = order[0]
    for challenger in order[1:]:
        verdict = challenger_wins[leader, challenger]
        if np.isnan(verdict):
            raise ValueError(f"no comparator outcome for leader {leader} vs challenger {challenger}")
        if verdict:
            leader = challenger
    return leader


def pairwise_selection(
    correct: Sequence[Any], challenger_wins: Any, orders: Sequence[Sequence[int]] | None = None
) -> float:
    """Expected correctness of pairwise king-of-the-hill selection on one item.

    `challenger_wins[i][j]` (K × K; True/1, False/0, or None/NaN when never asked) says whether
    sample j, challenging leader i, wins. The expectation is the mean over `orders`; by default
    all K! orders (a uniformly random order, exactly), allowed up to K = 8. Pass
    `orders=[range(K)]` for the reference's fixed pass order.
    """
    c = np.asarray(correct, dtype=bool)
    k = c.size
    table = np.array([[np.nan if v is None else float(v) for v in row] for row in challenger_wins])
    if table.shape != (k, k):
        raise ValueError(f"comparator table must be {k}×{k}")
    if orders is None:
        if k > MAX_EXHAUSTIVE_ORDERS:
            raise ValueError(f"K = {k} > {MAX_EXHAUSTIVE_ORDERS}: pass the random orders to average over")
        orders = list(itertools.permutations(range(k)))
    if not orders:
        raise ValueError("no orders")
    for order in orders:
        if sorted(order) != list(range(k)):
            raise ValueError(f"order {list(order)} is not a permutation of 0..{k - 1}")
    return float(np.mean([c[king_of_the_hill(list(o), table)] for o in orders]))


# ---------------------------------------------------------------------------------------------
# the study's readings (General AgentBench, Tables 15-18): first-k prefixes in the samples' own order


def best_of_first_k(scores: Sequence[float], k: int) -> float:
    """The study's Pass@k (Best@k, GA-Bench Tables 15-18): the best score among the first k samples in their own
    order, a prefix rather than a random subset (binary scores: 1 iff one of them is correct)."""
    if not 1 <= k <= len(scores):
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={len(scores)}")
    return float(max(scores[:k]))


def best_at_k(correct: Sequence[Any], accepted: Sequence[bool | None], k: int) -> float:
    """The study's `best_at_k` for a pointwise judge: 1 iff some sample among the first k is correct *and*
    accepted. Not a selection: a judge that accepts everything scores the first-k pass@k (an unparsed verdict,
    None, is not an acceptance)."""
    if not 1 <= k <= min(len(correct), len(accepted)):
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={len(correct)}")
    return float(any(bool(c) and bool(a) for c, a in zip(correct[:k], accepted[:k], strict=True)))


def retain_at_k(correct: Sequence[Any], accepted: Sequence[bool | None], k: int) -> float:
    """The study's `score_retain_at_k`: accepted correct samples / correct samples among the first k, 0 when none
    of them is correct. A recall of the judge on the prefix, not a selection."""
    if not 1 <= k <= min(len(correct), len(accepted)):
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={len(correct)}")
    hits = [bool(a) for c, a in zip(correct[:k], accepted[:k], strict=True) if c]
    return sum(hits) / len(hits) if hits else 0.0


def bump_first_k(correct: Sequence[Any], challenger_wins: Any, k: int) -> float | None:
    """Pairwise bump sort on the first k samples in their own order (the study's): sample 1 leads, samples 2..k
    challenge in turn; 1.0 when the final leader is correct. None when a comparison on that path is not known
    (`challenger_wins[i][j]` None/NaN)."""
    table = np.array([[np.nan if v is None else float(v) for v in row] for row in challenger_wins])
    try:
        return float(bool(correct[king_of_the_hill(list(range(k)), table)]))
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------
# the gap, with paired intervals


def verification_gap(
    oracle: Values,
    selected: Values,
    pass1: Values | None = None,
    level: float = 0.95,
    n_boot: int = 10_000,
    seed: int = 0,
) -> VerificationGap:
    """Gap = pass@k − committed accuracy, from per-item values on the same items (§3.7).

    Intervals are paired: the bootstrap draw depends only on (n, B, seed), so the oracle, the
    selection and their difference are resampled with the same items. `relative_gap` = gap / pass@k;
    `efficiency` = (selection − pass@1)/(pass@k − pass@1), None where its denominator is 0 (or pass1 is not given).
    """
    o = np.asarray(oracle, dtype=np.float64)
    s = np.asarray(selected, dtype=np.float64)
    if o.shape != s.shape or o.ndim != 1:
        raise ValueError("oracle and selected must be per-item vectors over the same items")
    gap = float(o.mean() - s.mean())
    out = VerificationGap(
        n=int(o.size),
        pass_at_k=float(o.mean()),
        selected=float(s.mean()),
        gap=gap,
        relative_gap=gap / float(o.mean()) if o.mean() > 0 else None,
        ci={
            name: with_ci(v, level, n_boot, seed).as_dict()
            for name, v in (("pass_at_k", o), ("selected", s), ("gap", o - s))
        },
    )
    if pass1 is not None:
        p1 = float(np.mean(pass1))
        span = float(o.mean()) - p1
        out["pass_at_1"] = p1
        out["efficiency"] = (float(s.mean()) - p1) / span if span != 0 else None
    return out


@dataclass(frozen=True)
class GapEstimate:
    """One selection against the oracle on the same items: its own interval, the gap's paired interval, the
    relative gap (gap / pass@k) and the selection efficiency ((selection − pass@1)/(pass@k − pass@1)); None where
    a denominator is 0 (or pass@1 is not given)."""

    selected: Interval
    gap: Interval
    relative_gap: float | None
    efficiency: float | None


def verification_gaps(
    oracle: Values,
    selections: Mapping[Name, Values],
    pass1: Values | None = None,
    level: float = 0.95,
    n_boot: int = 10_000,
    seed: int = 0,
) -> tuple[Interval, dict[Name, GapEstimate]]:
    """`verification_gap` for several selections on the same items, from one joint draw: the oracle's interval and
    each selection's. The draw depends only on (n, B, seed), so every interval equals the one `verification_gap`
    gives alone; one draw instead of three per selection."""
    o = np.asarray(oracle, dtype=np.float64)
    names = list(selections)
    chosen = [np.asarray(selections[name], dtype=np.float64) for name in names]
    if o.ndim != 1 or any(c.shape != o.shape for c in chosen):
        raise ValueError("oracle and selections must be per-item vectors over the same items")
    if o.size < 2:
        raise ValueError("intervals need at least two items")
    matrix = np.column_stack([o, *chosen, *(o - c for c in chosen)])
    reps = bootstrap_means(matrix, n_boot, seed)

    def interval(j: int) -> Interval:
        low, high = percentile_interval(reps[:, j], level)
        return Interval(float(matrix[:, j].mean()), low, high, level, o.size, n_boot, seed)

    p1 = None if pass1 is None else float(np.mean(pass1))
    top = float(o.mean())
    out = {}
    for j, name in enumerate(names):
        mean = float(chosen[j].mean())
        gap = interval(1 + len(names) + j)
        span = None if p1 is None else top - p1
        out[name] = GapEstimate(
            interval(1 + j),
            gap,
            (top - mean) / top if top > 0 else None,
            (mean - p1) / span if p1 is not None and span else None,
        )
    return interval(0), out


def with_ci(per_item: Values, level: float = 0.95, n_boot: int = 10_000, seed: int = 0) -> Interval:
    """Mean of a per-item metric with its percentile bootstrap interval over items (seeded)."""
    return bootstrap_mean_ci(per_item, level=level, n_boot=n_boot, seed=seed)


def strategies_ci(
    per_item: Mapping[Name, Values], level: float = 0.95, n_boot: int = 10_000, seed: int = 0
) -> dict[Name, Interval]:
    """Percentile intervals for several per-item metrics on the same items, from one joint draw.

    One (B, n) × (n, m) product resamples every strategy (pass@k, vote, pointwise, pairwise, …)
    with the same items, so their intervals are paired and any difference can be read off the
    same replicates.
    """
    names = list(per_item)
    matrix = np.column_stack([np.asarray(per_item[name], dtype=np.float64) for name in names])
    if matrix.shape[0] < 2:
        raise ValueError("intervals need at least two items")
    reps = bootstrap_means(matrix, n_boot, seed)
    out = {}
    for j, name in enumerate(names):
        low, high = percentile_interval(reps[:, j], level)
        out[name] = Interval(float(matrix[:, j].mean()), low, high, level, matrix.shape[0], n_boot, seed)
    return out
