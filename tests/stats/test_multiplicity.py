"""Holm's step-down adjustment against a hand computation and its defining properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.multiplicity import holm
from stats.significance import mcnemar_exact, paired_sign_test


def test_holm_by_hand():
    # sorted: 0.01 (×4 = 0.04), 0.02 (×3 = 0.06), 0.03 (×2 = 0.06, running max 0.06), 0.5 (×1 = 0.5)
    assert holm([0.03, 0.5, 0.01, 0.02]) == pytest.approx([0.06, 0.5, 0.04, 0.06])
    # a capped value and a step-down that the running maximum carries: 0.2·3 = 0.6, 0.25·2 = 0.5 → 0.6, 0.9
    assert holm([0.25, 0.2, 0.9]) == pytest.approx([0.6, 0.6, 0.9])
    assert holm([0.4, 0.4]) == pytest.approx([0.8, 0.8])
    assert holm([0.7, 0.6]) == pytest.approx([1.0, 1.0])


def test_holm_skips_missing_tests():
    """A row without a test is not in the family: m counts only the p-values present."""
    assert holm([None, 0.01, None, 0.04]) == pytest.approx([None, 0.02, None, 0.04])
    assert holm([]) == [] and holm([None]) == [None]
    with pytest.raises(ValueError):
        holm([1.2])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_holm_properties(ps):
    adj = holm(ps)
    m = len(ps)
    for p, a in zip(ps, adj, strict=True):
        assert p - 1e-12 <= a <= min(1.0, m * p) + 1e-12  # between raw and Bonferroni
    order = sorted(range(m), key=lambda i: ps[i])
    assert all(adj[order[j]] <= adj[order[j + 1]] + 1e-12 for j in range(m - 1))  # order kept
    # Holm's step-down rule at 0.05: reject the j-th smallest while p_(j) < 0.05 / (m − j + 1)
    rejected = set()
    for j, i in enumerate(order):
        if ps[i] < 0.05 / (m - j):
            rejected.add(i)
        else:
            break
    assert {i for i, a in enumerate(adj) if a < 0.05} == rejected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=80))
def test_sign_test_on_0_1_pairs_is_mcnemar(pairs):
    a = [float(x) for x, _ in pairs]
    b = [float(y) for _, y in pairs]
    s, m = paired_sign_test(a, b), mcnemar_exact(a, b)
    assert (s["first_higher"], s["second_higher"], s["p"]) == (m["only_first"], m["only_second"], m["p"])
