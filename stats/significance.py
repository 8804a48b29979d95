"""Significance tests and agreement statistics over paired or item × run/model correctness.

Orientation used throughout: rows are **benchmark items** (questions), columns are **runs or
models**; a cell is 1 when that run answered that item correctly.

* McNemar and the sign test compare two paired conditions on the same items exactly (binomial on
  discordant pairs), because the paired normal approximation fails with few discordant items.
* Cronbach's α treats the *benchmark items* as the k components of a test and the runs (models) as
  the respondents who sit it (AgentHop §4.4 / Appendix E.1, the paper's α = 0.997 over 19 models):
  a high α means the items rank the runs consistently, i.e. the benchmark's total score is a
  reliable measure of an agent. (The transposed reading, runs as components, says instead whether
  the runs agree on which items are hard; it is not the paper's number.)
* The corrected item-total correlation is per *benchmark item* (per component, in the same
  orientation): the Pearson correlation, across the runs (respondents), between that item's
  correctness and the run's total over all *other* items ("corrected": the item is removed from the
  total so it cannot correlate with itself). A negative value flags an item that strong runs miss
  and weak runs get right (a suspicious key or a lucky guess).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, TypedDict

import numpy as np

from stats.bootstrap import Interval, bootstrap_mean_ci
from stats.ratio import Pair, Ratio


class CoverageHistogram(TypedDict):
    """How many runs solve each item, bucketed low / mid / high."""

    n_items: int
    n_runs: int
    counts: dict[str, int]
    shares: dict[str, Pair]
    never: int
    always: int
    per_item: list[float]


class RunSpread(TypedDict):
    """Run-to-run spread of replicate scores (population SD)."""

    n: int
    mean: float
    std: float | None
    std_ddof: int
    std_definition: str
    min: float
    max: float
    range: float


class SignTest(TypedDict):
    """Exact two-sided sign test of paired per-item values."""

    n: int
    first_higher: int
    second_higher: int
    n_discordant: int
    p: float


__all__ = [
    "Interval",
    "bootstrap_mean_ci",
    "coverage_histogram",
    "cronbach_alpha",
    "fisher_exact_two_sided",
    "item_total_correlations",
    "mcnemar_exact",
    "paired_sign_test",
    "run_spread",
    "sign_test",
    "spearman",
]

# scipy.stats is imported inside the functions that need it: importing it costs seconds, and a panel
# report over many runs needs none of it (Fisher's test below is numpy only).


def sign_test(improved: int, worsened: int, alternative: str = "greater") -> float:
    """Exact sign test p-value on the discordant pairs (ties carry no information and are ignored).

    `alternative="greater"` tests improvement (one-sided, as the plateau needs); "less" and
    "two-sided" are also accepted. With no discordant pair the p-value is 1. Binomial(n, ½) tails in
    numpy (SciPy's `binomtest` gives the same values; importing it costs seconds).
    """
    if improved < 0 or worsened < 0:
        raise ValueError("counts must be non-negative")
    if alternative not in ("greater", "less", "two-sided"):
        raise ValueError("alternative must be 'greater', 'less' or 'two-sided'")
    total = improved + worsened
    if total == 0:
        return 1.0
    lf = log_factorial_table(total)
    k = np.arange(total + 1)
    pmf = np.exp(lf[total] - lf[k] - lf[total - k] - total * math.log(2))
    if alternative == "greater":
        return float(min(1.0, pmf[improved:].sum()))
    if alternative == "less":
        return float(min(1.0, pmf[: improved + 1].sum()))
    low = min(improved, worsened)  # Bin(n, ½) is symmetric: both tails as extreme as the observed count
    return float(min(1.0, 2 * pmf[: low + 1].sum())) if 2 * low != total else 1.0


def mcnemar_exact(first: Sequence[Any], second: Sequence[Any]) -> dict[str, Any]:
    """Exact two-sided McNemar test of two paired 0/1 vectors over the same items.

    `only_first` counts items the first condition got right and the second wrong, `only_second`
    the reverse; p is the two-sided binomial test of `only_first` out of the discordant total at
    1/2. Call it on the items both conditions should be compared on (e.g. common recalled items).
    """
    a = np.asarray(first, dtype=bool)
    b = np.asarray(second, dtype=bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("McNemar needs two paired 1-d vectors of equal length")
    only_first = int((a & ~b).sum())
    only_second = int((~a & b).sum())
    return {
        "n": int(a.size),
        "both": int((a & b).sum()),
        "neither": int((~a & ~b).sum()),
        "only_first": only_first,
        "only_second": only_second,
        "n_discordant": only_first + only_second,
        "p": sign_test(only_first, only_second, alternative="two-sided"),
        "first": Ratio(int(a.sum()), int(a.size)).as_list(),
        "second": Ratio(int(b.sum()), int(b.size)).as_list(),
    }


def _matrix(matrix: Any) -> np.ndarray:
    arr = np.asarray(matrix, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError("expected an items × models (or runs) matrix")
    if np.isnan(arr).any():
        raise ValueError("the matrix has missing cells; use items every model answered")
    return arr


def cronbach_alpha(matrix: Any) -> float | None:
    """Cronbach's α of an items × runs correctness matrix, with the **items as the k components** and the
    runs as the respondents (the paper's orientation, AgentHop Appendix E.1).

    α = k/(k−1) · (1 − Σ_i var(item i across runs) / var(run totals)), k = number of items, variances
    with ddof = 1 over the runs (the ddof cancels in the ratio). None when the run totals do not vary
    (every run scores the same): reliability is then undefined, not 0 or 1.
    """
    arr = _matrix(matrix)
    k, runs = arr.shape
    if k < 2 or runs < 2:
        raise ValueError("Cronbach's alpha needs at least 2 items and 2 runs")
    total_var = arr.sum(axis=0).var(ddof=1)
    if total_var == 0:
        return None
    return float(k / (k - 1) * (1 - arr.var(axis=1, ddof=1).sum() / total_var))


def item_total_correlations(matrix: Any) -> np.ndarray:
    """Corrected item-total correlation per benchmark item (row) of an items × runs matrix, in the
    orientation of `cronbach_alpha` (items are the components, runs the respondents).

    For item i: Pearson correlation, across the runs, between the item's correctness and each run's
    total over the *other* items (the item is removed from the total so it cannot correlate with
    itself). NaN where either vector is constant (e.g. every run got the item right).
    """
    arr = _matrix(matrix)
    n, k = arr.shape
    if k < 3 or n < 2:
        raise ValueError("item-total correlations need at least 2 items and 3 models")
    rest = arr.sum(axis=0)[None, :] - arr  # n × k: model totals without item i
    x = arr - arr.mean(axis=1, keepdims=True)
    y = rest - rest.mean(axis=1, keepdims=True)
    denom = np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (x * y).sum(axis=1) / denom
    return np.where(denom > 0, r, np.nan)


EXACT_SPEARMAN_MAX_N = 9  # 9! = 362,880 orderings: enumerated in well under a second


def spearman(x: Sequence[Any], y: Sequence[Any]) -> dict[str, Any]:
    """Spearman's ρ over the pairs where both values are present, with a two-sided p-value.

    For n ≤ 9 the p-value is exact: the share of all n! orderings of y's ranks against x's whose |ρ|
    is at least the observed |ρ| (SciPy's default is the t approximation, which says p = 0.0 for four
    runs in perfect order where the exact p is 1/12). Above that, SciPy's asymptotic p; `p_method`
    says which. With fewer than 3 pairs, or a constant side, rho and p are None.
    """
    xs = np.asarray([math.nan if v is None else v for v in x], dtype=np.float64)
    ys = np.asarray([math.nan if v is None else v for v in y], dtype=np.float64)
    if xs.shape != ys.shape:
        raise ValueError("x and y must have the same length")
    keep = ~np.isnan(xs) & ~np.isnan(ys)
    xs, ys = xs[keep], ys[keep]
    n = int(xs.size)
    if n < 3 or np.ptp(xs) == 0 or np.ptp(ys) == 0:
        return {"rho": None, "p": None, "n": n}
    if n <= EXACT_SPEARMAN_MAX_N:
        rx, ry = average_ranks(xs), average_ranks(ys)
        rho = _pearson(rx, ry)
        return {"rho": rho, "p": spearman_exact_p(rx, ry), "n": n, "p_method": "exact"}
    from scipy.stats import spearmanr

    result = spearmanr(xs, ys)
    return {"rho": float(result.statistic), "p": float(result.pvalue), "n": n, "p_method": "asymptotic"}


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties given their average rank (as Spearman's ρ uses them)."""
    arr = np.asarray(values, dtype=np.float64)
    order = np.argsort(arr, kind="stable")
    ranks = np.empty(arr.size)
    ranks[order] = np.arange(1, arr.size + 1)
    for v in np.unique(arr):
        tied = arr == v
        ranks[tied] = ranks[tied].mean()
    return ranks


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(), b - b.mean()
    return float((a * b).sum() / math.sqrt((a * a).sum() * (b * b).sum()))


@lru_cache(maxsize=4)
def _permutations(n: int) -> np.ndarray:
    return np.array(list(itertools.permutations(range(n))), dtype=np.int8)


def spearman_exact_p(rx: np.ndarray, ry: np.ndarray) -> float:
    """Two-sided exact permutation p of Spearman's ρ: under independence every ordering of y against x is
    equally likely, so p = share of the n! orderings with |ρ| ≥ |observed ρ| (ties kept as average ranks)."""
    rx = np.asarray(rx, dtype=np.float64) - np.mean(rx)
    ry = np.asarray(ry, dtype=np.float64) - np.mean(ry)
    perms = _permutations(rx.size)
    stats = np.abs(ry[perms] @ rx)  # ρ ∝ Σ rx·ry for fixed rank sets, so compare the sums
    observed = abs(float(ry @ rx))
    return float(np.mean(stats >= observed - 1e-9 * max(1.0, observed)))


FISHER_TIE = 1e-9  # relative: pmf values this close to the observed one count as "as extreme" (ties)


def fisher_exact_two_sided(a: int, b: int, c: int, d: int, log_factorials: np.ndarray | None = None) -> float:
    """Fisher's exact test of [[a, b], [c, d]], two-sided, as SciPy's `fisher_exact` computes it.

    p = Σ of the hypergeometric probabilities (margins fixed) that are ≤ the observed table's, the
    observed one included; 1 when a margin is 0 or the observed table is the most probable. Numpy
    only, vectorised over the support; `log_factorials` (log k! for k = 0..N) can be shared across
    many tables of the same total, as a run's 49 bigram tables are.
    """
    if min(a, b, c, d) < 0:
        raise ValueError("counts must be non-negative")
    row1, row2, col1 = a + b, c + d, a + c
    total = row1 + row2
    if 0 in (row1, row2, col1, total - col1):
        return 1.0
    lf = log_factorials if log_factorials is not None and log_factorials.size > total else log_factorial_table(total)
    x = np.arange(max(0, col1 - row2), min(row1, col1) + 1)
    logp = (
        lf[row1]
        - lf[x]
        - lf[row1 - x]
        + lf[row2]
        - lf[col1 - x]
        - lf[row2 - col1 + x]
        - lf[total]
        + lf[col1]
        + lf[total - col1]
    )
    observed = logp[a - x[0]]
    if observed + math.log1p(FISHER_TIE) >= logp.max():
        return 1.0
    return float(min(1.0, np.exp(logp[logp <= observed + math.log1p(FISHER_TIE)]).sum()))


def log_factorial_table(n: int) -> np.ndarray:
    """log k! for k = 0..n (via lgamma, accurate to rounding for every k)."""
    return np.array([math.lgamma(k + 1) for k in range(n + 1)])


def coverage_histogram(matrix: Any) -> CoverageHistogram:
    """How many runs solve each item, bucketed: low (< 1/3 of runs), mid, high (> 2/3).

    Boundaries are exact (integer arithmetic): exactly 1/3 or 2/3 of runs is `mid`. Also counts
    the items no run solved (`never`) and every run solved (`always`), which sit inside low/high.
    """
    arr = _matrix(matrix).astype(bool)
    n, runs = arr.shape
    if runs == 0:
        raise ValueError("no runs")
    solved = arr.sum(axis=1)
    low = int((3 * solved < runs).sum())
    high = int((3 * solved > 2 * runs).sum())
    counts = {"low": low, "mid": n - low - high, "high": high}
    return CoverageHistogram(
        n_items=n,
        n_runs=runs,
        counts=counts,
        shares={k: Ratio(v, n).as_list() for k, v in counts.items()},
        never=int((solved == 0).sum()),
        always=int((solved == runs).sum()),
        per_item=[float(v) for v in solved / runs],
    )


RUN_SPREAD_STD = "population SD (ddof = 0) of the replicate runs' scores, as the paper's Table 17"


def run_spread(values: Sequence[float]) -> RunSpread:
    """Run-to-run mean, standard deviation, min, max and range of replicate scores.

    `std` is the **population** SD (ddof = 0), as the paper's Table 17 reports run-to-run spread (the
    replicates are the whole set of runs described, not a sample to extrapolate from); `std_definition`
    says so in the output. `std` is None for a single replicate: one run says nothing about run-to-run
    variance.
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("need a non-empty 1-d list of replicate values")
    return RunSpread(
        n=int(arr.size),
        mean=float(arr.mean()),
        std=float(arr.std(ddof=0)) if arr.size > 1 else None,
        std_ddof=0,
        std_definition=RUN_SPREAD_STD,
        min=float(arr.min()),
        max=float(arr.max()),
        range=float(np.ptp(arr)),
    )


def paired_sign_test(first: Sequence[float], second: Sequence[float]) -> SignTest:
    """Exact two-sided sign test of paired per-item values (e.g. one run's and another's mean over an item's
    replicates): items where the two are equal carry no information and are dropped.

    On paired 0/1 outcomes (one trajectory per item) this *is* McNemar's exact test: the discordant items
    are the unequal pairs and `first_higher` / `second_higher` are McNemar's `only_first` / `only_second`.
    """
    a = np.asarray(first, dtype=np.float64)
    b = np.asarray(second, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError("the sign test needs two paired 1-d vectors of equal length")
    higher, lower = int((a > b).sum()), int((a < b).sum())
    return SignTest(
        n=int(a.size),
        first_higher=higher,
        second_higher=lower,
        n_discordant=higher + lower,
        p=sign_test(higher, lower, alternative="two-sided"),
    )
