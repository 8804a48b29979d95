"""The plateau test: `plateau`, steps 1–6 of the procedure (the package's docstring) over a score array, from the
common support through the bootstrap to each transition's bound and decision and k*."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Any, TypedDict

import numpy as np

from stats.plateau.decisions import corrected_levels, k_star_first_of, k_star_of, normal_p_value, one_sided_z, step_down
from stats.plateau.records import PlateauResult, Transition
from stats.plateau.replicates import SIGMA_ZERO, cluster_spread, finite_population_correction, two_stage_spread
from stats.plateau.scores import BudgetLabel
from stats.plateau.support import Prepared, prepare
from stats.significance import sign_test

BORDERLINE_MC_SES = 3.0
CORRECTIONS = ("bonferroni", "holm")


def plateau(
    scores: Any,
    budgets: Sequence[BudgetLabel],
    population: int | None = None,
    alpha: float = 0.05,
    n_boot: int = 10_000,
    seed: int = 0,
    correction: str = "bonferroni",
    items: Sequence[Any] | None = None,
    two_stage: bool = False,
    matched_trials: bool = True,
) -> PlateauResult:
    """The scaling plateau of per-item scores over a budget grid (§2.3–2.5).

    `scores` is n×K (NaN = missing) or n×K×T with T trials per item and budget. `budgets` labels
    the K columns in any order (`parse_budget` sorts them). `population` is the size N of the task
    population the n items were randomly drawn from; leave it None (FPC = 1) when unknown or when
    the items are not a simple random sample. `items` names the rows, only to list the dropped ones.
    `matched_trials` pairs trial t across budgets (continuation protocol); trials missing at some
    budget are then dropped. Raises ValueError on n < 2 after common support, invalid N, scores
    outside [0, 1] or conflicting duplicate budgets.
    """
    _check_test_settings(correction, alpha, n_boot)
    prep = prepare(scores, budgets, matched_trials)
    n, K, T = prep.y.shape
    common = dict(
        budgets=list(prep.budgets),
        n=n,
        n_dropped=len(prep.dropped),
        missing_per_budget={str(b): c for b, c in zip(prep.budgets, prep.missing_per_budget, strict=True)},
        dropped_items=_dropped_items(prep, items),
        n_trials=T,
        n_trials_dropped=prep.n_trials_dropped,
        population=population,
        alpha=alpha,
        correction=correction,
        n_boot=n_boot,
        seed=seed,
        two_stage=two_stage,
        matched_trials=matched_trials,
    )
    if K == 1:
        return PlateauResult(
            accuracy=[float(prep.means[:, 0].mean()) if n else math.nan],
            fpc=finite_population_correction(population, n),
            z=None,
            transitions=[],
            k_star=None,
            k_star_first=None,
            k_star_sign_test=None,
            **common,
        )
    if n < 2:
        raise ValueError(f"n = {n} items on the common support; the bootstrap SD needs at least 2")
    fpc = finite_population_correction(population, n)
    diffs = np.diff(prep.means, axis=1)
    d_bar = diffs.mean(axis=0)
    if two_stage:
        sigma, scale, shown = two_stage_spread(prep, d_bar, fpc, n_boot, seed, matched_trials)
    else:
        sigma, scale, shown = cluster_spread(diffs, d_bar, fpc, n_boot, seed)
    sigma = np.where(sigma > SIGMA_ZERO, sigma, 0.0)
    transitions = _transitions(prep.budgets, diffs, d_bar, sigma, scale, alpha, correction, n_boot)
    significant = [t.significant for t in transitions]
    return PlateauResult(
        accuracy=[float(v) for v in prep.means.mean(axis=0)],
        fpc=fpc,
        z=one_sided_z(alpha, K - 1),
        transitions=transitions,
        k_star=k_star_of(significant),
        k_star_first=k_star_first_of(significant),
        k_star_sign_test=k_star_of([t.sign_test_significant for t in transitions]),
        boot_diffs=shown,
        **common,
    )


def _dropped_items(prep: Prepared, items: Sequence[Any] | None) -> list[str] | None:
    """The ids of the rows left off the common support (None when the rows are not named)."""
    if items is None:
        return None
    n = prep.y.shape[0]
    if len(items) != n + len(prep.dropped):
        raise ValueError(f"{len(items)} item ids for {n + len(prep.dropped)} rows")
    return [str(items[i]) for i in prep.dropped]


def _check_test_settings(correction: str, alpha: float, n_boot: int) -> None:
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}")
    if not 0 < alpha < 1:
        raise ValueError("alpha must be in (0, 1)")
    if n_boot < 2:
        raise ValueError("n_boot must be at least 2")


class _Bound(TypedDict):
    """A transition's bound and its Monte Carlo error: all None (and not borderline) for an untested transition."""

    z: float | None
    c_k: float | None
    mc_se: float | None
    level: float | None
    borderline: bool


def _transitions(
    budgets: Sequence[BudgetLabel],
    diffs: np.ndarray,
    d_bar: np.ndarray,
    sigma: np.ndarray,
    scale: np.ndarray,
    alpha: float,
    correction: str,
    n_boot: int,
) -> list[Transition]:
    """Bounds, decisions and cross-checks for every transition; `scale` is the SE the bound uses.

    A transition is significant iff its C_k > 0 at its level (and, under Holm, every transition
    with a smaller p-value was significant too), so `significant` is exactly C_k > 0 wherever a
    C_k is reported; Holm's untested transitions report none. The sign test gets the same
    multiplicity correction.
    """
    m = diffs.shape[1]
    p_normal = [normal_p_value(float(d_bar[k]), float(scale[k])) for k in range(m)]
    levels = corrected_levels(p_normal, alpha, correction)
    z = [NormalDist().inv_cdf(1 - level) for level in levels]
    c_k = [float(d_bar[k] - z[k] * scale[k]) for k in range(m)]
    significant, tested = step_down(p_normal, [c > 0 for c in c_k], correction)
    improved = [int((diffs[:, k] > 0).sum()) for k in range(m)]
    worsened = [int((diffs[:, k] < 0).sum()) for k in range(m)]
    p_sign = [sign_test(improved[k], worsened[k]) for k in range(m)]
    sign_levels = corrected_levels(p_sign, alpha, correction)
    sign_significant, _ = step_down(p_sign, [p_sign[k] < sign_levels[k] for k in range(m)], correction)
    out = []
    for k in range(m):
        mc_se = z[k] * float(scale[k]) / math.sqrt(2 * (n_boot - 1))
        constant = bool(np.ptp(diffs[:, k]) == 0)
        degenerate = constant and bool(sigma[k] == 0) and bool(d_bar[k] != 0)
        bound = _Bound(
            z=z[k], c_k=c_k[k], mc_se=mc_se, level=levels[k], borderline=bool(abs(c_k[k]) < BORDERLINE_MC_SES * mc_se)
        )
        if not tested[k]:
            bound = _Bound(z=None, c_k=None, mc_se=None, level=None, borderline=False)
        out.append(
            Transition(
                from_budget=budgets[k],
                to_budget=budgets[k + 1],
                d_bar=float(d_bar[k]),
                sigma_boot=float(sigma[k]),
                significant=significant[k],
                tested=tested[k],
                degenerate_variance=degenerate,
                improved=improved[k],
                worsened=worsened[k],
                sign_test_p=p_sign[k],
                sign_test_significant=sign_significant[k],
                p_normal=p_normal[k],
                **bound,
            )
        )
    return out
