"""The sequential-scaling plateau: up to which budget does more budget still significantly help?

Implements the plateau of docs/scaling.md "The plateau" (the paper's Appendix A procedure) with every edge case of
§2.4. In short, for budgets b_1 < … < b_K and items i = 1..n scored y_{i,k} in [0, 1]:

1. common support: keep the items scored at every budget (and say how many were dropped);
2. paired differences d_{i,k} = y_{i,k+1} − y_{i,k}, mean d̄_k;
3. a *joint* bootstrap over items (one index draw per replicate, shared by every transition),
   σ_k = SD of the replicate means with ddof = 1;
4. FPC = sqrt((N − n)/(N − 1)) when the population size N is given, else 1;
5. a one-sided lower bound C_k = d̄_k − z_{1−α/(K−1)} · σ_k · FPC (Bonferroni; Holm optional);
6. k* = max{k : C_k > 0} + 1 with a strict inequality; the plateau budget is b_{k*}.

Why these conventions: the paired design removes between-item difficulty from each transition; the
joint draw keeps the transitions' dependence so simultaneous statements and plots stay coherent;
the strict ">" is what makes an all-zero transition (σ = 0, C = 0) non-significant.

Decisions the spec leaves open, fixed here:

* Items are put in a canonical order (lexicographic on their scores) before resampling, so the
  result is *exactly* invariant to the order rows arrive in, not only in distribution.
* A transition is `borderline` when |C_k| < 3 × its Monte-Carlo SE. The MC SE of C_k comes from the
  SE of a bootstrap SD estimate, σ/sqrt(2(B − 1)), times z·FPC (d̄_k itself has no MC error).
* An exact one-sided sign test per transition (improvements vs worsenings) is reported beside the
  normal-theory bound, because the bound is anti-conservative with few discordant pairs (§2.7).
* With T replicates per item (an n×K×T array), each item is first averaged over its trials and the
  instances are resampled (cluster bootstrap). With `two_stage=True` trials are also resampled
  inside each drawn item and the FPC multiplies only the between-instance part of each replicate
  (§2.5), so N = n does not erase run-to-run variance.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, TypedDict

import numpy as np

from stats.bootstrap import resample_counts
from stats.significance import sign_test

BORDERLINE_MC_SES = 3.0
CORRECTIONS = ("bonferroni", "holm")
_SIGMA_ZERO = 1e-12  # bootstrap SDs below this are round-off of a constant column
_CHUNK_CELLS = 4_000_000  # floats per chunk of the two-stage bootstrap (about 32 MB)

BudgetLabel = str | int | float

# ---------------------------------------------------------------------------------------------
# budget labels and input shapes


_BUDGET_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kKmMgG]?)\s*$")
_MULTIPLIER = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}


def parse_budget(label: BudgetLabel) -> float:
    """The numeric value of a budget label, so that "8K" < "64k" < "1.5M" and "30" < "128".

    Numbers pass through; strings are a decimal number with an optional k/M/G suffix (any case).
    A bare number keeps its own unit: "64" is 64, not 64,000 — a grid must use one convention.
    """
    if isinstance(label, bool):
        raise ValueError(f"not a budget label: {label!r}")
    if isinstance(label, (int, float, np.integer, np.floating)):
        value = float(label)
    else:
        match = _BUDGET_RE.match(str(label))
        if not match:
            raise ValueError(f"cannot parse budget label {label!r}")
        value = float(match.group(1)) * _MULTIPLIER[match.group(2).lower()]
    if not math.isfinite(value):
        raise ValueError(f"budget label {label!r} is not finite")
    return value


def _natural_key(text: str) -> list[Any]:
    """Sort key that orders "result_2" before "result_10"."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text)]


_MISSING = ("", "nan", "none", "null")


