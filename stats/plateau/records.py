"""The plateau's result records: each `Transition` with its bound, decision and cross-checks, and the `PlateauResult`
with everything §2.3–2.4 asks to report; `to_dict()` gives each in plain Python types (the JSON form)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from stats.plateau.decisions import k_star_of
from stats.plateau.scores import BudgetLabel


def _jsonable(label: BudgetLabel) -> BudgetLabel:
    if isinstance(label, np.integer):
        return int(label)
    if isinstance(label, np.floating):
        return float(label)
    return label


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
                if k_star_of(flipped) != self.k_star:
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
