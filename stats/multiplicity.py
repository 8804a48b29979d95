"""Holm's step-down adjustment: the p-values of one comparison, read together.

A comparison of two runs tests a dozen axes at once (accuracy, recall and conversion per split, cap rates);
announcing the smallest raw p as "the" difference would find one by chance far more often than 5% of the
time. Holm (1979) controls the family-wise error rate at the nominal level under any dependence between the
tests (the axes of one comparison share items, so they are dependent) and is uniformly more powerful than
Bonferroni.

Adjusted p of the test with the j-th smallest raw p (j = 1..m): max over i ≤ j of min(1, (m − i + 1)·p_(i)),
so the adjusted values keep the order of the raw ones. A test is rejected at α when its adjusted p < α,
which is exactly Holm's step-down rule.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["holm"]


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values, in the input order; a None (no test) stays None and is not in the family.

    m is the number of p-values that are not None. Ties keep their input order (the adjusted values of
    tied raw p-values are equal either way).
    """
    present = [(p, i) for i, p in enumerate(pvalues) if p is not None]
    for p, _ in present:
        if not 0 <= p <= 1:
            raise ValueError(f"a p-value lies in [0, 1], got {p}")
    m = len(present)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(present, key=lambda pi: pi[0])):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out