def _as_score(value: Any, where: str = "score") -> float:
    """A score as float in [0, 1]; None, "", "nan" (and NaN itself) become NaN, i.e. missing.

    Booleans are refused rather than read as 1/0: a true/false column is more often a flag that
    was mapped by mistake than a score (write 1 or 0). `where` names the cell in the message.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() in _MISSING):
        return math.nan
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{where}: {value!r} is a boolean, not a score (write 1 or 0)")
    if not isinstance(value, (int, float, str, np.integer, np.floating)):
        raise ValueError(f"{where}: expected a number in [0, 1], got {type(value).__name__} {value!r}")
    try:
        score = float(value)
    except ValueError:
        raise ValueError(f"{where}: {value!r} is not a number") from None
    if math.isnan(score):
        return math.nan
    if not 0 <= score <= 1:
        raise ValueError(f"{where}: score {value!r} is outside [0, 1]")
    return score


TrialScores = dict[int, float]  # trial index → score


def _trials_of(value: Any, where: str) -> TrialScores:
    """One JSON cell: a score (trial 0), or a list of scores, one per trial in trial order."""
    if isinstance(value, (list, tuple)):
        return {t: _as_score(v, f"{where}, trial {t}") for t, v in enumerate(value)}
    return {0: _as_score(value, where)}


def _matrix(cells: Mapping[str, Mapping[str, TrialScores]]) -> tuple[list[str], list[str], np.ndarray]:
    """{budget: {item: {trial: score}}} → budgets sorted numerically, items in natural order, and the
    n×K matrix (n×K×T when some item has more than one trial), NaN where missing."""
    budgets = sorted(cells, key=parse_budget)
    items = sorted({i for by_item in cells.values() for i in by_item}, key=_natural_key)
    row = {item: r for r, item in enumerate(items)}
    n_trials = max((max(t) + 1 for by_item in cells.values() for t in by_item.values() if t), default=1)
    y = np.full((len(items), len(budgets), n_trials), np.nan)
    for col, budget in enumerate(budgets):
        for item, trials in cells[budget].items():
            for t, score in trials.items():
                y[row[item], col, t] = score
    return budgets, items, (y[:, :, 0] if n_trials == 1 else y)


def scores_from_mapping(mapping: Mapping[Any, Any]) -> tuple[list[str], list[str], np.ndarray]:
    """({budget: {item: score}}) → (budgets sorted numerically, item ids, n×K matrix with NaN = missing).

    A score may also be a list: the item's T trials at that budget, in trial order (trial t of one
    item pairs across budgets when trials are matched). The matrix is then n×K×T, with NaN where an
    item has fewer trials. Items are the union over budgets in natural order; an item absent at a
    budget is missing there. Malformed cells raise ValueError naming the budget and item.
    """
    if not isinstance(mapping, Mapping):
        raise ValueError(f"expected an object {{budget: {{item: score}}}}, got {type(mapping).__name__}")
    cells: dict[str, dict[str, TrialScores]] = {}
    for budget, by_item in mapping.items():
        label = str(budget)
        parse_budget(label)
        if not isinstance(by_item, Mapping):
            raise ValueError(f"budget {label!r}: expected an object {{item: score}}, got {type(by_item).__name__}")
        target = cells.setdefault(label, {})
        for item, value in by_item.items():
            target[str(item)] = _trials_of(value, f"budget {label!r}, item {str(item)!r}")
    return _matrix(cells)


def scores_from_rows(rows: Iterable[Sequence[Any]], first_line: int = 1) -> tuple[list[str], list[str], np.ndarray]:
    """CSV-like (item, budget, score[, trial]) rows → the same triple as `scores_from_mapping`.

    An empty score is missing. With a trial column, trial labels (any text, ordered naturally)
    index the T trials, the same label meaning the same trial at every budget; without one each
    (item, budget) has one score. A repeated (item, budget, trial) is accepted only if it repeats
    the same score. Errors name the line (`first_line` is the number of the first row).
    """
    parsed: list[tuple[int, str, str, str, float]] = []
    for line, entry in enumerate(rows, start=first_line):
        if len(entry) not in (3, 4):
            raise ValueError(f"line {line}: expected (item, budget, score[, trial]), got {len(entry)} fields")
        item, budget = str(entry[0]), str(entry[1]).strip()
        try:
            parse_budget(budget)
        except ValueError as exc:
            raise ValueError(f"line {line}: {exc}") from None
        trial = str(entry[3]).strip() if len(entry) == 4 else ""
        parsed.append((line, item, budget, trial, _as_score(entry[2], f"line {line}, field 'score'")))
    index = {label: t for t, label in enumerate(sorted({p[3] for p in parsed}, key=_natural_key))}
    cells: dict[str, dict[str, TrialScores]] = {}
    for line, item, budget, trial, score in parsed:
        trials = cells.setdefault(budget, {}).setdefault(item, {})
        t = index[trial]
        if t in trials and not _same(trials[t], score):
            which = f" trial {trial!r}" if trial else ""
            raise ValueError(
                f"line {line}: item {item!r} at budget {budget!r}{which} has conflicting scores "
                f"{trials[t]} and {score}" + ("" if trial else " (several trials? add a trial column)")
            )
        trials[t] = score
    return _matrix(cells)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


# ---------------------------------------------------------------------------------------------
# preparing the score array


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
class _Prepared:
    """Scores on the common support, in canonical item order."""

    y: np.ndarray  # n × K × T, NaN where a trial is not used
    means: np.ndarray  # n × K instance means
    budgets: list[BudgetLabel]
    missing_per_budget: list[int]
    dropped: np.ndarray  # indices into the input items
    n_trials_dropped: int


def _prepare(scores: Any, budgets: Sequence[BudgetLabel], matched_trials: bool) -> _Prepared:
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
    return _Prepared(y[order], means[order], labels, missing_per_budget, dropped, n_trials_dropped)


def _canonical_order(means: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Items sorted by their mean-score rows, ties broken by their trial data.

    Resampling then does not depend on the order rows arrive in, nor (for the cluster bootstrap,
    which sees only the means) on the order of trials within an item.
    """
    if y.shape[0] == 0:
        return np.arange(0)
    flat = np.nan_to_num(y.reshape(y.shape[0], -1), nan=-1.0)
    return np.lexsort(np.vstack([flat.T[::-1], means.T[::-1]]))


