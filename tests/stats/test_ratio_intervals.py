"""The one-run interval bootstrap behind `report --ci`: ratios of sums, one chunked draw, items as the unit."""

from __future__ import annotations

import numpy as np
import pytest

from stats.bootstrap import by_cluster, ratio_intervals


def loop_reference(num, den, n_boot, seed, chunk, level=0.95):
    """The same draws (chunk by chunk from one generator), one replicate and one statistic at a time."""
    rng = np.random.default_rng(seed)
    n, m = num.shape
    reps = [[] for _ in range(m)]
    for start in range(0, n_boot, chunk):
        for row in rng.integers(0, n, size=(min(chunk, n_boot - start), n)):
            for j in range(m):
                if den[row, j].sum():
                    reps[j].append(num[row, j].sum() / den[row, j].sum())
    tail = (1 - level) / 2
    return [(num[:, j].sum() / den[:, j].sum(), *np.quantile(reps[j], [tail, 1 - tail])) for j in range(m)]


def test_matches_a_plain_loop_over_the_same_draws():
    rng = np.random.default_rng(5)
    n = 31
    correct, recalled = rng.random(n) < 0.5, rng.random(n) < 0.6
    tokens = rng.integers(0, 9000, n)
    num = np.column_stack([correct, correct & recalled, tokens]).astype(float)
    den = np.column_stack([np.ones(n), recalled, np.ones(n)]).astype(float)
    got = ratio_intervals(num, den, n_boot=400, seed=7, chunk=50)
    for g, w in zip(got, loop_reference(num, den, 400, 7, 50), strict=True):
        assert (g.estimate, g.low, g.high) == pytest.approx(w)
        assert (g.n, g.n_boot, g.seed) == (n, 400, 7)


def test_replicates_are_resampled_with_their_item():
    """60 items × 3 identical replicates carry the information of 60 items, not 180."""
    rng = np.random.default_rng(0)
    items = rng.random(60) < 0.55
    rows = np.tile(items, 3).astype(float)
    ids = np.tile(np.arange(60), 3)
    [clustered] = ratio_intervals(rows, np.ones(180), clusters=ids, n_boot=2000, seed=1)
    [single] = ratio_intervals(items.astype(float), np.ones(60), n_boot=2000, seed=1)
    [naive] = ratio_intervals(rows, np.ones(180), n_boot=2000, seed=1)
    assert clustered.n == 60 and naive.n == 180
    assert (clustered.low, clustered.high) == pytest.approx((single.low, single.high))
    assert (naive.high - naive.low) < 0.75 * (clustered.high - clustered.low)  # ≈ 1/√3 as wide: too narrow


def test_cluster_coverage_with_correlated_replicates():
    """Items of varying difficulty, three replicates each: the item bootstrap covers the true accuracy about
    95% of the time; treating the 3n trajectories as independent does not."""
    rng = np.random.default_rng(2024)
    truth = 0.5  # mean of Beta(0.5, 0.5) difficulties
    hits_cluster = hits_naive = 0
    trials = 150
    for t in range(trials):
        p = rng.beta(0.5, 0.5, 80)
        outcomes = (rng.random((3, 80)) < p).astype(float).ravel()
        ids = np.tile(np.arange(80), 3)
        [c] = ratio_intervals(outcomes, np.ones(240), clusters=ids, n_boot=1000, seed=t)
        [v] = ratio_intervals(outcomes, np.ones(240), n_boot=1000, seed=t)
        hits_cluster += c.low <= truth <= c.high
        hits_naive += v.low <= truth <= v.high
    assert 0.89 <= hits_cluster / trials <= 0.99
    assert hits_naive < hits_cluster - 5


def test_by_cluster_sums_rows_per_label():
    k, (num, den) = by_cluster(["b", "a", "b"], np.array([[1.0], [2.0], [3.0]]), np.ones((3, 1)))
    assert k == 2 and num.ravel().tolist() == [4.0, 2.0] and den.ravel().tolist() == [2.0, 1.0]  # first seen first


def test_undefined_and_bad_input():
    assert ratio_intervals(np.array([[1.0], [0.0]]), np.zeros((2, 1)), n_boot=100) == [None]
    with pytest.raises(ValueError):
        ratio_intervals(np.ones(1), np.ones(1))
    with pytest.raises(ValueError):
        ratio_intervals(np.ones((3, 2)), np.ones((3, 1)))
    with pytest.raises(ValueError):
        ratio_intervals(np.ones(3), np.ones(3), clusters=[1, 2])
