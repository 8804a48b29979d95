"""Nonparametric bootstrap over items: one seeded index draw, shared by every statistic that needs it.

Everything here resamples *items* (instances, benchmark questions), never the samples or trials
inside an item: trials of one item are correlated, and resampling them as if independent would
understate the variance (pseudo-replication; docs/scaling.md "The plateau").

The draw is an (B, n) integer matrix from `numpy.random.default_rng(seed).integers(0, n, (B, n))`,
turned into a (B, n) count matrix so that the resampled means of many columns are one matrix
product. The same draw serves every column, which keeps paired comparisons paired and gives the
joint distribution (§2.3 step 3).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

DEFAULT_B = 10_000
DEFAULT_CHUNK = 1_000


def resample_counts(n: int, n_boot: int = DEFAULT_B, seed: int = 0) -> np.ndarray:
    """How often each of `n` items is drawn in each of `n_boot` replicates, as a (B, n) float array.

    Counts rather than indices, because `counts @ values / n` gives every replicate mean of every
    column at once without materialising a (B, n, m) gather. Row b sums to n.
    """
    if n < 1:
        raise ValueError("bootstrap needs at least one item")
    if n_boot < 2:
        raise ValueError("bootstrap needs at least two replicates")
    idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    idx += np.arange(n_boot)[:, None] * n
    return np.bincount(idx.ravel(), minlength=n_boot * n).reshape(n_boot, n).astype(np.float64)


def bootstrap_means(values: np.ndarray, n_boot: int = DEFAULT_B, seed: int = 0) -> np.ndarray:
    """Replicate means of each column of `values` (n,) or (n, m), under one joint draw.

    Returns (B,) for a 1-d input and (B, m) for a 2-d one. NaN is not allowed: decide what a
    missing item means before resampling.
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim not in (1, 2):
        raise ValueError("values must be 1-d or 2-d (items x statistics)")
    if np.isnan(arr).any():
        raise ValueError("values contain NaN; drop or impute missing items first")
    n = arr.shape[0]
    counts = resample_counts(n, n_boot, seed)
    return counts @ arr / n


@dataclass(frozen=True)
class Interval:
    """A bootstrap percentile interval with what is needed to judge it."""

    estimate: float
    low: float
    high: float
    level: float
    n: int
    n_boot: int
    seed: int

    @property
    def no_variation(self) -> bool:
        """Whether every resample gave the same value: [x, x] is then not an interval (the resampling could not
        vary, e.g. every item's value is equal), and must be shown as "no variation", not as certainty."""
        return no_variation(self.low, self.high)

    def as_dict(self) -> dict[str, float | int | bool]:
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "n": self.n,
            "n_boot": self.n_boot,
            "seed": self.seed,
            "no_variation": self.no_variation,
        }


def no_variation(low: float | None, high: float | None) -> bool:
    """Whether a resampled interval collapsed to a point (all replicates equal, to rounding)."""
    if low is None or high is None:
        return False
    return abs(high - low) <= 1e-12 * max(1.0, abs(low), abs(high))