# ---------------------------------------------------------------------------------------------
# the bootstrap


def _fpc(population: int | None, n: int) -> float:
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
    prep: _Prepared, d_bar: np.ndarray, fpc: float, n_boot: int, seed: int, matched_trials: bool
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


# ---------------------------------------------------------------------------------------------
# decisions


def _z(alpha: float, m: int) -> float:
    """The standard normal's 1 − α/m quantile. The standard library's (`statistics.NormalDist`, Wichura's AS241
    as scipy's `ndtri`): importing scipy.stats for it cost 0.75 s, most of the first open of the TUI's Scaling
    screen (tests/stats checks it against scipy)."""
    return NormalDist().inv_cdf(1 - alpha / m)


def _normal_p(d_bar: float, scale: float) -> float:
    """One-sided normal-theory p-value of d̄ > 0 given its (FPC-scaled) bootstrap SE: the upper tail, through
    erfc so that a far tail keeps its digits (1 − cdf would round it to 0)."""
    if scale > 0:
        return 0.5 * math.erfc(d_bar / scale / math.sqrt(2))
    return 0.0 if d_bar > 0 else 1.0


def _holm_order(p_values: Sequence[float]) -> list[int]:
    """Transitions from the smallest p-value up (ties by budget order)."""
    return sorted(range(len(p_values)), key=lambda j: (p_values[j], j))


def _levels(p_values: Sequence[float], alpha: float, correction: str) -> list[float]:
    """Per-transition test level: α/m for Bonferroni, α/(m − rank) for Holm's step-down."""
    m = len(p_values)
    if correction == "bonferroni":
        return [alpha / m] * m
    levels = [0.0] * m
    for rank, k in enumerate(_holm_order(p_values)):
        levels[k] = alpha / (m - rank)
    return levels


def _step_down(p_values: Sequence[float], passed: Sequence[bool], correction: str) -> tuple[list[bool], list[bool]]:
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


def _k_star(significant: Sequence[bool]) -> int:
    """max{k : significant} + 1 over transitions k = 1..K−1 (1 when none)."""
    hits = [k for k, s in enumerate(significant, start=1) if s]
    return (max(hits) + 1) if hits else 1


def _k_star_first(significant: Sequence[bool]) -> int:
    """min{k : not significant} (K when every transition is significant)."""
    for k, s in enumerate(significant, start=1):
        if not s:
            return k
    return len(significant) + 1


def _jsonable(label: BudgetLabel) -> BudgetLabel:
    if isinstance(label, np.integer):
        return int(label)
    if isinstance(label, np.floating):
        return float(label)
    return label


class _Bound(TypedDict):
    """A transition's bound and its Monte Carlo error: all None (and not borderline) for an untested transition."""

    z: float | None
    c_k: float | None
    mc_se: float | None
    level: float | None
    borderline: bool


