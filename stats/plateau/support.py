"""The score array made ready for the bootstrap: budget columns sorted and duplicates merged, the common support
(the items scored at every budget, trials matched across budgets when asked), and a canonical item order so that the
result does not depend on the order rows arrive in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stats.plateau.scores import BudgetLabel, parse_budget


def _sort_and_merge_budgets(y: np.ndarray, budgets: Sequence[BudgetLabel]) -> tuple[np.ndarray, list[BudgetLabel]]:
    """Sort budget columns ascending; merge duplicate budgets, refusing conflicting scores."""
    values = [parse_budget(b) for b in budgets]
    order = sorted(range(len(values)), key=lambda j: values[j])
    labels: list[BudgetLabel] = []
    columns: list[np.ndarray] = []
    last: float | None = None
    for j in order:
        col = y[:, j]
        if last is not None and values[j] == last:
            kept = columns[-1]
            both = ~np.isnan(kept) & ~np.isnan(col)
            if np.any(kept[both] != col[both]):
                raise ValueError(f"budget {budgets[j]!r} appears twice with conflicting scores")
            columns[-1] = np.where(np.isnan(kept), col, kept)
            continue
        labels.append(budgets[j])
        columns.append(col)
        last = values[j]
    return np.stack(columns, axis=1), labels


@dataclass(frozen=True)
class Prepared:
    """Scores on the common support, in canonical item order."""

    y: np.ndarray  # n × K × T, NaN where a trial is not used
    means: np.ndarray  # n × K instance means
    budgets: list[BudgetLabel]
    missing_per_budget: list[int]
    dropped: np.ndarray  # indices into the input items
    n_trials_dropped: int


def prepare(scores: Any, budgets: Sequence[BudgetLabel], matched_trials: bool) -> Prepared:
    """The scores (n×K or n×K×T, NaN = missing) on their common support, in canonical item order; ValueError on a
    malformed array or conflicting duplicate budgets."""
    y = np.asarray(scores, dtype=np.float64)
    if y.ndim == 2:
        y = y[:, :, None]
    if y.ndim != 3:
        raise ValueError("scores must be n×K or n×K×T")
    if y.shape[1] != len(budgets):
        raise ValueError(f"scores have {y.shape[1]} budget columns but {len(budgets)} budgets were given")
    if len(budgets) == 0:
        raise ValueError("no budgets")
    finite = y[~np.isnan(y)]
    if finite.size and (finite.min() < 0 or finite.max() > 1 or not np.all(np.isfinite(finite))):
        raise ValueError("scores must lie in [0, 1] (NaN = missing)")
    if y.shape[2] == 1:
        merged, labels = _sort_and_merge_budgets(y[:, :, 0], list(budgets))
        y = merged[:, :, None]
    else:
        layers = [_sort_and_merge_budgets(y[:, :, t], list(budgets)) for t in range(y.shape[2])]
        labels = layers[0][1]
        y = np.stack([layer[0] for layer in layers], axis=2)
    present = ~np.isnan(y)
    missing_per_budget = [int(v) for v in (~present.any(axis=2)).sum(axis=0)]
    if matched_trials:
        complete = np.asarray(present.all(axis=1))  # n × T: trial t scored at every budget
        n_trials_dropped = int((present.any(axis=1) & ~complete).sum())
        y = np.where(complete[:, None, :], y, np.nan)
        keep = complete.any(axis=1)
    else:
        n_trials_dropped = 0
        keep = np.asarray(present.any(axis=2)).all(axis=1)
    dropped = np.flatnonzero(~keep)
    y = y[keep]
    with np.errstate(invalid="ignore"):
        means = np.nanmean(y, axis=2) if y.shape[0] else np.zeros((0, y.shape[1]))
    order = _canonical_order(means, y)
    return Prepared(y[order], means[order], labels, missing_per_budget, dropped, n_trials_dropped)


def _canonical_order(means: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Items sorted by their mean-score rows, ties broken by their trial data.

    Resampling then does not depend on the order rows arrive in, nor (for the cluster bootstrap,
    which sees only the means) on the order of trials within an item.
    """
    if y.shape[0] == 0:
        return np.arange(0)
    flat = np.nan_to_num(y.reshape(y.shape[0], -1), nan=-1.0)
    return np.lexsort(np.vstack([flat.T[::-1], means.T[::-1]]))
