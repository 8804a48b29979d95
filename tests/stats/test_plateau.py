"""The scaling plateau (docs/scaling.md "The plateau"): regression on released data, every §2.4 edge
case on constructed data with known answers, and properties of the bootstrap."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.plateau import parse_budget, plateau, scores_from_mapping, scores_from_rows

# The released per-item scores of the General AgentBench study (a copy of shared/data, kept in the repository so
# the regression runs wherever the tests do)
FIXTURE = Path(__file__).resolve().parents[1] / "data" / "general-agentbench-sequential.json"


@pytest.fixture(scope="module")
def released() -> dict:
    return json.loads(FIXTURE.read_text())


def study(released: dict, name: str):
    return scores_from_mapping(released[name])


# ------------------------------------------------------------------------------------------------
# regression: §2.7 reference numbers (the search studies, Table 13, are rebuilt in tests/paper/test_table13_plateau.py)


def test_qwen_mathhay_instability(released):
    budgets, _, matrix = study(released, "Qwen3-235B_mathhay_distraction_all_sequential")
    r = plateau(matrix, budgets)
    assert r.n == 75
    assert np.round(r.accuracy, 3).tolist() == [0.427, 0.360, 0.347, 0.347, 0.333, 0.400]
    last = r.transitions[-1]
    assert (last.improved, last.worsened) == (5, 0)
    assert last.sign_test_p == pytest.approx(1 / 32)
    assert not last.sign_test_significant  # 1/32 > α' = 0.01
    assert abs(last.c_k) < 0.003 and last.borderline
    assert r.k_star_borderline and r.k_star_sign_test == 1
    stars = {plateau(matrix, budgets, seed=s).k_star for s in range(20)}
    assert stars == {1, 6}  # the decision flips with the bootstrap seed


def test_gemini_swebench_sparse(released):
    budgets, _, matrix = study(released, "Gemini-2.5-Flash_swebench_distraction_all_sequential")
    first = plateau(matrix, budgets).transitions[0]
    assert (first.from_budget, first.to_budget) == ("48", "64")
    assert (first.improved, first.worsened) == (5, 0)
    assert 0 < first.c_k < 0.003 and first.significant
    assert first.sign_test_p == pytest.approx(1 / 32) and not first.sign_test_significant


def test_deepseek_mcpbench_fpc_zero_degeneracy(released):
    budgets, _, matrix = study(released, "DeepSeek-R1_mcpbench_distraction_all_sequential")
    r = plateau(matrix, budgets, population=52)
    assert round(r.accuracy[0], 3) == 0.588 and round(r.accuracy[-1], 3) == 0.394
    assert r.transitions[-1].d_bar == pytest.approx(0.001, abs=1e-9)
    assert r.k_star == 5 and r.plateau_budget == "128"
    assert plateau(matrix, budgets).k_star == 1


def test_to_dict_is_json(released):
    budgets, items, matrix = study(released, "Gemini-2.5-Flash_search_distraction_all_sequential")
    d = json.loads(json.dumps(plateau(matrix, budgets, items=items, n_boot=500).to_dict()))
    for key in (
        "k_star",
        "k_star_first",
        "plateau_budget",
        "budgets",
        "accuracy",
        "n",
        "n_dropped",
        "fpc",
        "z",
        "alpha",
        "correction",
        "no_significant_gain",
        "censored",
        "degenerate_variance",
        "fpc_zero",
        "borderline",
        "transitions",
    ):
        assert key in d
    for key in (
        "from",
        "to",
        "d_bar",
        "sigma_boot",
        "c_k",
        "significant",
        "borderline",
        "improved",
        "worsened",
        "sign_test_p",
        "mc_se",
    ):
        assert key in d["transitions"][0]
    assert d["transitions"][0]["from"] == "48" and d["plateau_budget"] == "64"


# ------------------------------------------------------------------------------------------------
# constructed data, §2.4 edge cases


def staircase(n: int, steps: list[int]) -> np.ndarray:
    """Binary n×K scores where item i is solved from budget k on iff i < cumulative steps[k]."""
    bars = np.cumsum(steps)
    return (np.arange(n)[:, None] < bars[None, :]).astype(float)


def test_no_significant_gain():
    y = staircase(60, [30, 0, 0, 0])
    r = plateau(y, [1, 2, 3, 4])
    assert [t.c_k for t in r.transitions] == [0.0, 0.0, 0.0]
    assert r.k_star == 1 and r.plateau_budget == 1 and r.k_star_first == 1
    assert r.no_significant_gain and not r.censored


def test_all_significant_is_censored():
    y = staircase(60, [0, 20, 20])
    r = plateau(y, ["8k", "16k", "32k"])
    assert all(t.c_k > 0 for t in r.transitions)
    assert r.k_star == 3 and r.k_star_first == 3 and r.plateau_budget == "32k"
    assert r.censored and not r.no_significant_gain


def test_non_monotone_max_rule_and_first_failure():
    y = staircase(60, [0, 20, 0, 20])
    r = plateau(y, [1, 2, 3, 4])
    assert [t.significant for t in r.transitions] == [True, False, True]
    assert r.k_star == 4 and r.k_star_first == 2


def test_all_zero_differences_are_not_significant():
    y = np.tile([[0.0, 0.0, 0.0]], (10, 1))
    y[:5] = 1.0
    r = plateau(y, [1, 2, 3])
    for t in r.transitions:
        assert (t.d_bar, t.sigma_boot, t.c_k) == (0.0, 0.0, 0.0)
        assert not t.significant and not t.degenerate_variance and not t.borderline
    assert r.k_star == 1


def test_constant_nonzero_difference_is_degenerate():
    y = np.column_stack([np.full(8, 0.2), np.full(8, 0.7), np.full(8, 0.4)])
    r = plateau(y, [1, 2, 3])
    up, down = r.transitions
    assert up.sigma_boot == 0.0 and up.c_k == pytest.approx(0.5) and up.significant and up.degenerate_variance
    assert down.c_k == pytest.approx(-0.3) and not down.significant and down.degenerate_variance
    assert r.degenerate_variance and r.k_star == 2


def assert_plain(value, path="$"):
    """Only the types json.dumps writes without a `default` (numpy scalars would sneak through as strings)."""
    if isinstance(value, dict):
        for key, v in value.items():
            assert type(key) is str, f"{path}: key {key!r}"
            assert_plain(v, f"{path}.{key}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            assert_plain(v, f"{path}[{i}]")
    else:
        assert value is None or type(value) in (str, int, float, bool), f"{path}: {type(value).__name__}"


def test_to_dict_is_plain_python_for_a_constant_transition():
    # all-zero and constant non-zero transitions used to carry numpy bools: json.dumps raised
    y = np.column_stack([np.full(8, 0.2), np.full(8, 0.7), np.full(8, 0.7)])
    d = plateau(y, [1, 2, 3], population=np.int64(20)).to_dict()
    assert_plain(d)
    assert json.loads(json.dumps(d))["transitions"][0]["degenerate_variance"] is True
    assert d["transitions"][1]["degenerate_variance"] is False and d["degenerate_variance"] is True


def test_population_equal_to_sample_sets_fpc_zero():
    y = staircase(40, [0, 1, 0])
    r = plateau(y, [1, 2, 3], population=40)
    assert r.fpc == 0.0 and r.fpc_zero
    assert r.transitions[0].c_k == pytest.approx(1 / 40)  # a single uptick counts
    assert r.k_star == 2
    assert plateau(y, [1, 2, 3]).k_star == 1


def test_fpc_formula_scales_the_bootstrap_sd():
    rng = np.random.default_rng(3)
    y = (rng.random((50, 3)) < [0.3, 0.45, 0.5]).astype(float)
    plain = plateau(y, [1, 2, 3], n_boot=2000)
    corrected = plateau(y, [1, 2, 3], n_boot=2000, population=200)
    fpc = math.sqrt((200 - 50) / (200 - 1))
    assert corrected.fpc == pytest.approx(fpc)
    for a, b in zip(plain.transitions, corrected.transitions, strict=True):
        assert b.sigma_boot == a.sigma_boot
        assert b.c_k == pytest.approx(a.d_bar - a.z * a.sigma_boot * fpc)
        assert b.mc_se == pytest.approx(a.mc_se * fpc)


@pytest.mark.parametrize("population", [9, 1, 0])
def test_invalid_population(population):
    with pytest.raises(ValueError):
        plateau(staircase(10, [0, 3]), [1, 2], population=population)


def test_single_budget_has_no_k_star():
    r = plateau(np.array([[1.0], [0.0], [1.0]]), ["64k"])
    assert r.k_star is None and r.k_star_first is None and r.plateau_budget is None
    assert r.transitions == [] and r.accuracy == [pytest.approx(2 / 3)]
    assert not (r.censored or r.no_significant_gain)
    assert r.to_dict()["k_star"] is None


def test_fewer_than_two_items_is_an_error():
    with pytest.raises(ValueError, match="at least 2"):
        plateau(np.array([[0.0, 1.0]]), [1, 2])
    with pytest.raises(ValueError, match="at least 2"):
        plateau(np.array([[0.0, 1.0], [np.nan, 1.0]]), [1, 2])  # one item left after common support


def test_unsorted_budgets_are_sorted():
    y = staircase(60, [0, 20, 0])
    shuffled = y[:, [2, 0, 1]]
    r = plateau(shuffled, ["128k", "32k", "64k"])
    ref = plateau(y, ["32k", "64k", "128k"])
    assert r.budgets == ["32k", "64k", "128k"]
    assert [t.c_k for t in r.transitions] == [t.c_k for t in ref.transitions]


def test_duplicate_budgets_merge_or_conflict():
    y = staircase(30, [0, 10])
    dup = np.column_stack([y[:, 0], y[:, 1], y[:, 1]])
    dup[3, 2] = np.nan  # a hole in one copy is filled from the other
    r = plateau(dup, ["8k", "16k", "16K"])
    assert r.budgets == ["8k", "16k"] and r.n == 30
    dup[4, 2] = 1 - dup[4, 1]
    with pytest.raises(ValueError, match="conflicting"):
        plateau(dup, ["8k", "16k", "16K"])


def test_common_support_reports_missing_per_budget():
    y = staircase(20, [0, 10, 5])
    y[0, 1] = np.nan
    y[1, 2] = np.nan
    y[2, 1] = y[2, 2] = np.nan
    r = plateau(y, [1, 2, 3], items=[f"q{i}" for i in range(20)], n_boot=500)
    assert r.n == 17 and r.n_dropped == 3
    assert r.missing_per_budget == {"1": 0, "2": 2, "3": 2}
    assert r.dropped_items == ["q0", "q1", "q2"]
    assert r.accuracy == pytest.approx(np.nanmean(y[3:], axis=0).tolist())


def test_scores_must_be_in_unit_interval():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        plateau(np.array([[0.0, 1.5], [0.0, 1.0]]), [1, 2])


def test_bad_arguments():
    y = staircase(10, [0, 3])
    with pytest.raises(ValueError):
        plateau(y, [1, 2, 3])
    with pytest.raises(ValueError):
        plateau(y, [1, 2], correction="fdr")
    with pytest.raises(ValueError):
        plateau(y, [1, 2], items=["a"])


# ------------------------------------------------------------------------------------------------
# multiplicity, cross-checks, Monte-Carlo control


def test_z_values_for_bonferroni():
    assert plateau(staircase(10, [0, 1, 1, 1, 1, 1]), range(6), n_boot=100).z == pytest.approx(2.326, abs=5e-4)
    assert plateau(staircase(10, [0, 1, 1, 1, 1]), range(5), n_boot=100).z == pytest.approx(2.241, abs=5e-4)


def holm_case() -> np.ndarray:
    """Transition 1: 40/100 improve. Transition 2: 9 improve, 3 worsen (d̄/SE ≈ 1.76, between
    z_0.95 = 1.645 and z_0.975 = 1.96), so Bonferroni rejects only the first and Holm both."""
    n = 100
    y = np.zeros((n, 3))
    y[:40, 1] = 1
    y[:, 2] = y[:, 1]
    y[40:49, 2] = 1
    y[:3, 2] = 0
    return y


def test_holm_is_more_powerful_than_bonferroni():
    from scipy.stats import norm

    y = holm_case()
    bonf = plateau(y, [1, 2, 3])
    holm = plateau(y, [1, 2, 3], correction="holm")
    assert [t.significant for t in bonf.transitions] == [True, False]
    assert [t.significant for t in holm.transitions] == [True, True]
    assert bonf.k_star == 2 and holm.k_star == 3
    assert [t.level for t in holm.transitions] == [0.025, 0.05]
    assert holm.transitions[1].z == pytest.approx(norm.ppf(0.95))
    assert holm.transitions[1].c_k > 0 > bonf.transitions[1].c_k


def test_holm_stops_at_first_failure():
    # both transitions have d̄/SE between 1.645 and 1.96; Holm tests the stronger (11 up, 4 down)
    # first at α/2, fails, and stops, so the other is not significant although its C_k at α is > 0
    n = 100
    y = np.zeros((n, 3))
    y[90:, 0] = 1
    y[:, 1] = y[:, 0]
    y[:9, 1], y[90:93, 1] = 1, 0
    y[:, 2] = y[:, 1]
    y[9:20, 2], y[93:97, 2] = 1, 0
    holm = plateau(y, [1, 2, 3], correction="holm")
    first, second = holm.transitions
    assert (first.improved, first.worsened, second.improved, second.worsened) == (9, 3, 11, 4)
    assert second.level == 0.025 and second.c_k < 0 and not second.significant and second.tested
    # Holm stopped at `second`: `first` was never tested, so it has no level and no bound (it used to
    # get a C_k > 0 at α, beside significant = false)
    assert not first.tested and not first.significant and not first.borderline
    assert (first.level, first.c_k, first.z, first.mc_se) == (None, None, None, None)
    assert first.d_bar > 0 and first.sign_test_p < 1  # the data columns are still reported
    d = holm.to_dict()["transitions"][0]
    assert d["tested"] is False and d["c_k"] is None and json.loads(json.dumps(d)) == d
    assert holm.k_star == 1
    assert all(t.tested for t in plateau(y, [1, 2, 3]).transitions)  # Bonferroni tests every transition


def test_sign_test_matches_scipy():
    from scipy.stats import binomtest

    y = holm_case()
    r = plateau(y, [1, 2, 3], n_boot=500)
    second = r.transitions[1]
    assert (second.improved, second.worsened) == (9, 3)
    assert second.sign_test_p == pytest.approx(binomtest(9, 12, 0.5, alternative="greater").pvalue)


def test_borderline_bound_from_monte_carlo_se():
    y = np.zeros((75, 6))
    y[:5, 5] = 1  # five improvements at the last step, as in §2.7's MathHay example
    r = plateau(y, [80, 128, 144, 160, 176, 192])
    last = r.transitions[-1]
    assert last.mc_se == pytest.approx(last.z * last.sigma_boot / math.sqrt(2 * (10_000 - 1)))
    assert abs(last.c_k) < 3 * last.mc_se and last.borderline
    assert r.k_star_borderline
    clear = plateau(staircase(60, [0, 20]), [1, 2])
    assert not clear.borderline and not clear.k_star_borderline


def test_joint_draw_shares_indices_across_transitions():
    # y3 − y2 equals y2 − y1 item by item, so a joint draw gives identical replicate columns
    rng = np.random.default_rng(0)
    step = (rng.random(40) < 0.4) * 0.25
    y = np.column_stack([np.full(40, 0.2), 0.2 + step, 0.2 + 2 * step])
    r = plateau(y, [1, 2, 3], n_boot=1000)
    assert np.allclose(r.boot_diffs[:, 0], r.boot_diffs[:, 1], atol=1e-12)
    assert r.transitions[0].sigma_boot == pytest.approx(r.transitions[1].sigma_boot)


def test_sigma_is_the_plain_bootstrap_sd():
    rng = np.random.default_rng(5)
    y = (rng.random((30, 3)) < 0.5).astype(float)
    r = plateau(y, [1, 2, 3], n_boot=3000, seed=11)
    ordered = y[np.lexsort(y.T[::-1])]
    idx = np.random.default_rng(11).integers(0, 30, size=(3000, 30))
    d = np.diff(ordered, axis=1)
    expected = d[idx].mean(axis=1).std(axis=0, ddof=1)
    assert [t.sigma_boot for t in r.transitions] == pytest.approx(expected.tolist(), rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    st.integers(min_value=3, max_value=25).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=4, max_size=4), min_size=n, max_size=n),
            st.permutations(range(n)),
        )
    )
)
def test_invariant_to_item_order(case):
    rows, perm = case
    y = np.array(rows)
    a = plateau(y, [1, 2, 3, 4], n_boot=200).to_dict()
    b = plateau(y[list(perm)], [1, 2, 3, 4], n_boot=200).to_dict()
    assert a == b


# ------------------------------------------------------------------------------------------------
# replicates (n × K × T)


def test_trials_are_averaged_within_items():
    rng = np.random.default_rng(2)
    y = (rng.random((30, 3, 4)) < 0.5).astype(float)
    r = plateau(y, [1, 2, 3], n_boot=1000)
    flat = plateau(y.mean(axis=2), [1, 2, 3], n_boot=1000)
    assert r.to_dict()["transitions"] == flat.to_dict()["transitions"]
    shuffled = y[:, :, rng.permutation(4)]
    assert plateau(shuffled, [1, 2, 3], n_boot=1000).to_dict()["transitions"] == r.to_dict()["transitions"]
    assert r.n_trials == 4


def test_two_stage_without_within_variance_is_the_cluster_bootstrap():
    rng = np.random.default_rng(4)
    y2 = (rng.random((40, 3)) < [0.3, 0.5, 0.55]).astype(float)
    y3 = np.repeat(y2[:, :, None], 3, axis=2)
    for population in (None, 100):
        simple = plateau(y2, [1, 2, 3], n_boot=2000, population=population)
        staged = plateau(y3, [1, 2, 3], n_boot=2000, population=population, two_stage=True)
        for a, b in zip(simple.transitions, staged.transitions, strict=True):
            assert b.sigma_boot == pytest.approx(a.sigma_boot * simple.fpc, rel=1e-9)
            assert b.c_k == pytest.approx(a.c_k, abs=1e-12)
    collapsed = plateau(y3, [1, 2, 3], n_boot=500, population=40, two_stage=True)
    assert all(t.sigma_boot == 0 for t in collapsed.transitions)


def test_two_stage_keeps_within_variance_when_fpc_is_zero():
    rng = np.random.default_rng(6)
    n, T = 60, 4
    y = (rng.random((n, 2, T)) < [[0.3], [0.6]]).astype(float)
    matched = plateau(y, [1, 2], population=n, two_stage=True)
    trial_d = y[:, 1, :] - y[:, 0, :]
    target = np.sqrt((trial_d.var(axis=1) / T).sum()) / n  # bootstrap within-variance, ddof 0
    assert matched.transitions[0].sigma_boot == pytest.approx(target, rel=0.05)
    fresh = plateau(y, [1, 2], population=n, two_stage=True, matched_trials=False)
    target_fresh = np.sqrt(((y[:, 0, :].var(axis=1) + y[:, 1, :].var(axis=1)) / T).sum()) / n
    assert fresh.transitions[0].sigma_boot == pytest.approx(target_fresh, rel=0.05)
    assert plateau(y, [1, 2], population=n).transitions[0].c_k == pytest.approx(matched.transitions[0].d_bar)


def test_matched_trials_drop_incomplete_trials():
    y = np.ones((5, 2, 3)) * np.array([0.0, 1.0])[None, :, None]
    y[0, 1, 2] = np.nan  # item 0, trial 2 missing at budget 2
    y[1, :, :] = np.nan
    y[1, 0, 0] = 0.0  # item 1 has no complete trial
    r = plateau(y, [1, 2], n_boot=200)
    assert r.n == 4 and r.n_dropped == 1 and r.n_trials_dropped == 2
    assert r.missing_per_budget == {"1": 0, "2": 1}
    fresh = plateau(y, [1, 2], n_boot=200, matched_trials=False)
    assert fresh.n == 4 and fresh.n_trials_dropped == 0


# ------------------------------------------------------------------------------------------------
# input shapes and labels


@pytest.mark.parametrize(
    "label,value",
    [
        ("64", 64),
        ("64k", 64_000),
        ("8K", 8_000),
        ("1.5M", 1_500_000),
        (" 30 ", 30),
        (128, 128),
        (0.5, 0.5),
        ("2g", 2e9),
    ],
)
def test_parse_budget(label, value):
    assert parse_budget(label) == value


@pytest.mark.parametrize("label", ["", "k", "64kb", "sixty", "-5", True])
def test_parse_budget_rejects(label):
    with pytest.raises(ValueError):
        parse_budget(label)


def test_scores_from_mapping_sorts_and_fills_missing():
    mapping = {"1.5M": {"q10": 1.0, "q2": 0.0}, "8K": {"q2": 1.0}, "64k": {"q2": None, "q10": 0.5}, "30": {}}
    budgets, items, matrix = scores_from_mapping(mapping)
    assert budgets == ["30", "8K", "64k", "1.5M"]
    assert items == ["q2", "q10"]
    expected = np.array([[np.nan, 1.0, np.nan, 0.0], [np.nan, np.nan, 0.5, 1.0]])
    assert np.array_equal(matrix, expected, equal_nan=True)


def test_scores_from_rows():
    rows = [("a", "64k", "1"), ("b", "64k", "0"), ("a", "8k", "0"), ("b", "8k", ""), ("a", "8k", 0.0)]
    budgets, items, matrix = scores_from_rows(rows)
    assert budgets == ["8k", "64k"] and items == ["a", "b"]
    assert np.array_equal(matrix, np.array([[0.0, 1.0], [np.nan, 0.0]]), equal_nan=True)
    with pytest.raises(ValueError, match="conflicting"):
        scores_from_rows([*rows, ("a", "8k", "1")])
    with pytest.raises(ValueError, match="expected"):
        scores_from_rows([("a", "8k")])


def test_scores_with_trials():
    budgets, items, y = scores_from_mapping({"16k": {"a": [1, 0], "b": 1}, "8k": {"a": [0, 0, 1], "b": None}})
    assert budgets == ["8k", "16k"] and items == ["a", "b"] and y.shape == (2, 2, 3)
    expected = np.array([[[0, 0, 1], [1, 0, np.nan]], [[np.nan] * 3, [1, np.nan, np.nan]]])
    assert np.array_equal(y, expected, equal_nan=True)
    rows = [("a", "8k", "0", "t2"), ("a", "8k", "1", "t10"), ("a", "16k", "", "t2"), ("a", "16k", "1", "t10")]
    budgets, items, y = scores_from_rows(rows)
    assert np.array_equal(y, np.array([[[0, 1], [np.nan, 1]]]), equal_nan=True)  # t2 before t10: natural order
    with pytest.raises(ValueError, match="line 3, field 'score': True is a boolean"):
        scores_from_rows([("a", "8k", 1), ("a", "16k", 0), ("b", "8k", True)])


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-6, 0.5), st.integers(1, 50), st.floats(-8, 8), st.floats(1e-3, 10))
def test_the_normal_quantile_and_tail_are_scipys(alpha, m, d_bar, scale):
    """The plateau's z and one-sided p came from scipy.stats (0.75 s to import, most of the first open of the
    Scaling screen); the standard library's give the same numbers."""
    from scipy.stats import norm

    from stats.plateau.decisions import normal_p_value, one_sided_z

    assert one_sided_z(alpha, m) == pytest.approx(float(norm.ppf(1 - alpha / m)), rel=1e-12, abs=1e-12)
    assert normal_p_value(d_bar, scale) == pytest.approx(float(norm.sf(d_bar / scale)), rel=1e-10, abs=1e-300)