@dataclass(frozen=True)
class Transition:
    """One budget step b_k → b_{k+1} with its bound, its decision and the cross-checks.

    `tested` is False only under Holm, for the transitions after the step-down stopped: they are not
    significant, and `z`, `c_k`, `mc_se` and `level` are None (there is no level to bound them at).
    """

    from_budget: BudgetLabel
    to_budget: BudgetLabel
    d_bar: float
    sigma_boot: float
    z: float | None
    c_k: float | None
    significant: bool
    borderline: bool
    mc_se: float | None
    degenerate_variance: bool
    improved: int
    worsened: int
    sign_test_p: float
    sign_test_significant: bool
    p_normal: float
    level: float | None
    tested: bool = True

    def to_dict(self) -> dict[str, Any]:
        """Plain Python types only (json.dumps needs no `default`; a numpy bool would print as "False")."""
        return {
            "from": _jsonable(self.from_budget),
            "to": _jsonable(self.to_budget),
            "d_bar": float(self.d_bar),
            "sigma_boot": float(self.sigma_boot),
            "z": _opt_float(self.z),
            "c_k": _opt_float(self.c_k),
            "significant": bool(self.significant),
            "tested": bool(self.tested),
            "borderline": bool(self.borderline),
            "mc_se": _opt_float(self.mc_se),
            "degenerate_variance": bool(self.degenerate_variance),
            "improved": int(self.improved),
            "worsened": int(self.worsened),
            "sign_test_p": float(self.sign_test_p),
            "sign_test_significant": bool(self.sign_test_significant),
            "p_normal": float(self.p_normal),
            "level": _opt_float(self.level),
        }


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class PlateauResult:
    """Everything §2.3–2.4 asks to report; `to_dict()` is the JSON form.

    `boot_diffs` (B × (K−1)) holds d̄_k + FPC·(d̄*_{k,b} − d̄_k) for the violin panel of §5.4: its
    spread matches the bound. It is left out of `to_dict()`.
    """

    budgets: list[BudgetLabel]
    accuracy: list[float]
    n: int
    n_dropped: int
    missing_per_budget: dict[str, int]
    dropped_items: list[str] | None
    n_trials: int
    n_trials_dropped: int
    population: int | None
    fpc: float
    z: float | None
    alpha: float
    correction: str
    n_boot: int
    seed: int
    two_stage: bool
    matched_trials: bool
    transitions: list[Transition]
    k_star: int | None
    k_star_first: int | None
    k_star_sign_test: int | None
    boot_diffs: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def plateau_budget(self) -> BudgetLabel | None:
        return None if self.k_star is None else self.budgets[self.k_star - 1]

    @property
    def no_significant_gain(self) -> bool:
        return bool(self.transitions) and not any(t.significant for t in self.transitions)

    @property
    def censored(self) -> bool:
        """Every transition significant: no plateau inside the grid (not evidence of one at b_K)."""
        return bool(self.transitions) and all(t.significant for t in self.transitions)

    @property
    def degenerate_variance(self) -> bool:
        return any(bool(t.degenerate_variance) for t in self.transitions)

    @property
    def fpc_zero(self) -> bool:
        """N == n: the FPC is 0, so (without two-stage trial resampling) C_k = d̄_k and any positive uptick
        counts as significant (§2.6)."""
        return self.population is not None and int(self.population) == int(self.n)

    @property
    def borderline(self) -> bool:
        return any(bool(t.borderline) for t in self.transitions)

    @property
    def k_star_borderline(self) -> bool:
        """Whether flipping any one borderline decision would move k*."""
        decisions = [t.significant for t in self.transitions]
        for k, t in enumerate(self.transitions):
            if t.borderline:
                flipped = [*decisions[:k], not decisions[k], *decisions[k + 1 :]]
                if _k_star(flipped) != self.k_star:
                    return True
        return False

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, in plain Python types only."""
        return {
            "k_star": _opt_int(self.k_star),
            "k_star_first": _opt_int(self.k_star_first),
            "k_star_sign_test": _opt_int(self.k_star_sign_test),
            "plateau_budget": _jsonable(self.plateau_budget) if self.plateau_budget is not None else None,
            "budgets": [_jsonable(b) for b in self.budgets],
            "accuracy": [float(a) for a in self.accuracy],
            "n": int(self.n),
            "n_dropped": int(self.n_dropped),
            "missing_per_budget": {str(k): int(v) for k, v in self.missing_per_budget.items()},
            "dropped_items": self.dropped_items,
            "n_trials": int(self.n_trials),
            "n_trials_dropped": int(self.n_trials_dropped),
            "population": _opt_int(self.population),
            "fpc": float(self.fpc),
            "z": None if self.z is None else float(self.z),
            "alpha": float(self.alpha),
            "correction": self.correction,
            "n_boot": int(self.n_boot),
            "seed": int(self.seed),
            "two_stage": bool(self.two_stage),
            "matched_trials": bool(self.matched_trials),
            "no_significant_gain": self.no_significant_gain,
            "censored": self.censored,
            "degenerate_variance": self.degenerate_variance,
            "fpc_zero": self.fpc_zero,
            "borderline": self.borderline,
            "k_star_borderline": self.k_star_borderline,
            "transitions": [t.to_dict() for t in self.transitions],
        }


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


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
    prep = _prepare(scores, budgets, matched_trials)
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
            fpc=_fpc(population, n),
            z=None,
            transitions=[],
            k_star=None,
            k_star_first=None,
            k_star_sign_test=None,
            **common,
        )
    if n < 2:
        raise ValueError(f"n = {n} items on the common support; the bootstrap SD needs at least 2")
    fpc = _fpc(population, n)
    diffs = np.diff(prep.means, axis=1)
    d_bar = diffs.mean(axis=0)
    if two_stage:
        sigma, scale, shown = _two_stage_spread(prep, d_bar, fpc, n_boot, seed, matched_trials)
    else:
        sigma, scale, shown = _cluster_spread(diffs, d_bar, fpc, n_boot, seed)
    sigma = np.where(sigma > _SIGMA_ZERO, sigma, 0.0)
    transitions = _transitions(prep.budgets, diffs, d_bar, sigma, scale, alpha, correction, n_boot)
    significant = [t.significant for t in transitions]
    return PlateauResult(
        accuracy=[float(v) for v in prep.means.mean(axis=0)],
        fpc=fpc,
        z=_z(alpha, K - 1),
        transitions=transitions,
        k_star=_k_star(significant),
        k_star_first=_k_star_first(significant),
        k_star_sign_test=_k_star([t.sign_test_significant for t in transitions]),
        boot_diffs=shown,
        **common,
    )


def _dropped_items(prep: _Prepared, items: Sequence[Any] | None) -> list[str] | None:
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


def _two_stage_spread(
    prep: _Prepared, d_bar: np.ndarray, fpc: float, n_boot: int, seed: int, matched_trials: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bootstrap SD, the scale the bound uses, the replicates shown) of the transitions, resampling items and
    then trials (the FPC is applied inside the replicates)."""
    boot = _two_stage_replicates(prep, d_bar, fpc, n_boot, seed, matched_trials)
    sigma = boot.std(axis=0, ddof=1)
    return sigma, np.where(sigma > _SIGMA_ZERO, sigma, 0.0), boot


