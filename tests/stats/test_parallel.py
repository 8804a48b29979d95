"""Parallel scaling (docs/scaling.md "Parallel scaling"): estimators against brute-force enumeration, vote ties,
committed selections and the verification gap."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.parallel import (
    accepted_coverage,
    committed_accuracy,
    expected_max_at_k,
    expected_max_items,
    k_subsets,
    king_of_the_hill,
    majority_vote,
    majority_vote_accuracy,
    pairwise_selection,
    pass_at_k,
    pass_at_k_items,
    pointwise_items,
    pointwise_selection,
    strategies_ci,
    verification_gap,
    with_ci,
)

# ------------------------------------------------------------------------------------------------
# pass@k and expected max


def brute_pass_at_k(outcomes: list[bool], k: int) -> float:
    subsets = list(itertools.combinations(outcomes, k))
    return sum(any(s) for s in subsets) / len(subsets)


def brute_max_at_k(scores: list[float], k: int) -> float:
    subsets = list(itertools.combinations(scores, k))
    return sum(max(s) for s in subsets) / len(subsets)


def test_pass_at_k_hand_values():
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 1 − C(3,2)/C(4,2) = 1 − 3/6
    assert pass_at_k(4, 0, 4) == 0.0
    assert pass_at_k(4, 1, 4) == 1.0
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(5, 2, 3) == pytest.approx(0.9)  # 1 − C(3,3)/C(5,3) = 1 − 1/10


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.booleans(), min_size=1, max_size=9).flatmap(
        lambda o: st.tuples(st.just(o), st.integers(min_value=1, max_value=len(o)))
    )
)
def test_pass_at_k_equals_subset_enumeration(case):
    outcomes, k = case
    assert pass_at_k(len(outcomes), sum(outcomes), k) == pytest.approx(brute_pass_at_k(outcomes, k), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=8).flatmap(
        lambda s: st.tuples(st.just(s), st.integers(min_value=1, max_value=len(s)))
    )
)
def test_expected_max_equals_subset_enumeration(case):
    scores, k = case
    assert expected_max_at_k(scores, k) == pytest.approx(brute_max_at_k(scores, k), abs=1e-12)


def test_expected_max_hand_value_and_binary_agreement():
    # subsets of size 2 of [0.2, 0.5, 0.9]: maxes 0.5, 0.9, 0.9 → 2.3/3
    assert expected_max_at_k([0.9, 0.2, 0.5], 2) == pytest.approx(2.3 / 3)
    assert expected_max_at_k([1, 0, 0, 1, 0], 2) == pytest.approx(pass_at_k(5, 2, 2))
    assert expected_max_at_k([0.4, 0.7], 1) == pytest.approx(0.55)  # k = 1 is the mean


def test_per_item_vectors():
    assert pass_at_k_items([[1, 0, 0, 0], [0, 0], [1, 1, 1]], 2).tolist() == pytest.approx([0.5, 0.0, 1.0])
    assert expected_max_items([[0.2, 0.4], [1.0, 0.0, 0.5]], 1).tolist() == pytest.approx([0.3, 0.5])


@pytest.mark.parametrize("n,c,k", [(3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_pass_at_k_rejects_bad_arguments(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_expected_max_rejects_bad_arguments():
    with pytest.raises(ValueError):
        expected_max_at_k([0.1, 0.2], 3)
    with pytest.raises(ValueError):
        expected_max_at_k([0.1, float("nan")], 1)


# ------------------------------------------------------------------------------------------------
# majority vote


def test_clear_majority():
    v = majority_vote(["A", "b", "B", " B "], "B")
    assert v.modes == ("B",) and v.votes == 3 and v.expected_correct == 1.0
    assert v.earliest == "B" and v.earliest_correct


def test_answer_formats_are_one_vote():
    """ "(b)", "B." and "b" used to be three different votes, none equal to the gold "B"."""
    v = majority_vote(["B.", "(B)", "b"], "B")
    assert v.modes == ("B",) and v.votes == 3 and v.expected_correct == 1.0 and v.earliest_correct
    assert majority_vote(["(b)"], "B").expected_correct == 1.0
    assert majority_vote(["(a)", "B.", "[A]:"], "A").modes == ("A",)


def test_tie_expected_and_earliest_rules():
    v = majority_vote(["C", "A", "A", "C", "D"], "A")
    assert v.modes == ("A", "C") and v.expected_correct == 0.5
    assert v.earliest == "C" and not v.earliest_correct
    three = majority_vote(["B", "C", "A"], "A")
    assert three.expected_correct == pytest.approx(1 / 3) and three.earliest == "B"


def test_abstentions_never_win_unless_all_empty():
    v = majority_vote([None, "", "  ", "D"], "D")
    assert v.modes == ("D",) and v.expected_correct == 1.0 and v.earliest == "D"
    empty = majority_vote([None, "", " "], "A")
    assert empty.modes == () and empty.expected_correct == 0.0 and empty.earliest is None
    assert not empty.earliest_correct


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["A", "B", "C", "D", None]), min_size=1, max_size=8), st.sampled_from("ABCD"))
def test_vote_expected_matches_random_tie_break(answers, gold):
    v = majority_vote(answers, gold)
    counts = {a: answers.count(a) for a in set(answers) if a is not None}
    if not counts:
        assert v.expected_correct == 0.0
        return
    top = max(counts.values())
    modes = [a for a, c in counts.items() if c == top]
    # uniformly random tie-break: each tied mode equally likely
    assert v.expected_correct == pytest.approx(sum(m == gold for m in modes) / len(modes))
    first = min(answers.index(m) for m in modes)
    assert v.earliest == answers[first]


def test_majority_vote_accuracy_aggregates():
    out = majority_vote_accuracy([["A", "B"], ["C", "C", "D"], [None, None]], ["A", "C", "A"])
    assert out["expected"] == [1.5, 3]
    assert out["earliest"] == [2, 3]
    assert out["n_ties"] == 1 and out["n_all_abstained"] == 1
    with pytest.raises(ValueError):
        majority_vote_accuracy([["A"]], ["A", "B"])


# ------------------------------------------------------------------------------------------------
# committed selections


def test_committed_accuracy():
    correct = [[0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 1, 1]]
    assert committed_accuracy(correct, [1, 1, None, -1]).as_list() == [1, 4]
    with pytest.raises(ValueError):
        committed_accuracy(correct, [3, 0, 0, 0])
    with pytest.raises(ValueError):
        committed_accuracy(correct, [0])


def test_pointwise_selection_rules():
    assert pointwise_selection([1, 0, 0, 1], [True, True, False, False]) == 0.5
    assert pointwise_selection([1, 0, 0, 0], [False, None, False, False]) == 0.0  # none accepted: no answer
    assert pointwise_selection([0, 1], [True, None]) == 0.0  # an unparsed verdict is not an acceptance
    assert accepted_coverage([0, 1], [True, True]) == 1.0
    assert accepted_coverage([0, 1], [True, None]) == 0.0
    assert pointwise_items([[1, 0], [0, 1]], [[True, True], [True, False]]).tolist() == [0.5, 0.0]
    with pytest.raises(ValueError):
        pointwise_selection([1, 0], [True])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from([True, False, None])), min_size=1, max_size=7))
def test_pointwise_is_the_uniform_choice_expectation(samples):
    correct = [c for c, _ in samples]
    verdicts = [v for _, v in samples]
    pool = [i for i, v in enumerate(verdicts) if v is True]
    expected = sum(correct[i] for i in pool) / len(pool) if pool else 0.0  # nothing accepted: nothing committed
    assert pointwise_selection(correct, verdicts) == pytest.approx(expected)
    assert pointwise_selection(correct, verdicts) <= accepted_coverage(correct, verdicts)
    # a judge that accepts everything reduces to pass@1, and coverage reduces to pass@K
    assert pointwise_selection(correct, [True] * len(correct)) == pytest.approx(np.mean(correct))
    assert accepted_coverage(correct, [True] * len(correct)) == float(any(correct))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from([True, False, None])), min_size=1, max_size=7))
def test_pointwise_at_k1_is_correct_and_accepted_not_pass_at_1(samples):
    """General AgentBench's self-choice at K = 1 is `both_correct` = correct ∧ accepted: a judge that rejects a
    right answer loses it. The old fallback (pick any sample when none is accepted) made k = 1 equal pass@1."""
    correct = [c for c, _ in samples]
    verdicts = [v for _, v in samples]
    at_1 = np.mean([pointwise_selection([c], [v]) for c, v in zip(correct, verdicts, strict=True)])
    assert at_1 == pytest.approx(np.mean([c and v is True for c, v in zip(correct, verdicts, strict=True)]))
    assert at_1 == pytest.approx(np.mean([accepted_coverage([c], [v]) for c, v in zip(correct, verdicts, strict=True)]))


def test_pointwise_at_k1_differs_from_pass_at_1_on_a_rejected_right_answer():
    correct, verdicts = [True, True, False, False], [True, False, True, None]
    assert np.mean([pointwise_selection([c], [v]) for c, v in zip(correct, verdicts, strict=True)]) == 0.25
    assert pass_at_k(4, 2, 1) == 0.5


def test_k_subsets_are_the_subsets_pass_at_k_averages_over():
    """For k not dividing K (K = 4, k = 3) disjoint blocks keep one block [0, 1, 2] and drop sample 3; the
    subsets are all C(4, 3) = 4, so any strategy's mean over them uses every sample, as pass@k does."""
    subsets = k_subsets(4, 3)
    assert subsets == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    correct = [False, False, False, True]
    oracle = np.mean([any(correct[j] for j in s) for s in subsets])
    assert oracle == pytest.approx(pass_at_k(4, 1, 3)) == 0.75
    assert k_subsets(4, 1) == [(0,), (1,), (2,), (3,)] and k_subsets(4, 4) == [(0, 1, 2, 3)]
    big = k_subsets(16, 8, limit=50, seed=3)
    assert len(big) == len(set(big)) == 50 and all(len(s) == 8 and list(s) == sorted(s) for s in big)
    assert big == k_subsets(16, 8, limit=50, seed=3)  # seeded: the same subsets every time
    with pytest.raises(ValueError):
        k_subsets(4, 5)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 7).flatmap(lambda n: st.tuples(st.lists(st.booleans(), min_size=n, max_size=n), st.integers(1, n)))
)
def test_oracle_over_k_subsets_is_unbiased_pass_at_k(case):
    correct, k = case
    oracle = np.mean([any(correct[j] for j in s) for s in k_subsets(len(correct), k)])
    assert oracle == pytest.approx(pass_at_k(len(correct), sum(correct), k))


