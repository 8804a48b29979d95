"""Wilson score intervals, plain and clustered by item: against SciPy, hand values and a coverage simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.wilson import clustered_wilson, wilson, z_of


def test_sixty_of_sixty_is_not_certainty():
    iv = wilson(60, 60)
    assert 0.9398 <= iv.low <= 0.9402 and iv.high == 1
    assert iv.low == pytest.approx(60 / (60 + z_of(0.95) ** 2))  # at p̂ = 1 the lower bound is n / (n + z²)
    zero = wilson(0, 60)
    assert zero.low == 0 and zero.high == pytest.approx(1 - iv.low)


@settings(max_examples=120, deadline=None)
@given(
    st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_wilson_matches_scipy(counts, level):
    from scipy.stats import binomtest

    x, n = counts
    want = binomtest(x, n).proportion_ci(confidence_level=level, method="wilson")
    iv = wilson(x, n, level)
    assert (iv.low, iv.high) == pytest.approx((want.low, want.high), abs=1e-12)
    assert iv.low <= x / n <= iv.high


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=1, max_size=300))
def test_one_trajectory_per_item_is_the_plain_wilson(outcomes):
    """Clustering changes nothing when no item has replicates: the design effect is exactly 1."""
    c = clustered_wilson(outcomes, [1] * len(outcomes))
    w = wilson(sum(outcomes), len(outcomes))
    assert (c.low, c.high) == pytest.approx((w.low, w.high), abs=1e-12)
    assert c.items == c.trials == len(outcomes)
    assert c.n_eff == pytest.approx(len(outcomes))


def test_all_right_with_replicates_counts_items_not_trajectories():
    """60 items × 3 replicates, all right: replicates of one item are not 180 independent trials."""
    c = clustered_wilson([3] * 60, [3] * 60)
    assert 0.9398 <= c.low <= 0.9402 and c.high == 1
    assert (c.items, c.trials, c.n_eff) == (60, 180, 60)
    assert clustered_wilson([0] * 60, [3] * 60).high == pytest.approx(1 - c.low)


def test_identical_replicates_give_the_item_level_interval():
    """Each item's replicates agree (intra-item correlation 1): the design effect is the replicate count, and the
    interval is the plain Wilson of the 60 items."""
    items = np.array([1] * 40 + [0] * 20)
    c = clustered_wilson(3 * items, np.full(60, 3))
    w = wilson(40, 60)
    assert c.design_effect == pytest.approx(3.0) and c.n_eff == pytest.approx(60)
    assert (c.low, c.high) == pytest.approx((w.low, w.high))


def test_design_effect_by_hand():
    """Four items, two trials each: successes 2, 0, 1, 1 → p̂ = 1/2; V = Σ(y − p̂·m)² / N² = (1 + 1 + 0 + 0) / 64;
    SRS variance = ¼ / 8; deff = (2/64) / (1/32) = 1 → n_eff = 8. Successes 2, 2, 0, 0: V = 4/64, deff = 2."""
    c = clustered_wilson([2, 0, 1, 1], [2, 2, 2, 2])
    assert c.design_effect == pytest.approx(1.0) and c.n_eff == pytest.approx(8)
    d = clustered_wilson([2, 2, 0, 0], [2, 2, 2, 2])
    assert d.design_effect == pytest.approx(2.0) and d.n_eff == pytest.approx(4)
    z = z_of(0.95)
    half = z * math.sqrt(0.25 / 4 + z * z / 64) / (1 + z * z / 4)
    assert (d.low, d.high) == pytest.approx((0.5 - half, 0.5 + half))  # Wilson at n = 4, p̂ = ½ (centre stays ½)


def test_items_without_a_trial_are_not_in_the_proportion():
    c = clustered_wilson([1, 0, 0], [1, 1, 0])  # e.g. conversion: the third item was not recalled
    assert (c.items, c.trials, c.estimate) == (2, 2, 0.5)
    assert clustered_wilson([0, 0], [0, 0]) is None
    with pytest.raises(ValueError):
        clustered_wilson([2], [1])
    with pytest.raises(ValueError):
        wilson(3, 2)


def test_clustered_interval_covers_where_the_naive_one_does_not():
    """Items differ in difficulty (p_i ~ Beta(0.35, 0.15), mean 0.7, intra-item correlation 2/3), three replicates
    each: the Wilson interval clustered by item covers the true 0.7 about 95% of the time; Wilson on the 180
    trajectories as if independent under-covers (its n is 2.3 times too large)."""
    rng = np.random.default_rng(12)
    hit_clustered = hit_naive = 0
    sims = 1500
    for _ in range(sims):
        p_item = rng.beta(0.35, 0.15, size=60)
        y = rng.binomial(3, p_item)
        c = clustered_wilson(y, np.full(60, 3))
        w = wilson(int(y.sum()), 180)
        hit_clustered += c.low <= 0.7 <= c.high
        hit_naive += w.low <= 0.7 <= w.high
    assert 0.92 <= hit_clustered / sims <= 0.975
    assert hit_naive / sims < 0.88
