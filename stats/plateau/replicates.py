"""The plateau's bootstrap: one joint draw of items per replicate, shared by every transition (the cluster bootstrap
of item means), or items then trials within each drawn item (the two-stage bootstrap, §2.5), with the finite-population
correction; each gives the transitions' bootstrap SD, the scale the bound uses and the replicates shown."""

from __future__ import annotations

import math

import numpy as np

from stats.bootstrap import resample_counts
from stats.plateau.support import Prepared

SIGMA_ZERO = 1e-12  # bootstrap SDs below this are round-off of a constant column
_CHUNK_CELLS = 4_000_000  # floats per chunk of the two-stage bootstrap (about 32 MB)


def finite_population_correction(population: int | None, n: int) -> float:
    """Finite-population correction; 1 when the population size is unknown."""
    if population is None:
        return 1.0
    if population <= 1:
        raise ValueError(f"population N = {population} must exceed 1")
    if population < n:
        raise ValueError(f"population N = {population} is smaller than the sample n = {n}")
    return math.sqrt((population - n) / (population - 1))


def _cluster_replicates(diffs: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """B × (K−1) replicate mean differences under one joint draw of items."""
    counts = resample_counts(diffs.shape[0], n_boot, seed)
    return counts @ diffs / diffs.shape[0]


def _pack_valid(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Move each row's non-NaN entries (last axis) to the front; return them and their counts."""
    valid = ~np.isnan(values)
    order = np.argsort(~valid, axis=-1, kind="stable")
    packed = np.take_along_axis(values, order, axis=-1)
    return packed, valid.sum(axis=-1)


def _two_stage_replicates(
    prep: Prepared, d_bar: np.ndarray, fpc: float, n_boot: int, seed: int, matched_trials: bool
) -> np.ndarray:
    """Two-stage bootstrap (§2.5): resample items, then trials within each drawn item.

    Each replicate is split into its between-instance part (the drawn items' own means minus d̄)
    and its within-instance part (the trial resampling around those means); only the first is
    multiplied by the FPC. Trials are paired across budgets when `matched_trials` (continuation
    protocol), resampled independently per budget otherwise (fresh protocol).
    """
    n, K, T = prep.y.shape
    rng = np.random.default_rng(seed)
    items = rng.integers(0, n, size=(n_boot, n))
    item_diffs = np.diff(prep.means, axis=1)  # n × (K−1)
    if matched_trials:
        packed, counts = _pack_valid(np.diff(prep.y, axis=1))  # n × (K−1) × T; NaN trials are whole
        packed, m = packed.transpose(0, 2, 1), counts[:, 0]  # n × T × (K−1), trials per item
    else:
        packed, m = _pack_valid(prep.y)  # n × K × T, trials per item and budget
    chunk = max(1, _CHUNK_CELLS // max(1, n * K * T))
    out = np.empty((n_boot, K - 1))
    slots = np.arange(T)
    for start in range(0, n_boot, chunk):
        drawn = items[start : start + chunk]  # c × n
        between = item_diffs[drawn].mean(axis=1)  # c × (K−1)
        mi = m[drawn]  # c × n (matched) or c × n × K (unmatched)
        t = np.floor(rng.random((*mi.shape, T)) * mi[..., None]).astype(np.intp)
        used = slots < mi[..., None]
        if matched_trials:
            vals = packed[drawn[..., None], t]  # c × n × T × (K−1)
            within = (vals * used[..., None]).sum(axis=2) / mi[..., None]  # c × n × (K−1)
        else:
            vals = packed[drawn[..., None, None], np.arange(K)[None, None, :, None], t]  # c × n × K × T
            within = np.diff((vals * used).sum(axis=3) / mi, axis=2)  # c × n × (K−1)
        out[start : start + chunk] = d_bar + fpc * (between - d_bar) + (within.mean(axis=1) - between)
    return out


def two_stage_spread(
    prep: Prepared, d_bar: np.ndarray, fpc: float, n_boot: int, seed: int, matched_trials: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bootstrap SD, the scale the bound uses, the replicates shown) of the transitions, resampling items and
    then trials (the FPC is applied inside the replicates)."""
    boot = _two_stage_replicates(prep, d_bar, fpc, n_boot, seed, matched_trials)
    sigma = boot.std(axis=0, ddof=1)
    return sigma, np.where(sigma > SIGMA_ZERO, sigma, 0.0), boot


def cluster_spread(
    diffs: np.ndarray, d_bar: np.ndarray, fpc: float, n_boot: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bootstrap SD, the scale the bound uses, the replicates shown) of the transitions, resampling items; the
    FPC scales the bound and shrinks the shown replicates toward the mean."""
    boot = _cluster_replicates(diffs, n_boot, seed)
    sigma = boot.std(axis=0, ddof=1)
    return sigma, np.where(sigma > SIGMA_ZERO, sigma, 0.0) * fpc, d_bar + fpc * (boot - d_bar)