def _cluster_spread(
    diffs: np.ndarray, d_bar: np.ndarray, fpc: float, n_boot: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(bootstrap SD, the scale the bound uses, the replicates shown) of the transitions, resampling items; the
    FPC scales the bound and shrinks the shown replicates toward the mean."""
    boot = _cluster_replicates(diffs, n_boot, seed)
    sigma = boot.std(axis=0, ddof=1)
    return sigma, np.where(sigma > _SIGMA_ZERO, sigma, 0.0) * fpc, d_bar + fpc * (boot - d_bar)


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
    p_normal = [_normal_p(float(d_bar[k]), float(scale[k])) for k in range(m)]
    levels = _levels(p_normal, alpha, correction)
    z = [NormalDist().inv_cdf(1 - level) for level in levels]
    c_k = [float(d_bar[k] - z[k] * scale[k]) for k in range(m)]
    significant, tested = _step_down(p_normal, [c > 0 for c in c_k], correction)
    improved = [int((diffs[:, k] > 0).sum()) for k in range(m)]
    worsened = [int((diffs[:, k] < 0).sum()) for k in range(m)]
    p_sign = [sign_test(improved[k], worsened[k]) for k in range(m)]
    sign_levels = _levels(p_sign, alpha, correction)
    sign_significant, _ = _step_down(p_sign, [p_sign[k] < sign_levels[k] for k in range(m)], correction)
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
