"""Exact tests, agreement statistics and bootstrap intervals, against hand values and scipy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.bootstrap import bootstrap_means, percentile_interval, resample_counts
from stats.significance import (
    bootstrap_mean_ci,
    coverage_histogram,
    cronbach_alpha,
    item_total_correlations,
    mcnemar_exact,
    run_spread,
    sign_test,
    spearman,
)

# ------------------------------------------------------------------------------------------------
# McNemar and the sign test


def test_sign_test_hand_values():
    assert sign_test(5, 0) == pytest.approx(1 / 32)
    assert sign_test(0, 5) == 1.0
    assert sign_test(0, 0) == 1.0
    assert sign_test(2, 1) == pytest.approx(0.5)  # P(X ≥ 2 | Bin(3, ½)) = 4/8
    assert sign_test(3, 3, alternative="two-sided") == 1.0
    with pytest.raises(ValueError):
        sign_test(-1, 2)


def test_mcnemar_counts_and_p():
    a = [1, 1, 1, 1, 1, 0, 0, 1, 0, 0]
    b = [1, 0, 0, 0, 0, 0, 1, 1, 0, 0]
    r = mcnemar_exact(a, b)
    assert (r["both"], r["only_first"], r["only_second"], r["neither"]) == (2, 4, 1, 3)
    assert r["n_discordant"] == 5 and r["n"] == 10
    assert r["p"] == pytest.approx(0.375)  # 2·P(X ≤ 1 | Bin(5, ½)) = 2·6/32
    assert r["first"] == [6, 10] and r["second"] == [3, 10]
    assert mcnemar_exact([1, 0], [1, 0])["p"] == 1.0
    with pytest.raises(ValueError):
        mcnemar_exact([1, 0], [1])


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 400), st.integers(0, 400), st.sampled_from(["greater", "less", "two-sided"]))
def test_sign_test_matches_scipy_binomtest(improved, worsened, alternative):
    from scipy.stats import binomtest

    want = binomtest(improved, improved + worsened, 0.5, alternative=alternative).pvalue if improved + worsened else 1.0
    assert sign_test(improved, worsened, alternative) == pytest.approx(want, rel=1e-9, abs=1e-300)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=60))
def test_mcnemar_matches_scipy_binomtest(pairs):
    from scipy.stats import binomtest

    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    r = mcnemar_exact(a, b)
    if r["n_discordant"]:
        assert r["p"] == pytest.approx(binomtest(r["only_first"], r["n_discordant"], 0.5).pvalue)
    else:
        assert r["p"] == 1.0
    assert r["p"] == pytest.approx(mcnemar_exact(b, a)["p"])  # symmetric


# ------------------------------------------------------------------------------------------------
# Cronbach's alpha and corrected item-total correlation (rows = items, columns = runs), in the paper's
# orientation: the items are the components, the runs the respondents


MATRIX = np.array(
    [
        [1, 1, 1],
        [1, 1, 0],
        [1, 0, 0],
        [0, 0, 0],
        [1, 0, 1],
    ]
)


def test_cronbach_alpha_hand_value():
    # item variances across the 3 runs (ddof 1): 0, 1/3, 1/3, 0, 1/3 → 1; run totals 4, 2, 2 → variance 4/3;
    # k = 5 items: α = 5/4 · (1 − 1 / (4/3)) = 5/16 (runs as components would give 1.5·(1 − 0.8/1.3) ≈ 0.577)
    assert cronbach_alpha(MATRIX) == pytest.approx(5 / 16)


def test_cronbach_alpha_against_covariance_form():
    """α = k/(k−1)·(1 − tr C / ΣC) with C the covariance of the k items across the runs (respondents × components)."""
    rng = np.random.default_rng(0)
    ability = rng.normal(size=6)  # 6 runs
    m = (ability[None, :] + rng.normal(size=(40, 6)) > 0).astype(float)  # 40 items × 6 runs
    respondents = m.T  # runs × items, the psychometric layout
    cov = np.cov(respondents, rowvar=False, ddof=1)
    k = respondents.shape[1]
    assert cronbach_alpha(m) == pytest.approx(k / (k - 1) * (1 - np.trace(cov) / cov.sum()))
    assert cronbach_alpha(m[:, ::-1]) == pytest.approx(cronbach_alpha(m))  # run order is irrelevant
    assert cronbach_alpha(m[rng.permutation(40)]) == pytest.approx(cronbach_alpha(m))  # item order too


def test_cronbach_alpha_extremes():
    consistent = np.repeat(np.array([[1, 0, 1, 1]]), 5, axis=0)  # every item ranks the 4 runs the same way
    assert cronbach_alpha(consistent) == pytest.approx(1.0)
    assert cronbach_alpha(np.repeat(np.array([[1], [0], [1], [1]]), 4, axis=1)) is None  # every run scores 3/4
    assert cronbach_alpha(np.ones((5, 3))) is None
    with pytest.raises(ValueError):
        cronbach_alpha(np.ones((5, 1)))
    with pytest.raises(ValueError):
        cronbach_alpha(np.ones((1, 5)))
    with pytest.raises(ValueError):
        cronbach_alpha([[1, np.nan], [0, 1]])


def test_item_total_correlation_hand_value():
    r = item_total_correlations(MATRIX)
    # item 0 is solved by every model → undefined; item 3 by none → undefined
    assert np.isnan(r[0]) and np.isnan(r[3])
    rest = MATRIX.sum(axis=0) - MATRIX[1]  # models' totals without item 1: [3, 1, 2]
    assert rest.tolist() == [3, 1, 2]
    assert r[1] == pytest.approx(np.corrcoef(MATRIX[1], rest)[0, 1])
    for i in (1, 2, 4):
        assert r[i] == pytest.approx(np.corrcoef(MATRIX[i], MATRIX.sum(axis=0) - MATRIX[i])[0, 1])


def test_item_total_flags_an_inverted_item():
    models = np.array([[1, 1, 1, 0, 0]] * 6 + [[0, 0, 1, 1, 1]])  # last item: weak models get it
    r = item_total_correlations(models)
    assert r[-1] < 0 < r[0]


# ------------------------------------------------------------------------------------------------
# Spearman, coverage, run-to-run spread


def _enumerated_spearman_p(x, y):
    """Two-sided permutation p by brute force: every ordering of y against x, ρ recomputed by scipy."""
    import itertools

    from scipy.stats import spearmanr

    observed = abs(spearmanr(x, y).statistic)
    perms = list(itertools.permutations(y))
    return sum(abs(spearmanr(x, list(p)).statistic) >= observed - 1e-12 for p in perms) / len(perms)


def test_spearman_drops_missing_and_is_exact_for_small_n():
    from scipy.stats import spearmanr

    x = [1, 2, 3, 4, 5, None, 7]
    y = [2, 1, 4, 3, 6, 9, np.nan]
    r = spearman(x, y)
    ref = spearmanr([1, 2, 3, 4, 5], [2, 1, 4, 3, 6])
    assert r["n"] == 5 and r["rho"] == pytest.approx(ref.statistic)
    assert r["p"] == pytest.approx(_enumerated_spearman_p([1, 2, 3, 4, 5], [2, 1, 4, 3, 6]))
    assert r["p_method"] == "exact"
    assert spearman([1, 2], [2, 1]) == {"rho": None, "p": None, "n": 2}
    assert spearman([1, 1, 1], [1, 2, 3])["rho"] is None
    with pytest.raises(ValueError):
        spearman([1, 2, 3], [1, 2])


def test_spearman_four_runs_in_perfect_order_is_not_p_zero():
    r = spearman([0.1, 0.2, 0.3, 0.4], [10, 20, 30, 40])
    assert r["rho"] == pytest.approx(1.0) and r["p"] == pytest.approx(2 / 24)  # both perfect orders of 4! = 24


@settings(max_examples=25, deadline=None)
@given(
    st.integers(3, 6).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 4), min_size=n, max_size=n), st.lists(st.integers(0, 4), min_size=n, max_size=n)
        )
    )
)
def test_spearman_exact_p_equals_enumeration_with_ties(xy):
    from scipy.stats import spearmanr

    x, y = xy
    r = spearman(x, y)
    if r["rho"] is None:
        assert len(set(x)) == 1 or len(set(y)) == 1
        return
    assert r["rho"] == pytest.approx(spearmanr(x, y).statistic)
    assert r["p"] == pytest.approx(_enumerated_spearman_p(x, y))


def test_spearman_above_nine_uses_scipy():
    from scipy.stats import spearmanr

    x = list(range(12))
    y = [1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10]
    r = spearman(x, y)
    assert r["p_method"] == "asymptotic" and r["p"] == pytest.approx(spearmanr(x, y).pvalue)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([6, 40, 400, 3000]).flatmap(lambda m: st.tuples(*[st.integers(0, m)] * 4)))
def test_fisher_exact_equals_scipy(table):
    from scipy.stats import fisher_exact

    from stats.significance import fisher_exact_two_sided

    a, b, c, d = table
    assert fisher_exact_two_sided(a, b, c, d) == pytest.approx(
        fisher_exact([[a, b], [c, d]]).pvalue, rel=1e-8, abs=1e-300
    )


def test_fisher_exact_hand_values_and_ties():
    from stats.significance import fisher_exact_two_sided

    assert fisher_exact_two_sided(3, 0, 0, 2) == pytest.approx(0.1)  # 1/C(5,2) each extreme table
    assert fisher_exact_two_sided(5, 0, 0, 5) == pytest.approx(2 / 252)  # the two mirror tables
    assert fisher_exact_two_sided(2, 4, 4, 2) == pytest.approx(0.5670995670995670)  # symmetric: ties included
    assert fisher_exact_two_sided(3, 3, 3, 3) == 1.0 and fisher_exact_two_sided(0, 0, 3, 4) == 1.0
    with pytest.raises(ValueError):
        fisher_exact_two_sided(-1, 0, 0, 0)


def test_coverage_histogram_boundaries():
    three = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]])
    h = coverage_histogram(three)
    assert h["counts"] == {"low": 1, "mid": 2, "high": 1}  # exactly 1/3 and 2/3 are mid
    assert h["never"] == 1 and h["always"] == 1
    assert h["shares"]["mid"] == [2, 4]
    six = np.zeros((6, 6))
    for i, solved in enumerate([1, 2, 3, 4, 5, 6]):
        six[i, :solved] = 1
    assert coverage_histogram(six)["counts"] == {"low": 1, "mid": 3, "high": 2}
    assert coverage_histogram(six)["per_item"] == pytest.approx([1 / 6, 2 / 6, 3 / 6, 4 / 6, 5 / 6, 1])


def test_run_spread():
    r = run_spread([0.50, 0.55, 0.45])
    # population SD (ddof = 0, the paper's Table 17): √((0 + 0.05² + 0.05²) / 3), not the sample SD 0.05
    assert r["mean"] == pytest.approx(0.5) and r["std"] == pytest.approx(np.sqrt(0.005 / 3))
    assert r["std_ddof"] == 0 and "Table 17" in r["std_definition"]
    assert r["range"] == pytest.approx(0.10) and (r["min"], r["max"], r["n"]) == (0.45, 0.55, 3)
    assert run_spread([0.4])["std"] is None
    with pytest.raises(ValueError):
        run_spread([])


# ------------------------------------------------------------------------------------------------
# bootstrap


def test_resample_counts_rows_sum_to_n_and_are_seeded():
    c = resample_counts(7, 500, seed=9)
    assert c.shape == (500, 7) and (c.sum(axis=1) == 7).all()
    assert np.array_equal(c, resample_counts(7, 500, seed=9))
    assert not np.array_equal(c, resample_counts(7, 500, seed=10))


def test_bootstrap_means_equal_explicit_gather():
    values = np.random.default_rng(2).random((20, 3))
    reps = bootstrap_means(values, 300, seed=4)
    idx = np.random.default_rng(4).integers(0, 20, size=(300, 20))
    assert reps == pytest.approx(values[idx].mean(axis=1))
    with pytest.raises(ValueError):
        bootstrap_means(np.array([1.0, np.nan]), 10)


def test_percentile_interval():
    low, high = percentile_interval(np.arange(101), level=0.9)
    assert (low, high) == pytest.approx((5.0, 95.0))
    with pytest.raises(ValueError):
        percentile_interval(np.arange(10), level=1.0)


def test_bootstrap_ci_coverage_on_bernoulli():
    """200 samples of n = 200 from Bernoulli(0.3): the 95% interval should cover 0.3 about 95% of
    the time (percentile intervals run slightly low for small n; 0.90–0.98 is the accepted band)."""
    rng = np.random.default_rng(2024)
    hits = 0
    for rep in range(200):
        sample = (rng.random(200) < 0.3).astype(float)
        ci = bootstrap_mean_ci(sample, n_boot=2000, seed=rep)
        hits += ci.low <= 0.3 <= ci.high
    assert 0.90 <= hits / 200 <= 0.98


def test_bootstrap_ci_width_shrinks_with_n():
    rng = np.random.default_rng(1)
    small = bootstrap_mean_ci((rng.random(50) < 0.5).astype(float), n_boot=2000)
    large = bootstrap_mean_ci((rng.random(2000) < 0.5).astype(float), n_boot=2000)
    assert (large.high - large.low) < (small.high - small.low) / 3
    assert small.as_dict()["n"] == 50 and small.level == 0.95
    with pytest.raises(ValueError):
        bootstrap_mean_ci([1.0])