def test_king_of_the_hill_keeps_leader_unless_challenger_wins():
    table = np.array([[np.nan, 1, 0], [0, np.nan, 1], [0, 0, np.nan]], dtype=float)
    assert king_of_the_hill([0, 1, 2], table) == 2  # 1 beats 0, then 2 beats 1
    assert king_of_the_hill([0, 2, 1], table) == 1  # 2 loses to 0, 1 beats 0
    assert king_of_the_hill([2, 0, 1], table) == 2  # nobody beats 2


def test_pairwise_selection_averages_orders():
    correct = [0, 0, 1]
    table = [[None, 1, 0], [0, None, 1], [0, 0, None]]
    # order → winner: 012→2, 021→1, 102→2, 120→2, 201→2, 210→2 ⇒ 5/6 correct
    assert pairwise_selection(correct, table) == pytest.approx(5 / 6)
    assert pairwise_selection(correct, table, orders=[[0, 1, 2]]) == 1.0
    assert pairwise_selection(correct, table, orders=[[0, 2, 1]]) == 0.0


def test_pairwise_extremes():
    rng = np.random.default_rng(0)
    for _ in range(20):
        correct = (rng.random(5) < 0.4).astype(int)
        oracle_judge = [[int(correct[j] and not correct[i]) for j in range(5)] for i in range(5)]
        assert pairwise_selection(correct, oracle_judge) == float(correct.any())
        stubborn = [[0] * 5 for _ in range(5)]  # the leader always stays: the first sample wins
        assert pairwise_selection(correct, stubborn) == pytest.approx(correct.mean())


