"""Cronbach's α in the AgentHop paper's orientation (Appendix E.1, α = 0.997 over 19 models): the benchmark's
items are the components of the test, the models (runs) the respondents who sit it.

The paper's item × model matrix is not available here (/work/notes/paper_numbers.md): a panel shaped like the
paper's (19 runs × 1,011 items) is simulated from a Rasch model (P(right) = logistic(ability − difficulty)).
α must equal the psychometric formula on the respondents × components layout (an independent covariance
computation), and only this orientation gives the paper's magnitude: the transposed reading (runs as the
components, items as respondents) is a different, much lower number on the same panel.
"""

from __future__ import annotations

import numpy as np
import pytest

from stats.significance import cronbach_alpha, item_total_correlations

N_RUNS, N_ITEMS = 19, 1011


@pytest.fixture(scope="module")
def panel() -> np.ndarray:
    """items × runs correctness, seeded: abilities N(0, 1.5²), difficulties N(0, 1.5²)."""
    rng = np.random.default_rng(2609)
    ability = rng.normal(0, 1.5, N_RUNS)
    difficulty = rng.normal(0, 1.5, N_ITEMS)
    p = 1 / (1 + np.exp(-(ability[None, :] - difficulty[:, None])))
    return (rng.random(p.shape) < p).astype(float)


def alpha_of(respondents_by_components: np.ndarray) -> float:
    """α = k/(k−1)·(1 − tr C / ΣC), C the k × k covariance of the components across the respondents."""
    cov = np.cov(respondents_by_components, rowvar=False, ddof=1)
    k = cov.shape[0]
    return float(k / (k - 1) * (1 - np.trace(cov) / cov.sum()))


def test_alpha_has_items_as_components(panel):
    alpha = cronbach_alpha(panel)
    assert alpha == pytest.approx(alpha_of(panel.T), rel=1e-10)  # respondents = runs, components = items
    assert alpha > 0.99  # the paper's magnitude (0.997)
    transposed = alpha_of(panel)  # runs as components: what the workbench computed before
    assert transposed < 0.95 and abs(alpha - transposed) > 0.05


def test_item_total_correlation_is_corrected_and_in_the_same_orientation(panel):
    """Per item: Pearson r across the 19 runs between the item's 0/1 score and the run's total over the other
    1,010 items (the item left out of the total: "corrected")."""
    r = item_total_correlations(panel)
    totals = panel.sum(axis=0)
    for i in (0, 1, 500, 1010):
        x = panel[i]
        if x.std() == 0:
            assert np.isnan(r[i])
        else:
            assert r[i] == pytest.approx(np.corrcoef(x, totals - x)[0, 1])
    valued = r[~np.isnan(r)]
    assert valued.size > 900 and np.median(valued) > 0.3  # items measure the same ability the total does
