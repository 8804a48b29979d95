"""Wilson score intervals for proportions (accuracy, recalls, conversion, cap rates), clustered by item.

Why Wilson and not the bootstrap: a percentile bootstrap of a proportion at 60/60 resamples only ones and
reads [1, 1], as if a perfect score on 60 items proved a perfect agent. The Wilson score interval (Wilson
1927; Agresti & Coull 1998; Brown, Cai & DasGupta 2001) inverts the score test and stays honest at the
edges: 60/60 reads [0.940, 1].

Why clustering: with several trajectories per item (replicates), trajectories of one item are correlated,
so 3 × 60 trajectories carry less information than 180 independent ones (pseudo-replication,
docs/scaling.md "The plateau"). The interval is then Wilson's formula at the **effective sample size** of the
design (Kish's design effect; Korn & Graubard 1998 use the same effective n for survey proportions):

* per item i: y_i = successes, m_i = trials (trajectories in the denominator); items with m_i = 0 are not
  in the proportion; N = Σ m_i trials, k = number of items with m_i > 0, p̂ = Σ y_i / N;
* the between-item (cluster-robust, linearised ratio-estimator) variance V = Σ_i (y_i − p̂·m_i)² / N²,
  without a small-sample factor, so that one trajectory per item gives V = p̂(1 − p̂)/N exactly;
* design effect deff = V / (p̂(1 − p̂)/N), floored at 1 (replicates never make the interval narrower than
  independent trajectories would); n_eff = N / deff;
* when p̂ is 0 or 1, V = 0 and deff is undefined: the data say nothing about how replicates of one item
  agree, so the conservative n_eff = k (replicates of an item count as one) is used — 60 items × 3
  replicates all right read like 60/60, [0.940, 1], not like 180/180;
* the interval is Wilson's formula with n = n_eff and p̂ unchanged (the successes n_eff·p̂ need not be whole).

With one trajectory per item every variant above gives the plain Wilson interval on N.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TypedDict

import numpy as np

__all__ = ["WilsonInterval", "clustered_wilson", "wilson", "z_of"]


def z_of(level: float) -> float:
    """The two-sided standard-normal quantile of a confidence level (1.959964… at 95%)."""
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    return NormalDist().inv_cdf((1 + level) / 2)


def wilson_bounds(p: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score bounds of a proportion p observed on n (possibly effective, non-integer) trials."""
    if n <= 0:
        raise ValueError("a proportion needs at least one trial")
    if not 0 <= p <= 1:
        raise ValueError("a proportion lies in [0, 1]")
    z2 = z_of(level) ** 2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = math.sqrt(z2) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low, high = centre - half, centre + half
    # at p = 0 or 1 one bound is exactly the edge (algebraically); keep it there, not 1e-17 away
    return (0.0 if p == 0 else max(0.0, low)), (1.0 if p == 1 else min(1.0, high))


class WilsonRecord(TypedDict):
    """A Wilson interval as a report prints it (`WilsonInterval.as_dict`)."""

    estimate: float
    low: float
    high: float
    level: float
    method: str
    successes: float
    trials: float
    items: int
    n_eff: float
    design_effect: float


@dataclass(frozen=True)
class WilsonInterval:
    """A Wilson interval with the counts it was computed from and its design (items, effective n)."""

    estimate: float
    low: float
    high: float
    level: float
    successes: float
    trials: float  # N: trajectories in the denominator
    items: int  # k: items with at least one trajectory in the denominator
    n_eff: float  # the effective sample size Wilson's formula used
    design_effect: float

    def as_dict(self) -> WilsonRecord:
        return WilsonRecord(
            estimate=self.estimate,
            low=self.low,
            high=self.high,
            level=self.level,
            method="wilson" if self.items == self.trials else "wilson, clustered by item",
            successes=self.successes,
            trials=self.trials,
            items=self.items,
            n_eff=self.n_eff,
            design_effect=self.design_effect,
        )


def wilson(successes: float, trials: float, level: float = 0.95) -> WilsonInterval:
    """The plain Wilson score interval of successes / trials (independent trials)."""
    if trials <= 0:
        raise ValueError("a proportion needs at least one trial")
    if not 0 <= successes <= trials:
        raise ValueError("successes must lie in [0, trials]")
    p = successes / trials
    low, high = wilson_bounds(p, trials, level)
    return WilsonInterval(p, low, high, level, successes, trials, int(trials), float(trials), 1.0)


def clustered_wilson(
    successes: Sequence[float] | np.ndarray, trials: Sequence[float] | np.ndarray, level: float = 0.95
) -> WilsonInterval | None:
    """Wilson interval of Σ successes / Σ trials over items (clusters), at the design's effective n.

    `successes[i]` and `trials[i]` are item i's counts over its trajectories (see the module docstring for
    the method). None when no item has a trial (the proportion is undefined, not 0).
    """
    y = np.asarray(successes, dtype=np.float64).ravel()
    m = np.asarray(trials, dtype=np.float64).ravel()
    if y.shape != m.shape:
        raise ValueError("one success count and one trial count per item")
    if (m < 0).any() or (y < 0).any() or (y > m + 1e-9).any():
        raise ValueError("each item needs 0 ≤ successes ≤ trials")
    keep = m > 0
    y, m = y[keep], m[keep]
    k = int(m.size)
    if k == 0:
        return None
    total, hits = float(m.sum()), float(y.sum())
    p = hits / total
    if p in (0.0, 1.0):
        n_eff = float(k)
        deff = total / k
    else:
        v_cluster = float(((y - p * m) ** 2).sum()) / total**2
        deff = max(1.0, v_cluster / (p * (1 - p) / total))
        n_eff = total / deff
    low, high = wilson_bounds(p, n_eff, level)
    return WilsonInterval(p, low, high, level, hits, total, k, n_eff, deff)