def test_pairwise_errors():
    with pytest.raises(ValueError, match="no comparator outcome"):
        pairwise_selection([0, 1], [[None, None], [0, None]])
    with pytest.raises(ValueError, match="permutation"):
        pairwise_selection([0, 1], [[0, 1], [0, 0]], orders=[[0, 0]])
    with pytest.raises(ValueError, match="2×2"):
        pairwise_selection([0, 1], [[0, 1, 0], [0, 0, 1]])
    with pytest.raises(ValueError, match="orders"):
        pairwise_selection([0] * 9, [[0] * 9] * 9)


# ------------------------------------------------------------------------------------------------
# gap and intervals


def test_verification_gap_paired():
    oracle = [1, 1, 0, 1, 0.5, 1, 0, 1]
    selected = [1, 0, 0, 0.5, 0.5, 1, 0, 0]
    pass1 = [0.5, 0.5, 0, 0.5, 0.25, 1, 0, 0.25]
    gap = verification_gap(oracle, selected, pass1=pass1, n_boot=2000)
    assert gap["pass_at_k"] == pytest.approx(5.5 / 8) and gap["selected"] == pytest.approx(3 / 8)
    assert gap["gap"] == pytest.approx(2.5 / 8)
    assert gap["relative_gap"] == pytest.approx(2.5 / 5.5)
    assert gap["efficiency"] == pytest.approx((3 / 8 - 3 / 8) / (5.5 / 8 - 3 / 8))
    ci = gap["ci"]["gap"]
    assert ci["low"] <= gap["gap"] <= ci["high"]
    assert ci["low"] >= 0  # every per-item difference is ≥ 0, so every paired replicate is too
    same = verification_gap(oracle, oracle, pass1=oracle, n_boot=500)
    assert same["gap"] == 0 and same["efficiency"] is None
    assert same["ci"]["gap"]["low"] == same["ci"]["gap"]["high"] == 0


def test_with_ci_is_seeded_and_brackets_the_mean():
    values = np.random.default_rng(1).random(50)
    a, b = with_ci(values, seed=3, n_boot=2000), with_ci(values, seed=3, n_boot=2000)
    assert a == b
    assert a.estimate == pytest.approx(values.mean())
    assert a.low < a.estimate < a.high
    assert with_ci(values, seed=4, n_boot=2000) != a


def test_strategies_ci_is_one_joint_draw():
    rng = np.random.default_rng(7)
    oracle = (rng.random(80) < 0.6).astype(float)
    vote = oracle * (rng.random(80) < 0.7)
    cis = strategies_ci({"pass@4": oracle, "vote": vote, "copy": oracle}, n_boot=2000, seed=5)
    single = with_ci(oracle, n_boot=2000, seed=5)  # same draw as the single-metric interval
    assert (cis["pass@4"].low, cis["pass@4"].high) == pytest.approx((single.low, single.high), abs=1e-12)
    assert (cis["copy"].low, cis["copy"].high) == (cis["pass@4"].low, cis["pass@4"].high)
    assert cis["vote"].estimate == pytest.approx(vote.mean()) and cis["vote"].high <= cis["pass@4"].high
