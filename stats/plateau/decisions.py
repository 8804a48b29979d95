"""The plateau's decisions from the bounds: the normal quantile and one-sided p-value, the per-transition levels
(Bonferroni, or Holm's step-down, which leaves the transitions after its first failure untested), and k*."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist


def one_sided_z(alpha: float, m: int) -> float:
    """The standard normal's 1 − α/m quantile. The standard library's (`statistics.NormalDist`, Wichura's AS241
    as scipy's `ndtri`): importing scipy.stats for it cost 0.75 s, most of the first open of the TUI's Scaling
    screen (tests/stats checks it against scipy)."""
    return NormalDist().inv_cdf(1 - alpha / m)


def normal_p_value(d_bar: float, scale: float) -> float:
    """One-sided normal-theory p-value of d̄ > 0 given its (FPC-scaled) bootstrap SE: the upper tail, through
    erfc so that a far tail keeps its digits (1 − cdf would round it to 0)."""
    if scale > 0:
        return 0.5 * math.erfc(d_bar / scale / math.sqrt(2))
    return 0.0 if d_bar > 0 else 1.0


def _holm_order(p_values: Sequence[float]) -> list[int]:
    """Transitions from the smallest p-value up (ties by budget order)."""
    return sorted(range(len(p_values)), key=lambda j: (p_values[j], j))


def corrected_levels(p_values: Sequence[float], alpha: float, correction: str) -> list[float]:
    """Per-transition test level: α/m for Bonferroni, α/(m − rank) for Holm's step-down."""
    m = len(p_values)
    if correction == "bonferroni":
        return [alpha / m] * m
    levels = [0.0] * m
    for rank, k in enumerate(_holm_order(p_values)):
        levels[k] = alpha / (m - rank)
    return levels


def step_down(p_values: Sequence[float], passed: Sequence[bool], correction: str) -> tuple[list[bool], list[bool]]:
    """(significant, tested) per transition.

    Bonferroni tests every transition and keeps each test's own verdict. Holm tests in p order and
    stops at the first failure: the transitions after it are *not tested* (no level is reached for
    them, so they carry no bound rather than a bound at a level Holm never used).
    """
    if correction == "bonferroni":
        return [bool(x) for x in passed], [True] * len(passed)
    significant = [False] * len(passed)
    tested = [False] * len(passed)
    for k in _holm_order(p_values):
        tested[k] = True
        if not passed[k]:
            break
        significant[k] = True
    return significant, tested


def k_star_of(significant: Sequence[bool]) -> int:
    """max{k : significant} + 1 over transitions k = 1..K−1 (1 when none)."""
    hits = [k for k, s in enumerate(significant, start=1) if s]
    return (max(hits) + 1) if hits else 1


def k_star_first_of(significant: Sequence[bool]) -> int:
    """min{k : not significant} (K when every transition is significant)."""
    for k, s in enumerate(significant, start=1):
        if not s:
            return k
    return len(significant) + 1