def percentile_interval(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The (1-level)/2 and (1+level)/2 quantiles of the replicates (percentile method)."""
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    tail = (1 - level) / 2
    low, high = np.quantile(np.asarray(replicates, dtype=np.float64), [tail, 1 - tail])
    return float(low), float(high)


def bootstrap_mean_ci(values, level: float = 0.95, n_boot: int = DEFAULT_B, seed: int = 0) -> Interval:
    """Percentile bootstrap interval for the mean of per-item values (B = 10,000, seeded).

    Per-item values can be 0/1 correctness, an expected correctness (pass@k, a vote with random
    tie-break) or a paired difference; the interval is over the item population either way.
    """
    arr = np.asarray(values, dtype=np.float64).ravel()
    if arr.size < 2:
        raise ValueError("a bootstrap interval needs at least two items")
    reps = bootstrap_means(arr, n_boot, seed)
    low, high = percentile_interval(reps, level)
    return Interval(float(arr.mean()), low, high, level, int(arr.size), n_boot, seed)


def count_chunks(n: int, n_boot: int = DEFAULT_B, seed: int = 0, chunk: int = DEFAULT_CHUNK) -> Iterator[np.ndarray]:
    """The (B, n) resample-count matrix in row blocks of at most `chunk` replicates, from one seeded stream.

    Memory stays O(chunk · n) however large B is; every statistic computed from the same blocks shares
    the same draw (paired comparisons stay paired, ratios of one report come from one resample).
    """
    if n < 1:
        raise ValueError("bootstrap needs at least one item")
    rng = np.random.default_rng(seed)
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        idx = rng.integers(0, n, size=(size, n)) + np.arange(size)[:, None] * n
        yield np.bincount(idx.ravel(), minlength=size * n).reshape(size, n).astype(np.float64)


def by_cluster(clusters, *arrays) -> tuple[int, list[np.ndarray]]:
    """Rows of each array summed within each cluster (e.g. an item's replicates): (number of clusters, sums),
    clusters in the order they first appear.

    A ratio of sums over a resample of clusters is then Σ cluster numerators / Σ cluster denominators,
    the cluster (item) bootstrap: replicates of one item move together, as they are not independent.
    """
    _, first, inverse = np.unique(
        np.asarray(clusters, dtype=object).astype(str), return_index=True, return_inverse=True
    )
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    inverse = rank[inverse.ravel()]  # clusters in order of first appearance
    k = int(first.size)
    out = []
    for given in arrays:
        arr = np.asarray(given, dtype=np.float64)
        summed = np.zeros((k, *arr.shape[1:]))
        np.add.at(summed, inverse, arr)
        out.append(summed)
    return k, out


def ratio_intervals(
    num, den, clusters=None, level: float = 0.95, n_boot: int = DEFAULT_B, seed: int = 0, chunk: int = DEFAULT_CHUNK
) -> list[Interval | None]:
    """Percentile intervals of m ratio-of-sums statistics Σ num / Σ den over the same rows, one draw for all.

    `num` and `den` are (n, m). With `clusters` (one label per row) the bootstrap resamples clusters —
    items — with all their rows, so three replicates of 60 items are 60 resampled units, not 180. A
    replicate whose denominator is 0 has no value and is left out of the percentiles; a statistic with
    no point estimate or fewer than two valued replicates gets None. Memory O(chunk · n).
    """
    num = np.atleast_2d(np.asarray(num, dtype=np.float64).T).T
    den = np.atleast_2d(np.asarray(den, dtype=np.float64).T).T
    if num.shape != den.shape:
        raise ValueError("numerators and denominators must have one shape (rows x statistics)")
    if clusters is not None:
        if len(clusters) != num.shape[0]:
            raise ValueError("one cluster label per row")
        _, (num, den) = by_cluster(clusters, num, den)
    n, m = num.shape
    if n < 2:
        raise ValueError("a bootstrap interval needs at least two items")
    stacked = np.concatenate([num, den], axis=1)
    chunks: list[np.ndarray] = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for counts in count_chunks(n, n_boot, seed, chunk):
            sums = counts @ stacked
            chunks.append(sums[:, :m] / sums[:, m:])
        reps = np.concatenate(chunks, axis=0)
        point = num.sum(axis=0) / den.sum(axis=0)
    tail = (1 - level) / 2
    out: list[Interval | None] = []
    for j in range(m):
        col = reps[:, j][np.isfinite(reps[:, j])]
        if not np.isfinite(point[j]) or col.size < 2:
            out.append(None)
            continue
        low, high = np.quantile(col, [tail, 1 - tail])
        out.append(Interval(float(point[j]), float(low), float(high), level, n, n_boot, seed))
    return out


def paired_ratio_deltas(
    num_a, den_a, num_b, den_b, level: float = 0.95, n_boot: int = DEFAULT_B, seed: int = 0, chunk: int = DEFAULT_CHUNK
) -> list[tuple[float | None, float | None, float | None]]:
    """(Δ, low, high) of B − A for m ratio-of-sums statistics over the same n items, by a paired bootstrap.

    Each input is (n, m): column j holds item i's contribution to statistic j's numerator or
    denominator under run A or B (accuracy: correct / 1; conversion: correct-and-recalled /
    recalled; mean tokens: tokens / 1). Resampling items once for all columns and both runs keeps
    the comparison paired. A replicate whose denominator is 0 has no value and is left out of the
    percentiles; a statistic with no point estimate gets (None, None, None). The draw is made in
    chunks of `chunk` replicates (`count_chunks`) so memory stays O(chunk · n).
    """
    arrays = [np.atleast_2d(np.asarray(x, dtype=np.float64).T).T for x in (num_a, den_a, num_b, den_b)]
    n, m = arrays[0].shape
    if any(a.shape != (n, m) for a in arrays):
        raise ValueError("numerators and denominators must all be (items x statistics) of one shape")
    if n < 2:
        raise ValueError("a bootstrap interval needs at least two items")
    stacked = np.concatenate(arrays, axis=1)  # (n, 4m): one matrix product per chunk
    deltas = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for counts in count_chunks(n, n_boot, seed, chunk):
            sums = counts @ stacked
            na, da, nb, db = (sums[:, k * m : (k + 1) * m] for k in range(4))
            deltas.append(nb / db - na / da)
        reps = np.concatenate(deltas, axis=0)
        totals = stacked.sum(axis=0)
        point = totals[2 * m : 3 * m] / totals[3 * m :] - totals[:m] / totals[m : 2 * m]
    tail = (1 - level) / 2
    out: list[tuple[float | None, float | None, float | None]] = []
    for j in range(m):
        col = reps[:, j][np.isfinite(reps[:, j])]
        if not np.isfinite(point[j]) or col.size < 2:
            out.append((None, None, None))
            continue
        low, high = np.quantile(col, [tail, 1 - tail])
        out.append((float(point[j]), float(low), float(high)))
    return out
