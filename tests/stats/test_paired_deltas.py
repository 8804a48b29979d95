"""The paired ratio-of-sums bootstrap behind `compare`: against a plain loop over the same draws, and properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.bootstrap import paired_ratio_deltas


def loop_reference(num_a, den_a, num_b, den_b, n_boot, seed, chunk, level=0.95):
    """The same draws (chunk by chunk from one generator), one replicate and one statistic at a time."""
    rng = np.random.default_rng(seed)
    n, m = num_a.shape
    reps = [[] for _ in range(m)]
    for start in range(0, n_boot, chunk):
        idx = rng.integers(0, n, size=(min(chunk, n_boot - start), n))
        for row in idx:
            for j in range(m):
                da, db = den_a[row, j].sum(), den_b[row, j].sum()
                if da and db:
                    reps[j].append(num_b[row, j].sum() / db - num_a[row, j].sum() / da)
    tail = (1 - level) / 2
    out = []
    for j in range(m):
        point = num_b[:, j].sum() / den_b[:, j].sum() - num_a[:, j].sum() / den_a[:, j].sum()
        low, high = np.quantile(reps[j], [tail, 1 - tail])
        out.append((point, low, high))
    return out


def test_matches_a_plain_loop_over_the_same_draws():
    rng = np.random.default_rng(3)
    n = 23
    correct_a, correct_b = rng.random(n) < 0.6, rng.random(n) < 0.4
    recall_a, recall_b = rng.random(n) < 0.7, rng.random(n) < 0.5
    tokens_a, tokens_b = rng.integers(0, 5000, n), rng.integers(0, 5000, n)
    num_a = np.column_stack([correct_a, correct_a & recall_a, tokens_a]).astype(float)
    den_a = np.column_stack([np.ones(n), recall_a, np.ones(n)]).astype(float)
    num_b = np.column_stack([correct_b, correct_b & recall_b, tokens_b]).astype(float)
    den_b = np.column_stack([np.ones(n), recall_b, np.ones(n)]).astype(float)
    got = paired_ratio_deltas(num_a, den_a, num_b, den_b, n_boot=500, seed=11, chunk=64)
    want = loop_reference(num_a, den_a, num_b, den_b, 500, 11, 64)
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w)


def test_an_undefined_statistic_has_no_interval():
    num = np.array([[1.0], [0.0], [1.0]])
    zero = np.zeros((3, 1))
    assert paired_ratio_deltas(num, zero, num, np.ones((3, 1)), n_boot=200) == [(None, None, None)]


def test_one_dimensional_input_is_one_statistic():
    a = np.array([1, 0, 1, 1, 0], dtype=float)
    b = np.array([1, 1, 1, 1, 0], dtype=float)
    [(delta, low, high)] = paired_ratio_deltas(a, np.ones(5), b, np.ones(5), n_boot=2000)
    assert delta == pytest.approx(0.2) and low <= delta <= high and low >= 0  # B is never worse on any item


def test_shape_mismatch_and_too_few_items_are_refused():
    with pytest.raises(ValueError):
        paired_ratio_deltas(np.ones((3, 2)), np.ones((3, 2)), np.ones((3, 1)), np.ones((3, 1)))
    with pytest.raises(ValueError):
        paired_ratio_deltas(np.ones(1), np.ones(1), np.ones(1), np.ones(1))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=2, max_size=40), st.integers(0, 2**16))
def test_paired_interval_brackets_the_estimate_and_identical_runs_give_zero(pairs, seed):
    a = np.array([p[0] for p in pairs], dtype=float)
    b = np.array([p[1] for p in pairs], dtype=float)
    ones = np.ones(len(pairs))
    [(delta, low, high)] = paired_ratio_deltas(a, ones, b, ones, n_boot=300, seed=seed)
    assert delta == pytest.approx(b.mean() - a.mean())
    assert low <= high and low >= -1 and high <= 1
    assert paired_ratio_deltas(a, ones, a, ones, n_boot=300, seed=seed) == [(0.0, 0.0, 0.0)]
